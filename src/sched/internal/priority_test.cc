#include "sched/internal/priority.h"

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "sched/internal/test_pass.h"
#include "sched/testing/cluster_builder.h"

namespace corral::sched::internal {
namespace {

using testing::MakeJob;
using testing::MakeNode;

const SchedulerOptions kMultifactor;  // Prioritizer keeps a reference: it must outlive it

// Two 8-GPU nodes (16 GPUs, 128 CPUs); partitions "main" (tier 1) and "fast" (tier 4); QOS
// "normal" (priority 10) and "high" (40).
SchedulerConfig Config() {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.partitions.push_back(Partition{.name = "fast", .priority_tier = 4});
  c.qos = {QosConfig{.name = "normal", .priority = 10}, QosConfig{.name = "high", .priority = 40}};
  c.priority = PriorityConfig{.weight_age = 1000,
                              .weight_job_size = 100,
                              .weight_partition = 400,
                              .weight_qos = 2000,
                              .max_age = Minutes(100)};
  return c;
}

ClusterSnapshot Snapshot(const SchedulerConfig& c, std::vector<PendingJobView> pending) {
  ClusterSnapshot s;
  s.nodes = {MakeNode(1, "n1", 8), MakeNode(2, "n2", 8)};
  s.partitions = c.partitions;
  s.pending = std::move(pending);
  return s;
}

TEST(PrioritizerTest, MultifactorSumOfRoundedTerms) {
  SchedulerConfig c = Config();
  PendingJobView a = MakeJob(1, 1, 4);
  a.submit_time = kNow - Minutes(25);  // age 0.25
  a.qos = "high";
  a.partitions = {"main", "fast"};
  a.nice = 7;
  PendingJobView b = MakeJob(2, 1, 0);   // no GPUs: 1 CPU of 128
  b.submit_time = kNow - Minutes(500);   // age capped at 1
  b.eligible_time = kNow - Minutes(50);  // counts from eligibility: 0.5
  TestPass pass(c, Snapshot(c, {a, b}), kNow);
  Prioritizer p(pass.config, kMultifactor, pass.index, pass.snapshot, pass.cache, kNow);
  std::vector<PriorityFactors> f = p.Compute(&pass.jobs, /*report=*/true);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].job, JobId(1));
  EXPECT_DOUBLE_EQ(f[0].age, 0.25);
  EXPECT_DOUBLE_EQ(f[0].job_size, 0.25);  // 4 of 16 GPUs
  EXPECT_DOUBLE_EQ(f[0].partition, 1.0);
  EXPECT_DOUBLE_EQ(f[0].qos_factor, 1.0);
  EXPECT_EQ(f[0].priority_tier, 4u);
  EXPECT_EQ(f[0].qos, "high");
  EXPECT_EQ(f[0].priority, 250 + 25 + 400 + 2000 - 7);
  EXPECT_DOUBLE_EQ(f[1].age, 0.5);
  EXPECT_DOUBLE_EQ(f[1].job_size, 1.0 / 128);
  EXPECT_EQ(f[1].job_size_points, 1);  // 0.78 rounds up
  EXPECT_EQ(f[1].partition_points, 100);
  EXPECT_EQ(f[1].qos_points, 500);
  EXPECT_EQ(f[1].priority, 500 + 1 + 100 + 500);
  EXPECT_EQ(pass.Job(1).priority, f[0].priority);  // set on the jobs too
  EXPECT_TRUE(p.Compute(&pass.jobs, /*report=*/false).empty());
}

TEST(PrioritizerTest, FavorSmallInvertsTheSize) {
  SchedulerConfig c = Config();
  c.priority.favor_small = true;
  TestPass pass(c, Snapshot(c, {MakeJob(1, 1, 4)}), kNow);
  Prioritizer p(pass.config, kMultifactor, pass.index, pass.snapshot, pass.cache, kNow);
  EXPECT_DOUBLE_EQ(p.Compute(&pass.jobs, true)[0].job_size, 0.75);
}

