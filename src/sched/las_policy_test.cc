#include "sched/las_policy.h"

#include <gtest/gtest.h>

#include "sched/policy_factory.h"
#include "sched/testing/cluster_builder.h"

namespace corral::sched {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::Occupy;

const Timestamp kNow = Timestamp(Seconds(1'700'000'000));

ClusterSnapshot Nodes(uint32_t count, uint32_t gpus) {
  ClusterSnapshot s;
  for (uint32_t i = 1; i <= count; ++i)
    s.nodes.push_back(MakeNode(i, "n" + std::to_string(i), gpus));
  s.partitions = {Partition{.name = "main", .is_default = true}};
  return s;
}

std::unique_ptr<LasPolicy> Las(SchedulerConfig config = DefaultSchedulerConfig()) {
  auto p = LasPolicy::Create(config);
  EXPECT_TRUE(p.has_value());
  return std::move(*p);
}

TEST(LasPolicyTest, LevelsFollowTheThresholds) {
  auto las = Las();
  EXPECT_EQ(las->Level(0), 0u);
  EXPECT_EQ(las->Level(3599), 0u);
  EXPECT_EQ(las->Level(3600), 1u);
  EXPECT_EQ(las->Level(35999), 1u);
  EXPECT_EQ(las->Level(36000), 2u);
  RunningJobView r;
  r.start_time = kNow - Minutes(30);
  r.allocation.nodes.push_back({.node = NodeId(1), .gpus = GpuSet::FirstN(2)});
  EXPECT_EQ(las->RunningLevel(r, kNow), 1u);  // 2 GPUs x 30 minutes = 1 GPU-hour
}

TEST(LasPolicyTest, RejectsBadThresholds) {
  EXPECT_FALSE(LasPolicy::Create(DefaultSchedulerConfig(), {.thresholds_gpu_seconds = {10, 10}})
                   .has_value());
  EXPECT_FALSE(
      LasPolicy::Create(DefaultSchedulerConfig(), {.thresholds_gpu_seconds = {-1}}).has_value());
  EXPECT_TRUE(
      LasPolicy::Create(DefaultSchedulerConfig(), {.thresholds_gpu_seconds = {}}).has_value());
}

TEST(LasPolicyTest, LeastAttainedServiceStartsFirst) {
  ClusterSnapshot s = Nodes(1, 1);
  s.pending = {MakeJob(1, 1, 1), MakeJob(2, 1, 1)};
  s.pending[0].attained_service = Seconds(7200);  // queue 1: older, but served already
  Plan p = Las()->Decide(s, kNow);
  ASSERT_EQ(p.starts.size(), 1u);
  EXPECT_EQ(p.starts[0].job, JobId(2));
  EXPECT_TRUE(p.preemptions.empty());
}

TEST(LasPolicyTest, PreemptsAMoreServedJobForAFreshOne) {
  ClusterSnapshot s = Nodes(1, 4);
  s.running = {
      Occupy(&s.nodes[0], 10, GpuSet::FirstN(4), kNow - Minutes(120), kNow + Minutes(600))};
  s.pending = {MakeJob(11, 1, 4)};
  SchedulerConfig config = DefaultSchedulerConfig();
  config.preemption.grace_time = Seconds(30);
  Plan p = Las(config)->Decide(s, kNow);
  EXPECT_TRUE(p.starts.empty());
  ASSERT_EQ(p.preemptions, std::vector<JobId>{JobId(10)});
  ASSERT_EQ(p.preemption_orders.size(), 1u);
  EXPECT_EQ(p.preemption_orders[0].preemptor, JobId(11));
  EXPECT_EQ(p.preemption_orders[0].mode, PreemptMode::kRequeue);
  EXPECT_EQ(p.preemption_orders[0].grace_time, Seconds(30));
}

TEST(LasPolicyTest, DoesNotPreemptWithinTheSameQueue) {
  ClusterSnapshot s = Nodes(1, 4);
  // 4 GPUs x 10 minutes = 40 GPU-minutes: still queue 0, like the waiting job.
  s.running = {Occupy(&s.nodes[0], 10, GpuSet::FirstN(4), kNow - Minutes(10), kNow + Minutes(600))};
  s.pending = {MakeJob(11, 1, 4)};
  auto las = Las();
  Plan p = las->Decide(s, kNow);
  EXPECT_TRUE(p.preemptions.empty());
  EXPECT_FALSE(las->MayPreempt(s, kNow));
  // It reaches 1 GPU-hour 15 minutes after its start; then a pass could preempt it.
  EXPECT_EQ(las->NextLevelChange(s, kNow), kNow + Minutes(5));
  EXPECT_TRUE(las->MayPreempt(s, kNow + Minutes(5)));
}

TEST(LasPolicyTest, PicksTheMostServedThenYoungestVictimOnTheCheapestNode) {
  ClusterSnapshot s = Nodes(2, 4);
  s.running = {
      Occupy(&s.nodes[0], 1, GpuSet(0b0011), kNow - Minutes(600),
             kNow + Minutes(600)),  // 20 GPU-h: queue 2
      Occupy(&s.nodes[0], 2, GpuSet(0b1100), kNow - Minutes(60),
             kNow + Minutes(600)),  // 2 GPU-h: queue 1
      Occupy(&s.nodes[1], 3, GpuSet(0b0011), kNow - Minutes(45),
             kNow + Minutes(600)),  // 1.5 GPU-h: queue 1
      Occupy(&s.nodes[1], 4, GpuSet(0b1100), kNow - Minutes(40),
             kNow + Minutes(600)),  // 1.3 GPU-h: queue 1
  };
  s.pending = {MakeJob(11, 1, 2)};
  Plan p = Las()->Decide(s, kNow);
  // Node 1's cheapest victim loses 20 GPU-hours, node 2's 1.33: node 2, its youngest job.
  ASSERT_EQ(p.preemptions, std::vector<JobId>{JobId(4)});
}

TEST(LasPolicyTest, VictimsOnTheirWayAreNotPickedAgain) {
  ClusterSnapshot s = Nodes(1, 4);
  s.running = {
      Occupy(&s.nodes[0], 10, GpuSet::FirstN(4), kNow - Minutes(120), kNow + Minutes(600))};
  s.running[0].preempt_deadline = kNow + Seconds(30);
  s.running[0].preempted_for = JobId(11);
  s.pending = {MakeJob(11, 1, 4), MakeJob(12, 1, 4)};
  auto las = Las();
  Plan p = las->Decide(s, kNow);
  EXPECT_TRUE(p.preemptions.empty());
  EXPECT_FALSE(las->MayPreempt(s, kNow));
}

TEST(LasPolicyTest, CancelsVictimsThatMayNotBeRequeued) {
  ClusterSnapshot s = Nodes(1, 4);
  s.running = {
      Occupy(&s.nodes[0], 10, GpuSet::FirstN(4), kNow - Minutes(120), kNow + Minutes(600))};
  s.running[0].requeue_allowed = false;
  s.pending = {MakeJob(11, 1, 4)};
  Plan p = Las()->Decide(s, kNow);
  ASSERT_EQ(p.preemption_orders.size(), 1u);
  EXPECT_EQ(p.preemption_orders[0].mode, PreemptMode::kCancel);
}

TEST(LasPolicyTest, PreemptsNothingWhenPreemptionIsDisabled) {
  ClusterSnapshot s = Nodes(1, 4);
  s.running = {
      Occupy(&s.nodes[0], 10, GpuSet::FirstN(4), kNow - Minutes(120), kNow + Minutes(600))};
  s.pending = {MakeJob(11, 1, 4)};
  SchedulerConfig config = DefaultSchedulerConfig();
  config.preemption.enabled = false;
  auto las = Las(config);
  EXPECT_TRUE(las->Decide(s, kNow).preemptions.empty());
  EXPECT_FALSE(las->MayPreempt(s, kNow));
  EXPECT_FALSE(las->NextLevelChange(s, kNow).has_value());
}

TEST(LasPolicyTest, GangJobPreemptsOnAsManyNodesAsItNeeds) {
  ClusterSnapshot s = Nodes(3, 4);
  s.running = {
      Occupy(&s.nodes[0], 1, GpuSet::FirstN(4), kNow - Minutes(120), kNow + Minutes(600)),
      Occupy(&s.nodes[1], 2, GpuSet::FirstN(4), kNow - Minutes(130), kNow + Minutes(600)),
      Occupy(&s.nodes[2], 3, GpuSet::FirstN(4), kNow - Minutes(5), kNow + Minutes(600)),  // queue 0
  };
  s.pending = {MakeJob(11, 2, 4)};
  Plan p = Las()->Decide(s, kNow);
  EXPECT_EQ(p.preemptions, (std::vector<JobId>{JobId(1), JobId(2)}));
}

TEST(LasPolicyTest, IsDeterministicAndRegistered) {
  ClusterSnapshot s = Nodes(2, 4);
  s.running = {Occupy(&s.nodes[0], 1, GpuSet::FirstN(4), kNow - Minutes(120), kNow + Minutes(600))};
  s.pending = {MakeJob(11, 1, 4), MakeJob(12, 1, 4), MakeJob(13, 1, 1)};
  auto las = Las();
  EXPECT_EQ(las->Decide(s, kNow), las->Decide(s, kNow));
  EXPECT_TRUE(IsRegisteredPolicy("las"));
  EXPECT_TRUE(MakePolicy("las", DefaultSchedulerConfig()).has_value());
}

}  // namespace
}  // namespace corral::sched
