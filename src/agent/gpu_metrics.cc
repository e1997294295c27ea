#include "agent/gpu_metrics.h"

#include <cmath>
#include <functional>
#include <optional>

#include "api/metrics_text.h"

namespace corral::agent {
namespace {

using api::MetricLabel;
using api::MetricsWriter;
using api::MetricType;

template <typename T>
std::optional<double> AsDouble(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

// One DCGM field: its name, type, help (dcgm-exporter's wording and unit) and value.
struct Field {
  std::string_view name;
  MetricType type;
  std::string_view help;
  std::function<std::optional<double>(const GpuReading&)> value;
};

const std::vector<Field>& Fields() {
  static const std::vector<Field> fields = {
      {"DCGM_FI_DEV_SM_CLOCK", MetricType::kGauge, "SM clock frequency (in MHz).",
       [](const GpuReading& r) { return AsDouble(r.sm_clock_mhz); }},
      {"DCGM_FI_DEV_MEM_CLOCK", MetricType::kGauge, "Memory clock frequency (in MHz).",
       [](const GpuReading& r) { return AsDouble(r.memory_clock_mhz); }},
      {"DCGM_FI_DEV_MEMORY_TEMP", MetricType::kGauge, "Memory temperature (in C).",
       [](const GpuReading& r) { return r.memory_temperature_c; }},
      {"DCGM_FI_DEV_GPU_TEMP", MetricType::kGauge, "GPU temperature (in C).",
       [](const GpuReading& r) { return std::optional<double>(r.temperature_c); }},
      {"DCGM_FI_DEV_POWER_USAGE", MetricType::kGauge, "Power draw (in W).",
       [](const GpuReading& r) { return std::optional<double>(r.power_watts); }},
      {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", MetricType::kCounter,
       "Total energy consumption since boot (in mJ).",
       [](const GpuReading& r) {
         return std::optional<double>(std::floor(r.energy_joules * 1000));
       }},
      {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", MetricType::kCounter, "Total number of PCIe retries.",
       [](const GpuReading& r) { return AsDouble(r.pcie_replays); }},
      {"DCGM_FI_DEV_GPU_UTIL", MetricType::kGauge, "GPU utilization (in %).",
       [](const GpuReading& r) { return std::optional<double>(r.utilization); }},
      {"DCGM_FI_DEV_XID_ERRORS", MetricType::kGauge, "Value of the last XID error encountered.",
       [](const GpuReading& r) { return std::optional<double>(r.last_xid); }},
      {"DCGM_FI_DEV_FB_FREE", MetricType::kGauge, "Framebuffer memory free (in MiB).",
       [](const GpuReading& r) {
         return std::optional<double>(static_cast<double>(r.memory_free_mb));
       }},
      {"DCGM_FI_DEV_FB_USED", MetricType::kGauge, "Framebuffer memory used (in MiB).",
       [](const GpuReading& r) {
         return std::optional<double>(static_cast<double>(r.memory_used_mb));
       }},
      {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", MetricType::kCounter,
       "Number of remapped rows for uncorrectable errors",
       [](const GpuReading& r) {
         return std::optional<double>(static_cast<double>(r.remapped_uncorrectable));
       }},
      {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", MetricType::kCounter,
       "Number of remapped rows for correctable errors",
       [](const GpuReading& r) {
         return std::optional<double>(static_cast<double>(r.remapped_correctable));
       }},
      {"DCGM_FI_DEV_ROW_REMAP_FAILURE", MetricType::kGauge, "Whether remapping of rows has failed",
       [](const GpuReading& r) { return std::optional<double>(r.row_remap_failure ? 1 : 0); }},
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", MetricType::kGauge,
       "Ratio of time the graphics engine is active (in %).",
       [](const GpuReading& r) { return r.gr_engine_active; }},
      {"DCGM_FI_PROF_SM_ACTIVE", MetricType::kGauge,
       "The ratio of cycles an SM has at least 1 warp assigned (in %).",
       [](const GpuReading& r) { return r.sm_active; }},
      {"DCGM_FI_PROF_SM_OCCUPANCY", MetricType::kGauge,
       "The ratio of number of warps resident on an SM (in %).",
       [](const GpuReading& r) { return r.sm_occupancy; }},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", MetricType::kGauge,
       "Ratio of cycles the tensor (HMMA) pipe is active (in %).",
       [](const GpuReading& r) { return r.pipe_tensor_active; }},
      {"DCGM_FI_PROF_DRAM_ACTIVE", MetricType::kGauge,
       "Ratio of cycles the device memory interface is active sending or receiving data (in %).",
       [](const GpuReading& r) { return r.dram_active; }},
  };
  return fields;
}

// The labels of one GPU's series, as strings that live as long as the row.
struct GpuLabels {
  std::string gpu, uuid, pci_bus_id, device, model, profile, instance;
  const GpuHolder* holder = nullptr;
};

}  // namespace