TEST(PrioritizerTest, FairShareFavoursTheAssociationThatUsedLess) {
  SchedulerConfig c = Config();
  c.priority.weight_fairshare = 1000;
  c.accounts = {AccountConfig{.name = "a"}, AccountConfig{.name = "b"}};
  PendingJobView ja = MakeJob(1, 1, 1), jb = MakeJob(2, 1, 1);
  ja.account = "a";
  jb.account = "b";
  ClusterSnapshot s = Snapshot(c, {ja, jb});
  s.usage = {AssociationUsage{.account = "a", .user = "alice", .decayed_usage = 1000}};
  TestPass pass(c, s, kNow);
  Prioritizer p(pass.config, kMultifactor, pass.index, pass.snapshot, pass.cache, kNow);
  std::vector<PriorityFactors> f = p.Compute(&pass.jobs, true);
  EXPECT_LT(f[0].fairshare, f[1].fairshare);
  EXPECT_LT(f[0].fairshare_points, f[1].fairshare_points);
}

TEST(PrioritizerTest, ACustomPriorityIsRoundedForShowButOrdersByItsValue) {
  SchedulerConfig c = Config();
  SchedulerOptions o;
  o.priority = [](const PendingJobView& j, Timestamp) { return j.id.value == 1 ? 2.4 : 2.2; };
  TestPass pass(c, Snapshot(c, {MakeJob(1, 1, 1), MakeJob(2, 1, 1)}), kNow);
  Prioritizer p(pass.config, o, pass.index, pass.snapshot, pass.cache, kNow);
  std::vector<PriorityFactors> f = p.Compute(&pass.jobs, true);
  EXPECT_EQ(f[0].priority, 2);
  EXPECT_EQ(f[1].priority, 2);
  EXPECT_EQ(f[0].age_points, 0);  // no multifactor terms
  std::vector<JobInfo>& pending = pass.jobs.pending();
  p.Order(&pending);
  EXPECT_EQ(pending[0].view->id, JobId(1));  // 2.4 before 2.2, though both show 2
}

// The order `Order` must give, by comparison: tier desc, priority desc, submit, JobId.
std::vector<uint64_t> ReferenceOrder(std::vector<JobInfo> jobs) {
  std::sort(jobs.begin(), jobs.end(), [](const JobInfo& a, const JobInfo& b) {
    return std::make_tuple(-static_cast<int64_t>(a.tier), -a.priority, a.view->submit_time,
                           a.view->id) < std::make_tuple(-static_cast<int64_t>(b.tier), -b.priority,
                                                         b.view->submit_time, b.view->id);
  });
  std::vector<uint64_t> ids;
  for (const JobInfo& j : jobs) ids.push_back(j.view->id.value);
  return ids;
}

TEST(PrioritizerTest, OrderIsTierPrioritySubmitTimeThenJobId) {
  SchedulerConfig c = Config();
  // Few jobs (sorted by comparison) and many (radix sorted), submit times not monotone,
  // negative priorities and many ties.
  for (uint32_t n : {5u, 300u}) {
    std::mt19937_64 rng(n);
    std::vector<PendingJobView> jobs;
    for (uint32_t i = 1; i <= n; ++i) {
      PendingJobView j = MakeJob(i, 1, 1);
      j.submit_time = kNow - Minutes(static_cast<int64_t>(rng() % 7));
      if (rng() % 3 == 0) j.partitions = {"fast"};
      j.nice = static_cast<int32_t>(rng() % 5) * 1000 - 2000;
      jobs.push_back(j);
    }
    TestPass pass(c, Snapshot(c, jobs), kNow);
    Prioritizer p(pass.config, kMultifactor, pass.index, pass.snapshot, pass.cache, kNow);
    p.Compute(&pass.jobs, false);
    std::vector<JobInfo>& pending = pass.jobs.pending();
    const std::vector<uint64_t> want = ReferenceOrder(pending);
    p.Order(&pending);
    std::vector<uint64_t> got;
    for (const JobInfo& j : pending) got.push_back(j.view->id.value);
    EXPECT_EQ(got, want) << n << " jobs";
  }
}

}  // namespace
}  // namespace corral::sched::internal
