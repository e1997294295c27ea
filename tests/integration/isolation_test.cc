// Isolation defaults on a real node (root agent, this machine's cgroups; ctest label `os`): a
// fork bomb stays in its job, which ends with its cgroup, while another job on the node runs
// and the agent answers; a job given no memory gets its share of the node's.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Prints the job's own limit file `file` (pids.max, memory.max / memory.limit_in_bytes) as
// "LIMIT PATH" from its cgroup in the hierarchy of `controller`, v1 or v2.
std::string PrintLimit(const std::string& controller, const std::string& v1_file,
                       const std::string& v2_file) {
  return "while IFS= read -r l; do\n"
         "  case \"$l\" in\n"
         "    *:" + controller + ":*) f=/sys/fs/cgroup/" + controller + "${l#*:" + controller +
         ":}/" + v1_file + " ;;\n"
         "    0::*) for m in /sys/fs/cgroup /sys/fs/cgroup/unified; do\n"
         "            [ -f \"$m${l#0::}/" + v2_file + "\" ] && g=\"$m${l#0::}/" + v2_file + "\"\n"
         "          done ;;\n"
         "  esac\n"
         "done < /proc/self/cgroup\n"
         "f=${f:-$g}\n"
         "[ -n \"$f\" ] && echo \"$(cat \"$f\") $f\"\n";
}

ClusterOptions Options() {
  ClusterOptions o;
  o.nodes = 1;
  o.cpus_per_node = 4;
  o.gpus_per_node = 4;
  o.extra_agent_toml = "[cgroup]\npids_max = 64\n";
  return o;
}

bool Isolated(TestCluster& c, const std::string& what) {
  std::string log = Read(c.dir() + "/logs/node01.log");
  size_t at = log.find("jobs are isolated with ");
  return at != std::string::npos && log.find(what, at) < log.find('\n', at);
}

// Kills what is left in the cgroup whose limit file is `file` (a test that failed midway).
void KillCgroup(const std::string& file) {
  std::string dir = file.substr(0, file.rfind('/'));
  for (int round = 0; round < 100 && fs::exists(dir + "/cgroup.procs"); ++round) {
    std::istringstream procs(Read(dir + "/cgroup.procs"));
    bool any = false;
    for (int pid; procs >> pid;) any = kill(pid, SIGKILL) == 0 || any;
    if (!any) break;
  }
}

TEST(ForkBombTest, StaysInItsJobWhileTheNodeRunsOthersAndEndsWithItsCgroup) {
  if (geteuid() != 0) GTEST_SKIP() << "cgroups need a root agent";
  TestCluster cluster(Options());
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  if (!Isolated(cluster, "pids")) GTEST_SKIP() << "no pids controller on this machine";

  // The bomb runs only where its own cgroup holds it (pids.max = 64): it says where, then
  // forks without end, and the script waits to be cancelled.
  JobSpec bomb = cluster.ShellJob("");
  bomb.script = "#!/bin/bash\n" + PrintLimit("pids", "pids.max", "pids.max") +
                "[ -n \"$f\" ] && [ \"$(cat \"$f\")\" = 64 ] || exit 3\n"
                "mkfifo hold\n"
                "b() { b | b & }; b\n"
                "read -r _ < hold\n";  // blocks without a fork, until cancelled
  bomb.stdout_path = "bomb.out";
  auto b = cluster.Submit(bomb);
  ASSERT_TRUE(b.has_value()) << b.error().message;
  std::string limit_file;
  ASSERT_TRUE(WaitFor(
      [&] {
        std::string out = Read(cluster.work_dir() + "/bomb.out");
        size_t space = out.find(' ');
        if (out.rfind("64 ", 0) != 0 || out.find('\n') == std::string::npos) return false;
        limit_file = out.substr(space + 1, out.find('\n') - space - 1);
        return true;
      },
      seconds(30)))
      << Read(cluster.work_dir() + "/bomb.out");
  std::string current = limit_file.substr(0, limit_file.rfind('/')) + "/pids.current";
  // It comes up to its limit (its processes die and are forked again), never over it.
  auto tasks = [&] {
    std::string n = Read(current);
    return n.empty() ? 0 : std::stoi(n);
  };
  EXPECT_TRUE(WaitFor([&] { return tasks() >= 56; }, seconds(30))) << tasks();

  // Meanwhile another job on the node starts and ends, and the agent answers.
  JobSpec other = cluster.ShellJob("echo alive\n");
  other.stdout_path = "other.out";
  auto o = cluster.Submit(other);
  ASSERT_TRUE(o.has_value()) << o.error().message;
  auto done = cluster.WaitJob(o->job_id, seconds(60));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->job.state, JobState::kCompleted) << done->job.reason;
  EXPECT_EQ(Read(cluster.work_dir() + "/other.out"), "alive\n");
  auto nodes = cluster.ListNodes();
  ASSERT_TRUE(nodes.has_value() && !nodes->empty());
  auto agent =
      api::HttpClient::Create(nodes->front().node.inventory.address, cluster.client_options());
  ASSERT_TRUE(agent.has_value());
  auto health = (*agent)->Send("GET", "/api/v1/health", "", {}, true);
  ASSERT_TRUE(health.has_value()) << health.error().message;
  EXPECT_EQ(health->status, 200);
  EXPECT_LE(tasks(), 64);

  // Cancelled, the bomb goes with its cgroup.
  auto cancel = cluster.Cli({"cancel", b->job_id.ToString()});
  EXPECT_EQ(cancel.status, 0) << cancel.err;
  auto ended = cluster.WaitJob(b->job_id, seconds(60));
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->job.state, JobState::kCancelled) << ended->job.reason;
  bool gone = WaitFor([&] { return !fs::exists(limit_file); }, seconds(30));
  if (!gone) KillCgroup(limit_file);
  EXPECT_TRUE(gone) << "the bomb's cgroup " << limit_file << " is left";
}

TEST(DefaultMemoryTest, AJobGivenNoMemoryGetsItsShareOfTheNode) {
  if (geteuid() != 0) GTEST_SKIP() << "cgroups need a root agent";
  TestCluster cluster(Options());
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  if (!Isolated(cluster, "memory")) GTEST_SKIP() << "no memory controller on this machine";
  // 1 of the node's 4 CPUs, no GPU, no --mem: a quarter of its 65536 MB.
  JobSpec spec = cluster.ShellJob(PrintLimit("memory", "memory.limit_in_bytes", "memory.max"));
  spec.stdout_path = "mem.out";
  auto j = cluster.Submit(spec);
  ASSERT_TRUE(j.has_value()) << j.error().message;
  auto done = cluster.WaitJob(j->job_id, seconds(60));
  ASSERT_TRUE(done.has_value());
  ASSERT_EQ(done->job.state, JobState::kCompleted) << done->job.reason;
  std::string out = Read(cluster.work_dir() + "/mem.out");
  // The controller may send a partition default itself; the agent applies what it is given.
  uint64_t given = done->job.allocation.nodes.at(0).mem_mb;
  EXPECT_EQ(out.substr(0, out.find(' ')), std::to_string((given != 0 ? given : 16384) << 20))
      << out;
}

}  // namespace
}  // namespace corral::testing
