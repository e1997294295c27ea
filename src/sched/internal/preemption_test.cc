#include "sched/internal/preemption.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sched/internal/test_pass.h"
#include "sched/testing/cluster_builder.h"

namespace corral::sched::internal {
namespace {

using testing::Gpus;
using testing::MakeJob;
using testing::MakeNode;
using testing::Occupy;

// QOS "high" preempts "scavenger" (grace 3 minutes); "keep" is never preempted.
SchedulerConfig Config() {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.qos = {QosConfig{.name = "normal"},
           QosConfig{.name = "high", .priority = 10, .preempt = {"scavenger", "keep"}},
           QosConfig{.name = "scavenger", .grace_time = Minutes(3)},
           QosConfig{.name = "keep", .preempt_mode = PreemptMode::kOff}};
  return c;
}

// A running job of `qos` on `node` with `gpus`, started `minutes_ago`.
RunningJobView Running(NodeView* node, uint64_t id, GpuSet gpus, int64_t minutes_ago,
                       std::string qos = "scavenger") {
  RunningJobView r = Occupy(node, id, gpus, kNow - Minutes(minutes_ago), kNow + Minutes(600));
  r.qos = std::move(qos);
  return r;
}

PendingJobView High(uint64_t id, uint32_t nodes, uint32_t gpus) {
  PendingJobView j = MakeJob(id, nodes, gpus);
  j.qos = "high";
  return j;
}

struct Pass {
  TestPass pass;
  Timeline timeline;
  Preemptor preemptor;
  Pass(const SchedulerConfig& c, const ClusterSnapshot& s)
      : pass(c, s, kNow),
        timeline(pass.snapshot, pass.nodes, pass.config.backfill.window, kNow),
        preemptor(pass.config, pass.index, pass.snapshot, pass.nodes, pass.limits, timeline, kNow) {
  }
  // The victims' job ids of `choice`, in its order.
  std::vector<uint64_t> Victims(const Preemptor::Choice& choice) {
    std::vector<uint64_t> ids;
    for (uint32_t ref : choice.victims) ids.push_back(pass.nodes.job(ref).view->id.value);
    return ids;
  }
};

ClusterSnapshot Snapshot(const SchedulerConfig& c, std::vector<NodeView> nodes,
                         std::vector<RunningJobView> running, std::vector<PendingJobView> pending) {
  ClusterSnapshot s;
  s.nodes = std::move(nodes);
  s.partitions = c.partitions;
  s.running = std::move(running);
  s.pending = std::move(pending);
  return s;
}

TEST(PreemptorTest, TheVictimThatLosesLeastWork) {
  SchedulerConfig c = Config();
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 8)};
  std::vector<RunningJobView> running = {Running(&nodes[0], 10, Gpus({0, 1, 2, 3}), 120),
                                         Running(&nodes[0], 11, Gpus({4, 5, 6, 7}), 10)};
  Pass t(c, Snapshot(c, nodes, running, {High(1, 1, 4)}));
  std::optional<Preemptor::Choice> choice = t.preemptor.Choose(t.pass.Job(1), {0});
  ASSERT_TRUE(choice);
  EXPECT_EQ(t.Victims(*choice), std::vector<uint64_t>{11});  // 40 GPU-minutes, not 480
  ASSERT_EQ(choice->nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(choice->nodes[0].cost, 4 * 10 * 60.0);
  EXPECT_EQ(t.preemptor.searches(), 1u);
}

TEST(PreemptorTest, ACheckpointMakesAnOldJobCheapAndTiesGoToFewerGpusThenJobId) {
  SchedulerConfig c = Config();
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 8)};
  RunningJobView old = Running(&nodes[0], 10, Gpus({0, 1}), 300);
  old.last_checkpoint = kNow - Minutes(5);                     // 2 GPUs x 5 minutes
  RunningJobView one = Running(&nodes[0], 11, Gpus({2}), 10);  // 1 x 10: the same lost work
  RunningJobView other = Running(&nodes[0], 12, Gpus({3}), 10);
  std::vector<RunningJobView> running = {old, one, other,
                                         Running(&nodes[0], 13, Gpus({4, 5, 6, 7}), 60)};
  Pass t(c, Snapshot(c, nodes, running, {High(1, 1, 1), High(2, 1, 2)}));
  std::optional<Preemptor::Choice> first = t.preemptor.Choose(t.pass.Job(1), {0});
  ASSERT_TRUE(first);
  EXPECT_EQ(t.Victims(*first), std::vector<uint64_t>{11});  // fewer GPUs than 10, lower id than 12
  std::optional<Preemptor::Choice> second = t.preemptor.Choose(t.pass.Job(2), {0});
  ASSERT_TRUE(second);
  // Taken in that order until the job fits: 11 and 12 (one GPU each). The choice is greedy per
  // node, not the cheapest set: 10 alone would lose half as much.
  EXPECT_EQ(t.Victims(*second), (std::vector<uint64_t>{11, 12}));
}

TEST(PreemptorTest, VictimsNotNeededAfterAllAreDropped) {
  SchedulerConfig c = Config();
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 8)};
  std::vector<RunningJobView> running = {Running(&nodes[0], 10, Gpus({0}), 1),           // 60 s
                                         Running(&nodes[0], 11, Gpus({1, 2, 3, 4}), 1),  // 240 s
                                         Running(&nodes[0], 12, Gpus({5, 6, 7}), 1, "normal")};
  Pass t(c, Snapshot(c, nodes, running, {High(1, 1, 4)}));
  std::optional<Preemptor::Choice> choice = t.preemptor.Choose(t.pass.Job(1), {0});
  ASSERT_TRUE(choice);
  // 10 is taken first, then 11; with 11 gone 10 is not needed.
  EXPECT_EQ(t.Victims(*choice), std::vector<uint64_t>{11});
  EXPECT_EQ(choice->nodes[0].victim_gpus, 4u);
}

