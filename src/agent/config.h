// The agent's configuration, read from agent.toml (every key is documented in
// deploy/agent.example.toml).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agent/exec/cgroup.h"
#include "agent/exec/container.h"
#include "agent/gpu/gpu_backend.h"
#include "agent/health.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::agent {

struct AgentConfig {
  std::string name;  // default: the host name
  // One controller URL, or several comma-separated (issue 11): the agent follows the leader.
  std::string controller_url = "http://127.0.0.1:6900";
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 0;    // 0 = any free port
  std::string advertise_host;  // host in the URL the controller uses; default listen_host
  std::string state_dir = "/var/lib/corral/agent";
  uint32_t cpus = 0;       // 0 = the machine's
  uint64_t memory_mb = 0;  // 0 = the machine's
  std::vector<std::string> features;
  Duration kill_grace = Seconds(30);      // SIGTERM -> SIGKILL at time limit or cancel
  std::string gpu_backend = "simulated";  // "nvml" | "simulated" | "auto" (NVML, else the fallback)
  // When NVML cannot be used: "simulated", "none" (no GPUs) or "fail" (the agent exits).
  // Default: "simulated" for backend "auto", "none" for "nvml".
  std::string gpu_fallback;
  SimulatedGpuConfig simulated_gpus;
  NvmlConfig nvml;
  Duration sample_interval = Seconds(10);  // GPU samples for per-job usage
  HealthConfig health;
  CgroupConfig cgroup;
  ContainerConfig container;
  // [auth]: the agent's keyring (api/token.h): its node's key (`key KID SECRET node=NAME`), or a
  // first-release cluster key file. `cluster_name` is the iss of its tokens (the controller's
  // [controller] cluster_name).
  std::string jwt_key_file = "/etc/corral/jwt.key";
  std::string cluster_name = "corral";
  // [tls]: the agent's certificate (CN = its node name) and key, the cluster CA that verifies
  // the controller (and client certificates), whether callers must present a certificate.
  std::string tls_certificate;
  std::string tls_key;
  std::string tls_ca;
  std::string tls_client_certificate = "optional";  // "none" | "optional" | "required"
  bool allow_plain_loopback = false;                // http:// to and from a loopback controller
  // [launch]: multi-node steps and checkpoints.
  uint32_t master_port_min = 29500;  // MASTER_PORT: a job's port in this range, checked
  uint32_t master_port_max = 30499;  // free on its first node
  std::string checkpoint_root;       // CORRAL_CHECKPOINT_DIR = <root>/<job id>;
                                     // "" = <working dir>/.corral/checkpoints/<job id>
  bool allow_root_jobs = false;      // run jobs and steps as uid 0 or gid 0
  // [metrics] job_mapping_dir: dcgm-exporter's HPC job-mapping directory, kept up to date
  // (agent/gpu_jobs.h); "" = none.
  std::string job_mapping_dir;
  // [metrics] token_file: the scrape token (api/scrape_token.h) that reads /metrics; "" = only
  // the controller's calls may.
  std::string metrics_token_file;
};

// Returns kInvalidArgument naming the file, section, key and reason.
Result<AgentConfig> ParseAgentConfig(std::string_view toml_text, std::string_view origin);
// Whether the agent may run as configured: its controller URL is https:// with a CA
// (`[tls] ca`), or http:// to loopback with `[tls] allow_plain_loopback`; it serves TLS
// (`[tls] certificate`) unless it listens on loopback with `allow_plain_loopback`. Returns
// kInvalidArgument naming `origin`, the key and the fix otherwise.
Status CheckAgentTransport(const AgentConfig& config, std::string_view origin);

// Returns kNotFound naming the path if it cannot be read, or ParseAgentConfig's errors.
Result<AgentConfig> LoadAgentConfig(const std::string& path);

}  // namespace corral::agent
