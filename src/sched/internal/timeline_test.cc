#include "sched/internal/timeline.h"

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

// Three 8-GPU nodes: n1 runs jobs ending in 10 (GPUs 0-3) and 40 minutes (4-7); n2 one ending
// in 20 minutes (0-5); n3 one without a time limit (0-7).
struct World : TestWorld {
  World() {
    snapshot.nodes = testing::MakeNodes(3, 8);
    snapshot.running = {
        Occupy(&snapshot.nodes[0], 100, Gpus({0, 1, 2, 3}), kNow, kNow + Minutes(10)),
        Occupy(&snapshot.nodes[0], 101, Gpus({4, 5, 6, 7}), kNow, kNow + Minutes(40)),
        Occupy(&snapshot.nodes[1], 102, GpuSet::FirstN(6), kNow, kNow + Minutes(20)),
        Occupy(&snapshot.nodes[2], 103, GpuSet::FirstN(8), kNow, kNever)};
    snapshot.partitions = config.partitions;
  }
};

struct Pass {
  TestPass pass;
  Timeline timeline;
  explicit Pass(const World& w)
      : pass(w.config, w.snapshot, kNow),
        timeline(pass.snapshot, pass.nodes, w.config.backfill.window, kNow) {
    pass.nodes.TrackEnds();
  }
  Timestamp Earliest(uint64_t job, uint32_t node, Timestamp bound = kNever) {
    const JobInfo& j = pass.Job(job);
    return timeline.EarliestStart(j, node, DemandFor(j, pass.snapshot.partitions[0]), bound);
  }
};

TEST(TimelineTest, EarliestStartIsTheReleaseThatMakesItFit) {
  World w;
  PendingJobView exclusive = MakeJob(4, 1, 1);
  exclusive.resources.exclusive = true;
  w.snapshot.pending = {MakeJob(1, 1, 2), MakeJob(2, 1, 6), MakeJob(3, 1, 2), exclusive};
  Pass t(w);
  EXPECT_EQ(t.Earliest(1, 0), kNow + Minutes(10));
  EXPECT_EQ(t.Earliest(2, 0), kNow + Minutes(40));  // needs both jobs gone
  EXPECT_EQ(t.Earliest(3, 1), kNow);                // two free already
  EXPECT_EQ(t.Earliest(2, 1), kNow + Minutes(20));
  EXPECT_EQ(t.Earliest(1, 2), kNever);  // an unlimited job never ends
  EXPECT_EQ(t.Earliest(4, 0), kNow + Minutes(40));
  EXPECT_EQ(t.Earliest(2, 0, kNow + Minutes(40)), kNever);  // at the bound: none
}

TEST(TimelineTest, WindowsMoveTheStartPastThemAndOwnReservationsIntoThem) {
  World w;
  w.config.reservations = {
      Reservation{
          .name = "maint", .nodes = {"n2"}, .start = kNow + Minutes(30), .end = kNow + Minutes(90)},
      Reservation{.name = "mine",
                  .nodes = {"n1"},
                  .start = kNow + Minutes(50),
                  .end = kNow + Minutes(500)}};
  PendingJobView in_mine = MakeJob(2, 1, 2);
  in_mine.reservation = "mine";
  w.snapshot.pending = {MakeJob(1, 1, 6, Minutes(60)), in_mine};
  Pass t(w);
  // n2 frees six at +20, but a 60-minute job would run into the window at +30: after it.
  EXPECT_EQ(t.Earliest(1, 1), kNow + Minutes(90));
  // n1 frees two at +10; its own reservation starts at +50.
  EXPECT_EQ(t.Earliest(2, 0), kNow + Minutes(50));
}

TEST(TimelineTest, AGangJobStartsWhenItsLastNodeIsFreeAndHoldsThem) {
  World w;
  w.snapshot.pending = {MakeJob(1, 2, 6)};
  Pass t(w);
  Plan plan;
  Timestamp estimate{};
  ASSERT_TRUE(t.timeline.Reserve(t.pass.Job(1), {0}, /*forced=*/false, &plan, &estimate));
  EXPECT_EQ(estimate, kNow + Minutes(40));  // n2 at +20, n1 at +40
  ASSERT_EQ(plan.reservations.size(), 1u);
  const ReservedStart& r = plan.reservations[0];
  EXPECT_EQ(r.job, JobId(1));
  EXPECT_EQ(r.start, kNow + Minutes(40));
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.nodes[0].node_name, "n1");
  EXPECT_EQ(r.nodes[0].gpus.size(), 6u);
  EXPECT_EQ(r.nodes[1].node_name, "n2");
  EXPECT_EQ(r.nodes[1].gpus, GpuSet::FirstN(6) - Gpus({}));
  EXPECT_EQ(t.timeline.holders(), 1u);
  EXPECT_EQ(t.timeline.HoldersIn(0), std::vector<JobId>{JobId(1)});
  EXPECT_EQ(t.pass.nodes.node(1).resv_start, kNow + Minutes(40));
  EXPECT_EQ(t.pass.nodes.node(1).resv_gpus.size(), 6u);
  EXPECT_EQ(t.pass.nodes.held_nodes(), (std::set<uint32_t>{0, 1}));
}

TEST(TimelineTest, NoReservationBeyondTheBackfillWindowUnlessForced) {
  World w;
  w.config.backfill.window = Minutes(15);
  w.snapshot.pending = {MakeJob(1, 1, 8)};  // n2 at +20
  Pass t(w);
  Plan plan;
  Timestamp estimate{};
  EXPECT_FALSE(t.timeline.Reserve(t.pass.Job(1), {0}, /*forced=*/false, &plan, &estimate));
  EXPECT_TRUE(plan.reservations.empty());
  EXPECT_TRUE(t.timeline.Reserve(t.pass.Job(1), {0}, /*forced=*/true, &plan, &estimate));
  EXPECT_EQ(estimate, kNow + Minutes(20));
}

TEST(TimelineTest, HeldCpusStayHeldAndExclusiveJobsNeverShareAHold) {
  World w;
  PendingJobView cpu_heavy = MakeJob(1, 1, 2);
  cpu_heavy.resources.cpus_per_task = 60;
  PendingJobView exclusive = MakeJob(2, 1, 1);
  exclusive.resources.exclusive = true;
  w.snapshot.pending = {cpu_heavy, exclusive};
  Pass t(w);
  EXPECT_EQ(t.Earliest(1, 1), kNow);  // 63 CPUs free, two GPUs
  // A hold of 4 CPUs: 59 left next to it, 60 once job 102 releases its CPU at +20.
  t.pass.nodes.HoldForReservation(1, Demand{.cpus = 4, .gpus = 0}, GpuSet(), kNow + Minutes(60));
  EXPECT_EQ(t.Earliest(1, 1), kNow + Minutes(20));
  // Six more held: no release ever frees enough, as the held CPUs stay held.
  t.pass.nodes.HoldForReservation(1, Demand{.cpus = 6, .gpus = 0}, GpuSet(), kNow + Minutes(60));
  EXPECT_EQ(t.Earliest(1, 1), kNever);
  EXPECT_EQ(t.Earliest(2, 1), kNever);
}

}  // namespace
}  // namespace corral::sched::internal
