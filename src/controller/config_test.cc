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

TEST(ControllerConfigTest, PrivacyAndLimits) {
  auto defaults = ParseControllerConfig("", "f");
  ASSERT_TRUE(defaults.has_value());
  EXPECT_FALSE(defaults->privacy.jobs);
  EXPECT_FALSE(defaults->privacy.usage);
  EXPECT_EQ(defaults->max_submitted_jobs, 10000u);
  auto c = ParseControllerConfig(
      "[privacy]\nprivate_data = [\"jobs\", \"usage\"]\n[limits]\nmax_submitted_jobs = 50\n", "f");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_TRUE(c->privacy.jobs);
  EXPECT_TRUE(c->privacy.usage);
  EXPECT_EQ(c->max_submitted_jobs, 50u);
}

TEST(ControllerConfigTest, RejectsBadConfigsNamingTheKey) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"[controller]\nlisen = \"x\"\n", "corral.toml: [controller] unknown key \"lisen\""},
      {"[contoller]\n", "corral.toml: unknown section or key \"contoller\""},
      {"[controller]\nlisten = \"host\"\n",
       "corral.toml: [controller] listen: expected HOST:PORT, got \"host\""},
      {"[controller]\nlisten = \"h:99999\"\n",
       "corral.toml: [controller] listen: bad port in \"h:99999\""},
      {"[controller]\nnode_timeout_s = 0\n",
       "corral.toml: [controller] node_timeout_s: 0 is out of range 1..86400"},
      {"[controller]\nheartbeat_interval_s = 10\nnode_timeout_s = 5\n",
       "corral.toml: [controller] node_timeout_s must be longer than heartbeat_interval_s"},
      {"[auth]\nmunge = \"yes\"\n", "corral.toml: [auth] munge: expected true or false"},
      {"[store]\nurl = 5\n", "corral.toml: [store] url: expected a string"},
      {"[privacy]\nprivate_data = [\"scripts\"]\n",
       "corral.toml: [privacy] private_data: unknown item \"scripts\" (expected \"jobs\" or "
       "\"usage\")"},
      {"[limits]\nmax_submitted_jobs = -1\n",
       "corral.toml: [limits] max_submitted_jobs: -1 is out of range 0..100000000"},
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
