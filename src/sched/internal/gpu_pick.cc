#include "sched/internal/gpu_pick.h"

#include <algorithm>
#include <bit>

namespace corral::sched::internal {

GpuSet LowestGpus(GpuSet s, uint32_t n) {
  GpuSet out;
  for (uint64_t b = s.bits(); b != 0 && out.size() < n; b &= b - 1) out.insert(std::countr_zero(b));
  return out;
}

GpuSet PickGpus(const NodeView& node, GpuSet cand, uint32_t n) {
  if (n == 0) return {};
  if (cand.size() <= n) return cand;
  // NVLink domains: connected components of the peer graph (one domain when nothing is known).
  uint8_t parent[kMaxGpusPerNode];
  for (uint32_t i = 0; i < kMaxGpusPerNode; ++i) parent[i] = static_cast<uint8_t>(i);
  auto find = [&](uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  bool any_link = false;
  // NVSwitch: every GPU reaches every other; one domain, no need for the union-find.
  const bool all_to_all = std::all_of(node.gpus.begin(), node.gpus.end(), [&](const GpuInfo& g) {
    return g.nvlink_peers.size() + 1 == node.gpus.size();
  });
  for (const GpuInfo& g : node.gpus) {
    if (all_to_all || g.index >= kMaxGpusPerNode) continue;
    for (uint32_t p : g.nvlink_peers) {
      if (p < kMaxGpusPerNode) {
        parent[find(g.index)] = static_cast<uint8_t>(find(p));
        any_link = true;
      }
    }
  }
  // Groups of candidates: NVLink domain x NUMA node, NVLink domain, NUMA node (at most 64 each).
  GpuSet both[kMaxGpusPerNode], domains[kMaxGpusPerNode], numas[kMaxGpusPerNode];
  uint32_t n_both = 0, n_domains = 0, n_numas = 0;
  uint32_t both_key[kMaxGpusPerNode], domain_key[kMaxGpusPerNode];
  int32_t numa_key[kMaxGpusPerNode];
  auto add = [](GpuSet* sets, auto* keys, uint32_t* count, auto key, uint32_t gpu) {
    for (uint32_t i = 0; i < *count; ++i) {
      if (keys[i] == key) {
        sets[i].insert(gpu);
        return;
      }
    }
    keys[*count] = key;
    sets[*count] = GpuSet();
    sets[(*count)++].insert(gpu);
  };
  for (const GpuInfo& g : node.gpus) {
    if (g.index >= kMaxGpusPerNode || !cand.contains(g.index)) continue;
    uint32_t d = any_link ? find(g.index) : 0;
    add(domains, domain_key, &n_domains, d, g.index);
    add(numas, numa_key, &n_numas, g.numa_node, g.index);
    add(both, both_key, &n_both, d * 1024u + static_cast<uint32_t>(g.numa_node + 1), g.index);
  }
  auto best_of = [&](const GpuSet* sets, uint32_t count) -> GpuSet {
    const GpuSet* best = nullptr;
    for (uint32_t i = 0; i < count; ++i) {
      const GpuSet& set = sets[i];
      if (set.size() < n) continue;
      if (best == nullptr || set.size() < best->size() ||
          (set.size() == best->size() &&
           std::countr_zero(set.bits()) < std::countr_zero(best->bits()))) {
        best = &set;
      }
    }
    return best != nullptr ? LowestGpus(*best, n) : GpuSet();
  };
  if (GpuSet s = best_of(both, n_both); !s.empty()) return s;
  if (GpuSet s = best_of(domains, n_domains); !s.empty()) return s;
  if (GpuSet s = best_of(numas, n_numas); !s.empty()) return s;
  return LowestGpus(cand, n);
}

}  // namespace corral::sched::internal
