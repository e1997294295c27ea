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
