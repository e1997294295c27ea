// Failures: the controller killed with SIGKILL in the middle of a burst of submissions, and
// an agent killed with SIGKILL while its jobs run.
#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

int LineCount(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  std::string line;
  while (std::getline(in, line)) ++n;
  return n;
}

TEST(FailureTest, ControllerKilledDuringSubmitBurstLosesNothingAndRunsNothingTwice) {
  TestCluster cluster({.nodes = 2, .gpus_per_node = 4});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();

  // Four submitters send 50 jobs each; each job appends one line to its own run log.
  std::mutex mu;
  std::vector<JobId> acknowledged;
  std::atomic<int> sent{0};
  std::atomic<bool> killed{false};
  auto submitter = [&](int t) {
    for (int i = 0; i < 50; ++i) {
      JobSpec spec = cluster.ShellJob("echo run >> runs-$CORRAL_JOB_ID.log\n");
      spec.name = "burst-" + std::to_string(t) + "-" + std::to_string(i);
      spec.resources.gpus_per_node = 1;
      sent++;
      auto r = cluster.Submit(spec);
      if (r) {
        std::lock_guard<std::mutex> lock(mu);
        acknowledged.push_back(r->job_id);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(submitter, t);
  // Kill the controller once about a third of the burst is out.
  ASSERT_TRUE(WaitFor([&] { return sent.load() >= 70; }, std::chrono::seconds(60)));
  cluster.KillController(SIGKILL);
  killed = true;
  for (auto& t : threads) t.join();
  size_t before_restart;
  {
    std::lock_guard<std::mutex> lock(mu);
    before_restart = acknowledged.size();
  }
  RecordProperty("acknowledged_before_kill", static_cast<int>(before_restart));
  std::printf("%zu of 200 submissions acknowledged before the kill\n", before_restart);
  EXPECT_GT(before_restart, 0u);
  EXPECT_LT(before_restart, 200u) << "the kill should have cut the burst short";

  ASSERT_TRUE(cluster.StartController().has_value()) << cluster.ControllerLog();
  // Every acknowledged submission is there after the restart and finishes, exactly once.
  for (JobId id : acknowledged) {
    auto info = cluster.WaitJob(id, std::chrono::seconds(120));
    ASSERT_TRUE(info.has_value()) << "job " << id.ToString() << ": " << info.error().message << "\n"
                                  << cluster.ControllerLog();
    EXPECT_EQ(info->job.state, JobState::kCompleted) << "job " << id.ToString() << " " << info->job.reason;
    EXPECT_EQ(LineCount(cluster.work_dir() + "/runs-" + id.ToString() + ".log"), 1)
        << "job " << id.ToString() << " ran more or less than once";
  }
  // And no job ran that the controller does not know.
  auto all = cluster.ListJobs("?all=1");
  ASSERT_TRUE(all.has_value());
  std::set<uint64_t> known;
  for (const auto& j : *all) known.insert(j.job.id.value);
  for (const auto& f : std::filesystem::directory_iterator(cluster.work_dir())) {
    std::string name = f.path().filename().string();
    if (name.rfind("runs-", 0) != 0) continue;
    uint64_t id = std::stoull(name.substr(5));
    EXPECT_TRUE(known.contains(id)) << name;
  }
}

TEST(FailureTest, KilledAgentTakesNodeDownAndFailsOrRequeuesItsJobs) {
  TestCluster cluster({.nodes = 2, .gpus_per_node = 1, .heartbeat_interval_s = 1, .node_timeout_s = 3});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();

  // Two jobs fill both nodes; the plain one is on node01.
  JobSpec plain = cluster.ShellJob("echo \"$CORRAL_NODENAME\" >> plain.log\nsleep 300\n");
  plain.resources.gpus_per_node = 1;
  plain.resources.nodelist = {"node01"};
  auto a = cluster.Submit(plain);
  ASSERT_TRUE(a.has_value()) << a.error().message;
  ASSERT_TRUE(WaitFor([&] { return cluster.GetJob(a->job_id)->job.state == JobState::kRunning; },
                      std::chrono::seconds(20)));
  JobSpec requeue = cluster.ShellJob(
      "echo \"$CORRAL_NODENAME $CORRAL_RESTART_COUNT\" >> requeue.log\n"
      "if [ \"$CORRAL_NODENAME\" = node02 ]; then sleep 300; fi\n");
  requeue.resources.gpus_per_node = 1;
  requeue.requeue = true;
  auto b = cluster.Submit(requeue);
  ASSERT_TRUE(b.has_value());
  ASSERT_TRUE(WaitFor([&] { return cluster.GetJob(b->job_id)->job.state == JobState::kRunning; },
                      std::chrono::seconds(20)));
  ASSERT_EQ(cluster.GetJob(b->job_id)->job.allocation.nodes[0].node_name, "node02");

  // node02's agent dies: the requeueable job goes back to the queue and finishes on node01
  // once the plain job there is cancelled.
  cluster.KillAgent(2, SIGKILL);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto nodes = cluster.ListNodes();
        return nodes && (*nodes)[1].state == NodeState::kDown;
      },
      std::chrono::seconds(20)));
  auto jb = cluster.GetJob(b->job_id);
  EXPECT_EQ(jb->job.state, JobState::kPending);
  EXPECT_EQ(jb->job.restart_count, 1u);
  ASSERT_TRUE(cluster.Request("POST", "/api/v1/jobs/" + a->job_id.ToString() + "/cancel", "").has_value());
  auto done = cluster.WaitJob(b->job_id, std::chrono::seconds(60));
  ASSERT_TRUE(done.has_value()) << done.error().message;
  EXPECT_EQ(done->job.state, JobState::kCompleted);
  EXPECT_EQ(done->job.allocation.nodes[0].node_name, "node01");

  // node01's agent dies while a plain job runs: NODE_FAIL.
  auto c = cluster.Submit(plain);
  ASSERT_TRUE(c.has_value());
  ASSERT_TRUE(WaitFor([&] { return cluster.GetJob(c->job_id)->job.state == JobState::kRunning; },
                      std::chrono::seconds(20)));
  cluster.KillAgent(1, SIGKILL);
  auto failed = cluster.WaitJob(c->job_id, std::chrono::seconds(30));
  ASSERT_TRUE(failed.has_value()) << failed.error().message;
  EXPECT_EQ(failed->job.state, JobState::kNodeFail);

  // The agent comes back: it kills the process its previous run left behind, and the node
  // is usable again.
  ASSERT_TRUE(cluster.StartAgent(1).has_value());
  ASSERT_TRUE(cluster.WaitForNodes(1).has_value());
  JobSpec quick = cluster.ShellJob("exit 0");
  quick.resources.nodelist = {"node01"};
  auto d = cluster.Submit(quick);
  ASSERT_TRUE(d.has_value());
  auto quick_done = cluster.WaitJob(d->job_id, std::chrono::seconds(30));
  ASSERT_TRUE(quick_done.has_value());
  EXPECT_EQ(quick_done->job.state, JobState::kCompleted);
}

}  // namespace
}  // namespace corral::testing

namespace corral::testing {
namespace {

TEST(FailureTest, SecondControllerOnTheSameStateRefusesToStart) {
  TestCluster cluster({.nodes = 1, .gpus_per_node = 1});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  CliResult second = cluster.Cli({"controller", "--config", cluster.dir() + "/corral.toml"});
  EXPECT_EQ(second.status, 1);
  EXPECT_NE(second.err.find("another controller is running"), std::string::npos) << second.err;
  // The first one is unharmed.
  auto r = cluster.Submit(cluster.ShellJob("exit 0"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(cluster.WaitJob(r->job_id)->job.state, JobState::kCompleted);
}

}  // namespace
}  // namespace corral::testing
