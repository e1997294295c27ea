#include <gtest/gtest.h>

#include "agent/config.h"

namespace corral::agent {
namespace {

TEST(AgentConfigTest, ParsesEveryKey) {
  auto c = ParseAgentConfig(R"(
[agent]
name = "gpu-07"
controller = "http://10.0.0.1:6900"
listen = "0.0.0.0:7001"
advertise = "10.0.0.7"
state_dir = "/var/lib/corral/agent"
cpus = 96
memory_mb = 1000000
features = ["ib", "nvme"]
kill_grace_s = 10
[gpu]
backend = "simulated"
count = 4
model = "a100"
memory_mb = 40960
nvlink = "pairs"
numa_nodes = 2
[auth]
jwt_key_file = "/etc/corral/jwt.key"
)",
                            "agent.toml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->name, "gpu-07");
  EXPECT_EQ(c->listen_host, "0.0.0.0");
  EXPECT_EQ(c->listen_port, 7001);
  EXPECT_EQ(c->advertise_host, "10.0.0.7");
  EXPECT_EQ(c->cpus, 96u);
  EXPECT_EQ(c->features, (std::vector<std::string>{"ib", "nvme"}));
  EXPECT_EQ(c->kill_grace, Seconds(10));
  EXPECT_EQ(c->simulated_gpus.count, 4u);
  EXPECT_EQ(c->simulated_gpus.model, "a100");
  EXPECT_EQ(c->simulated_gpus.nvlink, "pairs");
  EXPECT_EQ(c->simulated_gpus.node_name, "gpu-07");
}

TEST(AgentConfigTest, RejectsBadConfigsNamingTheKey) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"[agent]\nnmae = \"x\"\n", "agent.toml: [agent] unknown key \"nmae\""},
      {"[agnet]\n", "agent.toml: unknown section or key \"agnet\""},
      {"[agent]\ncpus = -1\n", "agent.toml: [agent] cpus: -1 is out of range"},
      {"[agent]\ncpus = \"many\"\n", "agent.toml: [agent] cpus: expected an integer"},
      {"[agent]\nlisten = \"nohostport\"\n",
       "agent.toml: [agent] listen: expected HOST:PORT, got \"nohostport\""},
      {"[agent]\ncontroller = \"ftp://x\"\n",
       "agent.toml: [agent] controller: \"ftp://x\" is not an http:// or https:// URL"},
      {"[gpu]\nbackend = \"cuda\"\n",
       "agent.toml: [gpu] backend: \"cuda\" is not a known backend (nvml, simulated, auto)"},
  };
  for (const auto& c : cases) {
    auto r = ParseAgentConfig(c.text, "agent.toml");
    ASSERT_FALSE(r.has_value()) << c.text;
    EXPECT_EQ(r.error().message, c.message);
  }
  auto syntax = ParseAgentConfig("[agent\n", "agent.toml");
  ASSERT_FALSE(syntax.has_value());
  EXPECT_EQ(syntax.error().message.rfind("agent.toml:1:", 0), 0u) << syntax.error().message;
}

TEST(AgentConfigTest, LaunchSection) {
  auto d = ParseAgentConfig("[agent]\nname = \"n\"\n", "agent.toml");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->master_port_min, 29500u);
  EXPECT_EQ(d->master_port_max, 30499u);
  EXPECT_EQ(d->checkpoint_root, "");
  EXPECT_FALSE(d->allow_root_jobs);  // no job runs as root unless the node says so
  auto c = ParseAgentConfig(
      "[launch]\nmaster_ports = \"40000-40009\"\ncheckpoint_root = \"/shared/ckpt\"\n"
      "allow_root_jobs = true\n",
      "agent.toml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_TRUE(c->allow_root_jobs);
  EXPECT_EQ(c->master_port_min, 40000u);
  EXPECT_EQ(c->master_port_max, 40009u);
  EXPECT_EQ(c->checkpoint_root, "/shared/ckpt");
  EXPECT_EQ(ParseAgentConfig("[launch]\nmaster_ports = \"9-1\"\n", "agent.toml").error().message,
            "agent.toml: [launch] master_ports: expected LOW-HIGH within 1-65535, got \"9-1\"");
  EXPECT_EQ(
      ParseAgentConfig("[launch]\ncheckpoint_root = \"ckpt\"\n", "agent.toml").error().message,
      "agent.toml: [launch] checkpoint_root: \"ckpt\" is not an absolute path");
}

TEST(AgentConfigTest, MetricsSection) {
  auto d = ParseAgentConfig("[agent]\nname = \"n\"\n", "agent.toml");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->job_mapping_dir, "");  // no job-mapping directory unless asked
  auto c = ParseAgentConfig("[metrics]\njob_mapping_dir = \"/run/dcgm-jobs\"\n", "agent.toml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->job_mapping_dir, "/run/dcgm-jobs");
  EXPECT_EQ(
      ParseAgentConfig("[metrics]\njob_mapping_dir = \"jobs\"\n", "agent.toml").error().message,
      "agent.toml: [metrics] job_mapping_dir: must be an absolute path");
  EXPECT_EQ(ParseAgentConfig("[metrics]\nport = 9400\n", "agent.toml").error().message,
            "agent.toml: [metrics] unknown key \"port\"");
}

