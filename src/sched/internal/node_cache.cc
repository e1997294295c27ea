#include "sched/internal/node_cache.h"

#include <algorithm>
#include <numeric>
#include <string_view>

namespace corral::sched::internal {
namespace {

// Compares short strings (names, GPU models) without a call to memcmp.
bool SameName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace

bool NodeCache::Matches(const ClusterSnapshot& s) const {
  if (!built || s.nodes.size() != keys.size() || s.partitions.size() != partitions.size())
    return false;
  if (s.node_epoch != 0 && s.node_epoch == epoch) return true;  // the caller's promise
  for (size_t i = 0; i < keys.size(); ++i) {
    const NodeView& v = s.nodes[i];
    const Key& k = keys[i];
    if (v.id != k.id || v.cpus != k.cpus || v.mem_mb != k.mem_mb || v.usable_gpus != k.usable ||
        v.schedulable != k.schedulable || v.gpus.size() != k.gpus_end - k.gpus_begin ||
        !SameName(v.name, names[i])) {
      return false;
    }
    for (uint32_t g = k.gpus_begin; g < k.gpus_end; ++g) {
      const GpuInfo& gpu = v.gpus[g - k.gpus_begin];
      if (gpu.index != key_gpus[g].first || !SameName(gpu.model, key_models[key_gpus[g].second]))
        return false;
    }
  }
  return s.partitions == partitions;
}

void NodeCache::Build(const ClusterSnapshot& snap, const ConfigIndex& index) {
  *this = NodeCache();
  const size_t n_nodes = snap.nodes.size();
  // The key.
  keys.resize(n_nodes);
  names.resize(n_nodes);
  for (size_t i = 0; i < n_nodes; ++i) {
    const NodeView& v = snap.nodes[i];
    Key& k = keys[i];
    k.id = v.id;
    k.cpus = v.cpus;
    k.mem_mb = v.mem_mb;
    k.usable = v.usable_gpus;
    k.schedulable = v.schedulable;
    k.gpus_begin = static_cast<uint32_t>(key_gpus.size());
    for (const GpuInfo& g : v.gpus) {
      auto m = std::find(key_models.begin(), key_models.end(), g.model);
      if (m == key_models.end()) m = key_models.insert(m, g.model);
      key_gpus.push_back({g.index, static_cast<uint32_t>(m - key_models.begin())});
    }
    k.gpus_end = static_cast<uint32_t>(key_gpus.size());
    names[i] = v.name;
  }
  partitions = snap.partitions;
  epoch = snap.node_epoch;

  // Nodes: names, switches, GPU types.
  templ.resize(n_nodes);
  node_by_name.reserve(n_nodes * 2);
  type_names.push_back("");
  for (size_t i = 0; i < n_nodes; ++i) {
    const NodeView& v = snap.nodes[i];
    WorkNode& w = templ[i];
    node_by_name.emplace(names[i], static_cast<uint32_t>(i));
    w.leaf = index.topology.LeafOf(v.name);
    // GPU types of the node (usually one model: intern it once).
    w.types_begin = static_cast<uint32_t>(node_types.size());
    for (const GpuInfo& g : v.gpus) {
      if (g.index >= kMaxGpusPerNode || !v.usable_gpus.contains(g.index)) continue;
      auto found = std::find_if(node_types.begin() + w.types_begin, node_types.end(),
                                [&](const auto& t) { return type_names[t.first] == g.model; });
      if (found != node_types.end()) {
        found->second.insert(g.index);
        continue;
      }
      auto named = std::find(type_names.begin() + 1, type_names.end(), g.model);
      if (named == type_names.end()) named = type_names.insert(named, g.model);
      node_types.push_back({static_cast<int>(named - type_names.begin()), GpuSet()});
      node_types.back().second.insert(g.index);
    }
    w.types_end = static_cast<uint32_t>(node_types.size());
    if (v.schedulable) {
      total_gpus += v.usable_gpus.size();
      total_cpus += v.cpus;
    }
  }
  // Views into `type_names`, now that it no longer grows.
  for (size_t t = 1; t < type_names.size(); ++t)
    type_ids.emplace(type_names[t], static_cast<int>(t));

  // Partitions: members, and one pool per (partition, GPU type) plus one for "any type".
  const size_t n_parts = partitions.size();
  part_nodes.resize(n_parts);
  part_member.resize(n_parts);
  for (size_t p = 0; p < n_parts; ++p) {
    const Partition& part = partitions[p];
    part_by_name.emplace(part.name, static_cast<uint32_t>(p));
    max_tier = std::max(max_tier, part.priority_tier);
    part_member[p].Resize(n_nodes);
    if (part.nodes.empty()) {
      part_nodes[p].resize(n_nodes);
      std::iota(part_nodes[p].begin(), part_nodes[p].end(), 0u);
    } else {
      for (const std::string& name : part.nodes) {
        auto it = node_by_name.find(name);
        if (it != node_by_name.end()) part_nodes[p].push_back(it->second);
      }
      std::sort(part_nodes[p].begin(), part_nodes[p].end());
      part_nodes[p].erase(std::unique(part_nodes[p].begin(), part_nodes[p].end()),
                          part_nodes[p].end());
    }
    for (uint32_t n : part_nodes[p]) part_member[p].Set(n);
  }
  // Pools: one per (partition, type) present, plus (partition, any type).
  std::vector<std::vector<int32_t>> pool_of(n_parts, std::vector<int32_t>(type_names.size(), -1));
  auto pool_for = [&](uint32_t p, int type) {
    int32_t& id = pool_of[p][type];
    if (id < 0) {
      id = static_cast<int32_t>(pool_capacity.size());
      pool_ids.emplace(std::make_pair(p, type), static_cast<uint32_t>(id));
      pool_capacity.push_back(0);
    }
    return static_cast<uint32_t>(id);
  };
  for (size_t p = 0; p < n_parts; ++p) {
    for (uint32_t n : part_nodes[p]) {
      const WorkNode& w = templ[n];
      uint32_t& any = pool_capacity[pool_for(static_cast<uint32_t>(p), 0)];
      any = std::max(any, snap.nodes[n].usable_gpus.size());
      for (uint32_t t = w.types_begin; t < w.types_end; ++t) {
        uint32_t& typed = pool_capacity[pool_for(static_cast<uint32_t>(p), node_types[t].first)];
        typed = std::max(typed, node_types[t].second.size());
      }
    }
  }
  memberships.reserve(n_nodes * 2);
  for (size_t n = 0; n < n_nodes; ++n) {
    WorkNode& w = templ[n];
    w.pools_begin = static_cast<uint32_t>(memberships.size());
    for (size_t p = 0; p < n_parts; ++p) {
      if (!part_member[p].Contains(static_cast<uint32_t>(n))) continue;
      memberships.push_back(
          {static_cast<uint32_t>(pool_of[p][0]), 0, 0, snap.nodes[n].usable_gpus});
      for (uint32_t t = w.types_begin; t < w.types_end; ++t) {
        const int type = node_types[t].first;
        memberships.push_back(
            {static_cast<uint32_t>(pool_of[p][type]), type, 0, node_types[t].second});
      }
    }
    w.pools_end = static_cast<uint32_t>(memberships.size());
  }
  pools.resize(pool_capacity.size());
  for (size_t i = 0; i < pools.size(); ++i) {
    pools[i].capacity = pool_capacity[i];
    pools[i].buckets.resize(pool_capacity[i] + 1);
  }
  node_uses.resize(n_nodes);
  built = true;
}

}  // namespace corral::sched::internal
