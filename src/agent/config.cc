#include "agent/config.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "api/private_file.h"
#include "api/transport_policy.h"
#include "core/container_spec.h"
#include "core/strings.h"

namespace corral::agent {
namespace {

std::string Where(std::string_view origin, const char* section, const std::string& key) {
  return std::string(origin) + ": [" + section + "] " + key;
}

Status CheckKeys(std::string_view origin, const char* section, const toml::table& t,
                 const std::set<std::string>& known) {
  for (const auto& [k, v] : t) {
    if (!known.contains(std::string(k.str()))) {
      return InvalidArgument(std::string(origin) + ": [" + section + "] unknown key \"" +
                             std::string(k.str()) + "\"");
    }
  }
  return {};
}

template <typename T>
Status Get(std::string_view origin, const char* section, const toml::table& t, const char* key,
           T* out) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return {};
  if constexpr (std::is_same_v<T, bool>) {
    if (!n->is_boolean())
      return InvalidArgument(Where(origin, section, key) + ": expected true or false");
    *out = n->as_boolean()->get();
  } else if constexpr (std::is_same_v<T, double>) {
    if (n->is_integer()) {
      *out = static_cast<double>(n->as_integer()->get());
    } else if (n->is_floating_point()) {
      *out = n->as_floating_point()->get();
    } else {
      return InvalidArgument(Where(origin, section, key) + ": expected a number");
    }
    if (*out < 0) return InvalidArgument(Where(origin, section, key) + ": must not be negative");
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!n->is_string())
      return InvalidArgument(Where(origin, section, key) + ": expected a string");
    *out = n->as_string()->get();
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (!n->is_array())
      return InvalidArgument(Where(origin, section, key) + ": expected an array of strings");
    out->clear();
    for (const auto& e : *n->as_array()) {
      if (!e.is_string())
        return InvalidArgument(Where(origin, section, key) + ": expected an array of strings");
      out->push_back(e.as_string()->get());
    }
  } else {
    if (!n->is_integer())
      return InvalidArgument(Where(origin, section, key) + ": expected an integer");
    int64_t v = n->as_integer()->get();
    if (v < 0 || static_cast<uint64_t>(v) > std::numeric_limits<T>::max()) {
      return InvalidArgument(Where(origin, section, key) + ": " + std::to_string(v) +
                             " is out of range");
    }
    *out = static_cast<T>(v);
  }
  return {};
}

Status SplitHostPort(std::string_view origin, const std::string& text, std::string* host,
                     uint16_t* port) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgument(std::string(origin) + ": [agent] listen: expected HOST:PORT, got \"" +
                           text + "\"");
  }
  *host = text.substr(0, colon);
  std::string p = text.substr(colon + 1);
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(p) > 65535) {
    return InvalidArgument(std::string(origin) + ": [agent] listen: bad port in \"" + text + "\"");
  }
  *port = static_cast<uint16_t>(std::stoi(p));
  return {};
}

// What the container section may not say: options that would undo what the agent gives
// every container (container.h), and mount prefixes that are not clean absolute paths.
Status CheckContainerConfig(std::string_view origin, const ContainerConfig& c) {
  if (c.rootless != "off" && c.rootless != "auto" && c.rootless != "always") {
    return InvalidArgument(Where(origin, "container", "rootless") + ": \"" + c.rootless +
                           "\" is not one of off, auto, always");
  }
  for (const std::string& a : c.extra_args) {
    for (const char* banned : {"--privileged", "--cap-add", "--user", "-u", "--userns",
                               "--group-add", "--security-opt"}) {
      std::string b = banned;
      if (a == b || a.rfind(b + "=", 0) == 0 || (b.size() == 2 && a.rfind(b, 0) == 0)) {
        return InvalidArgument(Where(origin, "container", "extra_args") + ": \"" + a +
                               "\" may not be given: the agent sets the user, groups, capabilities "
                               "and security options of every container");
      }
    }
  }
  for (const auto* list : {&c.allow_mounts, &c.allow_rw_mounts}) {
    for (const std::string& p : *list) {
      if (Status s = ValidateContainerPath(p, false); !s) {
        return InvalidArgument(Where(origin, "container",
                                     list == &c.allow_mounts ? "allow_mounts" : "allow_rw_mounts") +
                               ": " + s.error().message);
      }
    }
  }
  return {};
}

}  // namespace

