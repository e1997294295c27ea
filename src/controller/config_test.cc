#include "controller/config.h"

#include <gtest/gtest.h>

namespace corral::controller {
namespace {

TEST(ControllerConfigTest, ParsesOwnSectionsAndKeepsSchedulingOnes) {
  auto c = ParseControllerConfig(R"(
[controller]
cluster_name = "lab"
listen = "0.0.0.0:7000"
state_dir = "/srv/corral"
heartbeat_interval_s = 3
node_timeout_s = 30
[store]
url = "postgresql://corral@db/corral"
[auth]
munge = true
admins = ["ops"]
[[partition]]
name = "gpu"
)", "corral.toml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->cluster_name, "lab");
  EXPECT_EQ(c->listen_host, "0.0.0.0");
  EXPECT_EQ(c->listen_port, 7000);
  EXPECT_EQ(c->heartbeat_interval, Seconds(3));
  EXPECT_EQ(c->node_timeout, Seconds(30));
  EXPECT_EQ(c->store_url, "postgresql://corral@db/corral");
  EXPECT_TRUE(c->munge);
  EXPECT_EQ(c->admins, (std::vector<std::string>{"ops"}));
  EXPECT_EQ(c->jwt_key_file, "/srv/corral/jwt.key");
}

TEST(ControllerConfigTest, DefaultsFollowTheStateDir) {
  auto c = ParseControllerConfig("[controller]\nstate_dir = \"/x\"\n", "f");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->store_url, "sqlite:/x/corral.db");
}

TEST(ControllerConfigTest, RejectsBadConfigsNamingTheKey) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"[controller]\nlisen = \"x\"\n", "corral.toml: [controller] unknown key \"lisen\""},
      {"[contoller]\n", "corral.toml: unknown section or key \"contoller\""},
      {"[controller]\nlisten = \"host\"\n", "corral.toml: [controller] listen: expected HOST:PORT, got \"host\""},
      {"[controller]\nlisten = \"h:99999\"\n", "corral.toml: [controller] listen: bad port in \"h:99999\""},
      {"[controller]\nnode_timeout_s = 0\n", "corral.toml: [controller] node_timeout_s: 0 is out of range 1..86400"},
      {"[controller]\nheartbeat_interval_s = 10\nnode_timeout_s = 5\n",
       "corral.toml: [controller] node_timeout_s must be longer than heartbeat_interval_s"},
      {"[auth]\nmunge = \"yes\"\n", "corral.toml: [auth] munge: expected true or false"},
      {"[store]\nurl = 5\n", "corral.toml: [store] url: expected a string"},
  };
  for (const auto& c : cases) {
    auto r = ParseControllerConfig(c.text, "corral.toml");
    ASSERT_FALSE(r.has_value()) << c.text;
    EXPECT_EQ(r.error().message, c.message);
  }
  auto syntax = ParseControllerConfig("[controller\n", "corral.toml");
  ASSERT_FALSE(syntax.has_value());
  EXPECT_EQ(syntax.error().message.rfind("corral.toml:1:", 0), 0u);
}

}  // namespace
}  // namespace corral::controller

namespace corral::controller {
namespace {

TEST(ControllerConfigTest, GpuWastePoliciesOverrideTheDefaultsPerPartitionAndQos) {
  auto c = ParseControllerConfig(R"(
[gpu_waste]
threshold_percent = 10
window_s = 600
[gpu_waste.partition.gpu]
action = "cancel"
grace_s = 60
[gpu_waste.qos.debug]
enabled = false
)", "corral.toml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const GpuWasteConfig& w = c->gpu_waste;
  EXPECT_EQ(w.defaults.threshold, 10);
  EXPECT_EQ(w.defaults.window, Seconds(600));
  EXPECT_EQ(w.defaults.action, GpuWasteAction::kNotify);
  const GpuWastePolicy& gpu = w.For("gpu", "normal");
  EXPECT_EQ(gpu.action, GpuWasteAction::kCancel);
  EXPECT_EQ(gpu.grace, Seconds(60));
  EXPECT_EQ(gpu.threshold, 10);  // inherited
  EXPECT_FALSE(w.For("gpu", "debug").enabled);
  EXPECT_EQ(&w.For("cpu", ""), &w.defaults);
}

TEST(ControllerConfigTest, BadGpuWasteKeysAreNamed) {
  auto bad = ParseControllerConfig("[gpu_waste]\naction = \"kill\"\n", "c.toml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("[gpu_waste] action"), std::string::npos);
  bad = ParseControllerConfig("[gpu_waste.partition.gpu]\nwindow = 5\n", "c.toml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("gpu_waste.partition.gpu"), std::string::npos);
  bad = ParseControllerConfig("[gpu_waste]\nthreshold_percent = 101\n", "c.toml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("threshold_percent"), std::string::npos);
}

}  // namespace
}  // namespace corral::controller
