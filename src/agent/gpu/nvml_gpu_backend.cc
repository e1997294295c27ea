// The NVML backend: libnvidia-ml.so.1 loaded with dlopen, its entry points resolved into a
// table (never linked, so that the one `corral` binary starts on machines without NVIDIA
// drivers and loads nothing it does not use).
//
// Devices: each GPU, or, when MIG mode is on (and `NvmlConfig::mig`), each of its MIG
// devices instead, numbered in NVML order (GPU 0's slices first). NUMA affinity comes from
// sysfs (/sys/bus/pci/devices/BDF/numa_node); NVLink peers from the remote PCI id of each
// active link (a link to an NVSwitch makes every GPU on the switch a peer). XID events come
// from NVML's event API, on a thread that waits on the event set and queues them for the next
// Sample().
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "agent/gpu/gpu_backend.h"
#include "agent/gpu/internal/nvml_abi.h"
#include "core/log.h"
#include "core/strings.h"

namespace corral::agent {
namespace {

// The resolved entry points. Required ones are non-null once loaded; optional ones (absent
// from older drivers) may be null and the reading they give is skipped.
struct NvmlTable {
#define CORRAL_NVML_POINTER(name, args) decltype(&::name) name = nullptr;
  CORRAL_NVML_FUNCTIONS(CORRAL_NVML_POINTER)
#undef CORRAL_NVML_POINTER
  decltype(&::nvmlErrorString) nvmlErrorString = nullptr;
};

constexpr const char* kRequired[] = {
    "nvmlInit_v2",
    "nvmlShutdown",
    "nvmlErrorString",
    "nvmlSystemGetDriverVersion",
    "nvmlDeviceGetCount_v2",
    "nvmlDeviceGetHandleByIndex_v2",
    "nvmlDeviceGetUUID",
    "nvmlDeviceGetName",
    "nvmlDeviceGetMemoryInfo",
};

// "00000000:3B:00.0" (NVML) -> "0000:3b:00.0" (sysfs).
std::string SysfsBusId(const char* nvml_bus_id) {
  std::string id = Lower(nvml_bus_id);
  size_t colon = id.find(':');
  if (colon != std::string::npos && colon > 4) id = id.substr(colon - 4);
  return id;
}

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// One allocatable device: a GPU, or a MIG device of one.
struct Device {
  uint32_t index = 0;
  nvmlDevice_t gpu = nullptr;      // the physical GPU (readings, events)
  nvmlDevice_t mig = nullptr;      // the MIG device, or null
  uint32_t slices = 1;             // devices sharing `gpu` (energy is split between them)
  std::string bus_id;              // sysfs form
  std::vector<std::string> files;  // device files
  std::string product;             // the physical GPU's NVML name (dcgm-exporter's modelName)
  std::optional<unsigned> gpu_instance;  // a MIG device's GPU instance id (GPU_I_ID)
  GpuInfo info;
};

// GPM (Hopper and later): per device, two sample buffers: the previous reading's and the one
// being taken. Each reading's ratios are averages over the time since the previous one. A
// whole GPU is sampled as itself; a MIG device through its parent and GPU instance
// (nvmlGpmMigSampleGet), as dcgm-exporter reports DCGM_FI_PROF_* per GPU instance.
struct GpmState {
  nvmlDevice_t parent = nullptr;
  std::optional<unsigned> gpu_instance;  // set for a MIG device
  nvmlGpmSample_t previous = nullptr;
  nvmlGpmSample_t current = nullptr;
  bool have_previous = false;
};

constexpr unsigned kGpmMetrics[] = {NVML_GPM_METRIC_GRAPHICS_UTIL, NVML_GPM_METRIC_SM_UTIL,
                                    NVML_GPM_METRIC_SM_OCCUPANCY, NVML_GPM_METRIC_ANY_TENSOR_UTIL,
                                    NVML_GPM_METRIC_DRAM_BW_UTIL};

class NvmlGpuBackend final : public GpuBackend {
 public:
  NvmlGpuBackend(NvmlConfig config, void* library, NvmlTable table)
      : config_(std::move(config)), library_(library), nvml_(table) {}

