#include "agent/config.h"

#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

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
Status Get(std::string_view origin, const char* section, const toml::table& t, const char* key, T* out) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return {};
  if constexpr (std::is_same_v<T, std::string>) {
    if (!n->is_string()) return InvalidArgument(Where(origin, section, key) + ": expected a string");
    *out = n->as_string()->get();
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (!n->is_array()) return InvalidArgument(Where(origin, section, key) + ": expected an array of strings");
    out->clear();
    for (const auto& e : *n->as_array()) {
      if (!e.is_string()) return InvalidArgument(Where(origin, section, key) + ": expected an array of strings");
      out->push_back(e.as_string()->get());
    }
  } else {
    if (!n->is_integer()) return InvalidArgument(Where(origin, section, key) + ": expected an integer");
    int64_t v = n->as_integer()->get();
    if (v < 0 || static_cast<uint64_t>(v) > std::numeric_limits<T>::max()) {
      return InvalidArgument(Where(origin, section, key) + ": " + std::to_string(v) + " is out of range");
    }
    *out = static_cast<T>(v);
  }
  return {};
}

Status SplitHostPort(std::string_view origin, const std::string& text, std::string* host, uint16_t* port) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgument(std::string(origin) + ": [agent] listen: expected HOST:PORT, got \"" + text + "\"");
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
    if (key != "agent" && key != "gpu" && key != "auth") {
      return InvalidArgument(std::string(origin) + ": unknown section or key \"" + key + "\"");
    }
    if (!v.is_table()) return InvalidArgument(std::string(origin) + ": \"" + key + "\" must be a [table]");
  }
  if (const toml::table* a = root["agent"].as_table()) {
    CORRAL_RETURN_IF_ERROR(CheckKeys(origin, "agent", *a,
                                     {"name", "controller", "listen", "advertise", "state_dir", "cpus",
                                      "memory_mb", "features", "kill_grace_s"}));
    CORRAL_RETURN_IF_ERROR(Get(origin, "agent", *a, "name", &c.name));
    CORRAL_RETURN_IF_ERROR(Get(origin, "agent", *a, "controller", &c.controller_url));
    std::string listen;
    CORRAL_RETURN_IF_ERROR(Get(origin, "agent", *a, "listen", &listen));
    if (!listen.empty()) CORRAL_RETURN_IF_ERROR(SplitHostPort(origin, listen, &c.listen_host, &c.listen_port));
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
        CheckKeys(origin, "gpu", *g, {"backend", "count", "model", "memory_mb", "nvlink", "numa_nodes"}));
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "backend", &c.gpu_backend));
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "count", &c.simulated_gpus.count));
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "model", &c.simulated_gpus.model));
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "memory_mb", &c.simulated_gpus.memory_mb));
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "nvlink", &c.simulated_gpus.nvlink));
    CORRAL_RETURN_IF_ERROR(Get(origin, "gpu", *g, "numa_nodes", &c.simulated_gpus.numa_nodes));
    if (c.gpu_backend != "simulated") {
      return InvalidArgument(std::string(origin) + ": [gpu] backend: \"" + c.gpu_backend +
                             "\" is not a known backend (simulated)");
    }
  }
  if (const toml::table* au = root["auth"].as_table()) {
    CORRAL_RETURN_IF_ERROR(CheckKeys(origin, "auth", *au, {"jwt_key_file"}));
    CORRAL_RETURN_IF_ERROR(Get(origin, "auth", *au, "jwt_key_file", &c.jwt_key_file));
  }
  if (c.name.empty()) return InvalidArgument(std::string(origin) + ": [agent] name: empty");
  if (c.controller_url.rfind("http://", 0) != 0) {
    return InvalidArgument(std::string(origin) + ": [agent] controller: \"" + c.controller_url +
                           "\" is not an http:// URL");
  }
  if (c.advertise_host.empty()) c.advertise_host = c.listen_host;
  c.simulated_gpus.node_name = c.name;
  return c;
}

Result<AgentConfig> LoadAgentConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("config file \"" + path + "\": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseAgentConfig(text.str(), path);
}

}  // namespace corral::agent
