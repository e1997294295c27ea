// A suspended job in scontrol and squeue, and sdiag, against text from a real Slurm 22.05.8
// (one node "vm"; job 1, `sbatch -t 5 --wrap 'sleep 300'`, started 10:29:43 UTC, suspended at
// 10:29:49 and resumed at 10:29:52 by `scontrol suspend|resume 1`).
#include <gtest/gtest.h>

#include "cli/slurm/scontrol.h"
#include "cli/slurm/sdiag.h"
#include "cli/slurm/squeue.h"

namespace corral::slurm {
namespace {

Timestamp At(int h, int m, int s) {
  return Timestamp(std::chrono::sys_days(std::chrono::year(2026) / 12 / 2) + std::chrono::hours(h) +
                   std::chrono::minutes(m) + std::chrono::seconds(s));
}

api::JobInfo SuspendedJob() {
  api::JobInfo info;
  Job& j = info.job;
  j.id = JobId(1);
  j.spec.name = "wrap";
  j.spec.user = "root";
  j.spec.working_dir = "/tmp";
  j.partition = "debug";
  j.reason = "None";
  j.state = JobState::kRunning;
  j.submit_time = j.eligible_time = At(10, 29, 40);
  j.start_time = At(10, 29, 43);
  j.time_limit = Minutes(5);
  j.allocation.nodes.push_back(NodeAllocation{.node_name = "vm", .cpus = 1});
  j.allocation.suspended = true;
  j.allocation.suspend_time = At(10, 29, 49);
  j.allocation.pre_suspend = Seconds(6);
  return info;
}

std::string LineWith(const std::string& text, const std::string& start) {
  size_t at = text.find("\n   " + start);
  if (at == std::string::npos) return "";
  at += 4;
  return text.substr(at, text.find('\n', at) - at);
}

TEST(SuspendRenderTest, ScontrolShowsSuspendedJobsAsSlurm) {
  ScontrolOptions o;
  o.now = At(10, 29, 52);  // three seconds into the suspension
  std::string text = RenderScontrolJobs({SuspendedJob()}, o);
  EXPECT_EQ(LineWith(text, "JobState="), "JobState=SUSPENDED Reason=None Dependency=(null)");
  EXPECT_EQ(LineWith(text, "RunTime="), "RunTime=00:00:06 TimeLimit=00:05:00 TimeMin=N/A");
  EXPECT_EQ(LineWith(text, "StartTime="),
            "StartTime=2026-12-02T10:29:43 EndTime=2026-12-02T10:34:43 Deadline=N/A");
  EXPECT_EQ(LineWith(text, "SuspendTime="),
            "SuspendTime=2026-12-02T10:29:49 SecsPreSuspend=6 LastSchedEval=2026-12-02T10:29:43 "
            "Scheduler=Main");

  // Resumed at 10:29:52, shown at 10:29:54: the end moved by the three seconds suspended.
  api::JobInfo resumed = SuspendedJob();
  resumed.job.allocation.suspended = false;
  resumed.job.allocation.suspend_time = At(10, 29, 52);
  resumed.job.allocation.suspended_for = Seconds(3);
  o.now = At(10, 29, 54);
  text = RenderScontrolJobs({resumed}, o);
  EXPECT_EQ(LineWith(text, "JobState="), "JobState=RUNNING Reason=None Dependency=(null)");
  EXPECT_EQ(LineWith(text, "RunTime="), "RunTime=00:00:08 TimeLimit=00:05:00 TimeMin=N/A");
  EXPECT_EQ(LineWith(text, "StartTime="),
            "StartTime=2026-12-02T10:29:43 EndTime=2026-12-02T10:34:46 Deadline=N/A");
  EXPECT_EQ(LineWith(text, "SuspendTime="),
            "SuspendTime=2026-12-02T10:29:52 SecsPreSuspend=6 LastSchedEval=2026-12-02T10:29:43 "
            "Scheduler=Main");
}

TEST(SuspendRenderTest, SqueueShowsStateSAndStopsTheClock) {
  SqueueOptions o;
  o.format = "%i %T %t %M %l %r %L";
  o.now = At(10, 29, 55);
  RenderResult r = RenderSqueue({SuspendedJob()}, o);
  // Real (while suspended): "1 SUSPENDED S 0:06 5:00 None" (and 4:54 left).
  EXPECT_EQ(r.text,
            "JOBID STATE ST TIME TIME_LIMIT REASON TIME_LEFT\n"
            "1 SUSPENDED S 0:06 5:00 None 4:54\n");
}

TEST(SdiagRenderTest, LayoutAsSlurm) {
  api::DiagInfo d;
  d.now = At(10, 32, 40);
  d.since = At(10, 29, 38);
  d.server_threads = 3;
  d.jobs_submitted = 2;
  d.jobs_started = 2;
  d.jobs_completed = 1;
  d.cycles = 8;
  d.last_cycle_seconds = 0.000118;
  d.max_cycle_seconds = 0.003169;
  d.total_cycle_seconds = 0.00748;
  d.examined_total = 3;
  d.last_pass_time = At(10, 32, 38);
  d.routes = {{"GET", "/api/v1/jobs", 7, 0.004083},
              {"POST", "/api/v1/jobs/{id}/suspend", 15, 0.010136}};
  d.users = {{"root", 0, 49, 0.046756}, {"nobody", 65534, 3, 0.00251}};
  SdiagOptions o;
  std::string text = RenderSdiag(d, o);
  EXPECT_EQ(text.substr(0, text.find("Main schedule")),
            "*******************************************************\n"
            "sdiag output at Wed Dec 02 10:32:40 2026 (1796207560)\n"
            "Data since      Wed Dec 02 10:29:38 2026 (1796207378)\n"
            "*******************************************************\n"
            "Server thread count:  3\n"
            "\n"
            "Jobs submitted: 2\n"
            "Jobs started:   2\n"
            "Jobs completed: 1\n"
            "Jobs canceled:  0\n"
            "Jobs failed:    0\n"
            "\n"
            "Job states ts:  Wed Dec 02 10:32:40 2026 (1796207560)\n"
            "Jobs pending:   0\n"
            "Jobs running:   0\n"
            "\n");
  EXPECT_NE(text.find("Main schedule statistics (microseconds):\n"
                      "\tLast cycle:   118\n"
                      "\tMax cycle:    3169\n"
                      "\tTotal cycles: 8\n"
                      "\tMean cycle:   935\n"
                      "\tMean depth cycle:  0\n"
                      "\tCycles per minute: 2\n"
                      "\tLast queue length: 0\n\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\tLast cycle when: Wed Dec 02 10:32:38 2026 (1796207558)\n"),
            std::string::npos);
  // Most requests first, in sdiag's columns (the route for the message type).
  EXPECT_NE(text.find("Remote Procedure Call statistics by message type\n"
                      "\tPOST /api/v1/jobs/{id}/suspend                  count:15     "
                      "ave_time:675    total_time:10136\n"
                      "\tGET /api/v1/jobs                                count:7      "
                      "ave_time:583    total_time:4083\n\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Remote Procedure Call statistics by user\n"
                      "\troot            (       0) count:49     ave_time:954    "
                      "total_time:46756\n"
                      "\tnobody          (   65534) count:3      ave_time:836    "
                      "total_time:2510\n"),
            std::string::npos)
      << text;
  // -i: by name.
  o.sort = SdiagSort::kId;
  text = RenderSdiag(d, o);
  EXPECT_LT(text.find("\tGET /api/v1/jobs "), text.find("\tPOST /api/v1/jobs/{id}/suspend"));
  EXPECT_LT(text.find("\tnobody "), text.find("\troot "));
}

}  // namespace
}  // namespace corral::slurm
