// The simulated cluster of `corral sim --cluster SPEC`: node groups with GPU types, and the
// scheduling sections (partitions, accounts, QOS, topology) that may come with them.
//
// SPEC is either a short form, groups separated by `;`:
//
//   nodes=352,gpus_per_node=8,model=v100[,name=v100][,cpus=64][,memory=512G][,nvlink=1]
//
// or the path of a TOML file (see `ParseClusterToml`) with `[[nodes]]` groups plus, optionally,
// the scheduling sections of corral.toml (`[[partition]]`, `[[account]]`, `[topology]`, ...),
// which sched's own parser reads.
//
// Node names: `<name>-<NNN>`, numbered from 1 within the group with at least three digits
// (`v100-001`); `name` defaults to the model and must differ between groups. Node ids are
// 1, 2, ... in group order.
//
// Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sched/snapshot.h"

namespace corral::sim {

struct NodeGroup {
  std::string name;  // node name prefix; "" = the model
  uint32_t count = 0;
  uint32_t gpus_per_node = 0;  // 1..64
  std::string model = "gpu";
  uint32_t cpus = 64;
  uint64_t memory_mb = 512 * 1024;
  bool nvlink = true;  // the node's GPUs form one NVLink domain (NVSwitch)
  uint32_t numa = 2;   // NUMA nodes the GPUs are split over
  std::vector<std::string> features;
  bool operator==(const NodeGroup&) const = default;
};

struct ClusterSpec {
  std::vector<NodeGroup> groups;
  std::string toml_text;  // the TOML file's text ("" for the short form): its scheduling sections
  std::string source;     // the file name, or "--cluster"
  bool sets_priority = false;  // the TOML file has a `[scheduler.priority]` table
  bool operator==(const ClusterSpec&) const = default;
};

// Parses the short form (see the file comment). Keys: nodes, gpus_per_node, model, name, cpus,
// memory (Slurm size: "512G"), nvlink (0/1), numa.
// Returns kInvalidArgument naming the group and key for an unknown key, a missing `nodes` or
// `gpus_per_node`, a bad value, or two groups with the same name.
Result<ClusterSpec> ParseClusterShortForm(std::string_view text);

// Parses a cluster TOML file: one `[[nodes]]` table per group with the keys of the short form
// (`features` is an array of strings); every other table is left to sched's config parser.
// Returns kInvalidArgument for TOML syntax errors (with line and column), no `[[nodes]]`,
// unknown keys or bad values inside a group, and two groups with the same name.
Result<ClusterSpec> ParseClusterToml(std::string_view text, std::string_view source_name);

// The nodes of `spec` as the scheduler sees an idle cluster: all schedulable, nothing used.
std::vector<sched::NodeView> BuildNodes(const ClusterSpec& spec);

// The node names of group `g` of `spec` (`v100-001`, ...).
std::vector<std::string> GroupNodeNames(const NodeGroup& g);

}  // namespace corral::sim
