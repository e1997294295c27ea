#include <gtest/gtest.h>

#include "agent/gpu/gpu_backend.h"

namespace corral::agent {
namespace {

TEST(SimulatedGpuBackendTest, DiscoversConfiguredGpus) {
  auto b = MakeSimulatedGpuBackend({.count = 8,
                                    .model = "h100",
                                    .memory_mb = 81920,
                                    .nvlink = "pairs",
                                    .numa_nodes = 2,
                                    .node_name = "node01"});
  ASSERT_TRUE(b.has_value());
  auto gpus = (*b)->Discover();
  ASSERT_TRUE(gpus.has_value());
  ASSERT_EQ(gpus->size(), 8u);
  EXPECT_EQ((*gpus)[3].index, 3u);
  EXPECT_EQ((*gpus)[3].model, "h100");
  EXPECT_EQ((*gpus)[3].nvlink_peers, (std::vector<uint32_t>{2}));
  EXPECT_EQ((*gpus)[3].numa_node, 0);
  EXPECT_EQ((*gpus)[4].numa_node, 1);
  EXPECT_EQ((*gpus)[0].uuid.rfind("GPU-", 0), 0u);
  EXPECT_NE((*gpus)[0].uuid, (*gpus)[1].uuid);
  // UUIDs are stable per node and differ between nodes.
  auto again = (*MakeSimulatedGpuBackend({.count = 8, .node_name = "node01"}))->Discover();
  auto other = (*MakeSimulatedGpuBackend({.count = 8, .node_name = "node02"}))->Discover();
  EXPECT_EQ((*again)[5].uuid, (*gpus)[5].uuid);
  EXPECT_NE((*other)[5].uuid, (*gpus)[5].uuid);
}

TEST(SimulatedGpuBackendTest, AllToAllAndNoNvlink) {
  auto all = (*MakeSimulatedGpuBackend({.count = 4, .nvlink = "all"}))->Discover();
  EXPECT_EQ((*all)[0].nvlink_peers, (std::vector<uint32_t>{1, 2, 3}));
  auto none = (*MakeSimulatedGpuBackend({.count = 4, .nvlink = "none"}))->Discover();
  EXPECT_TRUE((*none)[0].nvlink_peers.empty());
}

TEST(SimulatedGpuBackendTest, RejectsBadConfig) {
  EXPECT_FALSE(MakeSimulatedGpuBackend({.count = 65}).has_value());
  EXPECT_FALSE(MakeSimulatedGpuBackend({.nvlink = "mesh"}).has_value());
  EXPECT_FALSE(MakeSimulatedGpuBackend({.model = "h100;rm -rf"}).has_value());
}

}  // namespace
}  // namespace corral::agent
