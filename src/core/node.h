// The node model: a node's inventory (what its agent reports), its administrative and
// liveness state, and the state shown to people, which is derived from those and from the
// jobs allocated on it.
//
// Value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/gpu.h"
#include "core/ids.h"
#include "core/result.h"
#include "core/time.h"

namespace corral {

// What an agent reports about its node when it registers.
struct NodeInventory {
  std::string name;
  std::string address;            // the agent's API base URL, "http://127.0.0.1:7001"
  uint32_t cpus = 0;
  uint64_t memory_mb = 0;
  std::vector<GpuInfo> gpus;      // indexed by GpuInfo::index
  std::vector<std::string> features;
  uint32_t numa_nodes = 1;
  std::string gpu_backend;        // "simulated", "nvml"
  std::string driver_version;
  std::string cuda_version;
  std::string agent_version;
  bool operator==(const NodeInventory&) const = default;
};

// Node states as shown to people (Slurm's names). Derived; see `DeriveNodeState`.
enum class NodeState {
  kUnknown,       // configured but never registered
  kIdle,
  kMixed,
  kAllocated,
  kDraining,
  kDrained,
  kDown,
  kPoweredDown,
};

std::string_view NodeStateName(NodeState s);  // "IDLE", "MIXED", ..., "POWERED_DOWN"
// Slurm's lower-case sinfo form: "idle", "mix", "alloc", "drng", "drain", "down", "~idle".
std::string_view NodeStateSinfoName(NodeState s);
Result<NodeState> ParseNodeState(std::string_view text);

// The controller's record of a node.
struct Node {
  NodeId id;
  NodeInventory inventory;
  bool registered = false;        // has ever registered
  bool responding = false;        // heartbeats arrive
  bool drain = false;             // an operator (or health check) asked for no new jobs
  bool powered_down = false;
  std::string reason;             // why drained / down
  Timestamp reason_time{};
  Timestamp last_heartbeat{};     // wall time of the last heartbeat (shown, not used for timeouts)
  GpuSet failed_gpus;             // GPUs taken out of service by health checks
  bool operator==(const Node&) const = default;
};

// What is currently allocated on a node (sum over its running jobs).
struct NodeUsage {
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  GpuSet gpus;
  uint32_t jobs = 0;
  bool exclusive = false;
};

// The displayed state: DOWN if not responding; POWERED_DOWN if powered down; DRAINING or
// DRAINED if drained with or without jobs; ALLOCATED if all CPUs or all GPUs are in use (or an
// exclusive job holds it); MIXED if anything is in use; IDLE otherwise.
NodeState DeriveNodeState(const Node& node, const NodeUsage& usage);

}  // namespace corral
