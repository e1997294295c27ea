#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <mutex>

#include "agent/gpu/gpu_backend.h"
#include "core/strings.h"
#include "core/time.h"

namespace corral::agent {
namespace {

// What NVML would call a GPU of type `model` ("h100" -> "NVIDIA H100 80GB HBM3").
std::string ProductName(const std::string& model) {
  static const std::map<std::string, std::string, std::less<>> kNames = {
      {"h100", "NVIDIA H100 80GB HBM3"}, {"h200", "NVIDIA H200"},
      {"a100", "NVIDIA A100-SXM4-80GB"}, {"l40s", "NVIDIA L40S"},
      {"v100", "Tesla V100-SXM2-32GB"},  {"gh200", "NVIDIA GH200 480GB"}};
  if (auto it = kNames.find(model); it != kNames.end()) return it->second;
  return "NVIDIA " + Upper(model);
}

// FNV-1a, to derive stable UUIDs from the node name and GPU index.
uint64_t Hash(std::string_view s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// What an idle simulated GPU reads.
constexpr double kIdleTemperatureC = 35;
constexpr double kIdlePowerWatts = 70;

// The board power of a model at full load (its TDP), for simulated power readings; 300 W for
// a model not listed.
double MaxPowerWatts(std::string_view model) {
  struct Tdp {
    std::string_view prefix;
    double watts;
  };
  static constexpr Tdp kTdp[] = {{"h200", 700}, {"h100", 700}, {"b200", 1000}, {"gb200", 1200},
                                 {"a100", 400}, {"a10", 150},  {"l40", 300},   {"v100", 300}};
  for (const Tdp& t : kTdp) {
    if (model.substr(0, t.prefix.size()) == t.prefix) return t.watts;
  }
  return 300;
}

// The injectable state of one simulated GPU.
struct SimGpu {
  double utilization = 0;
  uint64_t memory_used_mb = 0;
  double power_watts = kIdlePowerWatts;
  double temperature_c = kIdleTemperatureC;
  double energy_joules = 0;
  uint64_t ecc_uncorrectable = 0;
  bool row_remap_failure = false;
  bool vanished = false;
  std::vector<uint32_t> xids;
  uint32_t last_xid = 0;  // what /metrics shows (Read); Sample consumes `xids`
};

class SimulatedGpuBackend final : public GpuBackend {
 public:
  SimulatedGpuBackend(SimulatedGpuConfig config, const Clock* clock)
      : config_(std::move(config)),
        clock_(clock),
        product_name_(ProductName(config_.model)),
        gpus_(config_.count) {
    if (clock_ != nullptr) last_ = clock_->MonotonicNow();
  }

  std::string_view name() const override { return "simulated"; }

  Result<std::vector<GpuInfo>> Discover() override {
    std::vector<GpuInfo> gpus;
    uint32_t per_numa = config_.numa_nodes == 0
                            ? config_.count
                            : (config_.count + config_.numa_nodes - 1) / config_.numa_nodes;
    for (uint32_t i = 0; i < config_.count; ++i) {
      GpuInfo g;
      g.index = i;
      uint64_t a = Hash(config_.node_name, i);
      uint64_t b = Hash(config_.node_name, i + 1000);
      char uuid[64];
      std::snprintf(uuid, sizeof uuid, "GPU-%08x-%04x-%04x-%04x-%012llx",
                    static_cast<unsigned>(a >> 32), static_cast<unsigned>((a >> 16) & 0xffff),
                    static_cast<unsigned>(a & 0xffff), static_cast<unsigned>(b >> 48),
                    static_cast<unsigned long long>(b & 0xffffffffffffull));
      g.uuid = uuid;
      g.model = config_.model;
      g.memory_mb = config_.memory_mb;
      g.numa_node = config_.numa_nodes == 0 ? -1 : static_cast<int32_t>(i / std::max(1u, per_numa));
      for (uint32_t j = 0; j < config_.count; ++j) {
        if (j == i) continue;
        if (config_.nvlink == "all" || (config_.nvlink == "pairs" && j / 2 == i / 2)) {
          g.nvlink_peers.push_back(j);
        }
      }
      gpus.push_back(std::move(g));
    }
    return gpus;
  }

  Result<std::vector<GpuSample>> Sample() override {
    std::lock_guard<std::mutex> lock(mu_);
    Integrate();
    std::vector<GpuSample> out;
    for (uint32_t i = 0; i < config_.count; ++i) {
      SimGpu& g = gpus_[i];
      GpuSample s;
      s.index = i;
      if (g.vanished) {
        s.present = false;
      } else {
        s.utilization = g.utilization;
        s.memory_used_mb = g.memory_used_mb;
        s.power_watts = g.power_watts;
        s.temperature_c = g.temperature_c;
        s.energy_joules = g.energy_joules;
        s.ecc_uncorrectable = g.ecc_uncorrectable;
        s.row_remap_failure = g.row_remap_failure;
      }
      s.xid_events = std::move(g.xids);
      g.xids.clear();
      out.push_back(std::move(s));
    }
    return out;
  }

  // Plausible readings that follow the injected state: clocks and the GPM-style activity
  // ratios rise with utilisation, the memory runs a few degrees warmer than the GPU, the PCI
  // bus id follows the index, and the product name is the model's NVIDIA name.
  Result<std::vector<GpuReading>> Read() override {
    std::lock_guard<std::mutex> lock(mu_);
    Integrate();
    std::vector<GpuReading> out;
    for (uint32_t i = 0; i < config_.count; ++i) {
      const SimGpu& g = gpus_[i];
      GpuReading r;
      r.index = i;
      char bus[32];
      std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x18 + i * 0x10 % 0xe0);
      r.pci_bus_id = bus;
      r.present = !g.vanished;
      if (r.present) {
        r.utilization = g.utilization;
        r.memory_used_mb = std::min(g.memory_used_mb, config_.memory_mb);
        r.memory_free_mb = config_.memory_mb - r.memory_used_mb;
        r.power_watts = g.power_watts;
        r.temperature_c = g.temperature_c;
        r.memory_temperature_c = g.temperature_c + 3;
        r.sm_clock_mhz = static_cast<uint32_t>(345 + g.utilization / 100 * (1980 - 345));
        r.memory_clock_mhz = 2619;
        r.pcie_replays = 0;
        r.energy_joules = g.energy_joules;
        r.last_xid = g.last_xid;
        r.row_remap_failure = g.row_remap_failure;
        r.remapped_uncorrectable = g.row_remap_failure ? 1 : 0;
        r.product_name = product_name_;
        r.gr_engine_active = g.utilization / 100;
        r.sm_active = g.utilization / 100 * 0.9;
        r.sm_occupancy = g.utilization / 100 * 0.4;
        r.pipe_tensor_active = g.utilization / 100 * 0.5;
        r.dram_active = g.utilization / 200;
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  std::vector<std::string> DeviceFiles(uint32_t index) const override {
    if (config_.device_dir.empty() || index >= config_.count) return {};
    return {config_.device_dir + "/nvidia" + std::to_string(index)};
  }

  void SetJobLoad(uint32_t index, std::optional<double> utilization,
                  std::optional<uint64_t> memory_used_mb) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (index >= config_.count) return;
    Integrate();
    SimGpu& g = gpus_[index];
    if (!utilization) {
      g.utilization = 0;
      g.memory_used_mb = 0;
      g.power_watts = kIdlePowerWatts;
      return;
    }
    double u = std::clamp(*utilization, 0.0, 100.0);
    g.utilization = u;
    // A job holds a working set that grows with how hard it drives the GPU; an idle one
    // holds a few hundred MB (a CUDA context).
    g.memory_used_mb =
        memory_used_mb
            ? std::min(*memory_used_mb, config_.memory_mb)
            : 512 + static_cast<uint64_t>(static_cast<double>(config_.memory_mb) * 0.8 * u / 100);
    g.power_watts = kIdlePowerWatts + (MaxPowerWatts(config_.model) - kIdlePowerWatts) * u / 100;
  }

  Status Inject(const GpuFault& f) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (f.gpu >= config_.count) {
      return NotFound("gpu " + std::to_string(f.gpu) + ": no such GPU (the node has " +
                      std::to_string(config_.count) + ")");
    }
    Integrate();
    SimGpu& g = gpus_[f.gpu];
    if (f.clear) {
      double energy = g.energy_joules;  // a counter: never goes back
      g = SimGpu();
      g.energy_joules = energy;
    }
    if (f.xid) {
      g.xids.push_back(*f.xid);
      g.last_xid = *f.xid;
    }
    if (f.ecc_uncorrectable) g.ecc_uncorrectable = *f.ecc_uncorrectable;
    if (f.temperature_c) g.temperature_c = *f.temperature_c;
    if (f.power_watts) g.power_watts = *f.power_watts;
    if (f.utilization) g.utilization = *f.utilization;
    if (f.memory_used_mb) g.memory_used_mb = *f.memory_used_mb;
    if (f.row_remap_failure) g.row_remap_failure = *f.row_remap_failure;
    if (f.vanished) g.vanished = *f.vanished;
    return {};
  }

 private:
  // Adds power x time since the last call to each GPU's energy counter. Requires mu_.
  void Integrate() {
    if (clock_ == nullptr) return;
    MonoTime now = clock_->MonotonicNow();
    double dt = ToSecondsF(now - last_);
    last_ = now;
    if (dt <= 0) return;
    for (SimGpu& g : gpus_) {
      if (!g.vanished) g.energy_joules += g.power_watts * dt;
    }
  }

  const SimulatedGpuConfig config_;
  const Clock* const clock_;
  const std::string product_name_;
  std::mutex mu_;
  std::vector<SimGpu> gpus_;  // guarded by mu_
  MonoTime last_{};           // guarded by mu_
};

}  // namespace

Result<std::unique_ptr<GpuBackend>> MakeSimulatedGpuBackend(const SimulatedGpuConfig& config,
                                                            const Clock* clock) {
  if (config.count > kMaxGpusPerNode) {
    return InvalidArgument("gpu.count: " + std::to_string(config.count) +
                           " is over the maximum of " + std::to_string(kMaxGpusPerNode) +
                           " GPUs per node");
  }
  if (config.nvlink != "all" && config.nvlink != "pairs" && config.nvlink != "none") {
    return InvalidArgument("gpu.nvlink: \"" + config.nvlink + "\" is not one of all, pairs, none");
  }
  if (config.model.empty()) return InvalidArgument("gpu.model: must not be empty");
  for (char c : config.model) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) {
      return InvalidArgument("gpu.model: \"" + config.model + "\" has an invalid character");
    }
  }
  return std::unique_ptr<GpuBackend>(std::make_unique<SimulatedGpuBackend>(config, clock));
}

}  // namespace corral::agent
