// GpuBackend: where an agent learns about its node's GPUs and samples them.
//
// Two backends: `SimulatedGpuBackend` (machines without GPUs: development, tests, the
// simulator, fault injection) and the NVML backend (loaded with dlopen). Both are real
// backends; the agent cannot tell them apart.
//
// Thread-safety: implementations are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/gpu.h"
#include "core/result.h"

namespace corral::agent {

// One sample of one GPU.
struct GpuSample {
  uint32_t index = 0;
  double utilization = 0;       // percent
  uint64_t memory_used_mb = 0;
  double power_watts = 0;
  double temperature_c = 0;
  double energy_joules = 0;     // since the backend started counting
  uint64_t ecc_uncorrectable = 0;
  std::vector<uint32_t> xid_events;  // XID errors seen since the last sample
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  // "simulated", "nvml".
  virtual std::string_view name() const = 0;
  // The node's GPUs. Returns kUnavailable with the reason when the backend cannot see them.
  virtual Result<std::vector<GpuInfo>> Discover() = 0;
  // Samples every GPU. Returns kUnavailable when sampling fails.
  virtual Result<std::vector<GpuSample>> Sample() = 0;
  virtual std::string driver_version() const { return ""; }
  virtual std::string cuda_version() const { return ""; }
};

// How the simulated GPUs of a node look.
struct SimulatedGpuConfig {
  uint32_t count = 8;
  std::string model = "h100";
  uint64_t memory_mb = 81920;
  std::string nvlink = "all";     // "all" (NVSwitch), "pairs" (0-1, 2-3, ...), "none"
  uint32_t numa_nodes = 2;        // GPUs spread evenly over this many NUMA nodes
  std::string node_name;          // seeds the GPUs' UUIDs (stable per node)
};

// Returns kInvalidArgument naming the field for a bad config (count over kMaxGpusPerNode,
// an unknown nvlink form, an invalid model name).
Result<std::unique_ptr<GpuBackend>> MakeSimulatedGpuBackend(const SimulatedGpuConfig& config);

}  // namespace corral::agent
