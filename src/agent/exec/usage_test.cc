#include "agent/exec/usage.h"

#include <gtest/gtest.h>

namespace corral::agent {
namespace {

GpuSample At(uint32_t gpu, double util, uint64_t mem, double energy) {
  GpuSample s;
  s.index = gpu;
  s.utilization = util;
  s.memory_used_mb = mem;
  s.energy_joules = energy;
  return s;
}

TEST(UsageTrackerTest, AccruesGpuSecondsUtilisationMemoryAndEnergy) {
  UsageTracker t;
  MonoTime t0{};
  t.Start(JobRun{JobId(7), Generation(1)}, GpuSet(0b0110), t0);  // GPUs 1 and 2
  t.Observe({At(0, 99, 1, 0), At(1, 0, 0, 1000), At(2, 0, 0, 2000)}, t0);
  t.Observe({At(0, 99, 1, 0), At(1, 80, 30000, 1300), At(2, 40, 20000, 2100)}, t0 + Seconds(10));
  t.Observe({At(1, 100, 50000, 1500), At(2, 60, 10000, 2150)}, t0 + Seconds(20));
  JobUsage u = t.Finish(JobRun{JobId(7), Generation(1)}, t0 + Seconds(21));
  EXPECT_DOUBLE_EQ(u.gpu_seconds, 42);  // 2 GPUs x 21 s
  EXPECT_DOUBLE_EQ(u.gpu_util_mean, (80 + 40 + 100 + 60) / 4.0);
  EXPECT_DOUBLE_EQ(u.gpu_util_max, 100);
  EXPECT_EQ(u.gpu_mem_max_mb, 50000u);
  EXPECT_DOUBLE_EQ(u.energy_joules, (1500 - 1000) + (2150 - 2000));
  EXPECT_TRUE(t.empty());
}

TEST(UsageTrackerTest, JobsWithoutGpusAndUnknownJobs) {
  UsageTracker t;
  t.Start(JobRun{JobId(1), Generation(1)}, GpuSet(), MonoTime{});
  t.Observe({At(0, 50, 1, 1)}, MonoTime{} + Seconds(5));
  EXPECT_EQ(t.Finish(JobRun{JobId(1), Generation(1)}, MonoTime{} + Seconds(5)), JobUsage{});
  EXPECT_EQ(t.Finish(JobRun{JobId(2), Generation(1)}, MonoTime{}), JobUsage{});
}

// A requeued job's next run on the same node while its previous run is being torn down:
// each run keeps its own usage.
TEST(UsageTrackerTest, RunsOfOneJobAreKeptApart) {
  UsageTracker t;
  t.Start(JobRun{JobId(1), Generation(1)}, GpuSet(0b01), MonoTime{});
  t.Start(JobRun{JobId(1), Generation(2)}, GpuSet(0b10), MonoTime{} + Seconds(4));
  JobUsage old = t.Finish(JobRun{JobId(1), Generation(1)}, MonoTime{} + Seconds(5));
  EXPECT_DOUBLE_EQ(old.gpu_seconds, 5);
  EXPECT_FALSE(t.empty());
  EXPECT_DOUBLE_EQ(t.Finish(JobRun{JobId(1), Generation(2)}, MonoTime{} + Seconds(10)).gpu_seconds,
                   6);
  EXPECT_TRUE(t.empty());
}

TEST(UsageTrackerTest, EnergyCounterResetRestartsTheBaseline) {
  UsageTracker t;
  t.Start(JobRun{JobId(1), Generation(1)}, GpuSet(0b1), MonoTime{});
  t.Observe({At(0, 10, 1, 500)}, MonoTime{} + Seconds(1));
  t.Observe({At(0, 10, 1, 20)}, MonoTime{} + Seconds(2));  // driver reloaded
  t.Observe({At(0, 10, 1, 120)}, MonoTime{} + Seconds(3));
  EXPECT_DOUBLE_EQ(t.Finish(JobRun{JobId(1), Generation(1)}, MonoTime{} + Seconds(3)).energy_joules,
                   100);
}

}  // namespace
}  // namespace corral::agent
