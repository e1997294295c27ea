#include "controller/internal/gpu_health_tracker.h"

#include <gtest/gtest.h>

namespace corral::controller::internal {
namespace {

const api::GpuHealth kXid{.gpu = 0, .reason = "XID 79", .latched = true};
const api::GpuHealth kHot{.gpu = 1, .reason = "temperature 97 C"};

Node FourGpuNode() {
  Node n;
  n.inventory.name = "node01";
  for (uint32_t i = 0; i < 4; ++i) n.inventory.gpus.push_back({.index = i});
  return n;
}

api::HeartbeatRequest Report(std::vector<api::GpuHealth> problems, std::string node_problem = "",
                             bool auto_resume = false) {
  return {.node = "node01",
          .gpu_problems = std::move(problems),
          .node_problem = std::move(node_problem),
          .auto_resume = auto_resume};
}

TEST(GpuHealthTrackerTest, ProblemsOfKnownGpusFailThemOnce) {
  GpuHealthTracker health;
  Node n = FourGpuNode();
  HealthChange c = health.Apply(n, Report({kXid, {.gpu = 9, .reason = "XID 79"}}));
  EXPECT_EQ(c.failed, GpuSet(0b1));
  ASSERT_EQ(c.problems.size(), 1u) << "GPU 9 is not the node's";
  EXPECT_EQ(health.problems("node01").size(), 1u);
  n.failed_gpus = c.failed;
  EXPECT_TRUE(health.Apply(n, Report({kXid})).failed.empty()) << "already out of service";
  EXPECT_TRUE(health.problems("node02").empty());
}

TEST(GpuHealthTrackerTest, AResumedGpuIgnoresItsLatchedProblemUntilTheAgentDropsIt) {
  GpuHealthTracker health;
  Node n = FourGpuNode();
  n.failed_gpus = health.Apply(n, Report({kXid, kHot})).failed;
  ASSERT_EQ(n.failed_gpus, GpuSet(0b11));
  // GPU 1 still fails a state check: it may not return.
  auto hot = health.CheckResumable("node01", 1);
  ASSERT_FALSE(hot.has_value());
  EXPECT_EQ(hot.error().message, "node node01 gpu 1: still fails its checks: temperature 97 C");
  ASSERT_TRUE(health.CheckResumable("node01", 0).has_value());
  health.Resume("node01", 0);
  n.failed_gpus.erase(0);
  HealthChange c = health.Apply(n, Report({kXid, kHot}));
  EXPECT_TRUE(c.failed.empty()) << "the latched XID being cleared is ignored";
  EXPECT_EQ(c.clear_gpus, (std::vector<uint32_t>{0}));
  c = health.Apply(n, Report({kHot}));  // dropped by the agent: clearing ends
  EXPECT_TRUE(c.clear_gpus.empty());
  c = health.Apply(n, Report({kXid, kHot}));
  EXPECT_EQ(c.failed, GpuSet(0b1)) << "a new XID takes it out again";
  // Resuming the node returns what passes its checks.
  n.failed_gpus = GpuSet(0b11);
  health.Apply(n, Report({kHot}));
  EXPECT_EQ(health.ResumeAll("node01", n.failed_gpus), GpuSet(0b1));
}

TEST(GpuHealthTrackerTest, AutoResumeReturnsGpusThatPassAgain) {
  GpuHealthTracker health;
  Node n = FourGpuNode();
  n.failed_gpus = health.Apply(n, Report({kHot}, "", true)).failed;
  EXPECT_EQ(health.Apply(n, Report({kHot}, "", true)).passing, GpuSet());
  EXPECT_EQ(health.Apply(n, Report({}, "", false)).passing, GpuSet()) << "not without auto_resume";
  EXPECT_EQ(health.Apply(n, Report({}, "", true)).passing, GpuSet(0b10));
}

TEST(GpuHealthTrackerTest, ANodeProblemDrainsAndAutoResumeEndsOnlyAHealthDrain) {
  GpuHealthTracker health;
  Node n = FourGpuNode();
  HealthChange c = health.Apply(n, Report({}, "nhc: /scratch is full"));
  EXPECT_EQ(c.drain, "health: nhc: /scratch is full");
  EXPECT_EQ(health.node_problem("node01"), "nhc: /scratch is full");
  n.drain = true;
  n.reason = c.drain;
  EXPECT_EQ(health.Apply(n, Report({}, "nhc: still full")).drain, "") << "drained already";
  EXPECT_FALSE(health.Apply(n, Report({}, "", false)).undrain);
  EXPECT_TRUE(health.Apply(n, Report({}, "", true)).undrain);
  n.reason = "maintenance";
  EXPECT_FALSE(health.Apply(n, Report({}, "", true)).undrain) << "an operator's drain stays";
}

TEST(GpuHealthTrackerTest, ReasonsOfAGpuAreJoined) {
  EXPECT_EQ(GpuHealthTracker::ReasonOf({kXid, {.gpu = 0, .reason = "ECC"}, kHot}, 0),
            "XID 79; ECC");
  EXPECT_EQ(GpuHealthTracker::ReasonOf({kHot}, 0), "");
}

}  // namespace
}  // namespace corral::controller::internal
