// Partitions: the cluster's partitions as configured, their host-list patterns expanded once,
// and the lookups the controller makes of them.
//
// Immutable after construction; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "core/partition.h"

namespace corral::controller::internal {

class Partitions {
 public:
  // `partitions` as configured, or one partition "main" (the default) when there is none.
  // The host-list patterns of `Partition::nodes` are expanded ("gpu[01-04]"); a pattern that
  // does not parse names no node.
  explicit Partitions(std::vector<Partition> partitions);

  // In configuration order, node names expanded.
  const std::vector<Partition>& all() const { return partitions_; }
  // Null when there is no partition `name`.
  const Partition* Find(const std::string& name) const;
  // The partition marked default, else the first.
  const Partition& Default() const;
  // Whether `p` holds node `node`: a partition that names no nodes holds them all.
  static bool Holds(const Partition& p, const std::string& node);
  // The names of the partitions that hold `node`, in configuration order.
  std::vector<std::string> Of(const std::string& node) const;

 private:
  std::vector<Partition> partitions_;
};

}  // namespace corral::controller::internal
