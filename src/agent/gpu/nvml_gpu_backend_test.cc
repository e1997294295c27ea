// The NVML backend against the fake libnvidia-ml built in the test tree (testing/fake_nvml.c),
// loaded by path through the same dlopen path as the real library.
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "agent/gpu/gpu_backend.h"
#include "agent/gpu/testing/fake_nvml.h"

namespace corral::agent {
namespace {

namespace fs = std::filesystem;

class NvmlBackendTest : public ::testing::Test {
 protected:
  void Write(const std::string& text) { nvml_.Write(text); }
  void Append(const std::string& text) { nvml_.Append(text); }
  NvmlConfig Config() { return nvml_.Config(); }

  static constexpr const char* kFourH100 = testing::FakeNvml::kFourH100;

  testing::FakeNvml nvml_;
  const std::string& dir_ = nvml_.dir();
};

TEST_F(NvmlBackendTest, DiscoversGpusTopologyAndVersions) {
  Write(kFourH100);
  auto b = MakeNvmlGpuBackend(Config());
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_EQ((*b)->name(), "nvml");
  EXPECT_EQ((*b)->driver_version(), "550.54.15");
  EXPECT_EQ((*b)->cuda_version(), "12.4");
  auto gpus = (*b)->Discover();
  ASSERT_TRUE(gpus.has_value());
  ASSERT_EQ(gpus->size(), 4u);
  EXPECT_EQ((*gpus)[2].index, 2u);
  EXPECT_EQ((*gpus)[2].uuid, "GPU-22222222-0000-0000-0000-000000000000");
  EXPECT_EQ((*gpus)[2].model, "h100");
  EXPECT_EQ((*gpus)[2].memory_mb, 81559u);
  EXPECT_EQ((*gpus)[0].numa_node, 0);
  EXPECT_EQ((*gpus)[3].numa_node, 1);
  // All four on one NVSwitch: each is every other's peer.
  EXPECT_EQ((*gpus)[1].nvlink_peers, (std::vector<uint32_t>{0, 2, 3}));
  EXPECT_EQ((*b)->DeviceFiles(3), (std::vector<std::string>{dir_ + "/dev/nvidia3"}));
}

TEST_F(NvmlBackendTest, DirectNvlinkPairsAndModelOverride) {
  Write(
      "gpu NVIDIA A100-SXM4-80GB|GPU-a|00000000:1B:00.0|0|81920|1\n"
      "gpu NVIDIA A100-SXM4-80GB|GPU-b|00000000:3B:00.0|1|81920|0\n"
      "gpu NVIDIA A100-SXM4-80GB|GPU-c|00000000:9B:00.0|2|81920|-\n");
  auto b = MakeNvmlGpuBackend(Config());
  ASSERT_TRUE(b.has_value()) << b.error().message;
  auto gpus = (*b)->Discover();
  EXPECT_EQ((*gpus)[0].model, "a100");
  EXPECT_EQ((*gpus)[0].nvlink_peers, (std::vector<uint32_t>{1}));
  EXPECT_EQ((*gpus)[1].nvlink_peers, (std::vector<uint32_t>{0}));
  EXPECT_TRUE((*gpus)[2].nvlink_peers.empty());
  NvmlConfig named = Config();
  named.model_names["NVIDIA A100-SXM4-80GB"] = "a100-80g";
  auto renamed = (*MakeNvmlGpuBackend(named))->Discover();
  EXPECT_EQ((*renamed)[1].model, "a100-80g");
}

TEST_F(NvmlBackendTest, MigInstancesAreAllocatableSlices) {
  Write(
      "gpu NVIDIA H100 80GB HBM3|GPU-p|00000000:1B:00.0|0|81559|-\n"
      "gpu NVIDIA H100 80GB HBM3|GPU-q|00000000:3B:00.0|1|81559|-\n"
      "mig 1|NVIDIA H100 80GB HBM3 MIG 1g.10gb|MIG-aaaa|9856|7|0\n"
      "mig 1|NVIDIA H100 80GB HBM3 MIG 3g.40gb|MIG-bbbb|40192|2|0\n");
  auto b = MakeNvmlGpuBackend(Config());
  ASSERT_TRUE(b.has_value()) << b.error().message;
  auto gpus = (*b)->Discover();
  ASSERT_EQ(gpus->size(), 3u);
  EXPECT_EQ((*gpus)[0].model, "h100");
  EXPECT_EQ((*gpus)[1].index, 1u);
  EXPECT_EQ((*gpus)[1].uuid, "MIG-aaaa");
  EXPECT_EQ((*gpus)[1].model, "1g.10gb");
  EXPECT_EQ((*gpus)[1].memory_mb, 9856u);
  EXPECT_EQ((*gpus)[2].model, "3g.40gb");
  EXPECT_EQ((*gpus)[2].numa_node, 0);
  // A slice needs its parent's device file.
  EXPECT_EQ((*b)->DeviceFiles(2).front(), dir_ + "/dev/nvidia1");
  // With MIG off in the agent's config, the parent is reported whole.
  NvmlConfig whole = Config();
  whole.mig = false;
  auto w = (*MakeNvmlGpuBackend(whole))->Discover();
  ASSERT_EQ(w->size(), 2u);
  EXPECT_EQ((*w)[1].uuid, "GPU-q");
}

TEST_F(NvmlBackendTest, SamplesReadingsAndXidEvents) {
  Write(std::string(kFourH100) +
        "util 1 87\nmem 1 40000\npower 1 612.5\ntemp 1 71\nenergy 1 5000\necc 2 3\n"
        "remapfail 3 1\n");
  auto b = MakeNvmlGpuBackend(Config());
  ASSERT_TRUE(b.has_value()) << b.error().message;
  auto s = (*b)->Sample();
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->size(), 4u);
  const GpuSample& g1 = (*s)[1];
  EXPECT_TRUE(g1.present);
  EXPECT_EQ(g1.utilization, 87);
  EXPECT_EQ(g1.memory_used_mb, 40000u);
  EXPECT_DOUBLE_EQ(g1.power_watts, 612.5);
  EXPECT_EQ(g1.temperature_c, 71);
  EXPECT_DOUBLE_EQ(g1.energy_joules, 5000);
  EXPECT_EQ((*s)[2].ecc_uncorrectable, 3u);
  EXPECT_TRUE((*s)[3].row_remap_failure);
  EXPECT_TRUE((*s)[0].xid_events.empty());

