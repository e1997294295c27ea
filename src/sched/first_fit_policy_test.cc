#include "sched/first_fit_policy.h"

#include <gtest/gtest.h>

namespace corral::sched {
namespace {

NodeView MakeNode(uint32_t id, uint32_t gpus, std::string model = "h100") {
  NodeView n;
  n.id = NodeId(id);
  n.name = "node" + std::to_string(id);
  n.cpus = 16;
  n.mem_mb = 64000;
  for (uint32_t g = 0; g < gpus; ++g) n.gpus.push_back({.index = g, .model = model});
  n.usable_gpus = GpuSet::FirstN(gpus);
  n.schedulable = true;
  return n;
}

PendingJobView MakeJob(uint64_t id, uint32_t nodes, uint32_t gpus_per_node) {
  PendingJobView j;
  j.id = JobId(id);
  j.partitions = {"main"};
  j.resources.nodes = nodes;
  j.resources.ntasks = nodes;
  j.resources.gpus_per_node = gpus_per_node;
  return j;
}

ClusterSnapshot TwoNodes() {
  ClusterSnapshot s;
  s.nodes = {MakeNode(1, 4), MakeNode(2, 4)};
  s.partitions = {Partition{.name = "main", .is_default = true}};
  return s;
}

TEST(FirstFitPolicyTest, PacksLowestGpuIndicesInSubmitOrder) {
  ClusterSnapshot s = TwoNodes();
  s.pending = {MakeJob(1, 1, 2), MakeJob(2, 1, 2), MakeJob(3, 1, 3)};
  Plan p = FirstFitPolicy().Decide(s, {});
  ASSERT_EQ(p.starts.size(), 3u);
  EXPECT_EQ(p.starts[0].nodes[0].node_name, "node1");
  EXPECT_EQ(p.starts[0].nodes[0].gpus.ToString(), "0,1");
  EXPECT_EQ(p.starts[1].nodes[0].node_name, "node1");
  EXPECT_EQ(p.starts[1].nodes[0].gpus.ToString(), "2,3");
  EXPECT_EQ(p.starts[2].nodes[0].node_name, "node2");
  EXPECT_EQ(p.starts[2].nodes[0].gpus.ToString(), "0,1,2");
}

TEST(FirstFitPolicyTest, MultiNodeJobIsAllOrNothing) {
  ClusterSnapshot s = TwoNodes();
  s.nodes[1].used_gpus = GpuSet::FirstN(2);
  s.nodes[1].running_jobs = 1;
  s.pending = {MakeJob(1, 2, 4), MakeJob(2, 2, 2)};
  Plan p = FirstFitPolicy().Decide(s, {});
  ASSERT_EQ(p.starts.size(), 1u);
  EXPECT_EQ(p.starts[0].job, JobId(2));
  ASSERT_EQ(p.starts[0].nodes.size(), 2u);
  EXPECT_EQ(p.starts[0].nodes[1].gpus.ToString(), "2,3");
  ASSERT_EQ(p.pending.size(), 1u);
  EXPECT_EQ(p.pending[0].job, JobId(1));
  EXPECT_EQ(p.pending[0].code, "Resources");
}

TEST(FirstFitPolicyTest, NeverFittingJobGetsPartitionConfig) {
  ClusterSnapshot s = TwoNodes();
  s.pending = {MakeJob(1, 1, 8), MakeJob(2, 3, 1)};
  Plan p = FirstFitPolicy().Decide(s, {});
  EXPECT_TRUE(p.starts.empty());
  ASSERT_EQ(p.pending.size(), 2u);
  EXPECT_EQ(p.pending[0].code, "PartitionConfig");
  EXPECT_EQ(p.pending[1].code, "PartitionConfig");
}

TEST(FirstFitPolicyTest, RespectsCpusMemoryTypesAndDrain) {
  ClusterSnapshot s = TwoNodes();
  s.nodes[0].schedulable = false;  // drained
  s.nodes[1].gpus[3].model = "a100";
  PendingJobView a = MakeJob(1, 1, 1);
  a.resources.gpu_type = "a100";
  PendingJobView b = MakeJob(2, 1, 0);
  b.resources.cpus_per_task = 15;  // with job 1's CPU, all 16 of node2
  PendingJobView c = MakeJob(3, 1, 0);
  c.resources.mem_per_node_mb = 1;
  s.pending = {a, b, c};
  Plan p = FirstFitPolicy().Decide(s, {});
  ASSERT_EQ(p.starts.size(), 2u);
  EXPECT_EQ(p.starts[0].nodes[0].gpus.ToString(), "3");
  EXPECT_EQ(p.starts[1].job, JobId(2));
  EXPECT_EQ(p.pending.at(0).job, JobId(3));  // no CPU left on node2
}

TEST(FirstFitPolicyTest, DeterministicAndNiceOrdersFirst) {
  ClusterSnapshot s = TwoNodes();
  s.pending = {MakeJob(1, 2, 4), MakeJob(2, 2, 4)};
  s.pending[1].nice = -10;
  Plan p1 = FirstFitPolicy().Decide(s, {});
  Plan p2 = FirstFitPolicy().Decide(s, {});
  EXPECT_EQ(p1, p2);
  ASSERT_EQ(p1.starts.size(), 1u);
  EXPECT_EQ(p1.starts[0].job, JobId(2));
}

TEST(FirstFitPolicyTest, ExclusiveTakesWholeIdleNode) {
  ClusterSnapshot s = TwoNodes();
  s.nodes[0].used_cpus = 1;
  s.nodes[0].running_jobs = 1;
  PendingJobView j = MakeJob(1, 1, 0);
  j.resources.exclusive = true;
  s.pending = {j};
  Plan p = FirstFitPolicy().Decide(s, {});
  ASSERT_EQ(p.starts.size(), 1u);
  EXPECT_EQ(p.starts[0].nodes[0].node_name, "node2");
  EXPECT_EQ(p.starts[0].nodes[0].gpus.size(), 4u);
  EXPECT_EQ(p.starts[0].nodes[0].cpus, 16u);
}

TEST(FirstFitPolicyTest, WholeNodeMemoryNeedsANodeWithAllItsMemoryFree) {
  ClusterSnapshot s = TwoNodes();
  s.nodes[0].used_mem_mb = 1;  // node1 has one megabyte in use: not enough for --mem=0
  s.nodes[0].used_cpus = 1;
  s.nodes[0].running_jobs = 1;
  s.nodes[1].mem_mb = 128000;
  PendingJobView whole = MakeJob(1, 1, 1);
  whole.resources.mem_per_node_mb = kWholeNodeMemory;
  PendingJobView small = MakeJob(2, 1, 1);
  small.resources.mem_per_node_mb = 1000;
  s.pending = {whole, small};
  Plan p = FirstFitPolicy().Decide(s, {});
  ASSERT_EQ(p.starts.size(), 2u);
  EXPECT_EQ(p.starts[0].job, JobId(1));
  EXPECT_EQ(p.starts[0].nodes[0].node_name, "node2");
  EXPECT_EQ(p.starts[0].nodes[0].mem_mb, 128000u);  // all of node2's memory
  // node2's memory is all taken: the next job goes to node1.
  EXPECT_EQ(p.starts[1].nodes[0].node_name, "node1");

  // No node with all its memory free: it waits for resources (it could fit an empty node).
  s.nodes[1].used_mem_mb = 1;
  s.pending = {whole};
  p = FirstFitPolicy().Decide(s, {});
  EXPECT_TRUE(p.starts.empty());
  ASSERT_EQ(p.pending.size(), 1u);
  EXPECT_EQ(p.pending[0].code, "Resources");
}

}  // namespace
}  // namespace corral::sched