Result<AgentConfig> ParseAgentConfig(std::string_view toml_text, std::string_view origin) {
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << origin << ":" << e.source().begin.line << ":" << e.source().begin.column << ": "
        << e.description();
    return InvalidArgument(msg.str());
  }
  AgentConfig c;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) c.name = host;
  for (const auto& [k, v] : root) {
    std::string key(k.str());
    if (key != "agent" && key != "gpu" && key != "auth" && key != "launch" && key != "health" &&
        key != "cgroup" && key != "container" && key != "tls" &&
        key != "metrics") {
      return InvalidArgument(std::string(origin) + ": unknown section or key \"" + key + "\"");
    }
    if (!v.is_table())
      return InvalidArgument(std::string(origin) + ": \"" + key + "\" must be a [table]");
  }
  if (const toml::table* a = root["agent"].as_table()) {
    CORRAL_RETURN_IF_ERROR(CheckKeys(origin, "agent", *a,
                                     {"name", "controller", "listen", "advertise", "state_dir",
                                      "cpus", "memory_mb", "features", "kill_grace_s"}));
    CORRAL_RETURN_IF_ERROR(Get(origin, "agent", *a, "name", &c.name));
    CORRAL_RETURN_IF_ERROR(Get(origin, "agent", *a, "controller", &c.controller_url));
    std::string listen;
    CORRAL_RETURN_IF_ERROR(Get(origin, "agent", *a, "listen", &listen));
    if (!listen.empty())
      CORRAL_RETURN_IF_ERROR(SplitHostPort(origin, listen, &c.listen_host, &c.listen_port));
    CORRAL_RETURN_IF_ERROR(Get(origin, "agent", *a, "advertise", &c.advertise_host));
    CORRAL_RETURN_IF_ERROR(Get(origin, "agent", *a, "state_dir", &c.state_dir));
    CORRAL_RETURN_IF_ERROR(Get(origin, "agent", *a, "cpus", &c.cpus));
    CORRAL_RETURN_IF_ERROR(Get(origin, "agent", *a, "memory_mb", &c.memory_mb));
    CORRAL_RETURN_IF_ERROR(Get(origin, "agent", *a, "features", &c.features));
    uint32_t grace = 30;
    CORRAL_RETURN_IF_ERROR(Get(origin, "agent", *a, "kill_grace_s", &grace));
    c.kill_grace = Seconds(grace);
  }
  if (const toml::table* g = root["gpu"].as_table()) {
    CORRAL_RETURN_IF_ERROR(
        CheckKeys(origin, "gpu", *g,
                  {"backend", "fallback", "count", "model", "memory_mb", "nvlink", "numa_nodes",
                   "device_dir", "nvml_library", "mig", "model_names", "sample_interval_s"}));
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "fallback", &c.gpu_fallback));
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "device_dir", &c.simulated_gpus.device_dir));
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "nvml_library", &c.nvml.library));
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "mig", &c.nvml.mig));
    uint32_t sample_s = 10;
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "sample_interval_s", &sample_s));
    if (sample_s == 0)
      return InvalidArgument(Where(origin, "gpu", "sample_interval_s") + ": must be at least 1");
    c.sample_interval = Seconds(sample_s);
    if (const toml::node* names = g->get("model_names")) {
      if (!names->is_table()) {
        return InvalidArgument(Where(origin, "gpu", "model_names") +
                               ": expected a table of \"NVML name\" = \"type\"");
      }
      for (const auto& [k, v] : *names->as_table()) {
        if (!v.is_string()) {
          return InvalidArgument(Where(origin, "gpu", "model_names") + ": \"" +
                                 std::string(k.str()) + "\": expected a string");
        }
        c.nvml.model_names[std::string(k.str())] = v.as_string()->get();
      }
    }
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "backend", &c.gpu_backend));
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "count", &c.simulated_gpus.count));
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "model", &c.simulated_gpus.model));
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "memory_mb", &c.simulated_gpus.memory_mb));
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "nvlink", &c.simulated_gpus.nvlink));
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "numa_nodes", &c.simulated_gpus.numa_nodes));
    if (c.gpu_backend != "simulated" && c.gpu_backend != "nvml" && c.gpu_backend != "auto") {
      return InvalidArgument(std::string(origin) + ": [gpu] backend: \"" + c.gpu_backend +
                             "\" is not a known backend (nvml, simulated, auto)");
    }
    if (!c.gpu_fallback.empty() && c.gpu_fallback != "simulated" && c.gpu_fallback != "none" &&
        c.gpu_fallback != "fail") {
      return InvalidArgument(std::string(origin) + ": [gpu] fallback: \"" + c.gpu_fallback +
                             "\" is not one of simulated, none, fail");
    }
  }
  if (c.gpu_fallback.empty()) c.gpu_fallback = c.gpu_backend == "auto" ? "simulated" : "none";
  if (const toml::table* m = root["metrics"].as_table()) {
    CORRAL_RETURN_IF_ERROR(
        CheckKeys(origin, "metrics", *m, {"job_mapping_dir", "token_file"}));
    CORRAL_RETURN_IF_ERROR(Get(origin, "metrics", *m, "job_mapping_dir", &c.job_mapping_dir));
    CORRAL_RETURN_IF_ERROR(Get(origin, "metrics", *m, "token_file", &c.metrics_token_file));
    if (!c.job_mapping_dir.empty() && c.job_mapping_dir[0] != '/') {
      return InvalidArgument(Where(origin, "metrics", "job_mapping_dir") +
                             ": must be an absolute path");
    }
  }
  if (const toml::table* h = root["health"].as_table()) {
    CORRAL_RETURN_IF_ERROR(
        CheckKeys(origin, "health", *h,
                  {"interval_s", "critical_xids", "max_temperature_c", "max_power_watts",
                   "check_ecc", "script", "script_timeout_s", "auto_resume"}));
    uint32_t interval = 30, timeout = 60;
    CORRAL_RETURN_IF_ERROR(Get(origin, "health", *h, "interval_s", &interval));
    if (interval == 0)
      return InvalidArgument(Where(origin, "health", "interval_s") + ": must be at least 1");
    c.health.interval = Seconds(interval);
    CORRAL_RETURN_IF_ERROR(Get(origin, "health", *h, "script_timeout_s", &timeout));
    c.health.script_timeout = Seconds(std::max<uint32_t>(1, timeout));
    if (const toml::node* x = h->get("critical_xids")) {
      if (!x->is_array())
        return InvalidArgument(Where(origin, "health", "critical_xids") +
                               ": expected an array of XIDs");
      c.health.critical_xids.clear();
      for (const auto& e : *x->as_array()) {
        if (!e.is_integer() || e.as_integer()->get() <= 0 || e.as_integer()->get() > 100000) {
          return InvalidArgument(Where(origin, "health", "critical_xids") +
                                 ": expected positive XID numbers");
        }
        c.health.critical_xids.insert(static_cast<uint32_t>(e.as_integer()->get()));
      }
    }
    CORRAL_RETURN_IF_ERROR(
        Get(origin, "health", *h, "max_temperature_c", &c.health.max_temperature_c));
    CORRAL_RETURN_IF_ERROR(Get(origin, "health", *h, "max_power_watts", &c.health.max_power_watts));
    CORRAL_RETURN_IF_ERROR(Get(origin, "health", *h, "check_ecc", &c.health.check_ecc));
    CORRAL_RETURN_IF_ERROR(Get(origin, "health", *h, "script", &c.health.script));
    CORRAL_RETURN_IF_ERROR(Get(origin, "health", *h, "auto_resume", &c.health.auto_resume));
  }
  if (const toml::table* cg = root["cgroup"].as_table()) {
    CORRAL_RETURN_IF_ERROR(
        CheckKeys(origin, "cgroup", *cg,
                  {"mode", "parent", "constrain_cpus", "constrain_memory", "constrain_devices",
                   "pids_max", "default_memory_per_job_mb"}));
    CORRAL_RETURN_IF_ERROR(Get(origin, "cgroup", *cg, "mode", &c.cgroup.mode));
    CORRAL_RETURN_IF_ERROR(Get(origin, "cgroup", *cg, "parent", &c.cgroup.parent));
    CORRAL_RETURN_IF_ERROR(Get(origin, "cgroup", *cg, "constrain_cpus", &c.cgroup.constrain_cpus));
    CORRAL_RETURN_IF_ERROR(
        Get(origin, "cgroup", *cg, "constrain_memory", &c.cgroup.constrain_memory));
    CORRAL_RETURN_IF_ERROR(
        Get(origin, "cgroup", *cg, "constrain_devices", &c.cgroup.constrain_devices));
    CORRAL_RETURN_IF_ERROR(Get(origin, "cgroup", *cg, "pids_max", &c.cgroup.pids_max));
    CORRAL_RETURN_IF_ERROR(Get(origin, "cgroup", *cg, "default_memory_per_job_mb",
                               &c.cgroup.default_memory_per_job_mb));
    if (c.cgroup.mode != "auto" && c.cgroup.mode != "v1" && c.cgroup.mode != "v2" &&
        c.cgroup.mode != "off") {
      return InvalidArgument(Where(origin, "cgroup", "mode") + ": \"" + c.cgroup.mode +
                             "\" is not one of auto, v1, v2, off");
    }
    if (c.cgroup.parent.empty() || c.cgroup.parent.find('/') != std::string::npos ||
        c.cgroup.parent == "." || c.cgroup.parent == "..") {
      return InvalidArgument(Where(origin, "cgroup", "parent") + ": must be one directory name");
    }
  }
  if (const toml::table* ct = root["container"].as_table()) {
    CORRAL_RETURN_IF_ERROR(CheckKeys(origin, "container", *ct,
                                     {"runtime", "runtime_path", "gpus", "extra_args", "env",
                                      "rootless", "allow_mounts", "allow_rw_mounts"}));
    CORRAL_RETURN_IF_ERROR(Get(origin, "container", *ct, "env", &c.container.env));
    CORRAL_RETURN_IF_ERROR(Get(origin, "container", *ct, "runtime", &c.container.runtime));
    CORRAL_RETURN_IF_ERROR(
        Get(origin, "container", *ct, "runtime_path", &c.container.runtime_path));
    CORRAL_RETURN_IF_ERROR(Get(origin, "container", *ct, "gpus", &c.container.gpus));
    CORRAL_RETURN_IF_ERROR(Get(origin, "container", *ct, "extra_args", &c.container.extra_args));
    CORRAL_RETURN_IF_ERROR(Get(origin, "container", *ct, "rootless", &c.container.rootless));
    CORRAL_RETURN_IF_ERROR(
        Get(origin, "container", *ct, "allow_mounts", &c.container.allow_mounts));
    CORRAL_RETURN_IF_ERROR(
        Get(origin, "container", *ct, "allow_rw_mounts", &c.container.allow_rw_mounts));
    CORRAL_RETURN_IF_ERROR(CheckContainerConfig(origin, c.container));
    static const std::set<std::string> kRuntimes = {"",          "podman",      "docker",
                                                    "apptainer", "singularity", "enroot"};
    if (!kRuntimes.contains(c.container.runtime)) {
      return InvalidArgument(Where(origin, "container", "runtime") + ": \"" + c.container.runtime +
                             "\" is not one of podman, docker, apptainer, singularity, enroot");
    }
    static const std::set<std::string> kModes = {"auto", "cdi",     "gpus", "env",
                                                 "nv",   "devices", "none"};
    if (!kModes.contains(c.container.gpus)) {
      return InvalidArgument(Where(origin, "container", "gpus") + ": \"" + c.container.gpus +
                             "\" is not one of auto, cdi, gpus, env, nv, devices, none");
    }
  }
  if (const toml::table* au = root["auth"].as_table()) {
    CORRAL_RETURN_IF_ERROR(
        CheckKeys(origin, "auth", *au, {"jwt_key_file", "keyring", "cluster_name"}));
    CORRAL_RETURN_IF_ERROR(Get(origin, "auth", *au, "jwt_key_file", &c.jwt_key_file));
    CORRAL_RETURN_IF_ERROR(Get(origin, "auth", *au, "keyring", &c.jwt_key_file));
    CORRAL_RETURN_IF_ERROR(Get(origin, "auth", *au, "cluster_name", &c.cluster_name));
  }
  if (const toml::table* t = root["tls"].as_table()) {
    CORRAL_RETURN_IF_ERROR(
        CheckKeys(origin, "tls", *t,
                  {"certificate", "key", "ca", "client_certificate", "allow_plain_loopback"}));
    CORRAL_RETURN_IF_ERROR(Get(origin, "tls", *t, "certificate", &c.tls_certificate));
    CORRAL_RETURN_IF_ERROR(Get(origin, "tls", *t, "key", &c.tls_key));
    CORRAL_RETURN_IF_ERROR(Get(origin, "tls", *t, "ca", &c.tls_ca));
    CORRAL_RETURN_IF_ERROR(Get(origin, "tls", *t, "client_certificate", &c.tls_client_certificate));
    CORRAL_RETURN_IF_ERROR(Get(origin, "tls", *t, "allow_plain_loopback", &c.allow_plain_loopback));
    CORRAL_RETURN_IF_ERROR(api::ParseClientCertificateMode(
        c.tls_client_certificate, Where(origin, "tls", "client_certificate")));
    if (c.tls_certificate.empty() != c.tls_key.empty()) {
      return InvalidArgument(Where(origin, "tls", "certificate") +
                             ": certificate and key must be given together");
    }
  }
  if (const toml::table* l = root["launch"].as_table()) {
    CORRAL_RETURN_IF_ERROR(
        CheckKeys(origin, "launch", *l, {"master_ports", "checkpoint_root", "allow_root_jobs"}));
    std::string ports;
    CORRAL_RETURN_IF_ERROR(Get(origin, "launch", *l, "master_ports", &ports));
    if (!ports.empty()) {
      unsigned lo = 0, hi = 0;
      char dash = 0, extra = 0;
      if (std::sscanf(ports.c_str(), "%u%c%u%c", &lo, &dash, &hi, &extra) != 3 || dash != '-' ||
          lo == 0 || lo > hi || hi > 65535) {
        return InvalidArgument(Where(origin, "launch", "master_ports") +
                               ": expected LOW-HIGH within 1-65535, got \"" + ports + "\"");
      }
      c.master_port_min = lo;
      c.master_port_max = hi;
    }
    CORRAL_RETURN_IF_ERROR(Get(origin, "launch", *l, "checkpoint_root", &c.checkpoint_root));
    CORRAL_RETURN_IF_ERROR(Get(origin, "launch", *l, "allow_root_jobs", &c.allow_root_jobs));
    if (!c.checkpoint_root.empty() && c.checkpoint_root.front() != '/') {
      return InvalidArgument(Where(origin, "launch", "checkpoint_root") + ": \"" +
                             c.checkpoint_root + "\" is not an absolute path");
    }
  }
  if (c.name.empty()) return InvalidArgument(std::string(origin) + ": [agent] name: empty");
  // A comma-separated list names every controller (issue 11): the agent follows the leader.
  for (const std::string& url : SplitNonEmpty(c.controller_url)) {
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
      return InvalidArgument(std::string(origin) + ": [agent] controller: \"" + url +
                             "\" is not an http:// or https:// URL");
    }
  }
  if (SplitNonEmpty(c.controller_url).empty()) {
    return InvalidArgument(std::string(origin) + ": [agent] controller: empty");
  }
  if (c.advertise_host.empty()) c.advertise_host = c.listen_host;
  c.simulated_gpus.node_name = c.name;
  return c;
}

