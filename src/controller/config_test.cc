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
  EXPECT_EQ(c->admin_users, (std::vector<std::string>{"ops"}));
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
      {"[tls]\nclient_certificate = \"maybe\"\n",
       "corral.toml: [tls] client_certificate: \"maybe\" is not one of none, optional, required"},
      {"[tls]\ncertificate = \"/c.pem\"\n",
       "corral.toml: [tls] certificate and key must be given together"},
      {"[tls]\ncertificate = \"/c.pem\"\nkey = \"/k.pem\"\n",
       "corral.toml: [tls] ca: required with a certificate (it verifies the agents)"},
      {"[tls]\ncert = \"/c.pem\"\n", "corral.toml: [tls] unknown key \"cert\""},
      {"[auth]\noperator_groups = \"ops\"\n",
       "corral.toml: [auth] operator_groups: expected an array of strings"},
      {"[auth]\nmax_token_lifetime_s = 10\n",
       "corral.toml: [auth] max_token_lifetime_s: 10 is out of range 60..604800"},
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

TEST(ControllerConfigTest, ReadsRolesAndTls) {
  auto c = ParseControllerConfig(R"(
[auth]
admins = ["root2"]
admin_users = ["alice"]
admin_groups = ["wheel"]
operator_users = ["bob"]
operator_groups = ["ops"]
keyring = "/etc/corral/keyring"
[tls]
certificate = "/etc/corral/controller.crt"
key = "/etc/corral/controller.key"
ca = "/etc/corral/ca.crt"
client_certificate = "required"
)",
                                 "corral.toml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->admin_users, (std::vector<std::string>{"alice", "root2"}));
  EXPECT_EQ(c->admin_groups, (std::vector<std::string>{"wheel"}));
  EXPECT_EQ(c->operator_users, (std::vector<std::string>{"bob"}));
  EXPECT_EQ(c->operator_groups, (std::vector<std::string>{"ops"}));
  EXPECT_EQ(c->jwt_key_file, "/etc/corral/keyring");
  EXPECT_EQ(c->tls_certificate, "/etc/corral/controller.crt");
  EXPECT_EQ(c->tls_key, "/etc/corral/controller.key");
  EXPECT_EQ(c->tls_ca, "/etc/corral/ca.crt");
  EXPECT_EQ(c->tls_client_certificate, "required");
  EXPECT_TRUE(CheckTransportSecurity(*c, "corral.toml"));
}

TEST(ControllerConfigTest, PlainHttpOnlyOnLoopbackWhenAllowed) {
  auto plain = ParseControllerConfig("[controller]\nlisten = \"127.0.0.1:1\"\n", "f");
  ASSERT_TRUE(plain.has_value());
  Status s = CheckTransportSecurity(*plain, "f");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("f: [tls] certificate: required"), std::string::npos);

  auto loopback = ParseControllerConfig(
      "[controller]\nlisten = \"127.0.0.1:1\"\n[tls]\nallow_plain_loopback = true\n", "f");
  ASSERT_TRUE(loopback.has_value());
  EXPECT_TRUE(CheckTransportSecurity(*loopback, "f"));

  auto wide = ParseControllerConfig(
      "[controller]\nlisten = \"0.0.0.0:1\"\n[tls]\nallow_plain_loopback = true\n", "f");
  ASSERT_TRUE(wide.has_value());
  Status w = CheckTransportSecurity(*wide, "f");
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().message,
            "f: [tls] certificate: required to listen on 0.0.0.0 (plain HTTP is allowed on "
            "loopback only)");
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

namespace corral::controller {
namespace {

TEST(ControllerConfigTest, AuditRetentionDaysDefaultsToForever) {
  auto forever = ParseControllerConfig("", "t.toml");
  ASSERT_TRUE(forever) << forever.error().message;
  EXPECT_EQ(forever->audit_retention_days, 0u);
  auto kept = ParseControllerConfig("[audit]\nretention_days = 400\n", "t.toml");
  ASSERT_TRUE(kept) << kept.error().message;
  EXPECT_EQ(kept->audit_retention_days, 400u);
  auto negative = ParseControllerConfig("[audit]\nretention_days = -1\n", "t.toml");
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().message.find("retention_days"), std::string::npos);
  auto unknown = ParseControllerConfig("[audit]\nretention = 3\n", "t.toml");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("retention"), std::string::npos);
}

// The shipped example parses as the controller reads it (the scheduler's test parses its
// scheduling sections).
TEST(ControllerConfigTest, ParsesTheDeployExample) {
  auto c = LoadControllerConfig(std::string(CORRAL_SOURCE_DIR) + "/deploy/corral.example.toml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->audit_retention_days, 0u);
}

}  // namespace
}  // namespace corral::controller
