// GpuBackend: where an agent learns about its node's GPUs and samples them.
//
// Two backends: `SimulatedGpuBackend` (machines without GPUs: development, tests, the
// simulator, fault injection) and the NVML backend (libnvidia-ml loaded with dlopen, never
// linked, so one binary runs with and without NVIDIA drivers). Both are real backends; the
// agent cannot tell them apart. docs/agent.md describes them.
//
// Thread-safety: implementations are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/gpu.h"
#include "core/result.h"

namespace corral::agent {

// One sample of one GPU (an allocatable device: a whole GPU or a MIG slice).
struct GpuSample {
  uint32_t index = 0;
  bool present = true;     // false: the GPU vanished (lost, off the bus, not answering)
  double utilization = 0;  // percent
  uint64_t memory_used_mb = 0;
  double power_watts = 0;
  double temperature_c = 0;
  double energy_joules = 0;        // a counter since some fixed point (driver load, backend start)
  uint64_t ecc_uncorrectable = 0;  // volatile uncorrectable ECC errors
  bool row_remap_failure = false;  // a row could not be remapped: the GPU needs service
  bool row_remap_pending = false;  // remapped rows wait for a GPU reset
  std::vector<uint32_t> xid_events;  // XID errors seen since the last sample
  bool operator==(const GpuSample&) const = default;
};

// One reading of one GPU for the agent's /metrics (agent/gpu_metrics.h), in the units of
// dcgm-exporter's default counters. Reading never consumes anything (XID events stay for
// `Sample`). Optional fields a backend cannot read stay unset and are not exported.
struct GpuReading {
  uint32_t index = 0;
  bool present = true;
  std::string pci_bus_id;                   // "00000000:3B:00.0"; "" when unknown
  // The full product name (modelName, as dcgm-exporter: "NVIDIA H100 80GB HBM3"; a MIG
  // slice's parent GPU's); "" = the short type (`GpuInfo::model`) stands in.
  std::string product_name;
  std::string mig_profile;                  // a MIG slice's profile ("1g.10gb"); "" for a whole GPU
  std::optional<uint32_t> mig_parent;       // a MIG slice's GPU index
  std::optional<uint32_t> gpu_instance_id;  // a MIG slice's GPU instance id
  double utilization = 0;                   // DCGM_FI_DEV_GPU_UTIL, %
  uint64_t memory_used_mb = 0;              // DCGM_FI_DEV_FB_USED, MiB
  uint64_t memory_free_mb = 0;              // DCGM_FI_DEV_FB_FREE, MiB
  double power_watts = 0;                   // DCGM_FI_DEV_POWER_USAGE, W
  double temperature_c = 0;                 // DCGM_FI_DEV_GPU_TEMP, C
  std::optional<double> memory_temperature_c;          // DCGM_FI_DEV_MEMORY_TEMP, C
  std::optional<uint32_t> sm_clock_mhz;                // DCGM_FI_DEV_SM_CLOCK, MHz
  std::optional<uint32_t> memory_clock_mhz;            // DCGM_FI_DEV_MEM_CLOCK, MHz
  double energy_joules = 0;                 // DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (exported in mJ)
  uint32_t last_xid = 0;                    // DCGM_FI_DEV_XID_ERRORS: the last XID seen, 0 = none
  std::optional<uint64_t> pcie_replays;                // DCGM_FI_DEV_PCIE_REPLAY_COUNTER
  uint64_t remapped_correctable = 0;        // DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS
  uint64_t remapped_uncorrectable = 0;      // DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS
  bool row_remap_failure = false;           // DCGM_FI_DEV_ROW_REMAP_FAILURE
  // DCGM_FI_PROF_* (ratios 0-1) where the backend has them: the NVML backend from GPM
  // (Hopper and later, whole GPUs) over the time since the previous reading.
  std::optional<double> gr_engine_active;
  std::optional<double> sm_active;
  std::optional<double> sm_occupancy;
  std::optional<double> pipe_tensor_active;
  std::optional<double> dram_active;
};

// A fault or a reading injected into a backend (`corral node inject`): only the simulated
// backend accepts them. Unset fields leave the GPU as it is.
struct GpuFault {
  uint32_t gpu = 0;
  std::optional<uint32_t> xid;  // queued as an XID event
  std::optional<uint64_t> ecc_uncorrectable;
  std::optional<double> temperature_c;
  std::optional<double> power_watts;
  std::optional<double> utilization;
  std::optional<uint64_t> memory_used_mb;
  std::optional<bool> row_remap_failure;
  std::optional<bool> vanished;  // the GPU stops answering (true) or comes back
  bool clear = false;            // first back to healthy defaults
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
  // The GPUs' current readings for /metrics, without consuming XID events. Returns
  // kUnimplemented for a backend that has none, kUnavailable when reading fails.
  virtual Result<std::vector<GpuReading>> Read() {
    return MakeError(ErrorCode::kUnimplemented,
                     "the " + std::string(name()) + " GPU backend has no metrics readings");
  }
  virtual std::string driver_version() const { return ""; }
  virtual std::string cuda_version() const { return ""; }
  // The device files that give access to device `index` (as numbered by Discover), for the
  // cgroup device rules: "/dev/nvidia3", or a MIG slice's capability file and its parent
  // GPU. Empty when the backend has none.
  virtual std::vector<std::string> DeviceFiles(uint32_t index) const {
    (void)index;
    return {};
  }
  // The simulated backend only (others ignore it): the job holding GPU `index` drives it at
  // `utilization` percent (nullopt: it is released and idles). Memory follows unless
  // `memory_used_mb` is given; power follows from idle (~70 W) to the model's maximum.
  virtual void SetJobLoad(uint32_t index, std::optional<double> utilization,
                          std::optional<uint64_t> memory_used_mb = std::nullopt) {
    (void)index;
    (void)utilization;
    (void)memory_used_mb;
  }
  // Applies an injected fault. Returns kUnimplemented for backends of real hardware,
  // kNotFound for an unknown GPU index.
  virtual Status Inject(const GpuFault& fault) {
    (void)fault;
    return MakeError(ErrorCode::kUnimplemented,
                     "the " + std::string(name()) + " GPU backend does not take injected faults");
  }
};

// How the simulated GPUs of a node look.
struct SimulatedGpuConfig {
  uint32_t count = 8;
  std::string model = "h100";
  uint64_t memory_mb = 81920;
  std::string nvlink = "all";  // "all" (NVSwitch), "pairs" (0-1, 2-3, ...), "none"
  uint32_t numa_nodes = 2;     // GPUs spread evenly over this many NUMA nodes
  std::string node_name;       // seeds the GPUs' UUIDs (stable per node)
  // Where the simulated GPUs' device files are (`<device_dir>/nvidia<N>`, which the agent's
  // device cgroup denies to jobs that were not given GPU N); "" = none. Tests create them
  // with mknod.
  std::string device_dir;
};

// Returns kInvalidArgument naming the field for a bad config (count over kMaxGpusPerNode,
// an unknown nvlink form, an invalid model name). With a `clock`, the energy counter
// integrates the (injected) power over time; without one it stays 0.
Result<std::unique_ptr<GpuBackend>> MakeSimulatedGpuBackend(const SimulatedGpuConfig& config,
                                                            const Clock* clock = nullptr);

// How the NVML backend is set up.
struct NvmlConfig {
  std::string library = "libnvidia-ml.so.1";  // a name for the loader's search, or a path
  // NVML product name -> the type users ask for ("NVIDIA H100 80GB HBM3" -> "h100"); wins
  // over the built-in mapping (`GpuTypeFromProductName`).
  std::map<std::string, std::string> model_names;
  bool mig = true;                  // report MIG instances (not their parent) when enabled
  std::string sysfs_root = "/sys";  // for PCI NUMA affinity (tests point it elsewhere)
  std::string dev_root = "/dev";    // where /dev/nvidiaN live
};

// Loads NVML with dlopen and initialises it. Returns kUnavailable with a one-line reason
// when the library cannot be loaded, lacks an entry point, fails to initialise, or sees no
// GPU; the caller logs it and takes its configured fallback.
Result<std::unique_ptr<GpuBackend>> MakeNvmlGpuBackend(const NvmlConfig& config);

// The short lower-case type for an NVML product name: vendor words dropped ("NVIDIA",
// "Tesla", "GeForce", "Quadro"), then the first word ("H100", "A100-SXM4-80GB" -> "a100");
// "RTX"/"TITAN" keep the next word ("RTX 4090" -> "rtx4090", "RTX A6000" -> "a6000"). Only
// [a-z0-9] are kept. A MIG slice is typed by its profile ("... MIG 1g.10gb" -> "1g.10gb").
std::string GpuTypeFromProductName(std::string_view product);

}  // namespace corral::agent
