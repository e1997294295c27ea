// Shapes: pending jobs that ask for the same thing place alike. A shape is a job's per-node
// demand, node count, constraint, time limit and reservation (and, for preemption searches,
// whatever else decides the outcome); what a pass learns about a (shape, partition) — how many
// nodes could ever hold it, that a search for it failed, its explanation — holds for every job
// of the shape until resources change in a way the learner accounts for (they only shrink
// during a pass, so a failed search fails again).
//
// Invariants: shape ids are dense, from 0, in the order shapes were first seen; a state exists
// for every (shape, partition) after `Reset`.
//
// Not thread-safe; one pass's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sched/internal/flat_map.h"
#include "sched/internal/job_info.h"

namespace corral::sched::internal {

// The fixed part of a placement search; failed shapes are remembered per pass.
struct ShapeKey {
  uint32_t partition;
  Demand d;
  uint32_t nodes;
  std::string_view constraint;
  int64_t limit_us;
  int reservation;
  uint64_t extra = 0;  // what else decides the outcome (the QOS and guarantee of a preemptor)
  bool operator==(const ShapeKey& o) const {
    return partition == o.partition && d.cpus == o.d.cpus && d.mem == o.d.mem &&
           d.gpus == o.d.gpus && d.type == o.d.type && d.exclusive == o.d.exclusive &&
           nodes == o.nodes && constraint == o.constraint && limit_us == o.limit_us &&
           reservation == o.reservation && extra == o.extra;
  }
};
struct ShapeKeyHash {
  size_t operator()(const ShapeKey& k) const {
    uint64_t h = 14695981039346656037ULL;
    for (char c : k.constraint) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    auto mix = [&](uint64_t v) {
      h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
      h ^= h >> 32;
    };
    mix((static_cast<uint64_t>(k.partition) << 32) | k.d.cpus);
    mix(k.d.mem);
    mix((static_cast<uint64_t>(k.d.gpus) << 32) | (static_cast<uint32_t>(k.d.type + 1) << 1) |
        k.d.exclusive);
    mix((static_cast<uint64_t>(k.nodes) << 32) | static_cast<uint32_t>(k.reservation + 1));
    mix(static_cast<uint64_t>(k.limit_us));
    mix(k.extra);
    return static_cast<size_t>(h);
  }
};

// What the pass learnt about one (shape, partition).
struct ShapeState {
  int32_t capable = -1;  // nodes that could ever hold it (-1 = not counted yet)
  bool missing = false;  // no node has its GPU type / features
  PlaceResult failed = PlaceResult::kPlaced;  // kPlaced = not failed (yet)
  int32_t blocker = -1;                       // the pass's cached explanation (-1 = none)
};

class ShapeMemo {
 public:
  // The id of the shape `key` (partition 0), interned on first sight.
  int32_t Intern(const ShapeKey& key) {
    return static_cast<int32_t>(
        ids_.try_emplace(key, static_cast<uint32_t>(ids_.size())).first->second);
  }
  // Forgets every state: one per (shape, partition) of the `partitions` partitions.
  void Reset(size_t partitions) {
    partitions_ = partitions;
    states_.assign(ids_.size() * partitions, ShapeState());
  }
  // The state of `j`'s shape in partition `p`; nullptr for a job of no shape (-w, -x).
  ShapeState* StateOf(const JobInfo& j, uint32_t p) {
    return j.shape < 0 ? nullptr : &states_[static_cast<size_t>(j.shape) * partitions_ + p];
  }

 private:
  FlatMap<ShapeKey, uint32_t, ShapeKeyHash> ids_;
  std::vector<ShapeState> states_;  // [shape * partitions + partition]
  size_t partitions_ = 0;
};

}  // namespace corral::sched::internal
