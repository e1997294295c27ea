#include "sched/internal/topology.h"

#include <algorithm>
#include <map>
#include <utility>

namespace corral::sched::internal {

Topology::Topology(const std::vector<SwitchConfig>& config) {
  std::map<std::string_view, int> switch_ids;
  for (const SwitchConfig& s : config) switch_ids[s.name] = static_cast<int>(switch_ids.size());
  switches_.resize(config.size());
  for (size_t i = 0; i < config.size(); ++i) {
    for (const std::string& child : config[i].switches)
      switches_[switch_ids.at(child)].parent = static_cast<int>(i);
    for (const std::string& n : config[i].nodes) node_leaf_[n] = static_cast<int>(i);
  }
  for (size_t i = 0; i < config.size(); ++i) {
    if (config[i].nodes.empty()) continue;
    int level = 0;
    for (int cur = static_cast<int>(i); cur >= 0; cur = switches_[cur].parent, ++level) {
      switches_[cur].leaves.push_back(static_cast<int>(i));
      switches_[cur].level = std::max(switches_[cur].level, level);
    }
  }
}

int Topology::LeafOf(const std::string& name) const {
  if (node_leaf_.empty()) return -1;
  auto it = node_leaf_.find(name);
  return it == node_leaf_.end() ? -1 : it->second;
}

std::vector<uint32_t> Topology::Choose(const std::vector<int>& leaves_of, uint32_t n) const {
  std::vector<uint32_t> out;
  if (switches_.empty()) {
    for (size_t i = 0; i < n; ++i) out.push_back(static_cast<uint32_t>(i));
    return out;
  }
  const int none = static_cast<int>(switches_.size());  // nodes outside the topology
  std::map<int, std::vector<uint32_t>> by_leaf;         // leaf -> candidate positions
  for (size_t i = 0; i < leaves_of.size(); ++i) {
    int leaf = leaves_of[i];
    by_leaf[leaf < 0 ? none : leaf].push_back(static_cast<uint32_t>(i));
  }
  // 1. One leaf suffices: the one with the fewest candidates.
  int best = -1;
  for (const auto& [leaf, list] : by_leaf) {
    if (leaf == none || list.size() < n) continue;
    if (best < 0 || list.size() < by_leaf.at(best).size()) best = leaf;
  }
  if (best >= 0) {
    const auto& list = by_leaf.at(best);
    return std::vector<uint32_t>(list.begin(), list.begin() + n);
  }
  // 2. The lowest switch whose subtree suffices, then its fullest leaves first.
  int best_switch = -1;
  size_t best_count = 0;
  for (size_t s = 0; s < switches_.size(); ++s) {
    const Switch& sw = switches_[s];
    size_t count = 0;
    for (int leaf : sw.leaves) {
      auto it = by_leaf.find(leaf);
      if (it != by_leaf.end()) count += it->second.size();
    }
    if (count < n) continue;
    if (best_switch < 0 || sw.level < switches_[best_switch].level ||
        (sw.level == switches_[best_switch].level && count < best_count)) {
      best_switch = static_cast<int>(s);
      best_count = count;
    }
  }
  std::vector<std::pair<size_t, int>> leaves;  // (count, leaf)
  for (const auto& [leaf, list] : by_leaf) {
    if (best_switch >= 0) {
      const auto& under = switches_[best_switch].leaves;
      if (std::find(under.begin(), under.end(), leaf) == under.end()) continue;
    }
    leaves.push_back({list.size(), leaf});
  }
  std::sort(leaves.begin(), leaves.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return a.second < b.second;
  });
  for (const auto& [count, leaf] : leaves) {
    for (uint32_t i : by_leaf.at(leaf)) {
      if (out.size() == n) break;
      out.push_back(i);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace corral::sched::internal
