#include "agent/gpu_metrics.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "agent/gpu_jobs.h"
#include "core/testing/fake_clock.h"

namespace corral::agent {
namespace {

namespace fs = std::filesystem;

GpuMetricsInput TwoGpus() {
  GpuMetricsInput in;
  in.hostname = "gpu-01";
  in.gpu_backend = "simulated";
  in.driver_version = "550.54";
  in.cuda_version = "12.4";
  for (uint32_t i = 0; i < 2; ++i) {
    in.gpus.push_back({.index = i, .uuid = "GPU-" + std::to_string(i), .model = "h100"});
    GpuReading r;
    r.index = i;
    r.pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0";
    r.utilization = 50 + i;
    r.memory_used_mb = 1000;
    r.memory_free_mb = 80000;
    r.power_watts = 300.5;
    r.energy_joules = 12.3456;
    r.gr_engine_active = 0.5;
    r.sm_clock_mhz = 1980;
    r.memory_clock_mhz = 2619;
    r.memory_temperature_c = 40;
    r.pcie_replays = 0;
    in.readings.push_back(r);
  }
  return in;
}

TEST(GpuMetricsTest, UsesDcgmExporterNamesTypesUnitsAndLabels) {
  GpuMetricsInput in = TwoGpus();
  in.holders[1] = {.job = "42", .user = "alice", .account = "ml"};
  std::string text = RenderGpuMetrics(in);
  EXPECT_NE(text.find("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"), std::string::npos);
  EXPECT_NE(
      text.find("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-0\",pci_bus_id=\"00000000:10:00.0\","
                "device=\"nvidia0\",modelName=\"h100\",Hostname=\"gpu-01\"} 50\n"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-1\",pci_bus_id=\"00000000:11:00.0\","
                "device=\"nvidia1\",modelName=\"h100\",Hostname=\"gpu-01\",hpc_job=\"42\","
                "user=\"alice\",account=\"ml\"} 51\n"),
      std::string::npos)
      << text;
  // Energy in millijoules, whole.
  EXPECT_NE(text.find("Hostname=\"gpu-01\"} 12345\n"), std::string::npos) << text;
  for (std::string_view name :
       {"DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_SM_CLOCK",
        "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_PROF_GR_ENGINE_ACTIVE"}) {
    EXPECT_NE(text.find("# TYPE " + std::string(name) + " "), std::string::npos) << name;
  }
  // A PROF field the backend does not give is not exported.
  EXPECT_EQ(text.find("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"), std::string::npos);
  // modelName: the full product name where the backend gives one (dcgm-exporter's), else the
  // short type.
  in.readings[0].product_name = "NVIDIA H100 80GB HBM3";
  text = RenderGpuMetrics(in);
  EXPECT_NE(text.find("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-0\",pci_bus_id=\"00000000:10:00.0\","
                      "device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"gpu-01\"} "
                      "50\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("corral_node_software_info{Hostname=\"gpu-01\",gpu_backend=\"simulated\","
                      "driver_version=\"550.54\",cuda_version=\"12.4\",nccl_version=\"\"} 1\n"),
            std::string::npos)
      << text;
}

TEST(GpuMetricsTest, LabelsMigSlicesAndEscapesHostileJobLabels) {
  GpuMetricsInput in = TwoGpus();
  in.readings[1].mig_parent = 0;
  in.readings[1].gpu_instance_id = 7;
  in.readings[1].mig_profile = "1g.10gb";
  in.holders[1] = {.job = "9", .user = "bob\"\n\\", .account = "caf\xC3\xA9\xFF"};
  std::string text = RenderGpuMetrics(in);
  EXPECT_NE(text.find("gpu=\"0\",UUID=\"GPU-1\""), std::string::npos) << text;
  EXPECT_NE(text.find("GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"7\",hpc_job=\"9\","
                      "user=\"bob\\\"\\n\\\\\",account=\"caf\xC3\xA9\xEF\xBF\xBD\"}"),
            std::string::npos)
      << text;
  // Every line is a comment or a sample: nothing broke out of its quotes.
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(line.starts_with("# ") || line.starts_with("DCGM_FI_") ||
                line.starts_with("corral_"))
        << line;
  }
}

TEST(GpuMetricsTest, LostGpusAndMissingReadings) {
  GpuMetricsInput in = TwoGpus();
  in.readings[0].present = false;
  std::string text = RenderGpuMetrics(in);
  EXPECT_EQ(text.find("gpu=\"0\""), std::string::npos);
  in.readings.clear();
  in.readings_error = "no readings";
  text = RenderGpuMetrics(in);
  EXPECT_EQ(text.find("DCGM_FI_"), std::string::npos);
  EXPECT_NE(
      text.find("corral_agent_gpu_readings_ok{Hostname=\"gpu-01\",gpu_backend=\"simulated\"} 0"),
      std::string::npos);
}

TEST(SimulatedGpuReadTest, ReadingDoesNotConsumeXidEvents) {
  testing::FakeClock clock;
  auto backend = MakeSimulatedGpuBackend({.count = 2, .node_name = "n1"}, &clock);
  ASSERT_TRUE(backend.has_value());
  ASSERT_TRUE((*backend)->Inject({.gpu = 1, .xid = 79, .utilization = 80.0}).has_value());
  auto read = (*backend)->Read();
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ((*read)[1].last_xid, 79u);
  EXPECT_EQ((*read)[1].utilization, 80);
  EXPECT_EQ((*read)[1].product_name, "NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(*(*read)[1].pipe_tensor_active, 0.4);
  EXPECT_DOUBLE_EQ(*(*read)[1].sm_active, 0.72);
  EXPECT_FALSE((*read)[1].pci_bus_id.empty());
  EXPECT_NE((*read)[0].pci_bus_id, (*read)[1].pci_bus_id);
  auto sample = (*backend)->Sample();
  ASSERT_TRUE(sample.has_value());
  EXPECT_EQ((*sample)[1].xid_events, std::vector<uint32_t>{79});
  EXPECT_EQ((*(*backend)->Read())[1].last_xid, 79u);  // still the last one seen
}

class GpuJobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("corral-jobmap-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Read(const std::string& name) {
    std::ifstream f(dir_ / name);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }
  fs::path dir_;
};

GpuSet Gpus(std::initializer_list<uint32_t> ids) {
  GpuSet s;
  for (uint32_t i : ids) s.insert(i);
  return s;
}

TEST_F(GpuJobsTest, KeepsOneFilePerHeldGpuWithItsJobIds) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "5") << "999\n";  // left by an earlier agent run
  std::ofstream(dir_ / "notes.txt") << "not ours\n";
  GpuJobs jobs(dir_.string(), {{3, "1.2"}});
  ASSERT_TRUE(jobs.WriteMappingDir().has_value());
  EXPECT_FALSE(fs::exists(dir_ / "5"));
  EXPECT_TRUE(fs::exists(dir_ / "notes.txt"));

