// Per-GPU and node health: what the agent checks every `HealthConfig::interval` and what a
// failing check means (docs/agent.md, "Health checks", has the table of critical XIDs and the
// action each calls for).
//
// Checks per GPU: a critical XID event (latched: it stays failed until an operator resumes
// the GPU, after the reset or reboot its XID calls for), uncorrectable ECC errors beyond the
// count at the start or the last resume (latched), a row-remap failure or pending remap,
// temperature and power over their thresholds, and a GPU that vanished. Checks per node: the
// backend cannot sample at all, and the admin health script (NHC-like: exit status 0 is
// healthy; otherwise its first line of output is the reason).
//
// `HealthMonitor` is a pure state machine over samples (no I/O, no clock): the agent feeds
// it samples and script results and reports what it returns. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agent/gpu/gpu_backend.h"
#include "core/clock.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::agent {

struct HealthConfig {
  Duration interval = Seconds(30);
  // XIDs that take a GPU out of service (docs/agent.md lists the defaults and why).
  std::set<uint32_t> critical_xids = {48, 74, 79, 94, 95, 119, 120, 140};
  double max_temperature_c = 0;  // 0 = not checked
  double max_power_watts = 0;    // 0 = not checked
  bool check_ecc = true;         // uncorrectable ECC, row-remap failure / pending remap
  std::string script;            // admin health script; "" = none
  Duration script_timeout = Seconds(60);
  // Return a GPU to service by itself once its (non-latched) checks pass again. Otherwise an
  // operator resumes it (`corral node resume-gpu`, `corral resume`).
  bool auto_resume = false;
};

// What a critical XID means and what it calls for.
struct XidInfo {
  uint32_t xid;
  std::string_view meaning;
  std::string_view action;
};
// The built-in table (the default `critical_xids`), in XID order.
const std::vector<XidInfo>& CriticalXidTable();
// The table's meaning of `xid`, or "XID N" for one it does not list.
std::string XidMeaning(uint32_t xid);

// One failing check of one GPU.
struct GpuProblem {
  uint32_t gpu = 0;
  std::string reason;    // "XID 79 (GPU has fallen off the bus)"
  bool latched = false;  // stays until the GPU is cleared (an operator resumed it)
  bool operator==(const GpuProblem&) const = default;
};

// The node's health at one point.
struct HealthReport {
  std::vector<GpuProblem> gpus;  // by GPU index, then reason
  std::string node_problem;      // "" = healthy
  bool operator==(const HealthReport&) const = default;
  GpuSet FailingGpus() const;
};

class HealthMonitor {
 public:
  explicit HealthMonitor(HealthConfig config) : config_(std::move(config)) {}

  // Feeds one round of samples (or the backend's failure to sample) and returns the state.
  // The first samples set the ECC baseline of each GPU. GPUs of `inventory` missing from the
  // samples count as vanished.
  HealthReport Observe(const std::vector<GpuInfo>& inventory,
                       const Result<std::vector<GpuSample>>& samples);
  // The admin script's latest result: "" = healthy, else its reason.
  void SetScriptResult(std::string problem) { script_problem_ = std::move(problem); }
  // An operator resumed `gpu`: forget its latched problems and take its current ECC count as
  // the new baseline.
  void Clear(uint32_t gpu);
  HealthReport Current() const { return last_; }

 private:
  HealthConfig config_;
  std::map<uint32_t, std::vector<GpuProblem>> latched_;
  std::map<uint32_t, uint64_t> ecc_baseline_;
  std::map<uint32_t, uint64_t> ecc_now_;
  std::string script_problem_;
  std::string backend_problem_;
  HealthReport last_;
};

// Runs the admin health script `path` with a timeout. Returns "" when it exits 0, else its
// first non-empty line of output (stdout then stderr), or "exit status N" / "killed by
// signal N" / "timed out after N s" when it says nothing; "cannot run ..." when it cannot be
// started. The script runs in its own process group, killed whole at the timeout. Blocks;
// thread-safe.
std::string RunHealthScript(const std::string& path, Duration timeout, const Clock& clock);

}  // namespace corral::agent
