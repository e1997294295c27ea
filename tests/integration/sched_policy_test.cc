// The policy engine on a running cluster: an account over its GPU limit waits with that
// reason (and `corral why` / `corral priority` explain it); a preempted job gets its
// checkpoint signal, is requeued and later finishes.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "api/auth.h"
#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

std::string Me() { return api::CurrentProcessIdentity().user; }

std::string Config() {
  return R"(
[scheduler]
policy = "default"
[scheduler.priority]
weight_age = 10
weight_qos = 100000
[[partition]]
name = "gpu"
default = true
[[account]]
name = "small"
users = [")" + Me() + R"("]
max_gpus = 2
[[account]]
name = "big"
users = [")" + Me() + R"("]
[[qos]]
name = "normal"
priority = 10
[[qos]]
name = "high"
priority = 100
preempt = ["scavenger"]
preempt_mode = "off"
[[qos]]
name = "scavenger"
priority = 0
preempt_mode = "requeue"
grace_time = "0:02"
)";
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SchedPolicyTest, AccountAtItsGpuLimitWaitsWithThatReason) {
  TestCluster cluster({.nodes = 1, .gpus_per_node = 4, .extra_controller_toml = Config()});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  std::vector<JobId> ids;
  for (int i = 0; i < 3; ++i) {
    JobSpec s = cluster.ShellJob("sleep 300");
    s.account = "small";
    s.resources.gpus_per_node = 1;
    auto r = cluster.Submit(s);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    ids.push_back(r->job_id);
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        auto j = cluster.GetJob(ids[2]);
        return j && j->job.reason == "AssocGrpGRES";
      },
      std::chrono::seconds(20)))
      << cluster.GetJob(ids[2])->job.reason;
  EXPECT_EQ(cluster.GetJob(ids[0])->job.state, JobState::kRunning);
  EXPECT_EQ(cluster.GetJob(ids[1])->job.state, JobState::kRunning);
  EXPECT_EQ(cluster.GetJob(ids[2])->job.state, JobState::kPending);

  auto why = cluster.Cli({"why", ids[2].ToString()});
  ASSERT_EQ(why.status, 0) << why.err;
  EXPECT_NE(why.out.find("AssocGrpGRES"), std::string::npos) << why.out;
  EXPECT_NE(why.out.find("small"), std::string::npos) << why.out;
  auto why_json = cluster.Cli({"why", "--json", ids[2].ToString()});
  EXPECT_NE(why_json.out.find("\"scope\":\"account\""), std::string::npos) << why_json.out;
  auto prio = cluster.Cli({"priority"});
  ASSERT_EQ(prio.status, 0) << prio.err;
  EXPECT_NE(prio.out.find(ids[2].ToString()), std::string::npos) << prio.out;

  // A job that could never fit the account's limit is refused at submit, naming it.
  JobSpec huge = cluster.ShellJob("true");
  huge.account = "small";
  huge.resources.gpus_per_node = 3;
  auto refused = cluster.Submit(huge);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("small"), std::string::npos) << refused.error().message;

  // Another account is not held back.
  JobSpec other = cluster.ShellJob("exit 0");
  other.account = "big";
  other.resources.gpus_per_node = 1;
  auto o = cluster.Submit(other);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(cluster.WaitJob(o->job_id)->job.state, JobState::kCompleted);
  for (JobId id : ids) (void)cluster.Request("POST", "/api/v1/jobs/" + id.ToString() + "/cancel", "");
}

TEST(SchedPolicyTest, PreemptedJobGetsItsSignalIsRequeuedAndFinishes) {
  TestCluster cluster({.nodes = 1, .gpus_per_node = 2, .extra_controller_toml = Config()});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  // The victim traps its checkpoint signal; on its second run it finishes at once.
  JobSpec victim = cluster.ShellJob(
      "echo \"run $CORRAL_RESTART_COUNT\" >> victim.log\n"
      "if [ \"$CORRAL_RESTART_COUNT\" != 0 ]; then exit 0; fi\n"
      "trap 'echo checkpoint signal >> victim.log' USR1\n"
      "while true; do sleep 0.1; done\n");
  victim.account = "big";
  victim.qos = "scavenger";
  victim.requeue = true;
  victim.resources.gpus_per_node = 2;
  victim.signal = {.signal = 10, .before = Seconds(60)};
  auto v = cluster.Submit(victim);
  ASSERT_TRUE(v.has_value()) << v.error().message;
  ASSERT_TRUE(WaitFor([&] { return cluster.GetJob(v->job_id)->job.state == JobState::kRunning; },
                      std::chrono::seconds(20)));
  ASSERT_TRUE(WaitFor([&] { return Read(cluster.work_dir() + "/victim.log").find("run 0") != std::string::npos; },
                      std::chrono::seconds(20)));

  JobSpec urgent = cluster.ShellJob("echo urgent ran > urgent.log");
  urgent.account = "big";
  urgent.qos = "high";
  urgent.resources.gpus_per_node = 2;
  auto u = cluster.Submit(urgent);
  ASSERT_TRUE(u.has_value()) << u.error().message;

  auto done = cluster.WaitJob(u->job_id, std::chrono::seconds(60));
  ASSERT_TRUE(done.has_value()) << done.error().message << "\n" << cluster.ControllerLog();
  EXPECT_EQ(done->job.state, JobState::kCompleted);
  auto finished = cluster.WaitJob(v->job_id, std::chrono::seconds(60));
  ASSERT_TRUE(finished.has_value()) << finished.error().message;
  EXPECT_EQ(finished->job.state, JobState::kCompleted);
  EXPECT_EQ(finished->job.restart_count, 1u);
  EXPECT_GE(finished->job.start_time, done->job.start_time) << "the victim restarted after the preemptor";
  std::string log = Read(cluster.work_dir() + "/victim.log");
  EXPECT_NE(log.find("checkpoint signal"), std::string::npos) << log;
  EXPECT_NE(log.find("run 1"), std::string::npos) << log;
  EXPECT_LT(log.find("checkpoint signal"), log.find("run 1")) << log;
}

}  // namespace
}  // namespace corral::testing
