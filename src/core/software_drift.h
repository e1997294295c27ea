// Software drift: nodes of one partition whose driver, CUDA or NCCL version differs from the
// partition's common stack (the version set most of its nodes report). Shown by `corral
// nodes` and the controller's /metrics (`corral_node_software_drift`); docs/metrics.md.
//
// Pure.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

namespace corral {

struct NodeSoftware {
  std::string node;
  std::vector<std::string> partitions;
  std::string driver_version;
  std::string cuda_version;
  std::string nccl_version;
};

// For each partition, the most common (driver, CUDA, NCCL) triple among its nodes that report
// any version (a tie goes to the lexicographically smallest); a node differs in a partition
// when its triple is not that one. Nodes that report no version at all are not compared.
// Returns node -> the partitions (sorted) in which it differs; nodes that differ nowhere are
// absent.
std::map<std::string, std::vector<std::string>> FindSoftwareDrift(
    std::span<const NodeSoftware> nodes);

// "driver 550.54, CUDA 12.4" and the NCCL version when known: the versions of `n` for people.
std::string DescribeSoftware(const NodeSoftware& n);

}  // namespace corral
