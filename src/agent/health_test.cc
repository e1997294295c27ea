#include "agent/health.h"

#include <gtest/gtest.h>

#include "agent/gpu/testing/fake_nvml.h"

namespace corral::agent {
namespace {

std::vector<GpuInfo> Gpus(uint32_t n) {
  std::vector<GpuInfo> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i].index = i;
  return v;
}

std::vector<GpuSample> Healthy(uint32_t n) {
  std::vector<GpuSample> v(n);
  for (uint32_t i = 0; i < n; ++i) {
    v[i].index = i;
    v[i].temperature_c = 40;
    v[i].power_watts = 100;
  }
  return v;
}

TEST(HealthMonitorTest, CriticalXidIsLatchedUntilCleared) {
  HealthMonitor m({});
  auto gpus = Gpus(4);
  EXPECT_TRUE(m.Observe(gpus, Healthy(4)).gpus.empty());
  auto s = Healthy(4);
  s[2].xid_events = {13, 79};  // 13 (a program's own fault) is not critical
  HealthReport r = m.Observe(gpus, s);
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0], (GpuProblem{2, "XID 79 (GPU has fallen off the bus)", true}));
  EXPECT_EQ(r.FailingGpus(), GpuSet(0b100));
  // Later samples without the event: still failed.
  EXPECT_EQ(m.Observe(gpus, Healthy(4)).gpus.size(), 1u);
  m.Clear(2);
  EXPECT_TRUE(m.Observe(gpus, Healthy(4)).gpus.empty());
}

TEST(HealthMonitorTest, ConfiguredXidsOnly) {
  HealthMonitor m({.critical_xids = {31}});
  auto s = Healthy(1);
  s[0].xid_events = {79, 31};
  HealthReport r = m.Observe(Gpus(1), s);
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].reason, "XID 31 (XID 31)");
}

TEST(HealthMonitorTest, NewUncorrectableEccOverTheBaseline) {
  HealthMonitor m({});
  auto s = Healthy(2);
  s[1].ecc_uncorrectable = 5;  // from before the agent started: the baseline
  EXPECT_TRUE(m.Observe(Gpus(2), s).gpus.empty());
  s[1].ecc_uncorrectable = 7;
  HealthReport r = m.Observe(Gpus(2), s);
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0], (GpuProblem{1, "uncorrectable ECC errors (2 new)", true}));
  s[1].ecc_uncorrectable = 9;
  r = m.Observe(Gpus(2), s);
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].reason, "uncorrectable ECC errors (4 new)");
  m.Clear(1);  // the operator reset the GPU: 9 is the new baseline
  EXPECT_TRUE(m.Observe(Gpus(2), s).gpus.empty());
}

TEST(HealthMonitorTest, StateChecksPassAgainByThemselves) {
  HealthMonitor m({.max_temperature_c = 85, .max_power_watts = 700});
  auto s = Healthy(3);
  s[0].temperature_c = 91;
  s[1].power_watts = 750;
  s[2].row_remap_failure = true;
  HealthReport r = m.Observe(Gpus(3), s);
  ASSERT_EQ(r.gpus.size(), 3u);
  EXPECT_EQ(r.gpus[0], (GpuProblem{0, "temperature 91 C over 85 C", false}));
  EXPECT_EQ(r.gpus[1], (GpuProblem{1, "power 750 W over 700 W", false}));
  EXPECT_EQ(r.gpus[2], (GpuProblem{2, "row remapping failed", false}));
  EXPECT_TRUE(m.Observe(Gpus(3), Healthy(3)).gpus.empty());
}

TEST(HealthMonitorTest, VanishedGpuAndNodeProblems) {
  HealthMonitor m({});
  auto s = Healthy(3);
  s[1].present = false;
  s.pop_back();  // GPU 2 is not even listed any more
  HealthReport r = m.Observe(Gpus(3), s);
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[0], (GpuProblem{1, "GPU vanished (not answering)", false}));
  EXPECT_EQ(r.gpus[1].gpu, 2u);
  EXPECT_TRUE(r.node_problem.empty());

  m.SetScriptResult("ERROR: nhc: /scratch is full");
  EXPECT_EQ(m.Observe(Gpus(3), Healthy(3)).node_problem,
            "health script: ERROR: nhc: /scratch is full");
  m.SetScriptResult("");
  EXPECT_EQ(m.Observe(Gpus(3), Result<std::vector<GpuSample>>(Unavailable("NVML: Unknown Error")))
                .node_problem,
            "cannot read the GPUs: NVML: Unknown Error");
  EXPECT_TRUE(m.Observe(Gpus(3), Healthy(3)).node_problem.empty());
}

TEST(HealthMonitorTest, EveryDefaultCriticalXidHasAnAction) {
  HealthConfig c;
  for (uint32_t xid : c.critical_xids) {
    auto it = std::find_if(CriticalXidTable().begin(), CriticalXidTable().end(),
                           [&](const XidInfo& x) { return x.xid == xid; });
    ASSERT_NE(it, CriticalXidTable().end()) << xid;
    EXPECT_FALSE(it->action.empty());
  }
}

// An XID that comes through NVML's event API (the fake library) takes its GPU out.
TEST(HealthNvmlTest, HealthMonitorTakesTheXidGpuOut) {
  testing::FakeNvml nvml;
  nvml.Write(testing::FakeNvml::kFourH100);
  auto b = MakeNvmlGpuBackend(nvml.Config());
  ASSERT_TRUE(b.has_value());
  HealthMonitor monitor({});
  auto gpus = *(*b)->Discover();
  EXPECT_TRUE(monitor.Observe(gpus, (*b)->Sample()).gpus.empty());
  nvml.Append("xid 3 48\n");
  ASSERT_TRUE(nvml.WaitXidsHandled(1));
  HealthReport r = monitor.Observe(gpus, (*b)->Sample());
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].gpu, 3u);
  EXPECT_EQ(r.gpus[0].reason, "XID 48 (double-bit ECC error)");
}

}  // namespace
}  // namespace corral::agent
