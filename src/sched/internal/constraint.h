// A job's `-C`/`--constraint` node feature expression, parsed once per search: "a&b" or "a,b"
// (the node must have all of them) and "a|b" (any of them). A `|` anywhere makes the whole
// expression an "any" list; empty features ("a&&b") are dropped; an empty expression matches
// every node.
//
// Invariant: `features` views the text given to `ParseConstraint`, which must outlive it.
//
// Value type; thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace corral::sched::internal {

struct Constraint {
  std::vector<std::string_view> features;
  bool any = false;  // "a|b": one of them suffices

  // Whether a node with `node_features` satisfies the constraint.
  bool Matches(const std::vector<std::string>& node_features) const;
};

Constraint ParseConstraint(std::string_view text);

}  // namespace corral::sched::internal