  // An XID arrives through the event API and shows in the next sample, once.
  Append("xid 2 79\n");
  ASSERT_TRUE(nvml_.WaitXidsHandled(1));
  auto again = (*b)->Sample();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ((*again)[2].xid_events, (std::vector<uint32_t>{79}));
  EXPECT_TRUE((*(*b)->Sample())[2].xid_events.empty());

  // A GPU that falls off the bus stops answering.
  Append("lost 0\n");
  EXPECT_FALSE((*(*b)->Sample())[0].present);
}

TEST_F(NvmlBackendTest, MetricsReadingsKeepXidsAndNameMigSlices) {
  Write(
      "gpu NVIDIA H100 80GB HBM3|GPU-p|00000000:1B:00.0|0|81559|-\n"
      "gpu NVIDIA H100 80GB HBM3|GPU-q|00000000:3B:00.0|1|81559|-\n"
      "mig 1|NVIDIA H100 80GB HBM3 MIG 1g.10gb|MIG-aaaa|9856|7|0\n"
      "util 0 55\npower 0 300\nenergy 0 1234\n");
  auto b = MakeNvmlGpuBackend(Config());
  ASSERT_TRUE(b.has_value()) << b.error().message;
  auto r = (*b)->Read();
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].pci_bus_id, "00000000:1B:00.0");
  EXPECT_EQ((*r)[0].utilization, 55);
  EXPECT_DOUBLE_EQ((*r)[0].power_watts, 300);
  EXPECT_DOUBLE_EQ((*r)[0].energy_joules, 1234);
  EXPECT_FALSE((*r)[0].mig_parent.has_value());
  EXPECT_EQ((*r)[0].product_name, "NVIDIA H100 80GB HBM3");
  // Readings this driver does not give stay unset (and are not exported).
  EXPECT_FALSE((*r)[0].sm_clock_mhz.has_value());
  EXPECT_FALSE((*r)[0].memory_temperature_c.has_value());
  EXPECT_FALSE((*r)[0].pcie_replays.has_value());
  EXPECT_FALSE((*r)[0].gr_engine_active.has_value());
  EXPECT_EQ((*r)[1].mig_parent, 1u);
  EXPECT_EQ((*r)[1].gpu_instance_id, 7u);
  EXPECT_EQ((*r)[1].mig_profile, "1g.10gb");
  EXPECT_EQ((*r)[1].product_name, "NVIDIA H100 80GB HBM3");  // the parent's, as dcgm-exporter

  // An XID shows as the last one in every reading and still reaches the next Sample.
  Append("xid 0 48\n");
  ASSERT_TRUE(nvml_.WaitXidsHandled(1));
  EXPECT_EQ((*(*b)->Read())[0].last_xid, 48u);
  EXPECT_EQ((*(*b)->Read())[0].last_xid, 48u);
  EXPECT_EQ((*(*b)->Sample())[0].xid_events, (std::vector<uint32_t>{48}));
}

