// What a job asks for, and how that request is spread over its nodes.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/result.h"

namespace corral {

// `ResourceRequest::mem_per_node_mb` (and `PerNodeDemand::mem_mb`) of `--mem=0`: the whole
// memory of each node. Such a job needs a node whose memory is entirely free, and holds all of
// it (`MemoryOnNode`).
inline constexpr uint64_t kWholeNodeMemory = std::numeric_limits<uint64_t>::max();

// A job's resource request, in Slurm's terms. Zero means "not given" for the optional fields.
struct ResourceRequest {
  uint32_t nodes = 1;             // -N min
  uint32_t nodes_max = 0;         // -N min-max; 0 = same as `nodes`
  uint32_t ntasks = 1;            // -n
  uint32_t ntasks_per_node = 0;   // --ntasks-per-node
  uint32_t cpus_per_task = 1;     // -c
  uint64_t mem_per_node_mb = 0;   // --mem (0 = default; kWholeNodeMemory = --mem=0)
  uint64_t mem_per_cpu_mb = 0;    // --mem-per-cpu
  uint64_t mem_per_gpu_mb = 0;    // --mem-per-gpu
  uint32_t gpus = 0;              // --gpus / -G: total over the job
  uint32_t gpus_per_node = 0;     // --gpus-per-node / --gres=gpu:N
  uint32_t gpus_per_task = 0;     // --gpus-per-task
  uint32_t cpus_per_gpu = 0;      // --cpus-per-gpu
  std::string gpu_type;           // "h100", "a100", "1g.10gb"; "" = any
  bool exclusive = false;         // --exclusive: whole nodes
  std::string constraint;         // -C: required node features ("ib&h100", "a|b")
  std::vector<std::string> nodelist;  // -w: nodes that must be in the allocation
  std::vector<std::string> exclude;   // -x: nodes that must not be used
  bool operator==(const ResourceRequest&) const = default;
};

// What one node of an allocation must provide. Every node of a job gets the same shape
// (Slurm's default block distribution of tasks over a homogeneous node set).
struct PerNodeDemand {
  uint32_t tasks = 0;
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  uint32_t gpus = 0;
  std::string gpu_type;
  bool exclusive = false;
  bool operator==(const PerNodeDemand&) const = default;
};

// Checks the request for values that can never make sense (zero tasks, a GPU count not
// divisible over the nodes, ...). Returns kInvalidArgument naming the field.
Status ValidateResourceRequest(const ResourceRequest& r);

// Spreads a valid request over `r.nodes` nodes. `def_mem_per_cpu_mb` is the partition's default
// when no memory was asked for.
PerNodeDemand ComputePerNodeDemand(const ResourceRequest& r, uint64_t def_mem_per_cpu_mb = 0);

// The memory `d` takes on a node with `node_mem_mb` in all: `d.mem_mb`, or the node's whole
// memory for kWholeNodeMemory.
inline uint64_t MemoryOnNode(const PerNodeDemand& d, uint64_t node_mem_mb) {
  return d.mem_mb == kWholeNodeMemory ? node_mem_mb : d.mem_mb;
}

// Total GPUs the job holds once it runs.
uint32_t TotalGpus(const ResourceRequest& r);

// Parses a memory size as Slurm does: a number with an optional K/M/G/T suffix (either case,
// optional trailing B); a bare number is megabytes. Returns megabytes.
// Returns kInvalidArgument naming the text when it is not such a size.
Result<uint64_t> ParseMemoryMb(std::string_view text);

// "4G", "512M", "1T" (the shortest exact form); "0" for zero.
std::string FormatMemoryMb(uint64_t mb);

}  // namespace corral
