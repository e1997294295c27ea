#include "sched/internal/placement.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sched/internal/test_pass.h"
#include "sched/testing/cluster_builder.h"

namespace corral::sched::internal {
namespace {

using testing::Gpus;
using testing::MakeJob;
using testing::Occupy;

// `n` 8-GPU nodes n1..n<n>; the config's partitions.
ClusterSnapshot Nodes(const SchedulerConfig& c, uint32_t n) {
  ClusterSnapshot s;
  s.nodes = testing::MakeNodes(n, 8);
  s.partitions = c.partitions;
  return s;
}

// Places pending job `id` of the pass in partition 0.
PlaceResult Place(TestPass& pass, Placer& placer, uint64_t id, Placement* out) {
  const JobInfo& j = pass.Job(id);
  return placer.Place(j, 0, DemandFor(j, pass.snapshot.partitions[0]), out);
}

std::vector<std::string> NodeNames(const Placement& p) {
  std::vector<std::string> out;
  for (const NodeAllocation& a : p.nodes) out.push_back(a.node_name);
  return out;
}

TEST(PlacerTest, TheFullestNodeThatFitsThenOneNumaNode) {
  SchedulerConfig c = DefaultSchedulerConfig();
  ClusterSnapshot s = Nodes(c, 3);
  s.running = {Occupy(&s.nodes[0], 90, Gpus({0, 1, 2, 4, 5, 6}), kNow, kNever),  // 2 free
               Occupy(&s.nodes[1], 91, Gpus({0, 1, 4}), kNow, kNever),           // 5 free
               Occupy(&s.nodes[2], 92, Gpus({0, 4, 5}), kNow, kNever)};          // 5 free
  s.pending = {MakeJob(1, 1, 3), MakeJob(2, 1, 3)};
  TestPass pass(c, s, kNow);
  Placer placer(pass.snapshot, pass.nodes, pass.index.topology, kNow);
  Placement p;
  ASSERT_EQ(Place(pass, placer, 1, &p), PlaceResult::kPlaced);
  EXPECT_EQ(p.job, JobId(1));
  EXPECT_EQ(p.partition, "main");
  EXPECT_EQ(NodeNames(p), std::vector<std::string>{"n2"});  // 5 free, before n3 by id
  EXPECT_EQ(p.nodes[0].gpus, Gpus({5, 6, 7}));              // NUMA 1 has exactly three free
  // n2 has two left now: the next goes to n3, NUMA 0 ({1, 2, 3}).
  Placement q;
  ASSERT_EQ(Place(pass, placer, 2, &q), PlaceResult::kPlaced);
  EXPECT_EQ(NodeNames(q), std::vector<std::string>{"n3"});
  EXPECT_EQ(q.nodes[0].gpus, Gpus({1, 2, 3}));
  EXPECT_EQ(pass.nodes.node(1).free, Gpus({2, 3}));
}

TEST(PlacerTest, ExclusiveJobsTakeAWholeEmptyNode) {
  SchedulerConfig c = DefaultSchedulerConfig();
  ClusterSnapshot s = Nodes(c, 2);
  s.running = {Occupy(&s.nodes[0], 90, Gpus({0}), kNow, kNever)};
  PendingJobView j = MakeJob(1, 1, 2);
  j.resources.exclusive = true;
  s.pending = {j};
  TestPass pass(c, s, kNow);
  Placer placer(pass.snapshot, pass.nodes, pass.index.topology, kNow);
  Placement p;
  ASSERT_EQ(Place(pass, placer, 1, &p), PlaceResult::kPlaced);
  EXPECT_EQ(NodeNames(p), std::vector<std::string>{"n2"});
  EXPECT_EQ(p.nodes[0].gpus, GpuSet::FirstN(8));
  EXPECT_EQ(p.nodes[0].cpus, 64u);
  EXPECT_TRUE(pass.nodes.node(1).exclusive);
}

TEST(PlacerTest, RequestedNodesFirstAndEachMustFit) {
  SchedulerConfig c = DefaultSchedulerConfig();
  ClusterSnapshot s = Nodes(c, 4);
  s.running = {Occupy(&s.nodes[3], 90, GpuSet::FirstN(7), kNow, kNever)};
  PendingJobView pinned = MakeJob(1, 2, 4);
  pinned.resources.nodelist = {"n3"};
  PendingJobView full = MakeJob(2, 1, 4);
  full.resources.nodelist = {"n4"};  // one GPU free
  s.pending = {pinned, full};
  TestPass pass(c, s, kNow);
  Placer placer(pass.snapshot, pass.nodes, pass.index.topology, kNow);
  Placement p;
  ASSERT_EQ(Place(pass, placer, 1, &p), PlaceResult::kPlaced);
  EXPECT_EQ(NodeNames(p), (std::vector<std::string>{"n3", "n1"}));
  Placement q;
  EXPECT_EQ(Place(pass, placer, 2, &q), PlaceResult::kResources);
  EXPECT_TRUE(q.nodes.empty());
}

TEST(PlacerTest, GangJobsOnTheFewestLeafSwitches) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.switches = {SwitchConfig{.name = "a", .nodes = {"n1", "n2", "n3"}},
                SwitchConfig{.name = "b", .nodes = {"n4", "n5"}},
                SwitchConfig{.name = "spine", .switches = {"a", "b"}}};
  ClusterSnapshot s = Nodes(c, 5);
  s.pending = {MakeJob(1, 2, 8), MakeJob(2, 3, 8)};
  TestPass pass(c, s, kNow);
  Placer placer(pass.snapshot, pass.nodes, pass.index.topology, kNow);
  Placement p;
  ASSERT_EQ(Place(pass, placer, 1, &p), PlaceResult::kPlaced);
  EXPECT_EQ(NodeNames(p), (std::vector<std::string>{"n4", "n5"}));  // leaf b fits exactly
  Placement q;
  ASSERT_EQ(Place(pass, placer, 2, &q), PlaceResult::kPlaced);
  EXPECT_EQ(NodeNames(q), (std::vector<std::string>{"n1", "n2", "n3"}));
}

TEST(PlacerTest, HeldNodesWaitOnPriorityUnlessTheJobEndsFirst) {
  SchedulerConfig c = DefaultSchedulerConfig();
  ClusterSnapshot s = Nodes(c, 1);
  s.pending = {MakeJob(1, 1, 4, Minutes(60)), MakeJob(2, 1, 4, Minutes(20))};
  TestPass pass(c, s, kNow);
  // A reservation of this pass holds six GPUs from now + 30 minutes.
  pass.nodes.HoldForReservation(0, Demand{.cpus = 1, .gpus = 6}, GpuSet::FirstN(6),
                                kNow + Minutes(30));
  Placer placer(pass.snapshot, pass.nodes, pass.index.topology, kNow);
  Placement p;
  EXPECT_EQ(Place(pass, placer, 1, &p), PlaceResult::kPriority);
  Placement q;
  ASSERT_EQ(Place(pass, placer, 2, &q), PlaceResult::kPlaced);  // done before it starts
  EXPECT_EQ(q.nodes[0].gpus.size(), 4u);
}

TEST(PlacerTest, WindowsAndMissingTypesKeepJobsAway) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.reservations = {Reservation{.name = "maint",
                                .nodes = {"n1"},
                                .start = kNow + Minutes(30),
                                .end = kNow + Minutes(90),
                                .maintenance = true}};
  ClusterSnapshot s = Nodes(c, 2);
  s.running = {Occupy(&s.nodes[1], 90, GpuSet::FirstN(6), kNow, kNever)};
  PendingJobView typed = MakeJob(3, 1, 1);
  typed.resources.gpu_type = "a100";
  s.pending = {MakeJob(1, 1, 4, Minutes(60)), MakeJob(2, 1, 4, Minutes(20)), typed};
  TestPass pass(c, s, kNow);
  Placer placer(pass.snapshot, pass.nodes, pass.index.topology, kNow);
  Placement p;
  EXPECT_EQ(Place(pass, placer, 1, &p), PlaceResult::kResources);  // n1 is reserved by then
  ASSERT_EQ(Place(pass, placer, 2, &p), PlaceResult::kPlaced);     // done by then
  EXPECT_EQ(NodeNames(p), std::vector<std::string>{"n1"});
  EXPECT_EQ(Place(pass, placer, 3, &p), PlaceResult::kResources);  // no a100 anywhere
}

}  // namespace
}  // namespace corral::sched::internal
