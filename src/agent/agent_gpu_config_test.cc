// agent.toml keys of the GPU backends, health, cgroups and containers; and the example file
// in deploy/, which must parse.
#include <gtest/gtest.h>

#include "agent/config.h"

namespace corral::agent {
namespace {

TEST(AgentGpuConfigTest, ParsesTheNewSections) {
  auto c = ParseAgentConfig(R"(
[agent]
name = "gpu-07"
[gpu]
backend = "nvml"
fallback = "fail"
nvml_library = "/opt/nvidia/libnvidia-ml.so.1"
mig = false
sample_interval_s = 2
model_names = { "NVIDIA H100 80GB HBM3" = "h100-sxm" }
device_dir = "/tmp/dev"
[health]
interval_s = 5
critical_xids = [79, 48]
max_temperature_c = 88.5
max_power_watts = 700
check_ecc = false
script = "/usr/sbin/nhc"
script_timeout_s = 20
auto_resume = true
[cgroup]
mode = "v1"
parent = "corral-jobs"
constrain_devices = false
[container]
runtime = "enroot"
gpus = "env"
extra_args = ["--rw"]
env = ["ENROOT_RUNTIME_PATH=/run/enroot"]
)",
                            "agent.toml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->gpu_backend, "nvml");
  EXPECT_EQ(c->gpu_fallback, "fail");
  EXPECT_EQ(c->nvml.library, "/opt/nvidia/libnvidia-ml.so.1");
  EXPECT_FALSE(c->nvml.mig);
  EXPECT_EQ(c->sample_interval, Seconds(2));
  EXPECT_EQ(c->nvml.model_names.at("NVIDIA H100 80GB HBM3"), "h100-sxm");
  EXPECT_EQ(c->simulated_gpus.device_dir, "/tmp/dev");
  EXPECT_EQ(c->health.interval, Seconds(5));
  EXPECT_EQ(c->health.critical_xids, (std::set<uint32_t>{48, 79}));
  EXPECT_DOUBLE_EQ(c->health.max_temperature_c, 88.5);
  EXPECT_DOUBLE_EQ(c->health.max_power_watts, 700);
  EXPECT_FALSE(c->health.check_ecc);
  EXPECT_EQ(c->health.script, "/usr/sbin/nhc");
  EXPECT_EQ(c->health.script_timeout, Seconds(20));
  EXPECT_TRUE(c->health.auto_resume);
  EXPECT_EQ(c->cgroup.mode, "v1");
  EXPECT_EQ(c->cgroup.parent, "corral-jobs");
  EXPECT_FALSE(c->cgroup.constrain_devices);
  EXPECT_EQ(c->container.runtime, "enroot");
  EXPECT_EQ(c->container.extra_args, (std::vector<std::string>{"--rw"}));
  EXPECT_EQ(c->container.env, (std::vector<std::string>{"ENROOT_RUNTIME_PATH=/run/enroot"}));
}

TEST(AgentGpuConfigTest, DefaultsAndErrors) {
  auto d = ParseAgentConfig("[gpu]\nbackend = \"auto\"\n", "agent.toml");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->gpu_fallback, "simulated");
  EXPECT_EQ(ParseAgentConfig("[gpu]\nbackend = \"nvml\"\n", "a")->gpu_fallback, "none");
  EXPECT_EQ(ParseAgentConfig("[gpu]\nbackend = \"rocm\"\n", "a").error().message,
            "a: [gpu] backend: \"rocm\" is not a known backend (nvml, simulated, auto)");
  EXPECT_EQ(ParseAgentConfig("[gpu]\nfallback = \"maybe\"\n", "a").error().message,
            "a: [gpu] fallback: \"maybe\" is not one of simulated, none, fail");
  EXPECT_EQ(ParseAgentConfig("[cgroup]\nmode = \"v3\"\n", "a").error().message,
            "a: [cgroup] mode: \"v3\" is not one of auto, v1, v2, off");
  EXPECT_EQ(ParseAgentConfig("[cgroup]\nparent = \"a/b\"\n", "a").error().message,
            "a: [cgroup] parent: must be one directory name");
  EXPECT_EQ(ParseAgentConfig("[container]\nruntime = \"lxc\"\n", "a").error().message,
            "a: [container] runtime: \"lxc\" is not one of podman, docker, apptainer, singularity, "
            "enroot");
  EXPECT_EQ(ParseAgentConfig("[health]\nmax_power_watts = -1\n", "a").error().message,
            "a: [health] max_power_watts: must not be negative");
  EXPECT_EQ(ParseAgentConfig("[health]\nauto_resume = 1\n", "a").error().message,
            "a: [health] auto_resume: expected true or false");
  EXPECT_EQ(ParseAgentConfig("[health]\nbogus = 1\n", "a").error().message,
            "a: [health] unknown key \"bogus\"");
}

TEST(AgentGpuConfigTest, TheDeployExampleParses) {
  auto c = LoadAgentConfig(CORRAL_SOURCE_DIR "/deploy/agent.example.toml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->gpu_backend, "auto");
  EXPECT_EQ(c->health.critical_xids.size(), 8u);
}

}  // namespace
}  // namespace corral::agent
