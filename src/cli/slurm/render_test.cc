// Renderers of squeue, sinfo, sacct and scontrol against text captured from a real Slurm
// 22.05.8 (one node "vm", 64 CPUs, 8 GPUs, partition "debug"), at 2026-11-29T17:29:37 UTC.
#include <gtest/gtest.h>

#include "cli/slurm/sacct.h"
#include "cli/slurm/scontrol.h"
#include "cli/slurm/sinfo.h"
#include "cli/slurm/squeue.h"
#include "core/slurm_env.h"

namespace corral::slurm {
namespace {

Timestamp At(int h, int m, int s) {
  return Timestamp(std::chrono::sys_days(std::chrono::year(2026) / 11 / 29) +
                   std::chrono::hours(h) + std::chrono::minutes(m) + std::chrono::seconds(s));
}

api::JobInfo MakeJob(uint64_t id, std::string name, JobState state) {
  api::JobInfo info;
  Job& j = info.job;
  j.id = JobId(id);
  j.spec.name = std::move(name);
  j.spec.user = "root";
  j.spec.working_dir = "/tmp/sldir";
  j.spec.submit_host = "localhost";
  j.spec.requeue = true;
  j.spec.stdout_path = "/dev/null";
  j.partition = "debug";
  j.state = state;
  j.submit_time = At(17, 29, 27);
  if (state == JobState::kRunning) {
    j.start_time = At(17, 29, 28);
    j.eligible_time = At(17, 29, 27);
    j.allocation.nodes.push_back(NodeAllocation{.node_name = "vm", .cpus = 1});
    j.reason = "None";
  }
  return info;
}

// The jobs of the capture: 218 running (-n2 -c2 --gres=gpu:2 --mem=2G -t 1:00:00), array 219
// (-a 0-3%2 -G 1 --mem-per-cpu=100: tasks 0 and 1 running, 2 and 3 pending), 221 pending
// with --begin.
std::vector<api::JobInfo> CapturedJobs() {
  std::vector<api::JobInfo> jobs;
  api::JobInfo runner = MakeJob(218, "runner", JobState::kRunning);
  runner.job.spec.resources.ntasks = 2;
  runner.job.spec.resources.cpus_per_task = 2;
  runner.job.spec.resources.gpus_per_node = 2;
  runner.job.spec.resources.mem_per_node_mb = 2048;
  runner.job.spec.time_limit = Minutes(60);
  runner.job.spec.comment = "a comment";
  runner.job.spec.account = "acct1";
  runner.job.spec.mail_user = "a@b.c";
  runner.job.spec.mail_type = "END";
  runner.job.spec.stdout_path = "/tmp/sldir/run_%j.out";
  runner.job.spec.stderr_path = "err_%j.txt";
  runner.job.allocation.nodes[0].cpus = 4;
  runner.job.allocation.nodes[0].gpus = GpuSet(0b11);
  jobs.push_back(runner);
  for (uint32_t task : {0u, 1u, 2u, 3u}) {
    uint64_t ids[] = {222, 223, 219, 224};
    bool running = task < 2;
    api::JobInfo t = MakeJob(ids[task], "arr", running ? JobState::kRunning : JobState::kPending);
    t.job.array_job_id = JobId(219);
    t.job.array_task_id = task;
    t.job.spec.array = "0-3%2";
    t.job.spec.resources.gpus = 1;
    t.job.spec.resources.mem_per_cpu_mb = 100;
    if (!running) t.job.reason = "JobArrayTaskLimit";
    if (running) t.job.eligible_time = At(17, 29, 28);
    jobs.push_back(t);
  }
  api::JobInfo nodes = MakeJob(221, "nodes", JobState::kPending);
  nodes.job.reason = "BeginTime";
  nodes.job.spec.resources.nodes = 1;
  nodes.job.spec.resources.nodes_max = 2;
  nodes.job.spec.resources.nodelist = {"vm"};
  nodes.job.spec.resources.exclusive = true;
  nodes.job.spec.working_dir = "/tmp";
  nodes.job.eligible_time = At(18, 29, 27);
  nodes.estimated_start = At(18, 29, 27);
  jobs.push_back(nodes);
  return jobs;
}

SqueueOptions Squeue() {
  SqueueOptions o;
  o.now = At(17, 29, 37);
  return o;
}

TEST(SqueueRenderTest, DefaultViewMatchesSlurm) {
  EXPECT_EQ(
      RenderSqueue(CapturedJobs(), Squeue()).text,
      "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
      "       219_[2-3%2]     debug      arr     root PD       0:00      1 (JobArrayTaskLimit)\n"
      "               221     debug    nodes     root PD       0:00      1 (BeginTime)\n"
      "               218     debug   runner     root  R       0:09      1 vm\n"
      "             219_0     debug      arr     root  R       0:09      1 vm\n"
      "             219_1     debug      arr     root  R       0:09      1 vm\n");
}

TEST(SqueueRenderTest, LongViewAndArrayTasks) {
  SqueueOptions o = Squeue();
  o.long_output = true;
  o.no_header = true;  // real: `squeue -l -h` prints no time line either
  EXPECT_EQ(
      RenderSqueue(CapturedJobs(), o).text,
      "       219_[2-3%2]     debug      arr     root  PENDING       0:00 UNLIMITED      1 "
      "(JobArrayTaskLimit)\n"
      "               221     debug    nodes     root  PENDING       0:00 UNLIMITED      1 "
      "(BeginTime)\n"
      "               218     debug   runner     root  RUNNING       0:09   1:00:00      1 vm\n"
      "             219_0     debug      arr     root  RUNNING       0:09 UNLIMITED      1 vm\n"
      "             219_1     debug      arr     root  RUNNING       0:09 UNLIMITED      1 vm\n");
  o.no_header = false;
  EXPECT_EQ(RenderSqueue(CapturedJobs(), o).text.substr(0, 25), "Sun Nov 29 17:29:37 2026\n");
  o = Squeue();
  o.array_tasks = true;
  o.format = "%i";
  o.no_header = true;
  EXPECT_EQ(RenderSqueue(CapturedJobs(), o).text, "219_2\n219_3\n221\n218\n219_0\n219_1\n");
}

TEST(SqueueRenderTest, FormatStringsMatchSlurm) {
  SqueueOptions o = Squeue();
  o.format = "%i %5j %-5j %.5j %10j %.3t%%";
  // Real: "%-5j" is not a field (printed as is, with an error); "%%" prints nothing.
  RenderResult r = RenderSqueue(CapturedJobs(), o);
  EXPECT_EQ(r.text.substr(0, r.text.find('\n') + 1), "JOBID NAME  %-5j  NAME NAME        ST\n");
  EXPECT_NE(r.text.find("218 runne %-5j runne runner       R\n"), std::string::npos) << r.text;
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.warnings[0], "squeue: error: Invalid job format specification: -");
  o.format = "x%iy%%z%";
  o.no_header = true;
  EXPECT_NE(RenderSqueue(CapturedJobs(), o).text.find("x218y*:*:*\n"), std::string::npos);
  // A script's `squeue -h -j $ID -o %L`.
  o.format = "%L";
  std::vector<api::JobInfo> one = {CapturedJobs()[0]};
  EXPECT_EQ(RenderSqueue(one, o).text, "59:51\n");
  o.format = "%20S %e %10l";
  EXPECT_EQ(RenderSqueue(one, o).text, "2026-11-29T17:29:28  2026-11-29T18:29:28 1:00:00   \n");
  o.format =
      "%i|%j|%u|%t|%T|%M|%l|%D|%R|%P|%a|%C|%b|%L|%S|%e|%V|%N|%A|%F|%K|%r|%m|%c|%d|%k|%n|%q|%y|%Z|%"
      "h";
  EXPECT_EQ(
      RenderSqueue(one, o).text,
      "218|runner|root|R|RUNNING|0:09|1:00:00|1|vm|debug|acct1|4|gres:gpu:2|59:51|"
      "2026-11-29T17:29:28|2026-11-29T18:29:28|2026-11-29T17:29:27|vm|218|218|N/A|None|2G|2|0|"
      "a comment||(null)|0|/tmp/sldir|OK\n");
}

TEST(SqueueRenderTest, LongFormatFieldsMatchSlurm) {
  SqueueOptions o = Squeue();
  o.long_format = "JobID:8,Name:.12,State:5,Reason";
  std::string text = RenderSqueue(CapturedJobs(), o).text;
  EXPECT_EQ(text.substr(0, text.find('\n') + 1), "JOBID           NAMESTATEREASON              \n");
  EXPECT_NE(text.find("\n221            nodesPENDIBeginTime           \n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\n218           runnerRUNNINone                \n"), std::string::npos)
      << text;
  o.long_format = "JobID:|,Name:|";
  o.no_header = true;
  EXPECT_NE(RenderSqueue(CapturedJobs(), o).text.find("221|nodes|\n"), std::string::npos);
  o.long_format = "tres-per-node,tres-per-job,ArrayTaskID,NodeList,BogusField";
  RenderResult r = RenderSqueue(CapturedJobs(), o);
  EXPECT_NE(
      r.text.find(
          "gres:gpu:2          N/A                 N/A                 vm                  \n"),
      std::string::npos)
      << r.text;
  EXPECT_EQ(
      r.warnings,
      (std::vector<std::string>{"squeue: error: Invalid job format specification: BogusField"}));
}

api::NodeInfo MakeNode(std::string name, NodeState state, uint32_t alloc_cpus) {
  api::NodeInfo n;
  n.node.inventory.name = std::move(name);
  n.node.inventory.cpus = 64;
  n.node.inventory.memory_mb = 64000;
  for (uint32_t i = 0; i < 8; ++i) n.node.inventory.gpus.push_back(GpuInfo{.index = i});
  n.node.registered = true;
  n.node.responding = true;
  n.state = state;
  n.alloc_cpus = alloc_cpus;
  n.partitions = {"debug"};
  return n;
}

api::PartitionInfo Debug(std::vector<std::string> nodes) {
  api::PartitionInfo p;
  p.partition.name = "debug";
  p.partition.is_default = true;
  p.partition.nodes = std::move(nodes);
  p.total_cpus = 64 * static_cast<uint32_t>(p.partition.nodes.size());
  return p;
}

TEST(SinfoRenderTest, ViewsMatchSlurm) {
  std::vector<api::PartitionInfo> parts = {Debug({"vm"})};
  std::vector<api::NodeInfo> nodes = {MakeNode("vm", NodeState::kMixed, 6)};
  SinfoOptions o;
  o.now = At(17, 9, 38);
  EXPECT_EQ(RenderSinfo(parts, nodes, o).text,
            "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "debug*       up   infinite      1    mix vm\n");
  o.node_oriented = true;
  EXPECT_EQ(RenderSinfo(parts, nodes, o).text,
            "NODELIST   NODES PARTITION STATE \n"
            "vm             1    debug* mix   \n");
  o.long_output = true;
  EXPECT_EQ(RenderSinfo(parts, nodes, o).text,
            "Sun Nov 29 17:09:38 2026\n"
            "NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE "
            "REASON              \n"
            "vm             1    debug*       mixed 64     64:1:1  64000        0      1   (null) "
            "none                \n");
  o.node_oriented = false;
  EXPECT_EQ(
      RenderSinfo(parts, nodes, o).text,
      "Sun Nov 29 17:09:38 2026\n"
      "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE NODELIST\n"
      "debug*       up   infinite 1-infinite   no       NO        all      1       mixed vm\n");
  o.long_output = false;
  o.summarize = true;
  EXPECT_EQ(RenderSinfo(parts, nodes, o).text,
            "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
            "debug*       up   infinite          1/0/0/1 vm\n");
  o.summarize = false;
  o.list_reasons = true;
  EXPECT_EQ(RenderSinfo(parts, nodes, o).text,
            "REASON               USER      TIMESTAMP           NODELIST\n");
  o.list_reasons = false;
  o.format = "%P %C %F %A %G %l %L %s %z %c %m %E %H";
  EXPECT_EQ(
      RenderSinfo(parts, nodes, o).text,
      "PARTITION CPUS(A/I/O/T) NODES(A/I/O/T) NODES(A/I) GRES TIMELIMIT DEFAULTTIME JOB_SIZE S:C:T "
      "CPUS MEMORY REASON TIMESTAMP\n"
      "debug* 6/58/0/64 1/0/0/1 1/0 gpu:8 infinite n/a 1-infinite 64:1:1 64 64000 none Unknown\n");
  o.format = "%20P %5a";
  EXPECT_EQ(RenderSinfo(parts, nodes, o).text,
            "PARTITION            AVAIL\ndebug*               up   \n");
  o.format = "%.20P %.5a %N";
  EXPECT_EQ(RenderSinfo(parts, nodes, o).text,
            "           PARTITION AVAIL NODELIST\n              debug*    up vm\n");
}

TEST(SinfoRenderTest, GroupsNodesByStateAndCompressesLists) {
  std::vector<std::string> names;
  std::vector<api::NodeInfo> nodes;
  for (int i = 1; i <= 6; ++i) {
    std::string name = "gpu-0" + std::to_string(i);
    names.push_back(name);
    NodeState s = i <= 2 ? NodeState::kIdle : (i <= 4 ? NodeState::kAllocated : NodeState::kDown);
    nodes.push_back(MakeNode(name, s, s == NodeState::kAllocated ? 64 : 0));
    if (s == NodeState::kDown) {
      nodes.back().node.responding = false;
      nodes.back().node.reason = "Not responding";
      nodes.back().node.reason_time = At(16, 0, 0);
    }
  }
  api::PartitionInfo gpu = Debug(names);
  gpu.partition.name = "a-very-long-partition";
  gpu.partition.is_default = false;
  gpu.partition.max_time = Minutes(4 * 60);
  SinfoOptions o;
  EXPECT_EQ(RenderSinfo({gpu}, nodes, o).text,
            "PARTITION             AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "a-very-long-partition    up    4:00:00      2  alloc gpu-[03-04]\n"
            "a-very-long-partition    up    4:00:00      2   idle gpu-[01-02]\n"
            "a-very-long-partition    up    4:00:00      2  down* gpu-[05-06]\n");
  o.list_reasons = true;
  EXPECT_EQ(RenderSinfo({gpu}, nodes, o).text,
            "REASON               USER      TIMESTAMP           NODELIST\n"
            "Not responding       Unknown   2026-11-29T16:00:00 gpu-[05-06]\n");
}

std::string BlockOf(const std::string& text, const std::string& first_line) {
  size_t at = text.rfind(first_line, 0) == 0 ? 0 : text.find("\n" + first_line);
  if (at == std::string::npos) return "";
  if (at != 0) ++at;
  size_t end = text.find("\n\n", at);
  return text.substr(at, end == std::string::npos ? std::string::npos : end + 2 - at);
}

TEST(ScontrolRenderTest, JobBlocksMatchSlurm) {
  ScontrolOptions o;
  o.now = At(17, 29, 33);
  o.group_name = [](uint32_t) { return std::string("root"); };
  std::string text = RenderScontrolJobs(CapturedJobs(), o);
  // Real job 218, except for what Corral does not track: Priority (Slurm: 4294901639),
  // AllocNode:Sid (localhost:6479), AccrueTime, and TRES (Slurm left out mem and gres/gpu
  // there because the capture's cluster tracked cores only).
  EXPECT_EQ(
      BlockOf(text, "JobId=218 "),
      "JobId=218 JobName=runner\n"
      "   UserId=root(0) GroupId=root(0) MCS_label=N/A\n"
      "   Priority=0 Nice=0 Account=acct1 QOS=(null)\n"
      "   JobState=RUNNING Reason=None Dependency=(null)\n"
      "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
      "   RunTime=00:00:05 TimeLimit=01:00:00 TimeMin=N/A\n"
      "   SubmitTime=2026-11-29T17:29:27 EligibleTime=2026-11-29T17:29:27\n"
      "   AccrueTime=2026-11-29T17:29:27\n"
      "   StartTime=2026-11-29T17:29:28 EndTime=2026-11-29T18:29:28 Deadline=N/A\n"
      "   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-29T17:29:28 Scheduler=Main\n"
      "   Partition=debug AllocNode:Sid=localhost:0\n"
      "   ReqNodeList=(null) ExcNodeList=(null)\n"
      "   NodeList=vm\n"
      "   BatchHost=vm\n"
      "   NumNodes=1 NumCPUs=4 NumTasks=2 CPUs/Task=2 ReqB:S:C:T=0:0:*:*\n"
      "   TRES=cpu=4,node=1,billing=4,gres/gpu=2\n"
      "   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n"
      "   MinCPUsNode=2 MinMemoryNode=2G MinTmpDiskNode=0\n"
      "   Features=(null) DelayBoot=00:00:00\n"
      "   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n"
      "   Command=(null)\n"
      "   WorkDir=/tmp/sldir\n"
      "   Comment=a comment \n"
      "   StdErr=/tmp/sldir/err_218.txt\n"
      "   StdIn=/dev/null\n"
      "   StdOut=/tmp/sldir/run_218.out\n"
      "   Power=\n"
      "   TresPerNode=gres:gpu:2\n"
      "   MailUser=a@b.c MailType=END\n"
      "   \n\n");
  // The pending tasks of array 219 are one record (real: JobId=219 ... ArrayTaskId=2-3%2).
  std::string pending = BlockOf(text, "JobId=219 ");
  EXPECT_EQ(pending.substr(0, pending.find('\n')),
            "JobId=219 ArrayJobId=219 ArrayTaskId=2-3%2 ArrayTaskThrottle=2 JobName=arr");
  EXPECT_NE(pending.find("   JobState=PENDING Reason=JobArrayTaskLimit Dependency=(null)\n"),
            std::string::npos);
  EXPECT_NE(pending.find("   MinCPUsNode=1 MinMemoryCPU=100M MinTmpDiskNode=0\n"),
            std::string::npos);
  EXPECT_NE(pending.find("   TresPerJob=gres:gpu:1\n   \n\n"), std::string::npos);
  EXPECT_EQ(text.find("JobId=224 "), std::string::npos);
  std::string task = BlockOf(text, "JobId=222 ");
  EXPECT_EQ(task.substr(0, task.find('\n')),
            "JobId=222 ArrayJobId=219 ArrayTaskId=0 ArrayTaskThrottle=2 JobName=arr");
  EXPECT_NE(task.find("   StartTime=2026-11-29T17:29:28 EndTime=Unknown Deadline=N/A\n"),
            std::string::npos);
  // Job 221: pending with --begin, -N1-2 -w vm --exclusive -D /tmp.
  std::string nodes = BlockOf(text, "JobId=221 ");
  for (const char* line :
       {"   JobState=PENDING Reason=BeginTime Dependency=(null)\n",
        "   StartTime=2026-11-29T18:29:27 EndTime=Unknown Deadline=N/A\n",
        "   ReqNodeList=vm ExcNodeList=(null)\n", "   NodeList=\n",
        "   NumNodes=1-2 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n",
        "   OverSubscribe=NO Contiguous=0 Licenses=(null) Network=(null)\n", "   WorkDir=/tmp\n"}) {
    EXPECT_NE(nodes.find(line), std::string::npos) << line << nodes;
  }
}

TEST(ScontrolRenderTest, CommandStdinAndPriority) {
  api::JobInfo j = MakeJob(230, "train", JobState::kPending);
  j.job.spec.command = "/home/alice/train.sh";
  j.job.spec.stdin_path = "/home/alice/in.txt";
  j.priority = 4294901639;
  ScontrolOptions o;
  std::string text = RenderScontrolJobs({j}, o);
  EXPECT_NE(text.find("   Priority=4294901639 Nice=0 "), std::string::npos) << text;
  EXPECT_NE(text.find("   Command=/home/alice/train.sh\n"), std::string::npos) << text;
  EXPECT_NE(text.find("   StdIn=/home/alice/in.txt\n"), std::string::npos) << text;
  SqueueOptions q;
  q.format = "%Q|%p|%o";
  q.no_header = true;
  EXPECT_EQ(RenderSqueue({j}, q).text, "4294901639|0.99998471327126|/home/alice/train.sh\n");
}

// Slurm 22.05 prints the script's arguments after it, and MinCPUsNode counts
// --ntasks-per-node's tasks (compared against the peer, tests/slurm_diff).
TEST(ScontrolRenderTest, CommandHasTheScriptsArgumentsAndMinCpusCountsTasksPerNode) {
  api::JobInfo j = MakeJob(231, "train", JobState::kPending);
  j.job.spec.command = "/tmp/s2p/j1.sh";
  j.job.spec.script_args = {"a", "b", "c d"};
  j.job.spec.resources.ntasks_per_node = 4;
  j.job.spec.resources.cpus_per_task = 2;
  std::string text = RenderScontrolJobs({j}, ScontrolOptions());
  EXPECT_NE(text.find("   Command=/tmp/s2p/j1.sh a b c d\n"), std::string::npos) << text;
  EXPECT_NE(text.find("   MinCPUsNode=8 "), std::string::npos) << text;
  SqueueOptions q;
  q.format = "%o";
  q.no_header = true;
  EXPECT_EQ(RenderSqueue({j}, q).text, "/tmp/s2p/j1.sh a b c d\n");
}

// scontrol expands only %A %a %j %u %x of an output pattern; %N and padded forms stay as
// written, as the peer prints them (tests/slurm_diff, cases 14 and 15).
TEST(ScontrolRenderTest, StdOutExpandsOnlyWhatSlurmsScontrolExpands) {
  api::JobInfo j = MakeJob(232, "train", JobState::kPending);
  j.job.spec.working_dir = "/w";
  j.job.spec.stdout_path = "o-%u-%N-%12j-%j-%%.txt";
  std::string text = RenderScontrolJobs({j}, ScontrolOptions());
  EXPECT_NE(text.find("   StdOut=/w/o-" + j.job.spec.user + "-%N-%12j-232-%.txt\n"),
            std::string::npos)
      << text;
}

TEST(ScontrolRenderTest, OneLinerDependencyAndFinishedJobs) {
  api::JobInfo dep = MakeJob(229, "wrap", JobState::kPending);
  dep.job.reason = "Dependency";
  dep.job.spec.nice = 5;
  dep.job.spec.dependencies = {Dependency{.type = DependencyType::kAfterOk, .jobs = {JobId(218)}}};
  ScontrolOptions o;
  o.now = At(17, 32, 18);
  std::string text = RenderScontrolJobs({dep}, o);
  EXPECT_NE(text.find("   Priority=0 Nice=5 Account=(null) QOS=(null)\n"), std::string::npos);
  EXPECT_NE(
      text.find("   JobState=PENDING Reason=Dependency Dependency=afterok:218(unfulfilled)\n"),
      std::string::npos);
  api::JobInfo failed = MakeJob(220, "done", JobState::kFailed);
  failed.job.reason = "NonZeroExitCode";
  failed.job.exit_code = 3;
  failed.job.start_time = failed.job.end_time = At(17, 29, 28);
  failed.job.allocation.nodes.push_back(NodeAllocation{.node_name = "vm", .cpus = 1});
  text = RenderScontrolJobs({failed}, o);
  EXPECT_NE(text.find("   JobState=FAILED Reason=NonZeroExitCode Dependency=(null)\n"),
            std::string::npos);
  EXPECT_NE(text.find("   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=3:0\n"),
            std::string::npos);
  EXPECT_NE(text.find("   RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A\n"), std::string::npos);
  EXPECT_NE(
      text.find("   StartTime=2026-11-29T17:29:28 EndTime=2026-11-29T17:29:28 Deadline=N/A\n"),
      std::string::npos);
  o.one_liner = true;
  text = RenderScontrolJobs({CapturedJobs()[0]}, o);
  EXPECT_EQ(text.substr(0, 40), "JobId=218 JobName=runner UserId=root(0) ");
  EXPECT_NE(
      text.find(
          " WorkDir=/tmp/sldir Comment=a comment  StdErr=/tmp/sldir/err_218.txt StdIn=/dev/null "),
      std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 29), "MailUser=a@b.c MailType=END \n") << text;
}

TEST(ScontrolRenderTest, NodeAndPartitionBlocks) {
  ScontrolOptions o;
  api::NodeInfo n = MakeNode("vm", NodeState::kMixed, 6);
  n.node.inventory.address = "http://127.0.0.1:7001";
  std::string text = RenderScontrolNodes({n}, o);
  EXPECT_EQ(text.substr(0, text.find('\n') + 1), "NodeName=vm Arch=x86_64 CoresPerSocket=1 \n");
  for (const char* line :
       {"   CPUAlloc=6 CPUEfctv=64 CPUTot=64 CPULoad=N/A\n", "   Gres=gpu:8\n",
        "   NodeAddr=127.0.0.1 NodeHostName=vm Version=(null)\n",
        "   State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n",
        "   Partitions=debug \n", "   CfgTRES=cpu=64,mem=62.50G,billing=64,gres/gpu=8\n",
        "   AllocTRES=cpu=6\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  }
  EXPECT_EQ(text.substr(text.size() - 3), "s\n\n");
  std::string part = RenderScontrolPartitions({Debug({"vm"})}, o);
  EXPECT_EQ(part,
            "PartitionName=debug\n"
            "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
            "   AllocNodes=ALL Default=YES QoS=N/A\n"
            "   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n"
            "   MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n"
            "   Nodes=vm\n"
            "   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
            "   OverTimeLimit=NONE PreemptMode=OFF\n"
            "   State=UP TotalCPUs=64 TotalNodes=1 SelectTypeParameters=NONE\n"
            "   JobDefaults=(null)\n"
            "   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
            "   TRES=cpu=64,node=1,billing=64\n"
            "\n");
}

// Partition access (issue 16 item 2), as the Slurm 22.05 peer prints partitions with
// AllowAccounts=proja,suba / DenyAccounts=proja / AllowGroups=root / AllowQos=fast.
TEST(ScontrolRenderTest, PartitionAccessAsSlurmShowsIt) {
  ScontrolOptions o;
  api::PartitionInfo p = Debug({"vm"});
  p.partition.allowed_accounts = {"proja", "suba"};
  EXPECT_NE(RenderScontrolPartitions({p}, o).find(
                "   AllowGroups=ALL AllowAccounts=proja,suba AllowQos=ALL\n"),
            std::string::npos);
  p.partition.allowed_accounts.clear();
  p.partition.deny_accounts = {"proja"};
  EXPECT_NE(
      RenderScontrolPartitions({p}, o).find("   AllowGroups=ALL DenyAccounts=proja AllowQos=ALL\n"),
      std::string::npos);
  p.partition.deny_accounts.clear();
  p.partition.allowed_groups = {"root"};
  p.partition.allowed_qos = {"fast"};
  EXPECT_NE(
      RenderScontrolPartitions({p}, o).find("   AllowGroups=root AllowAccounts=ALL AllowQos=fast\n"),
      std::string::npos);
}

TEST(ScontrolRenderTest, Hostnames) {
  EXPECT_EQ(*ScontrolShowHostnames("gpu-[01-02],cpu1"), "gpu-01\ngpu-02\ncpu1\n");
  EXPECT_EQ(*ScontrolShowHostlist("n3,n1,n2", false), "n[3,1-2]\n");
  EXPECT_EQ(*ScontrolShowHostlist("n3,n1,n2", true), "n[1-3]\n");
  EXPECT_EQ(ScontrolShowHostnames("n[1-3]x").error().message, "Invalid hostlist: n[1-3]x");
}

// sacct's layout follows Slurm's print_fields (src/common/print_fields.c): right-aligned
// fields (JobID left), a blank after each, dashes under the header, '+' on cut text.
TEST(SacctRenderTest, DefaultAndParsableOutputs) {
  api::JobInfo done = MakeJob(44, "myjob", JobState::kCompleted);
  done.job.spec.account = "account1";
  done.job.start_time = At(10, 0, 0);
  done.job.end_time = At(10, 1, 5);
  done.job.allocation.nodes.push_back(NodeAllocation{.node_name = "vm", .cpus = 2, .mem_mb = 4096});
  api::JobInfo failed = MakeJob(45, "a_name_that_is_long", JobState::kFailed);
  failed.job.exit_code = 3;
  failed.job.start_time = At(10, 0, 0);
  failed.job.end_time = At(10, 0, 1);
  failed.job.allocation.nodes.push_back(NodeAllocation{.node_name = "vm", .cpus = 1});
  api::JobInfo pending = MakeJob(46, "later", JobState::kPending);
  SacctOptions o;
  o.now = At(11, 0, 0);
  auto r = RenderSacct({pending, failed, done}, o);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->text,
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
            "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
            "44                myjob      debug   account1          2  COMPLETED      0:0 \n"
            "44.batch          batch              account1          2  COMPLETED      0:0 \n"
            "45           a_name_th+      debug                     1     FAILED      3:0 \n"
            "45.batch          batch                                1     FAILED      3:0 \n"
            "46                later      debug                     0    PENDING      0:0 \n");
  o.parsable2 = true;
  o.allocations = true;
  o.format = "JobID,JobName%30,State,Elapsed,Start,End,NodeList,AllocTRES";
  r = RenderSacct({done, pending}, o);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->text,
            "JobID|JobName|State|Elapsed|Start|End|NodeList|AllocTRES\n"
            "44|myjob|COMPLETED|00:01:05|2026-11-29T10:00:00|2026-11-29T10:01:05|vm|billing=2,cpu="
            "2,mem=4G,node=1\n"
            "46|later|PENDING|00:00:00|Unknown|Unknown|None assigned|\n");
  o.parsable2 = false;
  o.parsable = true;
  o.no_header = true;
  o.format = "jobid,jobn,state";
  r = RenderSacct({done}, o);
  EXPECT_EQ(r->text, "44|myjob|COMPLETED|\n");
  o.format = "JobID,Bogus";
  EXPECT_EQ(RenderSacct({done}, o).error().message,
            "sacct: error: Invalid field requested: \"Bogus\"");
  o = SacctOptions{};
  o.format = "JobID%-20,JobName%-8";
  o.allocations = true;
  EXPECT_EQ(RenderSacct({done}, o)->text,
            "JobID                JobName  \n"
            "-------------------- -------- \n"
            "44                   myjob    \n");
}

}  // namespace
}  // namespace corral::slurm
