// The network topology (Slurm's topology/tree): leaf switches that list nodes, upper switches
// that list switches, and the choice of nodes for a multi-node job on the fewest leaf switches.
//
// Invariants (after `ValidateSchedulerConfig`): switch names are unique and the tree has no
// cycle; a node is under at most one leaf (the last leaf listing it wins). A switch's `level`
// is 0 for a leaf and the longest path down to a leaf otherwise.
//
// Immutable after construction; thread-safe to read.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/config.h"

namespace corral::sched::internal {

class Topology {
 public:
  struct Switch {
    int parent = -1;
    int level = 0;            // 0 for a leaf
    std::vector<int> leaves;  // leaf indices under it (itself for a leaf)
  };

  explicit Topology(const std::vector<SwitchConfig>& switches);

  bool empty() const { return switches_.empty(); }
  const std::vector<Switch>& switches() const { return switches_; }

  // The leaf switch (its index in the config's list) of node `name`, or -1 when none lists it.
  int LeafOf(const std::string& name) const;

  // Picks `n` of a job's candidate nodes, given in preference order (fewest free GPUs first,
  // then NodeId) by their leaf (`leaves[i]` for candidate i, -1 = outside the topology):
  //   1. when one leaf holds `n` candidates, the leaf with the fewest candidates that suffices
  //      (ties: the lowest leaf index), its first `n` candidates;
  //   2. else the lowest switch whose subtree holds `n` (ties: fewer candidates, then the lowest
  //      switch index), taking its leaves with the most candidates first (ties: lowest leaf
  //      index) and each leaf's candidates in order; with no such switch, every leaf, the nodes
  //      outside the topology counting as one more leaf that loses every tie.
  // Without a topology, the first `n`. Returns candidate positions in ascending order.
  // Requires: `n <= leaves.size()`.
  std::vector<uint32_t> Choose(const std::vector<int>& leaves, uint32_t n) const;

 private:
  std::vector<Switch> switches_;
  std::unordered_map<std::string, int> node_leaf_;  // lookups only: its order reaches nothing
};

}  // namespace corral::sched::internal
