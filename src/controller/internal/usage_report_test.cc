#include "controller/internal/usage_report.h"

#include <gtest/gtest.h>

#include "api/report_codec.h"

namespace corral::controller::internal {
namespace {

const Timestamp kT0 = Timestamp(Seconds(1'700'000'000));

NodeInventory Node(std::string name, uint32_t cpus, std::vector<std::string> models) {
  NodeInventory n;
  n.name = std::move(name);
  n.cpus = cpus;
  for (uint32_t i = 0; i < models.size(); ++i) {
    n.gpus.push_back(GpuInfo{.index = i, .model = models[i]});
  }
  return n;
}

// A job of `user` in `account` that ran [start, end) on `node` with `cpus` CPUs and the GPUs of
// `gpus` (a bit set); `end` the epoch: still running.
Job Ran(uint64_t id, std::string account, std::string user, std::string partition,
        Timestamp start, Timestamp end, std::string node, uint32_t cpus, uint64_t gpus,
        double energy = 0) {
  Job j;
  j.id = JobId(id);
  j.spec.account = std::move(account);
  j.spec.user = std::move(user);
  j.partition = std::move(partition);
  j.state = end == Timestamp{} ? JobState::kRunning : JobState::kCompleted;
  j.submit_time = start - Seconds(10);
  j.start_time = start;
  j.end_time = end;
  j.allocation.nodes.push_back(
      {.node_name = std::move(node), .cpus = cpus, .gpus = GpuSet(gpus)});
  j.usage.energy_joules = energy;
  return j;
}

TEST(UsageReportTest, JobsCrossingTheWindowsEdgesCountOnlyTheirOverlap) {
  const UsageWindow window{kT0, kT0 + Seconds(3600)};
  std::vector<Job> jobs = {
      // Started 600 s before the window, ended 600 s into it: 600 s count.
      Ran(1, "nlp", "alice", "gpu", kT0 - Seconds(600), kT0 + Seconds(600), "n1", 4, 0b11, 1200),
      // Inside: 1000 s.
      Ran(2, "nlp", "bob", "gpu", kT0 + Seconds(100), kT0 + Seconds(1100), "n1", 2, 0b100),
      // Crosses the end: started 3000 s in, still running at `now` (window end + 1000 s).
      Ran(3, "vision", "carol", "cpu", kT0 + Seconds(3000), Timestamp{}, "n2", 8, 0),
      // Entirely before and entirely after: nothing.
      Ran(4, "nlp", "alice", "gpu", kT0 - Seconds(900), kT0 - Seconds(1), "n1", 4, 0b1),
      Ran(5, "nlp", "alice", "gpu", kT0 + Seconds(3600), kT0 + Seconds(4000), "n1", 4, 0b1),
  };
  Job pending;
  pending.id = JobId(6);
  pending.spec.account = "nlp";
  jobs.push_back(pending);
  std::vector<NodeInventory> nodes = {Node("n1", 16, {"h100", "h100", "a100", "a100"}),
                                      Node("n2", 32, {})};
  api::UsageReport r =
      BuildUsageReport(jobs, nodes, window, window.end + Seconds(1000), /*with_jobs=*/true);

  EXPECT_EQ(r.cluster_cpus, 48u);
  EXPECT_EQ(r.cluster_gpus, 4u);
  EXPECT_DOUBLE_EQ(r.reported_cpu_seconds, 48.0 * 3600);
  EXPECT_DOUBLE_EQ(r.reported_gpu_seconds, 4.0 * 3600);
  EXPECT_EQ(r.total.jobs, 3u);
  EXPECT_DOUBLE_EQ(r.total.cpu_seconds, 4 * 600 + 2 * 1000 + 8 * 600);
  EXPECT_DOUBLE_EQ(r.total.gpu_seconds, 2 * 600 + 1 * 1000);
  // Job 1's 1200 J over its 1200 s run: half of it falls in the window.
  EXPECT_DOUBLE_EQ(r.total.energy_joules, 600);

  ASSERT_EQ(r.accounts.size(), 2u);
  EXPECT_EQ(r.accounts[0].account, "nlp");
  EXPECT_EQ(r.accounts[0].jobs, 2u);
  EXPECT_DOUBLE_EQ(r.accounts[0].gpu_seconds, 2200);
  EXPECT_EQ(r.accounts[1].account, "vision");
  EXPECT_DOUBLE_EQ(r.accounts[1].cpu_seconds, 4800);

  ASSERT_EQ(r.users.size(), 3u);
  EXPECT_EQ(r.users[0].user, "alice");
  EXPECT_DOUBLE_EQ(r.users[0].energy_joules, 600);
  EXPECT_EQ(r.users[1].user, "bob");
  EXPECT_EQ(r.users[2].user, "carol");

  ASSERT_EQ(r.partitions.size(), 2u);
  EXPECT_EQ(r.partitions[0].partition, "cpu");
  EXPECT_DOUBLE_EQ(r.partitions[0].cpu_seconds, 4800);
  EXPECT_EQ(r.partitions[1].partition, "gpu");
  EXPECT_DOUBLE_EQ(r.partitions[1].gpu_seconds, 2200);

  // GPUs 0 and 1 of n1 are H100s (job 1), GPU 2 an A100 (job 2).
  ASSERT_EQ(r.gpu_models.size(), 2u);
  EXPECT_EQ(r.gpu_models[0].gpu_model, "a100");
  EXPECT_DOUBLE_EQ(r.gpu_models[0].gpu_seconds, 1000);
  EXPECT_EQ(r.gpu_models[1].gpu_model, "h100");
  EXPECT_DOUBLE_EQ(r.gpu_models[1].gpu_seconds, 1200);
  EXPECT_DOUBLE_EQ(r.gpu_models[1].energy_joules, 600);

  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.jobs[0].job, JobId(1));
  EXPECT_EQ(r.jobs[0].cpus, 4u);
  EXPECT_EQ(r.jobs[0].gpus, 2u);
  EXPECT_DOUBLE_EQ(r.jobs[2].cpu_seconds, 4800);
}

TEST(UsageReportTest, AJobSplitOverModelsAndAnUnknownNodeFallsBackToTheRequestedType) {
  Job j = Ran(1, "a", "u", "p", kT0, kT0 + Seconds(100), "n1", 1, 0b11, 400);
  j.allocation.nodes.push_back({.node_name = "gone", .cpus = 1, .gpus = GpuSet(0b1)});
  j.spec.resources.gpu_type = "l40s";
  std::vector<NodeInventory> nodes = {Node("n1", 8, {"h100", "a100"})};
  api::UsageReport r =
      BuildUsageReport(std::vector<Job>{j}, nodes, {kT0, kT0 + Seconds(1000)}, kT0, false);
  ASSERT_EQ(r.gpu_models.size(), 3u);
  EXPECT_EQ(r.gpu_models[0].gpu_model, "a100");
  EXPECT_EQ(r.gpu_models[1].gpu_model, "h100");
  EXPECT_EQ(r.gpu_models[2].gpu_model, "l40s");
  for (const auto& m : r.gpu_models) {
    EXPECT_DOUBLE_EQ(m.gpu_seconds, 100);
    EXPECT_NEAR(m.energy_joules, 400.0 / 3, 1e-9);
  }
  EXPECT_TRUE(r.jobs.empty());
  EXPECT_DOUBLE_EQ(r.total.cpu_seconds, 200);
}

TEST(UsageReportTest, RoundTripsThroughJson) {
  std::vector<Job> jobs = {Ran(1, "a", "u", "p", kT0, kT0 + Seconds(100), "n1", 1, 0b1, 5)};
  std::vector<NodeInventory> nodes = {Node("n1", 8, {"h100"})};
  api::UsageReport r = BuildUsageReport(jobs, nodes, {kT0, kT0 + Seconds(1000)}, kT0, true);
  r.own_only = true;
  r.user = "u";
  auto back = api::DecodeUsageReport(api::EncodeUsageReport(r));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, r);
  api::ShareReport s{{{.account = "root", .level_fairshare = -1},
                      {.account = "a", .user = "u", .depth = 1, .raw_shares = 2, .fairshare = 1}}};
  auto s_back = api::DecodeShareReport(api::EncodeShareReport(s));
  ASSERT_TRUE(s_back.has_value());
  EXPECT_EQ(*s_back, s);
  api::PriorityWeights w{.age = 1, .fairshare = 2, .job_size = 3, .partition = 4, .qos = 5};
  EXPECT_EQ(*api::DecodePriorityWeights(api::EncodePriorityWeights(w)), w);
}

}  // namespace
}  // namespace corral::controller::internal