// Clocks, memory temperature and PCIe replays; GPM's activity ratios over the interval
// between two readings (none at the first), for GPUs with GPM only.
TEST_F(NvmlBackendTest, MetricsReadingsHaveClocksTemperaturesReplaysAndGpmActivity) {
  Write(std::string(kFourH100) +
        "smclock 0 1980\nmemclock 0 2619\nmemtemp 0 41\nreplays 0 3\n"
        "gpm 0 90 80 30 45 60\n");
  auto b = MakeNvmlGpuBackend(Config());
  ASSERT_TRUE(b.has_value()) << b.error().message;
  auto first = (*b)->Read();
  ASSERT_TRUE(first.has_value()) << first.error().message;
  const GpuReading& g0 = (*first)[0];
  EXPECT_EQ(g0.sm_clock_mhz, 1980u);
  EXPECT_EQ(g0.memory_clock_mhz, 2619u);
  EXPECT_EQ(g0.memory_temperature_c, 41.0);
  EXPECT_EQ(g0.pcie_replays, 3u);
  EXPECT_FALSE(g0.gr_engine_active.has_value());  // one sample: no interval yet
  EXPECT_FALSE((*first)[1].sm_clock_mhz.has_value());

  // The second reading measures over the interval since the first.
  Append("gpm 0 50 40 20 10 5\n");
  auto second = (*b)->Read();
  ASSERT_TRUE(second.has_value());
  const GpuReading& r0 = (*second)[0];
  ASSERT_TRUE(r0.gr_engine_active.has_value());
  EXPECT_DOUBLE_EQ(*r0.gr_engine_active, 0.5);
  EXPECT_DOUBLE_EQ(*r0.sm_active, 0.4);
  EXPECT_DOUBLE_EQ(*r0.sm_occupancy, 0.2);
  EXPECT_DOUBLE_EQ(*r0.pipe_tensor_active, 0.1);
  EXPECT_DOUBLE_EQ(*r0.dram_active, 0.05);
  auto other = (*b)->Read();
  ASSERT_TRUE(other.has_value());
  EXPECT_FALSE((*other)[1].gr_engine_active.has_value());  // GPU 1 has no GPM
}

