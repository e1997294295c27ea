// End to end: a controller and two agents (4 simulated GPUs each) run 50 jobs, some of them
// two-node jobs. Every job's CUDA_VISIBLE_DEVICES is exactly its allocation and disjoint from
// every job that overlapped it on the same node; outputs land in their files; exit codes come
// back.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "core/hostlist.h"
#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::map<std::string, std::string> ParseEnvDump(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

TEST(EndToEndTest, FiftyJobsWithDisjointGpusOutputsAndExitCodes) {
  TestCluster cluster({.nodes = 2, .gpus_per_node = 4});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();

  struct Submitted {
    JobId id;
    int expect_exit;
    uint32_t nodes;
    uint32_t gpus_per_node;
  };
  std::vector<Submitted> jobs;
  for (int i = 0; i < 50; ++i) {
    uint32_t nodes = i % 7 == 3 ? 2 : 1;
    uint32_t gpus = nodes == 2 ? 2 : static_cast<uint32_t>(1 + i % 4);
    int code = i % 5 == 4 ? 3 : 0;
    JobSpec spec = cluster.ShellJob(
        "echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\n"
        "echo CORRAL_JOB_ID=$CORRAL_JOB_ID\n"
        "echo CORRAL_NODENAME=$CORRAL_NODENAME\n"
        "echo CORRAL_NODELIST=$CORRAL_NODELIST\n"
        "echo CORRAL_NNODES=$CORRAL_NNODES\n"
        "echo MY_VAR=$MY_VAR\n"
        "echo PWD=$(pwd)\n"
        "echo to-stderr >&2\n"
        "sleep 0.0" + std::to_string(i % 10) + "\n"
        "exit " + std::to_string(code));
    spec.name = "e2e-" + std::to_string(i);
    spec.resources.nodes = nodes;
    spec.resources.ntasks = nodes;
    spec.resources.gpus_per_node = gpus;
    spec.environment.Mutable()["MY_VAR"] = "value-" + std::to_string(i);
    spec.stdout_path = "out-%j.txt";
    spec.stderr_path = "err-%j.txt";
    auto r = cluster.Submit(spec);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    jobs.push_back({r->job_id, code, nodes, gpus});
  }

  std::vector<Job> done;
  for (const auto& s : jobs) {
    auto info = cluster.WaitJob(s.id, std::chrono::seconds(120));
    ASSERT_TRUE(info.has_value()) << info.error().message << "\n" << cluster.ControllerLog();
    const Job& j = info->job;
    EXPECT_EQ(j.state, s.expect_exit == 0 ? JobState::kCompleted : JobState::kFailed) << j.id.ToString();
    EXPECT_EQ(j.exit_code, s.expect_exit);
    ASSERT_EQ(j.allocation.nodes.size(), s.nodes);
    for (const auto& na : j.allocation.nodes) EXPECT_EQ(na.gpus.size(), s.gpus_per_node);

    // The output landed in its own files, with the job's environment.
    std::string out = Read(cluster.work_dir() + "/out-" + j.id.ToString() + ".txt");
    auto env = ParseEnvDump(out);
    const NodeAllocation& batch = j.allocation.nodes.front();
    EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], batch.gpus.ToString()) << out;
    EXPECT_EQ(env["CORRAL_JOB_ID"], j.id.ToString());
    EXPECT_EQ(env["CORRAL_NODENAME"], batch.node_name);
    EXPECT_EQ(env["CORRAL_NODELIST"], CompressHostList(j.allocation.NodeNames()));
    EXPECT_EQ(env["CORRAL_NNODES"], std::to_string(s.nodes));
    EXPECT_EQ(env["MY_VAR"], "value-" + j.spec.name.substr(4));
    EXPECT_EQ(env["PWD"], cluster.work_dir());
    EXPECT_EQ(Read(cluster.work_dir() + "/err-" + j.id.ToString() + ".txt"), "to-stderr\n");
    done.push_back(j);
  }

  // No two jobs that overlapped in time on a node shared a GPU. The controller's interval of a
  // job (allocation to exit report) contains the process's whole life.
  int overlapping_pairs = 0;
  for (size_t a = 0; a < done.size(); ++a) {
    for (size_t b = a + 1; b < done.size(); ++b) {
      const Job& x = done[a];
      const Job& y = done[b];
      bool overlap = x.start_time < y.end_time && y.start_time < x.end_time;
      if (!overlap) continue;
      for (const auto& nx : x.allocation.nodes) {
        for (const auto& ny : y.allocation.nodes) {
          if (nx.node_name != ny.node_name) continue;
          ++overlapping_pairs;
          EXPECT_FALSE(nx.gpus.Intersects(ny.gpus))
              << "jobs " << x.id.ToString() << " and " << y.id.ToString() << " shared GPUs on " << nx.node_name;
        }
      }
    }
  }
  EXPECT_GT(overlapping_pairs, 0) << "the workload should make jobs run side by side";
}

TEST(EndToEndTest, TimeLimitEndsJobWithTimeout) {
  TestCluster cluster({.nodes = 1, .gpus_per_node = 1, .kill_grace_s = 1});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  JobSpec spec = cluster.ShellJob("echo started\nsleep 60\n");
  spec.time_limit = Seconds(1);
  auto r = cluster.Submit(spec);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  auto info = cluster.WaitJob(r->job_id, std::chrono::seconds(30));
  ASSERT_TRUE(info.has_value()) << info.error().message;
  EXPECT_EQ(info->job.state, JobState::kTimeout);
  auto elapsed = info->job.end_time - info->job.start_time;
  EXPECT_GE(elapsed, Seconds(1));
  EXPECT_LT(elapsed, Seconds(15));
}

}  // namespace
}  // namespace corral::testing
