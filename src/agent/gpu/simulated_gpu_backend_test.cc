#include <gtest/gtest.h>

#include "agent/gpu/gpu_backend.h"
#include "core/testing/fake_clock.h"

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

TEST(SimulatedGpuBackendTest, AJobLoadDrivesUtilisationMemoryPowerAndEnergy) {
  corral::testing::FakeClock clock;
  auto b = MakeSimulatedGpuBackend({.count = 2, .model = "h100", .memory_mb = 81920}, &clock);
  ASSERT_TRUE(b.has_value());
  GpuBackend& gpus = **b;
  gpus.SetJobLoad(0, 95.0);
  gpus.SetJobLoad(1, 0.0, 9216);
  clock.Advance(Seconds(10));
  auto s = gpus.Sample();
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ((*s)[0].utilization, 95);
  EXPECT_GT((*s)[0].memory_used_mb, 60000u);
  EXPECT_NEAR((*s)[0].power_watts, 70 + 630 * 0.95, 1e-9);
  EXPECT_NEAR((*s)[0].energy_joules, 10 * (70 + 630 * 0.95), 1e-6);
  EXPECT_DOUBLE_EQ((*s)[1].utilization, 0);
  EXPECT_EQ((*s)[1].memory_used_mb, 9216u);
  EXPECT_DOUBLE_EQ((*s)[1].power_watts, 70);
  // Released: back to idle; the energy counter keeps counting.
  gpus.SetJobLoad(0, std::nullopt);
  clock.Advance(Seconds(1));
  s = gpus.Sample();
  EXPECT_DOUBLE_EQ((*s)[0].utilization, 0);
  EXPECT_EQ((*s)[0].memory_used_mb, 0u);
  EXPECT_NEAR((*s)[0].energy_joules, 10 * (70 + 630 * 0.95) + 70, 1e-6);
  gpus.SetJobLoad(7, 50.0);  // no such GPU: nothing happens
}

}  // namespace
}  // namespace corral::agent
