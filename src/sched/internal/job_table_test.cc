#include "sched/internal/job_table.h"

#include <string>

#include <gtest/gtest.h>

#include "sched/internal/test_pass.h"
#include "sched/testing/cluster_builder.h"

namespace corral::sched::internal {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::Occupy;

TEST(JobTableTest, AGuaranteeHoldersNewestJobsBeyondItBorrow) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.accounts = {AccountConfig{.name = "prod", .guaranteed_gpus = 4},
                AccountConfig{.name = "web", .parent = "prod"}, AccountConfig{.name = "research"}};
  ClusterSnapshot s;
  s.nodes = {MakeNode(1, "n1", 8), MakeNode(2, "n2", 8)};
  s.partitions = c.partitions;
  // prod's subtree holds 2 + 2 + 2 GPUs against a guarantee of 4: the newest job borrows.
  NodeView& n1 = s.nodes[0];
  s.running.push_back(Occupy(&n1, 10, GpuSet(0b11), kNow - Minutes(30), kNow + Minutes(60)));
  s.running.push_back(Occupy(&n1, 11, GpuSet(0b1100), kNow - Minutes(10), kNow + Minutes(60)));
  s.running.push_back(Occupy(&n1, 12, GpuSet(0b110000), kNow - Minutes(20), kNow + Minutes(60)));
  s.running.push_back(Occupy(&s.nodes[1], 13, GpuSet(0b1), kNow - Minutes(5), kNow + Minutes(60)));
  s.running[0].account = "prod";
  s.running[1].account = "web";
  s.running[2].account = "prod";
  s.running[3].account = "research";  // under no guarantee
  TestPass pass(c, s, kNow);
  ASSERT_EQ(pass.nodes.jobs().size(), 4u);
  EXPECT_FALSE(pass.nodes.job(0).borrowed);
  EXPECT_TRUE(pass.nodes.job(1).borrowed);  // started last
  EXPECT_FALSE(pass.nodes.job(2).borrowed);
  EXPECT_TRUE(pass.nodes.job(3).borrowed);
  ASSERT_EQ(pass.nodes.uses(0).size(), 3u);
  EXPECT_EQ(pass.nodes.uses(0)[1].gpus, GpuSet(0b1100));
}

TEST(JobTableTest, NamesAreInternedConfiguredAccountsFirst) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.accounts = {AccountConfig{.name = "a"}, AccountConfig{.name = "b", .parent = "a"}};
  c.partitions[0].allowed_accounts = {"b", "x"};
  ClusterSnapshot s;
  s.nodes = {MakeNode(1, "n1", 8)};
  s.partitions = c.partitions;
  PendingJobView j = MakeJob(1, 1, 1);
  j.account = "b";
  PendingJobView stranger = MakeJob(2, 1, 1);
  stranger.account = "y";
  s.pending = {j, stranger};
  TestPass pass(c, s, kNow);
  EXPECT_EQ(pass.jobs.FindAccount("a"), 0);
  EXPECT_EQ(pass.jobs.FindAccount("b"), 1);
  EXPECT_EQ(pass.jobs.FindAccount("x"), 2);  // from the allow-list, before the jobs
  EXPECT_EQ(pass.jobs.FindAccount("y"), 3);
  EXPECT_EQ(pass.jobs.FindAccount("z"), -1);
  EXPECT_EQ(pass.jobs.AccountParent(1), 0);
  EXPECT_EQ(pass.jobs.AccountParent(3), -1);
  EXPECT_TRUE(pass.jobs.MayUsePartition(0, 1));
  EXPECT_FALSE(pass.jobs.MayUsePartition(0, 0));
  EXPECT_TRUE(pass.Job(1).account_known);
  EXPECT_FALSE(pass.Job(2).account_known);
  EXPECT_TRUE(pass.Job(2).needs_check);
  EXPECT_EQ(pass.jobs.FindAssoc(1, pass.Job(1).user), pass.Job(1).assoc);
  EXPECT_EQ(pass.jobs.associations()[pass.Job(2).assoc].first, "y");
}

TEST(JobTableTest, PendingJobsAreSummarised) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.partitions.push_back(Partition{.name = "fast", .priority_tier = 3});
  c.qos.push_back(QosConfig{.name = "high"});
  ClusterSnapshot s;
  NodeView a = MakeNode(1, "n1", 8, "a100");
  s.nodes = {a, MakeNode(2, "n2", 8)};
  s.partitions = c.partitions;
  PendingJobView gang = MakeJob(1, 2, 4, Minutes(30));
  gang.resources.gpu_type = "a100";
  gang.partitions = {"main", "fast"};
  gang.qos = "high";
  PendingJobView same = gang;  // the same shape
  same.id = JobId(2);
  PendingJobView pinned = MakeJob(3, 1, 1);
  pinned.resources.nodelist = {"n2"};  // -w: no shared shape
  PendingJobView odd = MakeJob(4, 1, 1, Duration(0));
  odd.qos = "nosuch";
  odd.resources.gpu_type = "b200";
  odd.held = true;
  s.pending = {gang, same, pinned, odd};
  TestPass pass(c, s, kNow);
  const JobInfo& g = pass.Job(1);
  EXPECT_EQ(g.nodes, 2u);
  EXPECT_EQ(g.gpus, 8u);
  EXPECT_EQ(g.base.gpus, 4u);
  EXPECT_EQ(g.base.type, pass.nodes.TypeId("a100"));
  EXPECT_EQ(g.limit, Minutes(30));
  EXPECT_EQ(g.end, kNow + Minutes(30));
  EXPECT_EQ(g.tier, 3u);
  EXPECT_EQ(g.n_parts, 2u);
  EXPECT_EQ(g.parts[1], 1);
  EXPECT_EQ(g.qos, pass.index.qos_ids.at("high"));
  EXPECT_FALSE(g.needs_check);
  EXPECT_GE(g.shape, 0);
  EXPECT_EQ(pass.Job(2).shape, g.shape);
  EXPECT_EQ(pass.Job(3).shape, -1);
  const JobInfo& o = pass.Job(4);
  EXPECT_EQ(o.qos, -1);
  EXPECT_EQ(o.base.type, -1);
  EXPECT_EQ(o.limit, kUnlimited);
  EXPECT_EQ(o.end, kNever);
  EXPECT_TRUE(o.needs_check);
  EXPECT_NE(o.shape, g.shape);
}

TEST(JobTableTest, JobsVictimsArePreemptedFor) {
  SchedulerConfig c = DefaultSchedulerConfig();
  ClusterSnapshot s;
  s.nodes = {MakeNode(1, "n1", 8)};
  s.partitions = c.partitions;
  RunningJobView victim =
      Occupy(&s.nodes[0], 100, GpuSet::FirstN(8), kNow - Minutes(5), kNow + Minutes(60));
  victim.preempt_deadline = kNow + Minutes(1);
  victim.preempted_for = JobId(7);
  s.running = {victim};
  s.pending = {MakeJob(5, 1, 8), MakeJob(7, 1, 8)};
  TestPass pass(c, s, kNow);
  EXPECT_FALSE(pass.jobs.InflightFor(0));
  EXPECT_TRUE(pass.jobs.InflightFor(1));
  EXPECT_TRUE(pass.nodes.job(0).being_preempted);
  EXPECT_EQ(pass.nodes.job(0).end, kNow + Minutes(1));  // freed by its deadline
}

}  // namespace
}  // namespace corral::sched::internal
