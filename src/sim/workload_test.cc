#include "sim/workload.h"

#include <gtest/gtest.h>

#include "sim/cluster.h"

namespace corral::sim {
namespace {

std::vector<sched::NodeView> Nodes(const std::string& spec) {
  return BuildNodes(*ParseClusterShortForm(spec));
}

Trace MakeTrace(const std::string& rows) {
  auto t = ParseTraceCsv(
      "job_id,submit_time_s,duration_s,num_gpus,user,queue,time_limit_s,num_nodes\n" + rows);
  EXPECT_TRUE(t.has_value()) << t.error().message;
  return *t;
}

TEST(WorkloadTest, DerivedTimeLimitsAreRoundedLikeUsersRoundThem) {
  EXPECT_EQ(DeriveTimeLimit(Seconds(1), 2.0, true), Minutes(15));
  EXPECT_EQ(DeriveTimeLimit(Minutes(10), 2.0, true), Minutes(30));
  EXPECT_EQ(DeriveTimeLimit(Minutes(50), 2.0, true), Minutes(105));
  EXPECT_EQ(DeriveTimeLimit(Minutes(70), 2.0, true), Minutes(180));
  EXPECT_EQ(DeriveTimeLimit(Minutes(25 * 60), 2.0, true), Minutes(3 * 24 * 60));
  EXPECT_EQ(DeriveTimeLimit(Seconds(100), 1.5, false), Seconds(150));
  EXPECT_EQ(DeriveTimeLimit(Seconds(10), 1.0, false), Minutes(1));  // never below a minute
  EXPECT_EQ(DeriveTimeLimit(Seconds(100), 0, true), kUnlimited);
}

TEST(WorkloadTest, ShapesFromTheNodeSize) {
  Trace t = MakeTrace(
      "1,0,100,8,u,q,,\n"
      "2,0,100,16,u,q,,\n"
      "3,0,100,12,u,q,,\n"
      "4,0,100,20,u,q,,\n"
      "5,0,100,16,u,q,,4\n"
      "6,0,100,3,u,q,,\n");
  auto w = BuildWorkload(t, Nodes("nodes=8,gpus_per_node=8"), sched::DefaultSchedulerConfig(), {});
  ASSERT_TRUE(w.has_value()) << w.error().message;
  auto shape = [&](size_t i) {
    const ResourceRequest& r = w->jobs[i].view.resources;
    return std::to_string(r.nodes) + "x" + std::to_string(r.gpus_per_node);
  };
  EXPECT_EQ(shape(0), "1x8");
  EXPECT_EQ(shape(1), "2x8");
  EXPECT_EQ(shape(2), "2x6");
  EXPECT_EQ(shape(3), "4x5");
  EXPECT_EQ(shape(4), "4x4");
  EXPECT_EQ(shape(5), "1x3");
  EXPECT_EQ(w->jobs[1].view.partitions, std::vector<std::string>{"main"});
  EXPECT_EQ(w->jobs[1].view.account, "q");
  EXPECT_EQ(w->jobs[1].view.time_limit, Minutes(15));
  EXPECT_EQ(w->jobs[1].id, JobId(2));
  EXPECT_EQ(w->refused, 0u);
  // Jobs of one kind share a class; the 1x8 and 2x8 jobs do not.
  EXPECT_NE(w->jobs[0].klass, w->jobs[1].klass);
  EXPECT_EQ(w->jobs[1].shape, w->jobs[1].shape);
}

TEST(WorkloadTest, QueuesPickPartitionsAndImpossibleJobsAreRefused) {
  auto config = sched::ParseSchedulerConfig(R"(
[[partition]]
name = "small"
nodes = "gpu-[001-002]"
max_time = "1:00:00"

[[partition]]
name = "all"
default = true
)");
  ASSERT_TRUE(config.has_value()) << config.error().message;
  Trace t = MakeTrace(
      "1,0,100,16,u,small,,\n"     // 2 nodes: fits exactly
      "2,0,100,24,u,small,,\n"     // 3 nodes in a 2-node partition: refused
      "3,0,100,24,u,other,,\n"     // unknown queue: the default partition, 4 nodes
      "4,0,100,1,u,small,7200,\n"  // its limit exceeds the partition's maximum: refused
      "5,0,5000,1,u,small,,\n");   // derived limit clamped to max_time
  auto w = BuildWorkload(t, Nodes("nodes=4,gpus_per_node=8,name=gpu"), *config, {});
  ASSERT_TRUE(w.has_value()) << w.error().message;
  EXPECT_EQ(w->refused, 2u);
  EXPECT_TRUE(w->jobs[0].refused.empty()) << w->jobs[0].refused;
  EXPECT_FALSE(w->jobs[1].refused.empty());
  EXPECT_TRUE(w->jobs[2].refused.empty()) << w->jobs[2].refused;
  EXPECT_EQ(w->jobs[2].view.partitions, std::vector<std::string>{"all"});
  EXPECT_NE(w->jobs[3].refused.find("max_time"), std::string::npos) << w->jobs[3].refused;
  EXPECT_EQ(w->jobs[4].view.time_limit, Minutes(60));
}

TEST(WorkloadTest, UnknownAccountsAreRefusedWhenAccountsAreConfigured) {
  sched::SchedulerConfig config = sched::DefaultSchedulerConfig();
  config.accounts.push_back({.name = "vc1"});
  Trace t = MakeTrace("1,0,100,1,u,vc1,,\n2,0,100,1,u,vc2,,\n");
  auto w = BuildWorkload(t, Nodes("nodes=1,gpus_per_node=8"), config, {});
  ASSERT_TRUE(w.has_value()) << w.error().message;
  EXPECT_TRUE(w->jobs[0].refused.empty()) << w->jobs[0].refused;
  EXPECT_EQ(w->jobs[1].refused, "no such account \"vc2\"");
}

}  // namespace
}  // namespace corral::sim
