// sinfo's output, rendered as Slurm 22.05 prints it (checked against a real 22.05.8): the
// partition summary (default, -l, -s), the node view (-N, -N -l), the reasons view (-R), and
// -o/--format and -O/--Format strings, with -h.
//
// Lines group nodes as sinfo does: in the partition views one line per partition and per set of
// nodes that show the same values for every non-counting field of the format (so the default
// view has one line per partition and node state), partitions in the order given, states from
// "mix" and "alloc" down to "down"; -N shows one line per node and partition, by node name.
// Node states use Slurm's names ("idle", "mix", "alloc", "drng", "drain", "down*", "idle~";
// long: "mixed", "allocated", ...); '*' marks a node that does not respond.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api/messages.h"
#include "cli/slurm/squeue.h"
#include "core/time.h"

namespace corral::slurm {

struct SinfoOptions {
  std::string format;          // -o/--format; "" = the view's default
  std::string long_format;     // -O/--Format
  bool node_oriented = false;  // -N
  bool long_output = false;    // -l
  bool list_reasons = false;   // -R
  bool summarize = false;      // -s
  bool no_header = false;      // -h
  Timestamp now{};
  int64_t utc_offset_seconds = 0;
};

// Renders the partitions (in configuration order) and their nodes. `partitions[i].partition.nodes`
// name the nodes; nodes missing from `nodes` are skipped.
RenderResult RenderSinfo(const std::vector<api::PartitionInfo>& partitions,
                         const std::vector<api::NodeInfo>& nodes, const SinfoOptions& options);

}  // namespace corral::slurm