std::string RenderGpuMetrics(const GpuMetricsInput& in) {
  MetricsWriter w;
  std::map<uint32_t, const GpuInfo*> info;
  for (const GpuInfo& g : in.gpus) info[g.index] = &g;
  std::vector<std::pair<const GpuReading*, GpuLabels>> rows;
  for (const GpuReading& r : in.readings) {
    if (!r.present) continue;  // a lost GPU has no series (dcgm-exporter drops it too)
    GpuLabels l;
    auto it = info.find(r.index);
    l.gpu = std::to_string(r.mig_parent.value_or(r.index));
    l.uuid = it != info.end() ? it->second->uuid : "";
    l.model = !r.product_name.empty() ? r.product_name
              : it != info.end()       ? it->second->model
                                       : "";
    l.pci_bus_id = r.pci_bus_id;
    l.device = "nvidia" + l.gpu;
    l.profile = r.mig_profile;
    if (r.gpu_instance_id) l.instance = std::to_string(*r.gpu_instance_id);
    if (auto h = in.holders.find(r.index); h != in.holders.end()) l.holder = &h->second;
    rows.emplace_back(&r, std::move(l));
  }
  for (const Field& f : Fields()) {
    bool any = false;
    for (const auto& [r, l] : rows) {
      std::optional<double> v = f.value(*r);
      if (!v || std::isnan(*v)) continue;
      if (!any) w.Family(f.name, f.type, f.help);
      any = true;
      std::vector<MetricLabel> labels = {
          {"gpu", l.gpu},       {"UUID", l.uuid},       {"pci_bus_id", l.pci_bus_id},
          {"device", l.device}, {"modelName", l.model}, {"Hostname", in.hostname}};
      if (!l.profile.empty()) {
        labels.push_back({"GPU_I_PROFILE", l.profile});
        labels.push_back({"GPU_I_ID", l.instance});
      }
      if (l.holder != nullptr) {
        labels.push_back({"hpc_job", l.holder->job});
        labels.push_back({"user", l.holder->user});
        labels.push_back({"account", l.holder->account});
      }
      w.Sample(labels, *v);
    }
  }
  w.Family("corral_agent_gpu_readings_ok", MetricType::kGauge,
           "1 when the GPU backend gave readings at this scrape, 0 when it could not");
  w.Sample({{"Hostname", in.hostname}, {"gpu_backend", in.gpu_backend}},
           in.readings_error.empty() ? 1 : 0);
  w.Family("corral_node_software_info", MetricType::kGauge,
           "The node's GPU driver, CUDA and NCCL versions (value 1)");
  w.Sample({{"Hostname", in.hostname},
            {"gpu_backend", in.gpu_backend},
            {"driver_version", in.driver_version},
            {"cuda_version", in.cuda_version},
            {"nccl_version", in.nccl_version}},
           1);
  return w.Take();
}

}  // namespace corral::agent
