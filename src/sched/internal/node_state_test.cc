#include "sched/internal/node_state.h"

#include <gtest/gtest.h>

#include "sched/internal/test_pass.h"
#include "sched/testing/cluster_builder.h"

namespace corral::sched::internal {
namespace {

using testing::Gpus;
using testing::MakeNode;
using testing::Occupy;

// Nodes n1 (8 x h100), n2 (8 x h100, 6 busy), n3 (4 x a100 + 4 x h100); partition "main" over
// all, "small" over n3.
struct World : TestWorld {
  World() {
    config.partitions.push_back(Partition{.name = "small", .nodes = {"n3"}});
    NodeView mixed = MakeNode(3, "n3", 8);
    for (uint32_t g = 0; g < 4; ++g) mixed.gpus[g].model = "a100";
    snapshot.nodes = {MakeNode(1, "n1", 8), MakeNode(2, "n2", 8), mixed};
    snapshot.running = {Occupy(&snapshot.nodes[1], 100, GpuSet::FirstN(6), kNow - Minutes(10),
                               kNow + Minutes(50), 32, 256 * 1024)};
    snapshot.partitions = config.partitions;
  }
};

struct State {
  ConfigIndex index;
  NodeCache cache;
  NodeState nodes;
  explicit State(const World& w) : index(w.config), nodes(w.config, index, w.snapshot, cache) {}
};

Demand Gpu(uint32_t gpus, int type = 0) {
  return Demand{.cpus = 1, .mem = 1024, .gpus = gpus, .type = type};
}

TEST(NodeStateTest, FreeResourcesComeFromTheSnapshot) {
  World w;
  State s(w);
  ASSERT_EQ(s.nodes.size(), 3u);
  EXPECT_EQ(s.nodes.node(1).free, Gpus({6, 7}));
  EXPECT_EQ(s.nodes.node(1).cpus_free, 32u);
  EXPECT_TRUE(s.nodes.Fits(1, Gpu(2), false));
  EXPECT_FALSE(s.nodes.Fits(1, Gpu(3), false));
  EXPECT_FALSE(s.nodes.Fits(1, Demand{.cpus = 33, .gpus = 1}, false));
  // Exclusive: only an empty node, whole.
  Demand whole{.cpus = 1, .gpus = 8, .exclusive = true};
  EXPECT_FALSE(s.nodes.Fits(1, whole, false));
  EXPECT_TRUE(s.nodes.Fits(0, whole, false));
}

TEST(NodeStateTest, GpuTypesAndTheirMasks) {
  World w;
  State s(w);
  const int a100 = s.nodes.TypeId("a100"), h100 = s.nodes.TypeId("h100");
  EXPECT_GT(a100, 0);
  EXPECT_GT(h100, 0);
  EXPECT_EQ(s.nodes.TypeId(""), 0);
  EXPECT_EQ(s.nodes.TypeId("b200"), -1);
  EXPECT_EQ(s.nodes.TypeMask(2, a100), Gpus({0, 1, 2, 3}));
  EXPECT_EQ(s.nodes.TypeMask(2, h100), Gpus({4, 5, 6, 7}));
  EXPECT_EQ(s.nodes.TypeMask(0, a100), GpuSet());
  EXPECT_EQ(s.nodes.TypeMask(2, 0), GpuSet::FirstN(8));
  EXPECT_FALSE(s.nodes.Fits(2, Gpu(5, a100), false));
  EXPECT_TRUE(s.nodes.Fits(2, Gpu(4, a100), false));
}

TEST(NodeStateTest, PoolsFollowAllocations) {
  World w;
  State s(w);
  const int h100 = s.nodes.TypeId("h100");
  const Pool* main_h100 = s.nodes.PoolFor(0, h100);
  ASSERT_NE(main_h100, nullptr);
  EXPECT_EQ(main_h100->capacity, 8u);
  EXPECT_TRUE(main_h100->buckets[8].Contains(0));
  EXPECT_TRUE(main_h100->buckets[2].Contains(1));
  EXPECT_TRUE(main_h100->buckets[4].Contains(2));  // its h100 half
  EXPECT_EQ(s.nodes.PoolFor(1, s.nodes.TypeId("a100"))->capacity, 4u);
  EXPECT_EQ(s.nodes.PoolFor(0, -1), nullptr);

  const uint32_t ref = s.nodes.AddJob(RunJob{.end = kNow + Minutes(5), .gpus = 3});
  NodeAllocation got;
  s.nodes.Allocate(0, Gpu(3), Gpus({0, 1, 2}), ref, &got);
  EXPECT_EQ(got.node_name, "n1");
  EXPECT_EQ(got.gpus, Gpus({0, 1, 2}));
  EXPECT_EQ(got.cpus, 1u);
  EXPECT_FALSE(main_h100->buckets[8].Contains(0));
  EXPECT_TRUE(main_h100->buckets[5].Contains(0));
  EXPECT_EQ(s.nodes.node(0).free, Gpus({3, 4, 5, 6, 7}));
  ASSERT_EQ(s.nodes.uses(0).size(), 1u);
  EXPECT_EQ(s.nodes.uses(0)[0].job, ref);
}

TEST(NodeStateTest, HoldsKeepReservedResourcesFromLaterJobs) {
  World w;
  State s(w);
  s.nodes.HoldForReservation(0, Gpu(6), GpuSet::FirstN(6), kNow + Minutes(30));
  EXPECT_EQ(s.nodes.held_nodes(), (std::set<uint32_t>{0}));
  EXPECT_EQ(s.nodes.latest_hold_start(), kNow + Minutes(30));
  EXPECT_EQ(s.nodes.Available(0, 0, /*whole=*/false), Gpus({6, 7}));
  EXPECT_EQ(s.nodes.Available(0, 0, /*whole=*/true), GpuSet::FirstN(8));
  EXPECT_FALSE(s.nodes.Fits(0, Gpu(3), false));
  EXPECT_TRUE(s.nodes.Fits(0, Gpu(3), true));  // for a job that ends before the hold starts
  EXPECT_TRUE(s.nodes.PoolFor(0, 0)->buckets[2].Contains(0));
  // An exclusive job never takes a node with a hold, unless whole.
  EXPECT_FALSE(s.nodes.Fits(0, Demand{.cpus = 1, .gpus = 1, .exclusive = true}, false));
}

TEST(NodeStateTest, WindowsCoverTheirNodesOverTheirInterval) {
  World w;
  w.config.reservations = {Reservation{.name = "maint",
                                       .nodes = {"n1", "n3"},
                                       .start = kNow + Minutes(60),
                                       .end = kNow + Minutes(120)}};
  w.snapshot.reservations = {Reservation{.name = "dyn", .nodes = {"n2"}, .start = kNow}};
  State s(w);
  ASSERT_EQ(s.nodes.windows().size(), 2u);  // config first, then snapshot
  EXPECT_EQ(s.nodes.FindWindow("dyn"), 1);
  EXPECT_EQ(s.nodes.FindWindow("none"), -1);
  EXPECT_TRUE(s.nodes.InWindow(0, 2));
  EXPECT_FALSE(s.nodes.InWindow(0, 1));
  EXPECT_TRUE(s.nodes.WindowInPartition(0, 1));   // n3 is in "small"
  EXPECT_FALSE(s.nodes.WindowInPartition(1, 1));  // n2 is not
  JobInfo j;
  EXPECT_TRUE(s.nodes.WindowsOk(j, 0, kNow, kNow + Minutes(60)));  // ends as it starts
  EXPECT_FALSE(s.nodes.WindowsOk(j, 0, kNow, kNow + Minutes(61)));
  EXPECT_TRUE(s.nodes.WindowsOk(j, 0, kNow + Minutes(120), kNever));
  j.reservation = 0;  // its own reservation does not keep it out
  EXPECT_TRUE(s.nodes.WindowsOk(j, 0, kNow, kNow + Minutes(61)));
}

TEST(NodeStateTest, NodesOfAllocationsByIdThenName) {
  World w;
  State s(w);
  EXPECT_EQ(s.nodes.NodeIndexOf({.node = NodeId(2), .node_name = "n2"}), 1);
  EXPECT_EQ(s.nodes.NodeIndexOf({.node = NodeId(99), .node_name = "n3"}), 2);
  EXPECT_EQ(s.nodes.NodeIndexOf({.node = NodeId(99), .node_name = "gone"}), -1);
  EXPECT_EQ(s.nodes.FindNode("n1"), 0);
  EXPECT_EQ(s.nodes.FindNode("n9"), -1);
}

TEST(NodeStateTest, EarliestEndsFollowPreemptions) {
  World w;
  State s(w);
  const uint32_t ref = s.nodes.AddJob(
      RunJob{.view = &w.snapshot.running[0], .end = w.snapshot.running[0].expected_end});
  s.nodes.AddRunningUse(1, {ref, 32, 256 * 1024, GpuSet::FirstN(6)});
  s.nodes.TrackEnds();
  EXPECT_EQ(s.nodes.min_end(0), kNever);
  EXPECT_EQ(s.nodes.min_end(1), kNow + Minutes(50));
  s.nodes.EndBy(ref, kNow + Minutes(2));
  EXPECT_EQ(s.nodes.job(ref).end, kNow + Minutes(2));
  EXPECT_EQ(s.nodes.min_end(1), kNow + Minutes(2));
  s.nodes.EndBy(ref, kNow + Minutes(9));  // never later
  EXPECT_EQ(s.nodes.job(ref).end, kNow + Minutes(2));
}

TEST(NodeStateTest, AKeptIndexIsBroughtUpToDateLikeAFreshOne) {
  World w;
  ConfigIndex index(w.config);
  NodeCache kept;
  {
    NodeState first(w.config, index, w.snapshot, kept);
    const uint32_t ref = first.AddJob(RunJob{.end = kNever, .gpus = 2});
    NodeAllocation a;
    first.Allocate(0, Gpu(2), Gpus({0, 1}), ref, &a);  // a change the next pass must undo
    first.HoldForReservation(2, Gpu(1), Gpus({7}), kNow);
  }
  // The next snapshot: n2's job has ended.
  w.snapshot.nodes[1].used_gpus = GpuSet();
  w.snapshot.nodes[1].used_cpus = 0;
  w.snapshot.nodes[1].used_mem_mb = 0;
  w.snapshot.nodes[1].running_jobs = 0;
  w.snapshot.running.clear();
  NodeState warm(w.config, index, w.snapshot, kept);
  State fresh(w);
  for (uint32_t n = 0; n < 3; ++n) {
    EXPECT_EQ(warm.node(n).free, fresh.nodes.node(n).free) << n;
    EXPECT_EQ(warm.node(n).cpus_free, fresh.nodes.node(n).cpus_free) << n;
    EXPECT_EQ(warm.node(n).resv_gpus, fresh.nodes.node(n).resv_gpus) << n;
    EXPECT_EQ(warm.node(n).resv_start, kNever) << n;
    for (uint32_t k = 0; k <= 8; ++k) {
      EXPECT_EQ(warm.PoolFor(0, 0)->buckets[k].Contains(n),
                fresh.nodes.PoolFor(0, 0)->buckets[k].Contains(n))
          << n << " " << k;
    }
  }
  EXPECT_TRUE(warm.uses(0).empty());
}

}  // namespace
}  // namespace corral::sched::internal
