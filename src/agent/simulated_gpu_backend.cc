#include <cctype>
#include <cstdio>
#include <mutex>

#include "agent/gpu_backend.h"

namespace corral::agent {
namespace {

// FNV-1a, to derive stable UUIDs from the node name and GPU index.
uint64_t Hash(std::string_view s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

class SimulatedGpuBackend final : public GpuBackend {
 public:
  explicit SimulatedGpuBackend(SimulatedGpuConfig config) : config_(std::move(config)) {}

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
      std::snprintf(uuid, sizeof uuid, "GPU-%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                    static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                    static_cast<unsigned>(b >> 48), static_cast<unsigned long long>(b & 0xffffffffffffull));
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
    std::vector<GpuSample> out;
    for (uint32_t i = 0; i < config_.count; ++i) {
      GpuSample s;
      s.index = i;
      s.temperature_c = 35;
      s.power_watts = 70;
      out.push_back(s);
    }
    return out;
  }

 private:
  SimulatedGpuConfig config_;
};

}  // namespace

Result<std::unique_ptr<GpuBackend>> MakeSimulatedGpuBackend(const SimulatedGpuConfig& config) {
  if (config.count > kMaxGpusPerNode) {
    return InvalidArgument("gpu.count: " + std::to_string(config.count) + " is over the maximum of " +
                           std::to_string(kMaxGpusPerNode) + " GPUs per node");
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
  return std::unique_ptr<GpuBackend>(std::make_unique<SimulatedGpuBackend>(config));
}

}  // namespace corral::agent