// MIG devices get GPM's ratios per GPU instance (nvmlGpmMigSampleGet on the parent), as
// dcgm-exporter labels DCGM_FI_PROF_* with GPU_I_ID; an instance without readings has none.
TEST_F(NvmlBackendTest, MigDevicesHaveGpmActivityPerGpuInstance) {
  Write(
      "gpu NVIDIA H100 80GB HBM3|GPU-p|00000000:1B:00.0|0|81559|-\n"
      "mig 0|NVIDIA H100 80GB HBM3 MIG 1g.10gb|MIG-aaaa|9856|7|0\n"
      "mig 0|NVIDIA H100 80GB HBM3 MIG 3g.40gb|MIG-bbbb|40192|2|0\n"
      "gpm 0 99 99 99 99 99\ngpmmig 0 7 10 20 30 40 50\n");
  auto b = MakeNvmlGpuBackend(Config());
  ASSERT_TRUE(b.has_value()) << b.error().message;
  auto first = (*b)->Read();
  ASSERT_TRUE(first.has_value()) << first.error().message;
  ASSERT_EQ(first->size(), 2u);
  EXPECT_FALSE((*first)[0].sm_active.has_value());  // one sample: no interval yet

  Append("gpmmig 0 7 60 50 40 30 20\n");
  auto second = (*b)->Read();
  ASSERT_TRUE(second.has_value());
  const GpuReading& slice = (*second)[0];
  EXPECT_EQ(slice.gpu_instance_id, 7u);
  ASSERT_TRUE(slice.gr_engine_active.has_value());
  // The instance's own figures, not the whole GPU's 99%.
  EXPECT_DOUBLE_EQ(*slice.gr_engine_active, 0.6);
  EXPECT_DOUBLE_EQ(*slice.sm_active, 0.5);
  EXPECT_DOUBLE_EQ(*slice.sm_occupancy, 0.4);
  EXPECT_DOUBLE_EQ(*slice.pipe_tensor_active, 0.3);
  EXPECT_DOUBLE_EQ(*slice.dram_active, 0.2);
  EXPECT_EQ((*second)[1].gpu_instance_id, 2u);
  EXPECT_FALSE((*second)[1].sm_active.has_value());  // instance 2 gave no GPM readings

  // The instance stops answering: no ratio for that reading, and none until two samples again.
  Write(
      "gpu NVIDIA H100 80GB HBM3|GPU-p|00000000:1B:00.0|0|81559|-\n"
      "gpm 0 99 99 99 99 99\n");
  auto gone = (*b)->Read();
  ASSERT_TRUE(gone.has_value());
  EXPECT_FALSE((*gone)[0].sm_active.has_value());
}

TEST_F(NvmlBackendTest, UnusableLibraryOrNoGpuIsUnavailableWithOneLine) {
  NvmlConfig missing = Config();
  missing.library = dir_ + "/libnvidia-ml.so.1";
  auto m = MakeNvmlGpuBackend(missing);
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(m.error().message.find("cannot load"), std::string::npos) << m.error().message;

  NvmlConfig not_nvml = Config();
  not_nvml.library = "libm.so.6";
  auto n = MakeNvmlGpuBackend(not_nvml);
  ASSERT_FALSE(n.has_value());
  EXPECT_EQ(n.error().message, "libm.so.6 lacks the NVML entry point nvmlInit_v2");

  Write("driver 550.54.15\n");
  auto none = MakeNvmlGpuBackend(Config());
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().message, "NVML sees no GPU (driver 550.54.15)");

  Write("fail_init 9\n");
  auto broken = MakeNvmlGpuBackend(Config());
  ASSERT_FALSE(broken.has_value());
  EXPECT_EQ(broken.error().message, "NVML: nvmlInit_v2: Driver Not Loaded (9)");
}

TEST(GpuTypeTest, MapsProductNamesToShortTypes) {
  EXPECT_EQ(GpuTypeFromProductName("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(GpuTypeFromProductName("NVIDIA H200"), "h200");
  EXPECT_EQ(GpuTypeFromProductName("NVIDIA A100-SXM4-80GB"), "a100");
  EXPECT_EQ(GpuTypeFromProductName("Tesla V100-SXM2-32GB"), "v100");
  EXPECT_EQ(GpuTypeFromProductName("Tesla T4"), "t4");
  EXPECT_EQ(GpuTypeFromProductName("NVIDIA L40S"), "l40s");
  EXPECT_EQ(GpuTypeFromProductName("NVIDIA GeForce RTX 4090"), "rtx4090");
  EXPECT_EQ(GpuTypeFromProductName("NVIDIA RTX A6000"), "a6000");
  EXPECT_EQ(GpuTypeFromProductName("NVIDIA GH200 480GB"), "gh200");
  EXPECT_EQ(GpuTypeFromProductName("NVIDIA A100-SXM4-40GB MIG 1g.5gb"), "1g.5gb");
}

}  // namespace
}  // namespace corral::agent