  ~NvmlGpuBackend() override {
    stopping_ = true;
    if (events_thread_.joinable()) events_thread_.join();
    if (events_ != nullptr) nvml_.nvmlEventSetFree(events_);
    for (auto& [gpu, g] : gpm_) {
      if (g.previous != nullptr) nvml_.nvmlGpmSampleFree(g.previous);
      if (g.current != nullptr) nvml_.nvmlGpmSampleFree(g.current);
    }
    nvml_.nvmlShutdown();
    dlclose(library_);
  }

  std::string_view name() const override { return "nvml"; }
  std::string driver_version() const override { return driver_; }
  std::string cuda_version() const override { return cuda_; }

  // Builds the device list; called once by MakeNvmlGpuBackend.
  Status Init() {
    char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    if (nvml_.nvmlSystemGetDriverVersion(buf, sizeof buf) == NVML_SUCCESS) driver_ = buf;
    int cuda = 0;
    if (nvml_.nvmlSystemGetCudaDriverVersion_v2 != nullptr &&
        nvml_.nvmlSystemGetCudaDriverVersion_v2(&cuda) == NVML_SUCCESS && cuda > 0) {
      cuda_ = std::to_string(cuda / 1000) + "." + std::to_string((cuda % 1000) / 10);
    }
    unsigned count = 0;
    if (nvmlReturn_t r = nvml_.nvmlDeviceGetCount_v2(&count); r != NVML_SUCCESS) {
      return Unavailable("NVML: nvmlDeviceGetCount_v2: " + Text(r));
    }
    if (count == 0) return Unavailable("NVML sees no GPU (driver " + driver_ + ")");
    std::vector<nvmlDevice_t> gpus;
    std::vector<std::string> bus_ids;
    for (unsigned i = 0; i < count; ++i) {
      nvmlDevice_t h = nullptr;
      if (nvmlReturn_t r = nvml_.nvmlDeviceGetHandleByIndex_v2(i, &h); r != NVML_SUCCESS) {
        return Unavailable("NVML: GPU " + std::to_string(i) + ": " + Text(r));
      }
      gpus.push_back(h);
      nvmlPciInfo_t pci{};
      bus_ids.push_back(nvml_.nvmlDeviceGetPciInfo_v3 != nullptr &&
                                nvml_.nvmlDeviceGetPciInfo_v3(h, &pci) == NVML_SUCCESS
                            ? SysfsBusId(pci.busId)
                            : "");
    }
    // NVLink: peers by remote PCI id; an unknown remote id is an NVSwitch.
    std::vector<std::set<uint32_t>> peers(count);
    std::vector<bool> on_switch(count, false);
    if (nvml_.nvmlDeviceGetNvLinkState != nullptr &&
        nvml_.nvmlDeviceGetNvLinkRemotePciInfo_v2 != nullptr) {
      for (unsigned i = 0; i < count; ++i) {
        for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
          int active = 0;
          if (nvml_.nvmlDeviceGetNvLinkState(gpus[i], link, &active) != NVML_SUCCESS ||
              active != NVML_FEATURE_ENABLED) {
            continue;
          }
          nvmlPciInfo_t remote{};
          if (nvml_.nvmlDeviceGetNvLinkRemotePciInfo_v2(gpus[i], link, &remote) != NVML_SUCCESS)
            continue;
          std::string id = SysfsBusId(remote.busId);
          auto it = std::find(bus_ids.begin(), bus_ids.end(), id);
          if (it != bus_ids.end() && static_cast<unsigned>(it - bus_ids.begin()) != i) {
            peers[i].insert(static_cast<uint32_t>(it - bus_ids.begin()));
          } else if (it == bus_ids.end()) {
            on_switch[i] = true;
          }
        }
      }
      for (unsigned i = 0; i < count; ++i) {
        for (unsigned j = 0; j < count; ++j) {
          if (i != j && on_switch[i] && on_switch[j]) peers[i].insert(j);
        }
      }
    }
    // Devices.
    std::vector<uint32_t> first_device(count, 0);  // GPU -> index of its first device
    for (unsigned i = 0; i < count; ++i) {
      first_device[i] = static_cast<uint32_t>(devices_.size());
      Device gpu;
      gpu.gpu = gpus[i];
      gpu.bus_id = bus_ids[i];
      CORRAL_RETURN_IF_ERROR(Describe(gpus[i], &gpu.info, &gpu.product));
      gpu.info.numa_node = NumaNode(gpu.bus_id);
      unsigned minor = 0;
      std::string gpu_file;
      if (nvml_.nvmlDeviceGetMinorNumber != nullptr &&
          nvml_.nvmlDeviceGetMinorNumber(gpus[i], &minor) == NVML_SUCCESS) {
        gpu_file = config_.dev_root + "/nvidia" + std::to_string(minor);
        gpu.files.push_back(gpu_file);
      }
      std::vector<Device> slices = config_.mig ? MigDevices(gpu, minor) : std::vector<Device>{};
      if (slices.empty()) {
        StartGpm(gpu);
        gpu.index = static_cast<uint32_t>(devices_.size());
        devices_.push_back(std::move(gpu));
      } else {
        for (Device& s : slices) {
          StartGpm(s);
          s.index = static_cast<uint32_t>(devices_.size());
          s.slices = static_cast<uint32_t>(slices.size());
          devices_.push_back(std::move(s));
        }
      }
    }
    if (devices_.size() > kMaxGpusPerNode) {
      return Unavailable("NVML: " + std::to_string(devices_.size()) +
                         " devices, over the maximum of " + std::to_string(kMaxGpusPerNode) +
                         " per node");
    }
    // NVLink peers between whole GPUs (MIG devices have none).
    for (Device& d : devices_) {
      d.info.index = d.index;
      if (d.mig != nullptr) continue;
      unsigned gi =
          static_cast<unsigned>(std::find(gpus.begin(), gpus.end(), d.gpu) - gpus.begin());
      for (uint32_t p : peers[gi]) {
        const Device& other = devices_[first_device[p]];
        if (other.mig == nullptr) d.info.nvlink_peers.push_back(other.index);
      }
    }
    StartEvents(gpus);
    return {};
  }

