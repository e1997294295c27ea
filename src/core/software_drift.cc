#include "core/software_drift.h"

#include <algorithm>
#include <tuple>

namespace corral {
namespace {

using Stack = std::tuple<std::string, std::string, std::string>;

Stack StackOf(const NodeSoftware& n) { return {n.driver_version, n.cuda_version, n.nccl_version}; }

bool ReportsVersions(const NodeSoftware& n) {
  return !n.driver_version.empty() || !n.cuda_version.empty() || !n.nccl_version.empty();
}

}  // namespace

std::map<std::string, std::vector<std::string>> FindSoftwareDrift(
    std::span<const NodeSoftware> nodes) {
  std::map<std::string, std::map<Stack, size_t>> votes;  // partition -> stack -> nodes
  for (const NodeSoftware& n : nodes) {
    if (!ReportsVersions(n)) continue;
    for (const std::string& p : n.partitions) ++votes[p][StackOf(n)];
  }
  std::map<std::string, Stack> common;
  for (const auto& [partition, stacks] : votes) {
    auto best = stacks.begin();  // map order: the smallest stack wins a tie
    for (auto it = stacks.begin(); it != stacks.end(); ++it) {
      if (it->second > best->second) best = it;
    }
    common[partition] = best->first;
  }
  std::map<std::string, std::vector<std::string>> drift;
  for (const NodeSoftware& n : nodes) {
    if (!ReportsVersions(n)) continue;
    std::vector<std::string> differs;
    for (const std::string& p : n.partitions) {
      if (common.at(p) != StackOf(n)) differs.push_back(p);
    }
    if (differs.empty()) continue;
    std::sort(differs.begin(), differs.end());
    differs.erase(std::unique(differs.begin(), differs.end()), differs.end());
    drift[n.node] = std::move(differs);
  }
  return drift;
}

std::string DescribeSoftware(const NodeSoftware& n) {
  std::string out = "driver " + (n.driver_version.empty() ? "?" : n.driver_version) + ", CUDA " +
                    (n.cuda_version.empty() ? "?" : n.cuda_version);
  if (!n.nccl_version.empty()) out += ", NCCL " + n.nccl_version;
  return out;
}

}  // namespace corral
