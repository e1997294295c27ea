// JobGpuLoads: how a job drives its simulated GPUs, so that tests (and demos) run an idle job
// beside a busy one on GPU-less machines. Only for the simulated backend; docs/metrics-jobs.md
// describes it for users.
//
// A job sets its GPUs' load
//   - at launch, with `CORRAL_SIM_GPU_UTIL=95` (percent) and optionally
//     `CORRAL_SIM_GPU_MEM_MB=9216` in its environment, and/or
//   - at any time, by writing "UTIL [MEM_MB]" to the file named by `CORRAL_SIM_GPU_LOAD_FILE`,
//     which the agent adds to the job's environment (a file it made in its state directory,
//     owned by the job's user) and re-reads before each sample. The file wins over the
//     environment once it holds a valid reading.
// A job that sets nothing leaves its GPUs as they are (idle, or what `corral node inject` set).
//
// Not thread-safe (NodeMonitor calls it under its lock).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/exec/job_run.h"
#include "agent/gpu/gpu_backend.h"
#include "core/gpu.h"

namespace corral::agent {

class JobGpuLoads {
 public:
  // `dir`: where the load files go (<state_dir>/gpu-load), made on first use.
  explicit JobGpuLoads(std::string dir) : dir_(std::move(dir)) {}

  // Run `run` holds `gpus` here and its batch step has environment `env` ("NAME=value"):
  // returns the variables to add to it (CORRAL_SIM_GPU_LOAD_FILE), the file made owned by
  // `uid`/`gid` when given. An unparsable CORRAL_SIM_GPU_UTIL is ignored (logged).
  std::vector<std::string> Start(JobRun run, const GpuSet& gpus,
                                 const std::vector<std::string>& env, std::optional<uint32_t> uid,
                                 std::optional<uint32_t> gid);
  // Sets every run's load on `backend` (re-reading the files).
  void Apply(GpuBackend& backend);
  // The run ended: its GPUs idle again and its file goes.
  void Finish(JobRun run, GpuBackend& backend);

  // "UTIL [MEM_MB]" with UTIL in 0..100; nullopt for anything else.
  struct Load {
    double utilization = 0;
    std::optional<uint64_t> memory_mb;
  };
  static std::optional<Load> Parse(std::string_view text);

 private:
  struct Entry {
    GpuSet gpus;
    std::optional<Load> initial;  // from the environment
    std::string file;
    bool applied = false;  // it drove its GPUs: they idle again at its end
  };
  std::string dir_;
  std::map<JobRun, Entry> runs_;
};

}  // namespace corral::agent
