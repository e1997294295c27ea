#include "core/resources.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

TEST(ResourcesTest, PerNodeDemandSpreadsTasksAndGpus) {
  ResourceRequest r;
  r.nodes = 2;
  r.ntasks = 8;
  r.cpus_per_task = 4;
  r.gpus = 8;
  r.gpu_type = "h100";
  ASSERT_TRUE(ValidateResourceRequest(r).has_value());
  PerNodeDemand d = ComputePerNodeDemand(r);
  EXPECT_EQ(d.tasks, 4u);
  EXPECT_EQ(d.cpus, 16u);
  EXPECT_EQ(d.gpus, 4u);
  EXPECT_EQ(d.gpu_type, "h100");
  EXPECT_EQ(TotalGpus(r), 8u);
}

TEST(ResourcesTest, MemoryDefaultsAndPerCpu) {
  ResourceRequest r;
  r.cpus_per_task = 3;
  EXPECT_EQ(ComputePerNodeDemand(r, 1000).mem_mb, 3000u);
  r.mem_per_cpu_mb = 10;
  EXPECT_EQ(ComputePerNodeDemand(r, 1000).mem_mb, 30u);
  r.mem_per_cpu_mb = 0;
  r.mem_per_node_mb = 4096;
  EXPECT_EQ(ComputePerNodeDemand(r, 1000).mem_mb, 4096u);
  EXPECT_EQ(MemoryOnNode(ComputePerNodeDemand(r), 65536), 4096u);
}

TEST(ResourcesTest, WholeNodeMemoryTakesTheNodesMemory) {
  ResourceRequest r;
  r.mem_per_node_mb = kWholeNodeMemory;  // --mem=0
  EXPECT_TRUE(ValidateResourceRequest(r).has_value());
  PerNodeDemand d = ComputePerNodeDemand(r, 1000);
  EXPECT_EQ(d.mem_mb, kWholeNodeMemory);
  EXPECT_EQ(MemoryOnNode(d, 65536), 65536u);
  EXPECT_EQ(MemoryOnNode(d, 1024), 1024u);
}

TEST(ResourcesTest, RejectsImpossibleRequests) {
  ResourceRequest r;
  r.nodes = 0;
  EXPECT_EQ(ValidateResourceRequest(r).error().message, "nodes: must be at least 1");
  r = {};
  r.ntasks = 0;
  EXPECT_FALSE(ValidateResourceRequest(r).has_value());
  r = {};
  r.nodes = 2;
  r.gpus = 3;
  EXPECT_NE(ValidateResourceRequest(r).error().message.find("spread evenly"), std::string::npos);
  r = {};
  r.gpu_type = "h100;rm";
  EXPECT_FALSE(ValidateResourceRequest(r).has_value());
}

TEST(ResourcesTest, ParsesMemoryLikeSlurm) {
  EXPECT_EQ(*ParseMemoryMb("100"), 100u);
  EXPECT_EQ(*ParseMemoryMb("4G"), 4096u);
  EXPECT_EQ(*ParseMemoryMb("4g"), 4096u);
  EXPECT_EQ(*ParseMemoryMb("4GB"), 4096u);
  EXPECT_EQ(*ParseMemoryMb("2048K"), 2u);
  EXPECT_EQ(*ParseMemoryMb("1T"), 1024u * 1024u);
  EXPECT_EQ(*ParseMemoryMb("0"), 0u);
  for (std::string_view bad : {"", "G", "4X", "4GiB", "-1", "1.5G"}) {
    EXPECT_FALSE(ParseMemoryMb(bad).has_value()) << bad;
  }
  EXPECT_EQ(FormatMemoryMb(4096), "4G");
  EXPECT_EQ(FormatMemoryMb(100), "100M");
}

}  // namespace
}  // namespace corral
