#include "sched/sjf_policy.h"

#include <gtest/gtest.h>

#include "sched/policy_factory.h"
#include "sched/testing/cluster_builder.h"

namespace corral::sched {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::Occupy;

const Timestamp kNow = Timestamp(Seconds(1'700'000'000));

ClusterSnapshot OneNode(uint32_t gpus) {
  ClusterSnapshot s;
  s.nodes = {MakeNode(1, "n1", gpus)};
  s.partitions = {Partition{.name = "main", .is_default = true}};
  return s;
}

std::unique_ptr<Policy> Sjf() {
  auto p = MakeSjfPolicy(DefaultSchedulerConfig());
  EXPECT_TRUE(p.has_value());
  return std::move(*p);
}

TEST(SjfPolicyTest, ShortestKnownRunTimeStartsFirst) {
  ClusterSnapshot s = OneNode(1);
  s.pending = {MakeJob(1, 1, 1), MakeJob(2, 1, 1), MakeJob(3, 1, 1)};
  s.pending[0].known_duration = Minutes(30);
  s.pending[1].known_duration = Minutes(5);
  s.pending[2].known_duration = Minutes(10);
  Plan p = Sjf()->Decide(s, kNow);
  ASSERT_EQ(p.starts.size(), 1u);
  EXPECT_EQ(p.starts[0].job, JobId(2));
}

TEST(SjfPolicyTest, FallsBackToTheTimeLimitThenComesLast) {
  ClusterSnapshot s = OneNode(1);
  s.pending = {MakeJob(1, 1, 1, kUnlimited), MakeJob(2, 1, 1, Minutes(90)),
               MakeJob(3, 1, 1, Minutes(60))};
  s.pending[1].known_duration = Minutes(20);  // beats job 3's limit of 60 minutes
  EXPECT_EQ(SjfPriority(s.pending[0], kNow), SjfPriority(s.pending[0], kNow));
  EXPECT_LT(SjfPriority(s.pending[0], kNow), SjfPriority(s.pending[2], kNow));
  Plan p = Sjf()->Decide(s, kNow);
  ASSERT_EQ(p.starts.size(), 1u);
  EXPECT_EQ(p.starts[0].job, JobId(2));
}

TEST(SjfPolicyTest, BigJobDoesNotBlockSmallerOnesAndNothingIsReservedOrPreempted) {
  ClusterSnapshot s = OneNode(4);
  s.running = {Occupy(&s.nodes[0], 10, GpuSet::FirstN(2), kNow - Minutes(5), kNow + Minutes(55))};
  s.pending = {MakeJob(1, 1, 4), MakeJob(2, 1, 1)};
  s.pending[0].known_duration = Minutes(1);  // first in order, but needs the whole node
  s.pending[1].known_duration = Minutes(50);
  Plan p = Sjf()->Decide(s, kNow);
  ASSERT_EQ(p.starts.size(), 1u);
  EXPECT_EQ(p.starts[0].job, JobId(2));
  EXPECT_TRUE(p.reservations.empty());
  EXPECT_TRUE(p.preemptions.empty());
}

TEST(SjfPolicyTest, IsRegisteredInTheFactory) {
  EXPECT_TRUE(IsRegisteredPolicy("sjf"));
  EXPECT_TRUE(MakePolicy("sjf", DefaultSchedulerConfig()).has_value());
}

}  // namespace
}  // namespace corral::sched
