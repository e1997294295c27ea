#include "controller/internal/partitions.h"

#include <algorithm>

#include "core/hostlist.h"

namespace corral::controller::internal {

Partitions::Partitions(std::vector<Partition> partitions) : partitions_(std::move(partitions)) {
  if (partitions_.empty()) partitions_.push_back(Partition{.name = "main", .is_default = true});
  // Expand host-list patterns once; membership is checked by name afterwards.
  for (auto& p : partitions_) {
    std::vector<std::string> names;
    for (const auto& pattern : p.nodes) {
      auto expanded = ExpandHostList(pattern);
      if (expanded) names.insert(names.end(), expanded->begin(), expanded->end());
    }
    p.nodes = std::move(names);
  }
}

const Partition* Partitions::Find(const std::string& name) const {
  for (const auto& p : partitions_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const Partition& Partitions::Default() const {
  for (const auto& p : partitions_) {
    if (p.is_default) return p;
  }
  return partitions_.front();
}

bool Partitions::Holds(const Partition& p, const std::string& node) {
  return p.nodes.empty() || std::find(p.nodes.begin(), p.nodes.end(), node) != p.nodes.end();
}

std::vector<std::string> Partitions::Of(const std::string& node) const {
  std::vector<std::string> out;
  for (const auto& p : partitions_) {
    if (Holds(p, node)) out.push_back(p.name);
  }
  return out;
}

}  // namespace corral::controller::internal
