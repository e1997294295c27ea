#include "sim/cluster.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include <toml++/toml.h>

#include "core/resources.h"

namespace corral::sim {
namespace {

Result<uint64_t> ParseCount(std::string_view key, std::string_view text, uint64_t min,
                            uint64_t max) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
    return InvalidArgument(std::string(key) + ": not an integer \"" + std::string(text) + "\"");
  }
  if (v < min || v > max) {
    return InvalidArgument(std::string(key) + ": " + std::to_string(v) + " is out of range " +
                           std::to_string(min) + ".." + std::to_string(max));
  }
  return v;
}

// Node names must be unique: two groups may not share a name prefix.
Status CheckNames(const ClusterSpec& spec, const std::string& where) {
  for (size_t a = 0; a < spec.groups.size(); ++a) {
    for (size_t b = a + 1; b < spec.groups.size(); ++b) {
      const NodeGroup& x = spec.groups[a];
      const NodeGroup& y = spec.groups[b];
      if ((x.name.empty() ? x.model : x.name) == (y.name.empty() ? y.model : y.name)) {
        return InvalidArgument(where + ": groups " + std::to_string(a + 1) + " and " +
                               std::to_string(b + 1) + " have the same name \"" +
                               (x.name.empty() ? x.model : x.name) +
                               "\" (set name= to tell their nodes apart)");
      }
    }
  }
  return {};
}

Status CheckGroup(const NodeGroup& g, const std::string& where) {
  if (g.count == 0) return InvalidArgument(where + ": nodes is required (>= 1)");
  if (g.gpus_per_node == 0)
    return InvalidArgument(where + ": gpus_per_node is required (1.." +
                           std::to_string(kMaxGpusPerNode) + ")");
  if (g.model.empty()) return InvalidArgument(where + ": model is empty");
  return {};
}

// Applies one key of the short form (or a scalar of a TOML group) to `g`.
Status SetKey(NodeGroup* g, std::string_view key, std::string_view value) {
  if (key == "nodes" || key == "count") {
    CORRAL_ASSIGN_OR_RETURN(uint64_t v, ParseCount(key, value, 1, 1'000'000));
    g->count = static_cast<uint32_t>(v);
  } else if (key == "gpus_per_node" || key == "gpus") {
    CORRAL_ASSIGN_OR_RETURN(uint64_t v, ParseCount(key, value, 1, kMaxGpusPerNode));
    g->gpus_per_node = static_cast<uint32_t>(v);
  } else if (key == "model") {
    g->model = std::string(value);
  } else if (key == "name") {
    g->name = std::string(value);
  } else if (key == "cpus") {
    CORRAL_ASSIGN_OR_RETURN(uint64_t v, ParseCount(key, value, 1, 1'000'000));
    g->cpus = static_cast<uint32_t>(v);
  } else if (key == "memory") {
    auto mb = ParseMemoryMb(value);
    if (!mb) return InvalidArgument("memory: " + mb.error().message);
    g->memory_mb = *mb;
  } else if (key == "nvlink") {
    CORRAL_ASSIGN_OR_RETURN(uint64_t v, ParseCount(key, value, 0, 1));
    g->nvlink = v == 1;
  } else if (key == "numa") {
    CORRAL_ASSIGN_OR_RETURN(uint64_t v, ParseCount(key, value, 0, 64));
    g->numa = static_cast<uint32_t>(v);
  } else {
    return InvalidArgument(
        "unknown key \"" + std::string(key) +
        "\" (known: nodes, gpus_per_node, model, name, cpus, memory, nvlink, numa)");
  }
  return {};
}

}  // namespace

Result<ClusterSpec> ParseClusterShortForm(std::string_view text) {
  ClusterSpec spec;
  spec.source = "--cluster";
  size_t g_start = 0;
  while (g_start <= text.size()) {
    size_t semi = text.find(';', g_start);
    std::string_view group = text.substr(
        g_start, semi == std::string_view::npos ? std::string_view::npos : semi - g_start);
    g_start = semi == std::string_view::npos ? text.size() + 1 : semi + 1;
    const std::string where = "--cluster group " + std::to_string(spec.groups.size() + 1);
    NodeGroup g;
    size_t start = 0;
    while (start <= group.size()) {
      size_t comma = group.find(',', start);
      std::string_view item = group.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      start = comma == std::string_view::npos ? group.size() + 1 : comma + 1;
      if (item.empty()) continue;
      size_t eq = item.find('=');
      if (eq == std::string_view::npos)
        return InvalidArgument(where + ": expected key=value, got \"" + std::string(item) + "\"");
      if (auto s = SetKey(&g, item.substr(0, eq), item.substr(eq + 1)); !s)
        return InvalidArgument(where + ": " + s.error().message);
    }
    CORRAL_RETURN_IF_ERROR(CheckGroup(g, where));
    spec.groups.push_back(std::move(g));
  }
  CORRAL_RETURN_IF_ERROR(CheckNames(spec, "--cluster"));
  return spec;
}