Status CheckAgentTransport(const AgentConfig& c, std::string_view origin) {
  for (const std::string& url : SplitNonEmpty(c.controller_url)) {
    CORRAL_RETURN_IF_ERROR(api::CheckUrlTransport(url, c.allow_plain_loopback,
                                                  std::string(origin) + ": [agent] controller"));
  }
  if (c.controller_url.rfind("https://", 0) == 0 && c.tls_ca.empty()) {
    return InvalidArgument(Where(origin, "tls", "ca") + ": required to verify the controller at " +
                           c.controller_url);
  }
  if (c.tls_certificate.empty()) {
    if (!c.allow_plain_loopback || !api::IsLoopbackHost(c.listen_host)) {
      return InvalidArgument(Where(origin, "tls", "certificate") +
                             ": required (the agent's API is TLS; plain HTTP only on loopback "
                             "with allow_plain_loopback = true)");
    }
  } else if (c.tls_ca.empty()) {
    return InvalidArgument(Where(origin, "tls", "ca") + ": required with a certificate");
  }
  return {};
}

Result<AgentConfig> LoadAgentConfig(const std::string& path) {
  CORRAL_ASSIGN_OR_RETURN(std::string text,
                          api::ReadPublicFile(path, "config file", api::kMaxConfigBytes));
  return ParseAgentConfig(text, path);
}

}  // namespace corral::agent