  Result<std::vector<GpuInfo>> Discover() override {
    std::vector<GpuInfo> out;
    for (const Device& d : devices_) out.push_back(d.info);
    return out;
  }

  std::vector<std::string> DeviceFiles(uint32_t index) const override {
    return index < devices_.size() ? devices_[index].files : std::vector<std::string>{};
  }

  Result<std::vector<GpuSample>> Sample() override {
    std::map<nvmlDevice_t, std::vector<uint32_t>> xids;
    {
      std::lock_guard<std::mutex> lock(mu_);
      xids.swap(pending_xids_);
    }
    std::vector<GpuSample> out;
    for (const Device& d : devices_) {
      GpuSample s;
      s.index = d.index;
      nvmlMemory_t mem{};
      nvmlReturn_t r = nvml_.nvmlDeviceGetMemoryInfo(d.mig != nullptr ? d.mig : d.gpu, &mem);
      if (r == NVML_ERROR_GPU_IS_LOST) {
        s.present = false;
      } else {
        if (r == NVML_SUCCESS) s.memory_used_mb = mem.used >> 20;
        Read(d, &s);
      }
      if (auto it = xids.find(d.gpu); it != xids.end()) s.xid_events = it->second;
      out.push_back(std::move(s));
    }
    return out;
  }

