#include "agent/job_gpu_load.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/testing/fake_clock.h"

namespace corral::agent {
namespace {

class JobGpuLoadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("corral-gpu-load-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    backend_ = std::move(*MakeSimulatedGpuBackend({.count = 4, .model = "a100"}, &clock_));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  double Util(uint32_t gpu) { return (*backend_->Sample())[gpu].utilization; }

  corral::testing::FakeClock clock_;
  std::filesystem::path dir_;
  std::unique_ptr<GpuBackend> backend_;
};

TEST_F(JobGpuLoadsTest, ParseTakesAPercentageAndOptionalMegabytes) {
  auto l = JobGpuLoads::Parse("95\n");
  ASSERT_TRUE(l.has_value());
  EXPECT_DOUBLE_EQ(l->utilization, 95);
  EXPECT_FALSE(l->memory_mb.has_value());
  l = JobGpuLoads::Parse("12.5 9216");
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->memory_mb, 9216u);
  EXPECT_FALSE(JobGpuLoads::Parse("").has_value());
  EXPECT_FALSE(JobGpuLoads::Parse("101").has_value());
  EXPECT_FALSE(JobGpuLoads::Parse("-1").has_value());
  EXPECT_FALSE(JobGpuLoads::Parse("busy").has_value());
  EXPECT_FALSE(JobGpuLoads::Parse("5 6 7").has_value());
  EXPECT_FALSE(JobGpuLoads::Parse("nan").has_value());
}

TEST_F(JobGpuLoadsTest, TheEnvironmentSetsTheLoadAndTheFileChangesItLater) {
  JobGpuLoads loads((dir_ / "gpu-load").string());
  JobRun busy{JobId(1), Generation(1)}, idle{JobId(2), Generation(1)};
  auto env = loads.Start(busy, GpuSet(0b11), {"PATH=/bin", "CORRAL_SIM_GPU_UTIL=95"}, std::nullopt,
                         std::nullopt);
  ASSERT_EQ(env.size(), 1u);
  ASSERT_EQ(env[0].rfind("CORRAL_SIM_GPU_LOAD_FILE=", 0), 0u);
  std::string file = env[0].substr(env[0].find('=') + 1);
  loads.Start(idle, GpuSet(0b100), {"CORRAL_SIM_GPU_UTIL=0"}, std::nullopt, std::nullopt);
  loads.Apply(*backend_);
  EXPECT_DOUBLE_EQ(Util(0), 95);
  EXPECT_DOUBLE_EQ(Util(1), 95);
  EXPECT_DOUBLE_EQ(Util(2), 0);
  std::ofstream(file) << "40 2048\n";
  loads.Apply(*backend_);
  EXPECT_DOUBLE_EQ(Util(0), 40);
  EXPECT_EQ((*backend_->Sample())[1].memory_used_mb, 2048u);
  // Garbage in the file: the environment's value again.
  std::ofstream(file) << "lots\n";
  loads.Apply(*backend_);
  EXPECT_DOUBLE_EQ(Util(0), 95);
  loads.Finish(busy, *backend_);
  EXPECT_DOUBLE_EQ(Util(0), 0);
  EXPECT_FALSE(std::filesystem::exists(file));
}

TEST_F(JobGpuLoadsTest, AJobThatSetsNothingLeavesItsGpusAlone) {
  JobGpuLoads loads((dir_ / "gpu-load").string());
  backend_->SetJobLoad(3, 50.0);  // e.g. an injected reading
  JobRun run{JobId(3), Generation(2)};
  loads.Start(run, GpuSet(0b1000), {"CORRAL_SIM_GPU_UTIL=x"}, std::nullopt, std::nullopt);
  loads.Apply(*backend_);
  loads.Finish(run, *backend_);
  EXPECT_DOUBLE_EQ(Util(3), 50);
}

}  // namespace
}  // namespace corral::agent
