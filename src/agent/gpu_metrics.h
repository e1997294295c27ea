// The agent's /metrics: its GPUs' series with dcgm-exporter's default counter names, types,
// units and labels (gpu, UUID, pci_bus_id, device, modelName, Hostname; GPU_I_PROFILE and
// GPU_I_ID for a MIG slice), plus hpc_job, user and account of the job holding each GPU, and
// the node's software versions as an info series. docs/metrics.md lists them.
//
// Pure: the caller reads the backend and the holders (agent/gpu_jobs.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent/gpu/gpu_backend.h"
#include "core/gpu.h"

namespace corral::agent {

// A job holding a GPU of this node.
struct GpuHolder {
  std::string job;  // the job id as text
  std::string user;
  std::string account;
  bool operator==(const GpuHolder&) const = default;
};

struct GpuMetricsInput {
  std::string hostname;  // the node's name
  std::vector<GpuInfo> gpus;
  // The backend's readings; empty (with `readings_error` set) when it has none.
  std::vector<GpuReading> readings;
  std::string readings_error;
  std::map<uint32_t, GpuHolder> holders;  // GPU index -> its job
  std::string gpu_backend;
  std::string driver_version;
  std::string cuda_version;
  std::string nccl_version;
};

std::string RenderGpuMetrics(const GpuMetricsInput& input);

}  // namespace corral::agent
