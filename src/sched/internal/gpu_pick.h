// GPU choice inside one node: which of a node's candidate GPUs a job (or a reservation) gets.
//
// Rule, in order: the GPUs of one NVLink domain and one NUMA node when one such group holds
// enough; else of one NVLink domain; else of one NUMA node; else the lowest indices. At each
// level the group with the fewest candidates that suffices wins (best fit, so that larger groups
// stay whole for larger jobs), ties by the group's lowest GPU index; inside the group, its lowest
// indices. NVLink domains are the connected components of the nodes' `nvlink_peers` graph (one
// domain when no GPU lists a peer; an NVSwitch node, where every GPU lists all others, is one
// domain); the GPUs with `numa_node` -1 form one "unknown" NUMA group.
//
// Thread-safe: a pure function.
#pragma once

#include <cstdint>

#include "core/gpu.h"
#include "sched/snapshot.h"

namespace corral::sched::internal {

// The lowest `n` indices of `s` (all of `s` when it has fewer).
GpuSet LowestGpus(GpuSet s, uint32_t n);

// Chooses `n` GPUs of `cand` on `node` by the rule above; all of `cand` when it has at most `n`,
// none when `n` is 0.
GpuSet PickGpus(const NodeView& node, GpuSet cand, uint32_t n);

}  // namespace corral::sched::internal