  // /metrics readings (gpu_backend.h): what Sample reads, free memory, remapped rows, the
  // PCI bus id in NVML's form, MIG parent and GPU instance, the last XID (kept, not
  // consumed), the product name, SM and memory clocks, memory temperature, PCIe replays, and
  // GPM's activity ratios for devices that have GPM, MIG devices per GPU instance (from the
  // second reading on). A reading an older driver lacks stays unset.
  Result<std::vector<GpuReading>> Read() override {
    std::map<nvmlDevice_t, uint32_t> last_xid;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_xid = last_xid_;
    }
    std::lock_guard<std::mutex> gpm_lock(gpm_mu_);
    std::map<nvmlDevice_t, uint32_t> parents;  // physical GPU -> its ordinal
    std::vector<GpuReading> out;
    for (const Device& d : devices_) {
      parents.try_emplace(d.gpu, static_cast<uint32_t>(parents.size()));
      GpuReading r;
      r.index = d.index;
      r.pci_bus_id = NvmlBusId(d.bus_id);
      nvmlMemory_t mem{};
      nvmlReturn_t rc = nvml_.nvmlDeviceGetMemoryInfo(d.mig != nullptr ? d.mig : d.gpu, &mem);
      if (rc == NVML_ERROR_GPU_IS_LOST) {
        r.present = false;
        out.push_back(std::move(r));
        continue;
      }
      if (rc == NVML_SUCCESS) {
        r.memory_used_mb = mem.used >> 20;
        r.memory_free_mb = mem.free >> 20;
      }
      GpuSample s;
      Read(d, &s);
      r.utilization = s.utilization;
      r.power_watts = s.power_watts;
      r.temperature_c = s.temperature_c;
      r.energy_joules = s.energy_joules;
      r.row_remap_failure = s.row_remap_failure;
      unsigned corr = 0, unc = 0, pending = 0, failed = 0;
      if (nvml_.nvmlDeviceGetRemappedRows != nullptr &&
          nvml_.nvmlDeviceGetRemappedRows(d.gpu, &corr, &unc, &pending, &failed) ==
              NVML_SUCCESS) {
        r.remapped_correctable = corr;
        r.remapped_uncorrectable = unc;
      }
      if (auto it = last_xid.find(d.gpu); it != last_xid.end()) r.last_xid = it->second;
      r.product_name = d.product;
      ReadExtras(d.gpu, &r);
      ReadGpm(d, &r);
      if (d.mig != nullptr) {
        r.mig_parent = parents.at(d.gpu);
        r.mig_profile = d.info.model;
        unsigned gi = 0;
        if (nvml_.nvmlDeviceGetGpuInstanceId != nullptr &&
            nvml_.nvmlDeviceGetGpuInstanceId(d.mig, &gi) == NVML_SUCCESS) {
          r.gpu_instance_id = gi;
        }
      }
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  // "0000:3b:00.0" (sysfs) -> "00000000:3B:00.0" (NVML and dcgm-exporter).
  static std::string NvmlBusId(const std::string& sysfs) {
    if (sysfs.empty()) return "";
    std::string id = Upper(sysfs);
    size_t colon = id.find(':');
    if (colon != std::string::npos && colon < 8) id = std::string(8 - colon, '0') + id;
    return id;
  }

  std::string Text(nvmlReturn_t r) const {
    const char* text = nvml_.nvmlErrorString != nullptr ? nvml_.nvmlErrorString(r) : nullptr;
    return std::string(text != nullptr ? text : "error") + " (" + std::to_string(r) + ")";
  }

  int32_t NumaNode(const std::string& bus_id) const {
    if (bus_id.empty()) return -1;
    std::string text =
        ReadFirstLine(config_.sysfs_root + "/bus/pci/devices/" + bus_id + "/numa_node");
    try {
      return text.empty() ? -1 : std::max(-1, std::stoi(text));
    } catch (const std::exception&) {
      return -1;
    }
  }

  // The UUID, type and memory of `device` (a GPU or a MIG device); `product`, when given,
  // gets its NVML name.
  Status Describe(nvmlDevice_t device, GpuInfo* info, std::string* product = nullptr) const {
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    char product_name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    if (nvmlReturn_t r = nvml_.nvmlDeviceGetUUID(device, uuid, sizeof uuid); r != NVML_SUCCESS) {
      return Unavailable("NVML: nvmlDeviceGetUUID: " + Text(r));
    }
    if (nvmlReturn_t r = nvml_.nvmlDeviceGetName(device, product_name, sizeof product_name);
        r != NVML_SUCCESS) {
      return Unavailable("NVML: nvmlDeviceGetName: " + Text(r));
    }
    info->uuid = uuid;
    if (product != nullptr) *product = product_name;
    auto named = config_.model_names.find(product_name);
    info->model = named != config_.model_names.end() ? named->second
                                                      : GpuTypeFromProductName(product_name);
    nvmlMemory_t mem{};
    if (nvml_.nvmlDeviceGetMemoryInfo(device, &mem) == NVML_SUCCESS)
      info->memory_mb = mem.total >> 20;
    return {};
  }

  // The MIG devices of `gpu` when its MIG mode is on; none otherwise.
  std::vector<Device> MigDevices(const Device& gpu, unsigned minor) const {
    std::vector<Device> out;
    unsigned current = 0, pending = 0, max = 0;
    if (nvml_.nvmlDeviceGetMigMode == nullptr || nvml_.nvmlDeviceGetMaxMigDeviceCount == nullptr ||
        nvml_.nvmlDeviceGetMigDeviceHandleByIndex == nullptr ||
        nvml_.nvmlDeviceGetMigMode(gpu.gpu, &current, &pending) != NVML_SUCCESS ||
        current != NVML_DEVICE_MIG_ENABLE ||
        nvml_.nvmlDeviceGetMaxMigDeviceCount(gpu.gpu, &max) != NVML_SUCCESS) {
      return out;
    }
    for (unsigned k = 0; k < max; ++k) {
      nvmlDevice_t mig = nullptr;
      if (nvml_.nvmlDeviceGetMigDeviceHandleByIndex(gpu.gpu, k, &mig) != NVML_SUCCESS) continue;
      Device d;
      d.gpu = gpu.gpu;
      d.mig = mig;
      d.bus_id = gpu.bus_id;
      d.product = gpu.product;
      d.info.numa_node = gpu.info.numa_node;
      if (!Describe(mig, &d.info)) continue;
      d.files = gpu.files;  // the parent GPU's file, and the slice's capability file
      unsigned gi = 0, ci = 0;
      if (nvml_.nvmlDeviceGetGpuInstanceId != nullptr &&
          nvml_.nvmlDeviceGetGpuInstanceId(mig, &gi) == NVML_SUCCESS) {
        d.gpu_instance = gi;
      }
      if (d.gpu_instance.has_value() && nvml_.nvmlDeviceGetComputeInstanceId != nullptr &&
          nvml_.nvmlDeviceGetComputeInstanceId(mig, &ci) == NVML_SUCCESS) {
        // The driver publishes the capability's device minor in this file.
        std::ifstream access("/proc/driver/nvidia/capabilities/gpu" + std::to_string(minor) +
                             "/mig/gi" + std::to_string(gi) + "/ci" + std::to_string(ci) +
                             "/access");
        std::string key;
        unsigned cap = 0;
        if (access >> key >> cap && key == "DeviceFileMinor:") {
          d.files.push_back(config_.dev_root + "/nvidia-caps/nvidia-cap" + std::to_string(cap));
        }
      }
      out.push_back(std::move(d));
    }
    return out;
  }

  // Fills the readings NVML gives per GPU (MIG devices report their parent's).
  void Read(const Device& d, GpuSample* s) const {
    nvmlDevice_t g = d.gpu;
    nvmlUtilization_t util{};
    if (d.mig == nullptr && nvml_.nvmlDeviceGetUtilizationRates != nullptr &&
        nvml_.nvmlDeviceGetUtilizationRates(g, &util) == NVML_SUCCESS) {
      s->utilization = util.gpu;
    }
    unsigned mw = 0;
    if (nvml_.nvmlDeviceGetPowerUsage != nullptr &&
        nvml_.nvmlDeviceGetPowerUsage(g, &mw) == NVML_SUCCESS) {
      s->power_watts = mw / 1000.0 / d.slices;
    }
    unsigned temp = 0;
    if (nvml_.nvmlDeviceGetTemperature != nullptr &&
        nvml_.nvmlDeviceGetTemperature(g, NVML_TEMPERATURE_GPU, &temp) == NVML_SUCCESS) {
      s->temperature_c = temp;
    }
    unsigned long long mj = 0;
    if (nvml_.nvmlDeviceGetTotalEnergyConsumption != nullptr &&
        nvml_.nvmlDeviceGetTotalEnergyConsumption(g, &mj) == NVML_SUCCESS) {
      s->energy_joules = static_cast<double>(mj) / 1000.0 / d.slices;
    }
    unsigned long long ecc = 0;
    if (nvml_.nvmlDeviceGetTotalEccErrors != nullptr &&
        nvml_.nvmlDeviceGetTotalEccErrors(g, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
                                          &ecc) == NVML_SUCCESS) {
      s->ecc_uncorrectable = ecc;
    }
    unsigned corr = 0, unc = 0, pending = 0, failed = 0;
    if (nvml_.nvmlDeviceGetRemappedRows != nullptr &&
        nvml_.nvmlDeviceGetRemappedRows(g, &corr, &unc, &pending, &failed) == NVML_SUCCESS) {
      s->row_remap_pending = pending != 0;
      s->row_remap_failure = failed != 0;
    }
  }

  // Clocks, memory temperature and PCIe replays of physical GPU `g`, where NVML has them.
  void ReadExtras(nvmlDevice_t g, GpuReading* r) const {
    unsigned mhz = 0;
    if (nvml_.nvmlDeviceGetClockInfo != nullptr &&
        nvml_.nvmlDeviceGetClockInfo(g, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS) {
      r->sm_clock_mhz = mhz;
    }
    if (nvml_.nvmlDeviceGetClockInfo != nullptr &&
        nvml_.nvmlDeviceGetClockInfo(g, NVML_CLOCK_MEM, &mhz) == NVML_SUCCESS) {
      r->memory_clock_mhz = mhz;
    }
    unsigned replays = 0;
    if (nvml_.nvmlDeviceGetPcieReplayCounter != nullptr &&
        nvml_.nvmlDeviceGetPcieReplayCounter(g, &replays) == NVML_SUCCESS) {
      r->pcie_replays = replays;
    }
    nvmlFieldValue_t temp{};
    temp.fieldId = NVML_FI_DEV_MEMORY_TEMP;
    if (nvml_.nvmlDeviceGetFieldValues != nullptr &&
        nvml_.nvmlDeviceGetFieldValues(g, 1, &temp) == NVML_SUCCESS &&
        temp.nvmlReturn == NVML_SUCCESS) {
      r->memory_temperature_c = FieldValue(temp);
    }
  }

  static std::optional<double> FieldValue(const nvmlFieldValue_t& f) {
    switch (f.valueType) {
      case NVML_VALUE_TYPE_DOUBLE:
        return f.value.dVal;
      case NVML_VALUE_TYPE_UNSIGNED_INT:
        return f.value.uiVal;
      case NVML_VALUE_TYPE_UNSIGNED_LONG:
        return static_cast<double>(f.value.ulVal);
      case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
        return static_cast<double>(f.value.ullVal);
      case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
        return static_cast<double>(f.value.sllVal);
      case NVML_VALUE_TYPE_SIGNED_INT:
        return f.value.siVal;
      default:
        return std::nullopt;
    }
  }

  // Sets up GPM for device `d` when the library and its physical GPU have it (a MIG device
  // also needs nvmlGpmMigSampleGet and its GPU instance id): two sample buffers.
  void StartGpm(const Device& d) {
    if (nvml_.nvmlGpmQueryDeviceSupport == nullptr || nvml_.nvmlGpmSampleAlloc == nullptr ||
        nvml_.nvmlGpmSampleFree == nullptr || nvml_.nvmlGpmSampleGet == nullptr ||
        nvml_.nvmlGpmMetricsGet == nullptr) {
      return;
    }
    if (d.mig != nullptr && (nvml_.nvmlGpmMigSampleGet == nullptr || !d.gpu_instance)) return;
    nvmlGpmSupport_t support{};
    support.version = NVML_GPM_SUPPORT_VERSION;
    if (nvml_.nvmlGpmQueryDeviceSupport(d.gpu, &support) != NVML_SUCCESS ||
        support.isSupportedDevice == 0) {
      return;
    }
    GpmState state;
    state.parent = d.gpu;
    if (d.mig != nullptr) state.gpu_instance = d.gpu_instance;
    if (nvml_.nvmlGpmSampleAlloc(&state.previous) != NVML_SUCCESS) return;
    if (nvml_.nvmlGpmSampleAlloc(&state.current) != NVML_SUCCESS) {
      nvml_.nvmlGpmSampleFree(state.previous);
      return;
    }
    gpm_.emplace(d.mig != nullptr ? d.mig : d.gpu, state);
  }

  // GPM's ratios for device `d` over the time since its previous reading (none at the first).
  // Requires gpm_mu_.
  void ReadGpm(const Device& d, GpuReading* r) {
    auto it = gpm_.find(d.mig != nullptr ? d.mig : d.gpu);
    if (it == gpm_.end()) return;
    GpmState& st = it->second;
    nvmlReturn_t taken =
        st.gpu_instance ? nvml_.nvmlGpmMigSampleGet(st.parent, *st.gpu_instance, st.current)
                        : nvml_.nvmlGpmSampleGet(st.parent, st.current);
    if (taken != NVML_SUCCESS) {
      st.have_previous = false;
      return;
    }
    if (st.have_previous) {
      nvmlGpmMetricsGet_t get{};
      get.version = NVML_GPM_METRICS_GET_VERSION;
      get.numMetrics = std::size(kGpmMetrics);
      get.sample1 = st.previous;
      get.sample2 = st.current;
      for (size_t k = 0; k < std::size(kGpmMetrics); ++k) get.metrics[k].metricId = kGpmMetrics[k];
      if (nvml_.nvmlGpmMetricsGet(&get) == NVML_SUCCESS) {
        auto ratio = [&](size_t k) -> std::optional<double> {
          if (get.metrics[k].nvmlReturn != NVML_SUCCESS) return std::nullopt;
          return std::clamp(get.metrics[k].value / 100.0, 0.0, 1.0);
        };
        r->gr_engine_active = ratio(0);
        r->sm_active = ratio(1);
        r->sm_occupancy = ratio(2);
        r->pipe_tensor_active = ratio(3);
        r->dram_active = ratio(4);
      }
    }
    std::swap(st.previous, st.current);
    st.have_previous = true;
  }

  void StartEvents(const std::vector<nvmlDevice_t>& gpus) {
    if (nvml_.nvmlEventSetCreate == nullptr || nvml_.nvmlDeviceRegisterEvents == nullptr ||
        nvml_.nvmlEventSetWait_v2 == nullptr || nvml_.nvmlEventSetFree == nullptr) {
      CORRAL_LOG(Warn) << "NVML: no event API; XID errors are not watched";
      return;
    }
    if (nvmlReturn_t r = nvml_.nvmlEventSetCreate(&events_); r != NVML_SUCCESS) {
      CORRAL_LOG(Warn) << "NVML: nvmlEventSetCreate: " << Text(r) << "; XID errors are not watched";
      events_ = nullptr;
      return;
    }
    size_t registered = 0;
    for (nvmlDevice_t g : gpus) {
      nvmlReturn_t r = nvml_.nvmlDeviceRegisterEvents(g, nvmlEventTypeXidCriticalError, events_);
      if (r == NVML_SUCCESS) {
        ++registered;
      } else {
        CORRAL_LOG(Warn) << "NVML: cannot watch XID errors of a GPU: " << Text(r);
      }
    }
    if (registered == 0) return;
    events_thread_ = std::thread([this] {
      while (!stopping_) {
        nvmlEventData_t data{};
        nvmlReturn_t r = nvml_.nvmlEventSetWait_v2(events_, &data, 500);
        if (r == NVML_SUCCESS && data.eventType == nvmlEventTypeXidCriticalError) {
          std::lock_guard<std::mutex> lock(mu_);
          pending_xids_[data.device].push_back(static_cast<uint32_t>(data.eventData));
          last_xid_[data.device] = static_cast<uint32_t>(data.eventData);
        } else if (r != NVML_SUCCESS && r != NVML_ERROR_TIMEOUT) {
          // GPU_IS_LOST and friends: the sampler reports the GPU; do not spin.
          for (int i = 0; i < 10 && !stopping_; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      }
    });
  }

  const NvmlConfig config_;
  void* const library_;
  const NvmlTable nvml_;
  std::string driver_;
  std::string cuda_;
  std::vector<Device> devices_;  // fixed after Init
  nvmlEventSet_t events_ = nullptr;
  std::thread events_thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::map<nvmlDevice_t, std::vector<uint32_t>> pending_xids_;  // guarded by mu_
  std::map<nvmlDevice_t, uint32_t> last_xid_;                   // for Read; guarded by mu_
  std::mutex gpm_mu_;  // Read's GPM state (scrapes may overlap)
  std::map<nvmlDevice_t, GpmState> gpm_;  // devices with GPM, by handle; gpm_mu_ after Init
};

}  // namespace

std::string GpuTypeFromProductName(std::string_view product) {
  std::string p(product);
  if (size_t mig = p.find(" MIG "); mig != std::string::npos) return Lower(p.substr(mig + 5));
  std::vector<std::string> words;
  std::istringstream in(p);
  for (std::string w; in >> w;) {
    std::string l = Lower(w);
    if (l == "nvidia" || l == "tesla" || l == "geforce" || l == "quadro") continue;
    words.push_back(w);
  }
  if (words.empty()) return "gpu";
  std::string first = words[0].substr(0, words[0].find('-'));
  std::string type = Lower(first);
  if ((type == "rtx" || type == "titan") && words.size() > 1) {
    std::string next = Lower(words[1].substr(0, words[1].find('-')));
    // "RTX A6000" is an A6000; "RTX 4090" an rtx4090.
    type = !next.empty() && std::isdigit(static_cast<unsigned char>(next[0])) ? type + next : next;
  }
  std::string out;
  for (char c : type) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += c;
  }
  return out.empty() ? "gpu" : out;
}

Result<std::unique_ptr<GpuBackend>> MakeNvmlGpuBackend(const NvmlConfig& config) {
  void* lib = dlopen(config.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    return Unavailable("cannot load " + config.library + ": " +
                       (err != nullptr ? err : "dlopen failed"));
  }
  NvmlTable t;
#define CORRAL_NVML_RESOLVE(name, args) \
  t.name = reinterpret_cast<decltype(t.name)>(dlsym(lib, #name));
  CORRAL_NVML_FUNCTIONS(CORRAL_NVML_RESOLVE)
#undef CORRAL_NVML_RESOLVE
  t.nvmlErrorString = reinterpret_cast<decltype(t.nvmlErrorString)>(dlsym(lib, "nvmlErrorString"));
  for (const char* name : kRequired) {
    if (dlsym(lib, name) == nullptr) {
      dlclose(lib);
      return Unavailable(config.library + " lacks the NVML entry point " + name);
    }
  }
  if (nvmlReturn_t r = t.nvmlInit_v2(); r != NVML_SUCCESS) {
    const char* text = t.nvmlErrorString(r);
    // Copied before dlclose: the text lives in the library.
    std::string message = "NVML: nvmlInit_v2: " + std::string(text != nullptr ? text : "error") +
                          " (" + std::to_string(r) + ")";
    dlclose(lib);
    return Unavailable(message);
  }
  auto backend = std::make_unique<NvmlGpuBackend>(config, lib, t);  // owns `lib` from here
  CORRAL_RETURN_IF_ERROR(backend->Init());
  return std::unique_ptr<GpuBackend>(std::move(backend));
}

}  // namespace corral::agent