TEST(PreemptorTest, TheCheapestNodesForAGangJobTiesByNodeId) {
  SchedulerConfig c = Config();
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 8), MakeNode(2, "n2", 8), MakeNode(3, "n3", 8)};
  std::vector<RunningJobView> running = {Running(&nodes[0], 10, GpuSet::FirstN(8), 50),
                                         Running(&nodes[1], 11, GpuSet::FirstN(8), 20),
                                         Running(&nodes[2], 12, GpuSet::FirstN(8), 20)};
  Pass t(c, Snapshot(c, nodes, running, {High(1, 2, 8)}));
  std::optional<Preemptor::Choice> choice = t.preemptor.Choose(t.pass.Job(1), {0});
  ASSERT_TRUE(choice);
  ASSERT_EQ(choice->nodes.size(), 2u);
  EXPECT_EQ(choice->nodes[0].node, 1u);
  EXPECT_EQ(choice->nodes[1].node, 2u);
  EXPECT_EQ(t.Victims(*choice), (std::vector<uint64_t>{11, 12}));
}

TEST(PreemptorTest, JobsThatMayNotBePreemptedAreNeverVictims) {
  SchedulerConfig c = Config();
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 8), MakeNode(2, "n2", 8)};
  std::vector<RunningJobView> running = {Running(&nodes[0], 10, GpuSet::FirstN(8), 5, "keep"),
                                         Running(&nodes[1], 11, GpuSet::FirstN(4), 5, "normal"),
                                         Running(&nodes[1], 12, Gpus({4, 5, 6, 7}), 5)};
  PendingJobView whole = High(1, 1, 1);
  whole.resources.exclusive = true;          // n2 also runs a job of "normal"
  PendingJobView normal = MakeJob(2, 1, 8);  // QOS normal preempts nothing
  Pass t(c, Snapshot(c, nodes, running, {whole, High(3, 1, 4), normal}));
  EXPECT_FALSE(t.preemptor.Choose(t.pass.Job(1), {0}));
  std::optional<Preemptor::Choice> half = t.preemptor.Choose(t.pass.Job(3), {0});
  ASSERT_TRUE(half);
  EXPECT_EQ(t.Victims(*half), std::vector<uint64_t>{12});
  const uint32_t searched = t.preemptor.searches();
  EXPECT_FALSE(t.preemptor.Choose(t.pass.Job(2), {0}));
  EXPECT_EQ(t.preemptor.searches(), searched);  // no rights, no search
}

TEST(PreemptorTest, AGuaranteedAccountReclaimsBorrowedGpus) {
  SchedulerConfig c = Config();
  c.accounts = {AccountConfig{.name = "owner", .guaranteed_gpus = 8},
                AccountConfig{.name = "guest"}};
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 8)};
  RunningJobView borrowed = Running(&nodes[0], 10, GpuSet::FirstN(8), 30, "normal");
  borrowed.account = "guest";
  PendingJobView j = MakeJob(1, 1, 8);
  j.account = "owner";
  Pass t(c, Snapshot(c, nodes, {borrowed}, {j}));
  ASSERT_TRUE(t.pass.nodes.job(0).borrowed);
  std::optional<Preemptor::Choice> choice = t.preemptor.Choose(t.pass.Job(1), {0});
  ASSERT_TRUE(choice);
  EXPECT_EQ(t.Victims(*choice), std::vector<uint64_t>{10});
}

TEST(PreemptorTest, OrdersAReservationAndAnExplanation) {
  SchedulerConfig c = Config();
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 8)};
  RunningJobView no_requeue = Running(&nodes[0], 10, GpuSet::FirstN(8), 30);
  no_requeue.requeue_allowed = false;
  Pass t(c, Snapshot(c, nodes, {no_requeue}, {High(1, 1, 8), High(2, 1, 8)}));
  Plan plan;
  std::vector<Blocker> out;
  Timestamp estimate{};
  ASSERT_TRUE(t.preemptor.TryPreempt(t.pass.Job(1), {0}, &plan, &out, &estimate));
  ASSERT_EQ(plan.preemption_orders.size(), 1u);
  const PreemptionOrder& o = plan.preemption_orders[0];
  EXPECT_EQ(o.job, JobId(10));
  EXPECT_EQ(o.preemptor, JobId(1));
  EXPECT_EQ(o.mode, PreemptMode::kCancel);  // requeue not allowed
  EXPECT_EQ(o.grace_time, Minutes(3));
  EXPECT_EQ(o.reason, "qos high preempts qos scavenger");
  EXPECT_EQ(plan.preemptions, std::vector<JobId>{JobId(10)});
  ASSERT_EQ(plan.reservations.size(), 1u);
  EXPECT_EQ(plan.reservations[0].start, kNow + Minutes(3));
  EXPECT_EQ(estimate, kNow + Minutes(3));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].detail, "waiting for 8 GPUs in partition main: preempting job 10 (grace 3:00)");
  EXPECT_TRUE(t.pass.nodes.job(0).being_preempted);
  EXPECT_EQ(t.pass.nodes.job(0).end, kNow + Minutes(3));
  // The victim is taken: the next job of the shape finds none, and the failure is remembered.
  EXPECT_FALSE(t.preemptor.Choose(t.pass.Job(2), {0}));
  EXPECT_EQ(t.preemptor.searches(), 2u);
  EXPECT_FALSE(t.preemptor.Choose(t.pass.Job(2), {0}));
  EXPECT_EQ(t.preemptor.searches(), 2u);
}

}  // namespace
}  // namespace corral::sched::internal