TEST(AgentConfigTest, ContainerSectionKeepsTheLockedDownOptions) {
  auto d = ParseAgentConfig("[container]\nruntime = \"podman\"\n", "agent.toml");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->container.rootless, "off");
  EXPECT_TRUE(d->container.allow_mounts.empty());  // no requested mount by default
  auto c = ParseAgentConfig(
      "[container]\nruntime = \"podman\"\nrootless = \"auto\"\n"
      "allow_mounts = [\"/datasets\", \"/scratch\"]\nallow_rw_mounts = [\"/scratch\"]\n"
      "extra_args = [\"--network=host\"]\n",
      "agent.toml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->container.rootless, "auto");
  EXPECT_EQ(c->container.allow_mounts, (std::vector<std::string>{"/datasets", "/scratch"}));
  EXPECT_EQ(c->container.allow_rw_mounts, (std::vector<std::string>{"/scratch"}));
  for (const char* arg : {"--privileged", "--cap-add=SYS_ADMIN", "--user=0", "-u0", "--userns=host",
                          "--security-opt=no-new-privileges=false", "--group-add=0"}) {
    auto r = ParseAgentConfig(std::string("[container]\nextra_args = [\"") + arg + "\"]\n",
                              "agent.toml");
    ASSERT_FALSE(r.has_value()) << arg;
    EXPECT_EQ(
        r.error().message.rfind(
            "agent.toml: [container] extra_args: \"" + std::string(arg) + "\" may not be given", 0),
        0u)
        << r.error().message;
  }
  EXPECT_EQ(
      ParseAgentConfig("[container]\nallow_mounts = [\"data\"]\n", "agent.toml").error().message,
      "agent.toml: [container] allow_mounts: path \"data\": not an absolute path");
  EXPECT_EQ(ParseAgentConfig("[container]\nrootless = \"yes\"\n", "agent.toml").error().message,
            "agent.toml: [container] rootless: \"yes\" is not one of off, auto, always");
}

TEST(AgentConfigTest, CgroupLimits) {
  auto d = ParseAgentConfig("[agent]\nname = \"n\"\n", "agent.toml");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->cgroup.pids_max, 16384u);               // a fork bomb stays in its job
  EXPECT_EQ(d->cgroup.default_memory_per_job_mb, 0u);  // the run's share of the node
  auto c =
      ParseAgentConfig("[cgroup]\npids_max = 0\ndefault_memory_per_job_mb = 8192\n", "agent.toml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->cgroup.pids_max, 0u);
  EXPECT_EQ(c->cgroup.default_memory_per_job_mb, 8192u);
}

TEST(AgentConfigTest, AuthAndTls) {
  auto c = ParseAgentConfig(R"(
[agent]
name = "node07"
controller = "https://ctl.example:6900"
listen = "0.0.0.0:6901"
[auth]
keyring = "/etc/corral/node07.keyring"
cluster_name = "lab"
[tls]
certificate = "/etc/corral/node07.crt"
key = "/etc/corral/node07.key"
ca = "/etc/corral/ca.crt"
client_certificate = "required"
)",
                            "agent.toml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->jwt_key_file, "/etc/corral/node07.keyring");
  EXPECT_EQ(c->cluster_name, "lab");
  EXPECT_EQ(c->tls_certificate, "/etc/corral/node07.crt");
  EXPECT_EQ(c->tls_key, "/etc/corral/node07.key");
  EXPECT_EQ(c->tls_ca, "/etc/corral/ca.crt");
  EXPECT_EQ(c->tls_client_certificate, "required");
  EXPECT_TRUE(CheckAgentTransport(*c, "agent.toml"));

  EXPECT_EQ(ParseAgentConfig("[tls]\nclient_certificate = \"x\"\n", "agent.toml").error().message,
            "agent.toml: [tls] client_certificate: \"x\" is not one of none, optional, required");
  EXPECT_EQ(ParseAgentConfig("[tls]\nkey = \"/k\"\n", "agent.toml").error().message,
            "agent.toml: [tls] certificate: certificate and key must be given together");
  EXPECT_EQ(ParseAgentConfig("[tls]\ncrt = \"/k\"\n", "agent.toml").error().message,
            "agent.toml: [tls] unknown key \"crt\"");
}

TEST(AgentConfigTest, PlainHttpOnlyToLoopbackWhenAllowed) {
  auto remote = ParseAgentConfig(
      "[agent]\nname = \"n\"\ncontroller = \"http://10.0.0.1:6900\"\n[tls]\n"
      "allow_plain_loopback = true\n",
      "agent.toml");
  ASSERT_TRUE(remote.has_value());
  Status s = CheckAgentTransport(*remote, "agent.toml");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("agent.toml: [agent] controller: \"http://10.0.0.1:6900\": "
                                   "plain http:// is refused"),
            std::string::npos)
      << s.error().message;

  auto loopback = ParseAgentConfig(
      "[agent]\nname = \"n\"\ncontroller = \"http://127.0.0.1:6900\"\n", "agent.toml");
  ASSERT_TRUE(loopback.has_value());
  EXPECT_FALSE(CheckAgentTransport(*loopback, "agent.toml"));  // not allowed explicitly
  loopback->allow_plain_loopback = true;
  EXPECT_TRUE(CheckAgentTransport(*loopback, "agent.toml"));

  auto no_ca =
      ParseAgentConfig("[agent]\nname = \"n\"\ncontroller = \"https://ctl:6900\"\n", "agent.toml");
  ASSERT_TRUE(no_ca.has_value());
  Status n = CheckAgentTransport(*no_ca, "agent.toml");
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().message,
            "agent.toml: [tls] ca: required to verify the controller at https://ctl:6900");
}

}  // namespace
}  // namespace corral::agent
