// `corral top`'s frame from hand-made API answers: GPU states and holders, utilisation from
// the jobs' latest readings, waste flags, the queue's order, hostile names, and the JSON.
#include "cli/internal/top_view.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace corral::cli::internal {
namespace {

const Timestamp kNow = Timestamp{} + Seconds(1'800'000'000);

api::NodeInfo Node(const std::string& name, uint32_t gpus, NodeState state) {
  api::NodeInfo n;
  n.node.inventory.name = name;
  n.node.responding = true;
  n.node.registered = true;
  for (uint32_t g = 0; g < gpus; ++g) n.node.inventory.gpus.push_back({.index = g, .model = "h100"});
  n.state = state;
  n.partitions = {"gpu"};
  return n;
}

api::JobInfo Running(uint64_t id, const std::string& node, std::vector<uint32_t> gpus,
                     const std::string& user) {
  api::JobInfo j;
  j.job.id = JobId{id};
  j.job.state = JobState::kRunning;
  j.job.spec.user = user;
  j.job.spec.account = "ml";
  j.job.partition = "gpu";
  j.job.start_time = kNow - Seconds(65);
  NodeAllocation a{.node_name = node};
  for (uint32_t g : gpus) a.gpus.insert(g);
  j.job.allocation.nodes.push_back(a);
  return j;
}

api::GpuStatsInfo Stats(uint64_t id, const std::string& node, std::vector<std::pair<uint32_t, double>> util) {
  api::GpuStatsInfo s{.job = JobId{id}};
  for (auto [g, u] : util) {
    api::GpuStatsGpu gpu{.node = node, .gpu = g};
    gpu.buckets.push_back({.util_mean = 99});  // an older bucket
    gpu.buckets.push_back({.util_mean = u, .mem_max_mb = 1000});
    s.gpus.push_back(gpu);
  }
  return s;
}

struct Fixture {
  std::vector<api::NodeInfo> nodes;
  std::vector<api::JobInfo> jobs;
  std::map<JobId, api::GpuStatsInfo> stats;
};

Fixture TwoJobs() {
  Fixture f;
  api::NodeInfo n1 = Node("node01", 4, NodeState::kMixed);
  n1.alloc_gpus.insert(0);
  n1.alloc_gpus.insert(1);
  n1.node.failed_gpus.insert(3);
  f.nodes.push_back(n1);
  f.nodes.push_back(Node("node02", 2, NodeState::kDown));
  f.nodes.back().node.responding = false;
  f.jobs.push_back(Running(7, "node01", {0}, "alice"));
  api::JobInfo idle = Running(8, "node01", {1}, "bob");
  idle.gpu_waste = "GPUs node01:1 under 5% utilisation for 31m";
  f.jobs.push_back(idle);
  for (auto [id, prio] : {std::pair{9, 100}, std::pair{10, 500}}) {
    api::JobInfo p;
    p.job.id = JobId{static_cast<uint64_t>(id)};
    p.job.state = JobState::kPending;
    p.job.spec.user = "carol";
    p.job.spec.resources.gpus_per_node = 8;
    p.job.reason = "Resources";
    p.priority = prio;
    f.jobs.push_back(p);
  }
  f.stats.emplace(JobId{7}, Stats(7, "node01", {{0, 95}}));
  f.stats.emplace(JobId{8}, Stats(8, "node01", {{1, 0}}));
  return f;
}

TEST(TopViewTest, GpusShowTheirStateHolderLatestUtilisationAndWasteFlag) {
  Fixture x = TwoJobs();
  TopFrame f = BuildTopFrame(x.nodes, x.jobs, x.stats, kNow, "https://c:6900");
  ASSERT_EQ(f.nodes.size(), 2u);
  const TopNode& n1 = f.nodes[0];
  EXPECT_EQ(n1.name, "node01");
  EXPECT_EQ(n1.state, "mixed");
  ASSERT_EQ(n1.gpus.size(), 4u);
  EXPECT_EQ(n1.gpus[0].state, "allocated");
  EXPECT_EQ(n1.gpus[0].job, JobId{7});
  EXPECT_EQ(n1.gpus[0].util, 95);  // the latest bucket, not the older one
  EXPECT_FALSE(n1.gpus[0].waste);
  EXPECT_EQ(n1.gpus[1].job, JobId{8});
  EXPECT_TRUE(n1.gpus[1].waste);
  EXPECT_EQ(n1.gpus[2].state, "free");
  EXPECT_EQ(n1.gpus[3].state, "failed");
  EXPECT_EQ(f.nodes[1].gpus[0].state, "down");
  EXPECT_EQ(f.gpus_total, 6u);
  EXPECT_EQ(f.gpus_allocated, 2u);
  EXPECT_EQ(f.gpus_free, 1u);
  EXPECT_EQ(f.gpus_failed, 1u);
  EXPECT_EQ(f.gpus_down, 2u);
  EXPECT_EQ(f.waste_flagged, 1u);

  ASSERT_EQ(f.running.size(), 2u);
  EXPECT_EQ(f.running[0].nodes, "node01:0");
  EXPECT_EQ(f.running[0].util, 95);
  EXPECT_EQ(f.running[0].mem_mb, 1000u);
  EXPECT_EQ(f.running[0].elapsed, Seconds(65));
  ASSERT_EQ(f.pending.size(), 2u);
  EXPECT_EQ(f.pending[0].id, JobId{10});  // higher priority first
  EXPECT_EQ(f.pending[0].gpus, 8u);
}

TEST(TopViewTest, TextShowsNodesGpuCellsJobsAndTheQueue) {
  Fixture x = TwoJobs();
  TopFrame f = BuildTopFrame(x.nodes, x.jobs, x.stats, kNow, "https://c:6900");
  std::string text = FormatTopFrame(f, {.color = false, .width = 200});
  for (std::string_view want :
       {"GPUs: 6 (2 allocated, 1 free, 1 failed, 2 down)", "Jobs: 2 running, 2 pending",
        "Wasting GPUs: 1", "  0:95% j7  1:0% j8!  2:-  3:failed\n", " 1:05 ", "WASTE: GPUs node01:1",
        "Resources"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
  EXPECT_EQ(text.find("\x1b["), std::string::npos);  // no colours unless asked
  EXPECT_LT(text.find("\n10 "), text.find("\n9 "));
  std::string colored = FormatTopFrame(f, {.color = true, .width = 200});
  EXPECT_NE(colored.find("\x1b[31m1:0% j8!\x1b[0m"), std::string::npos) << colored;

  // A narrow terminal: no line is wider than it; a short one cuts the lists.
  std::string narrow = FormatTopFrame(f, {.width = 40, .height = 20});
  size_t start = 0;
  for (size_t end; (end = narrow.find('\n', start)) != std::string::npos; start = end + 1) {
    EXPECT_LE(end - start, 40u) << narrow.substr(start, end - start);
  }
}

TEST(TopViewTest, HostileNamesCannotDriveTheTerminal) {
  Fixture x = TwoJobs();
  x.jobs[0].job.spec.user = "evil\x1b[2J\x07\r\n\xC2\x9B" "31m";
  TopFrame f = BuildTopFrame(x.nodes, x.jobs, x.stats, kNow, "https://c:6900");
  std::string text = FormatTopFrame(f, {.width = 200});
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos);
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_NE(text.find("evil?[2J????31m"), std::string::npos) << text;
}

TEST(TopViewTest, JsonHasEveryNodeGpuAndJob) {
  Fixture x = TwoJobs();
  auto j = nlohmann::json::parse(
      EncodeTopFrame(BuildTopFrame(x.nodes, x.jobs, x.stats, kNow, "https://c:6900")));
  EXPECT_EQ(j["gpus"]["allocated"], 2);
  EXPECT_EQ(j["waste_flagged"], 1);
  EXPECT_EQ(j["nodes"][0]["gpus"][1]["job"], 8);
  EXPECT_EQ(j["nodes"][0]["gpus"][1]["waste"], true);
  EXPECT_EQ(j["nodes"][0]["gpus"][2]["util"], nullptr);
  EXPECT_EQ(j["running"][1]["gpu_waste"], "GPUs node01:1 under 5% utilisation for 31m");
  EXPECT_EQ(j["running"][0]["util"], 95.0);
  EXPECT_EQ(j["pending"][0]["id"], 10);
  EXPECT_EQ(j["pending"][0]["reason"], "Resources");
}

}  // namespace
}  // namespace corral::cli::internal