Result<ClusterSpec> ParseClusterToml(std::string_view text, std::string_view source_name) {
  const std::string src(source_name);
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    return InvalidArgument(src + ":" + std::to_string(e.source().begin.line) + ":" +
                           std::to_string(e.source().begin.column) + ": " +
                           std::string(e.description()));
  }
  ClusterSpec spec;
  spec.source = src;
  spec.toml_text = std::string(text);
  if (const toml::table* sched = root["scheduler"].as_table())
    spec.sets_priority = sched->contains("priority");
  const toml::node* nodes = root.get("nodes");
  if (nodes == nullptr || !nodes->is_array_of_tables()) {
    return InvalidArgument(src + ": no [[nodes]] groups (each: count, gpus_per_node, model, ...)");
  }
  for (const toml::node& entry : *nodes->as_array()) {
    const toml::table& t = *entry.as_table();
    const std::string where = src + ": [[nodes]] " + std::to_string(spec.groups.size() + 1);
    NodeGroup g;
    for (const auto& [k, v] : t) {
      std::string_view key = k.str();
      std::string value;
      if (key == "features") {
        if (!v.is_array())
          return InvalidArgument(where + ": features: expected an array of strings");
        for (const toml::node& f : *v.as_array()) {
          if (!f.is_string())
            return InvalidArgument(where + ": features: expected an array of strings");
          g.features.push_back(f.as_string()->get());
        }
        continue;
      }
      if (v.is_string()) {
        value = v.as_string()->get();
      } else if (v.is_integer()) {
        value = std::to_string(v.as_integer()->get());
      } else if (v.is_boolean()) {
        value = v.as_boolean()->get() ? "1" : "0";
      } else {
        return InvalidArgument(where + ": " + std::string(key) +
                               ": expected a string, integer or boolean");
      }
      if (auto s = SetKey(&g, key, value); !s)
        return InvalidArgument(where + ": " + s.error().message);
    }
    CORRAL_RETURN_IF_ERROR(CheckGroup(g, where));
    spec.groups.push_back(std::move(g));
  }
  CORRAL_RETURN_IF_ERROR(CheckNames(spec, src));
  return spec;
}

std::vector<std::string> GroupNodeNames(const NodeGroup& g) {
  const std::string prefix = (g.name.empty() ? g.model : g.name) + "-";
  int width = 3;
  for (uint32_t c = g.count; c >= 1000; c /= 10) ++width;
  std::vector<std::string> names;
  names.reserve(g.count);
  char buf[32];
  for (uint32_t i = 1; i <= g.count; ++i) {
    std::snprintf(buf, sizeof buf, "%0*u", width, i);
    names.push_back(prefix + buf);
  }
  return names;
}

std::vector<sched::NodeView> BuildNodes(const ClusterSpec& spec) {
  std::vector<sched::NodeView> out;
  uint32_t next_id = 1;
  for (const NodeGroup& g : spec.groups) {
    // One GpuInfo list per group, copied into each node.
    std::vector<GpuInfo> gpus;
    for (uint32_t i = 0; i < g.gpus_per_node; ++i) {
      GpuInfo info{.index = i, .model = g.model, .memory_mb = 80 * 1024};
      if (g.nvlink) {
        for (uint32_t p = 0; p < g.gpus_per_node; ++p) {
          if (p != i) info.nvlink_peers.push_back(p);
        }
      }
      info.numa_node = g.numa == 0 ? -1 : static_cast<int32_t>(i * g.numa / g.gpus_per_node);
      gpus.push_back(std::move(info));
    }
    std::vector<std::string> features = g.features;
    std::sort(features.begin(), features.end());
    for (std::string& name : GroupNodeNames(g)) {
      sched::NodeView n;
      n.id = NodeId(next_id++);
      n.name = std::move(name);
      n.cpus = g.cpus;
      n.mem_mb = g.memory_mb;
      n.gpus = gpus;
      n.usable_gpus = GpuSet::FirstN(g.gpus_per_node);
      n.features = features;
      n.schedulable = true;
      out.push_back(std::move(n));
    }
  }
  return out;
}

}  // namespace corral::sim
