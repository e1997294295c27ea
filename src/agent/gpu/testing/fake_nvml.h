// FakeNvml: a test's handle on the fake libnvidia-ml (fake_nvml.c): a temporary directory
// holding the file that describes the fake GPUs ($CORRAL_FAKE_NVML, read by the library) and
// a sysfs with their NUMA nodes, and the `NvmlConfig` that loads the library by path.
//
// XID events: `Append("xid GPU XID\n")` wakes the backend's event thread (waiting in the
// library), and `WaitXidsHandled(n)` waits, on a condition with a deadline, until that thread
// has queued `n` of them for the next `Sample()`.
//
// Test-only; the test target defines CORRAL_FAKE_NVML_PATH. One at a time per process (the
// library reads one environment variable).
#pragma once

#include <dlfcn.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "agent/gpu/gpu_backend.h"
#include "core/time.h"

namespace corral::testing {

class FakeNvml {
 public:
  // Four H100s on an NVSwitch, two per NUMA node.
  static constexpr const char* kFourH100 =
      "driver 550.54.15\ncuda 12040\n"
      "gpu NVIDIA H100 80GB HBM3|GPU-00000000-0000-0000-0000-000000000000|00000000:1B:00.0|0|"
      "81559|switch\n"
      "gpu NVIDIA H100 80GB HBM3|GPU-11111111-0000-0000-0000-000000000000|00000000:3B:00.0|1|"
      "81559|switch\n"
      "gpu NVIDIA H100 80GB HBM3|GPU-22222222-0000-0000-0000-000000000000|00000000:9B:00.0|2|"
      "81559|switch\n"
      "gpu NVIDIA H100 80GB HBM3|GPU-33333333-0000-0000-0000-000000000000|00000000:BB:00.0|3|"
      "81559|switch\n";

  FakeNvml() {
    char tmpl[] = "/tmp/corral-nvml-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) std::abort();
    dir_ = tmpl;
    file_ = dir_ + "/gpus";
    setenv("CORRAL_FAKE_NVML", file_.c_str(), 1);
    for (auto [bus, numa] : {std::pair{"0000:1b:00.0", "0"},
                             {"0000:3b:00.0", "0"},
                             {"0000:9b:00.0", "1"},
                             {"0000:bb:00.0", "1"}}) {
      std::filesystem::create_directories(dir_ + "/sys/bus/pci/devices/" + bus);
      std::ofstream(dir_ + "/sys/bus/pci/devices/" + bus + "/numa_node") << numa << "\n";
    }
  }
  ~FakeNvml() {
    unsetenv("CORRAL_FAKE_NVML");
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  FakeNvml(const FakeNvml&) = delete;
  FakeNvml& operator=(const FakeNvml&) = delete;

  // Replaces / extends the description (the library reads it again at every call).
  void Write(const std::string& text) const {
    std::ofstream(file_, std::ios::trunc) << text;
    Notify();
  }
  void Append(const std::string& text) const {
    std::ofstream(file_, std::ios::app) << text;
    Notify();
  }

  // Waits until the backend has taken `n` XID events from the library (since it was made);
  // returns whether it did within `timeout`.
  bool WaitXidsHandled(int n, Duration timeout = Seconds(20)) const {
    auto wait =
        reinterpret_cast<int (*)(int, unsigned)>(Hook("corral_fake_nvml_wait_xids_handled"));
    if (wait == nullptr) return false;
    return wait(n, static_cast<unsigned>(timeout.count() / 1000)) != 0;
  }

  agent::NvmlConfig Config() const {
    agent::NvmlConfig c;
    c.library = CORRAL_FAKE_NVML_PATH;
    c.sysfs_root = dir_ + "/sys";
    c.dev_root = dir_ + "/dev";
    return c;
  }
  const std::string& dir() const { return dir_; }

 private:
  // A test hook of the loaded library, or null while no backend has loaded it.
  static void* Hook(const char* name) {
    void* lib = dlopen(CORRAL_FAKE_NVML_PATH, RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr) return nullptr;
    void* fn = dlsym(lib, name);
    dlclose(lib);  // the backend holds its own reference
    return fn;
  }
  static void Notify() {
    if (auto notify = reinterpret_cast<void (*)()>(Hook("corral_fake_nvml_notify"))) notify();
  }

  std::string dir_;
  std::string file_;
};

}  // namespace corral::testing