  jobs.Hold({JobId(42), Generation(1)}, {.job = "42", .user = "a", .account = "x"}, Gpus({0, 3}));
  jobs.Hold({JobId(7), Generation(2)}, {.job = "7", .user = "b", .account = "y"}, Gpus({0}));
  EXPECT_EQ(Read("0"), "7\n42\n");
  EXPECT_EQ(Read("1.2"), "42\n");  // a MIG slice: GPU.GI
  EXPECT_FALSE(fs::exists(dir_ / "3"));
  auto holders = jobs.Holders();
  EXPECT_EQ(holders.at(0).job, "7");  // the lowest job id
  EXPECT_EQ(holders.at(3).job, "42");

  jobs.Release({JobId(42), Generation(1)});
  EXPECT_EQ(Read("0"), "7\n");
  EXPECT_FALSE(fs::exists(dir_ / "1.2"));
  jobs.Retain({});  // the run is gone
  EXPECT_FALSE(fs::exists(dir_ / "0"));
  EXPECT_TRUE(jobs.Holders().empty());
}

TEST_F(GpuJobsTest, WithoutADirectoryOnlyTracksHolders) {
  GpuJobs jobs("", {});
  jobs.Hold({JobId(1), Generation(1)}, {.job = "1", .user = "a", .account = "x"}, Gpus({2}));
  EXPECT_EQ(jobs.Holders().at(2).user, "a");
  EXPECT_TRUE(jobs.WriteMappingDir().has_value());
  EXPECT_FALSE(fs::exists(dir_));
}

}  // namespace
}  // namespace corral::agent
