// UsageTracker: per-job GPU usage measured from the backend's samples while the job runs —
// GPU-seconds, mean and max utilisation, the highest memory used on any one of its GPUs, and
// the energy its GPUs drew (the growth of their energy counters).
//
// Pure bookkeeping: the agent feeds it samples with the time they were taken. Not
// thread-safe.
#pragma once

#include <map>
#include <vector>

#include "agent/exec/job_run.h"
#include "agent/gpu/gpu_backend.h"
#include "core/gpu.h"
#include "core/ids.h"
#include "core/job.h"
#include "core/time.h"

namespace corral::agent {

class UsageTracker {
 public:
  // A job's run started on `gpus` at `now`.
  void Start(JobRun run, GpuSet gpus, MonoTime now);
  // One round of samples taken at `now`: each running job accrues the time since its last
  // sample at the utilisation read now, and its GPUs' energy counters' growth.
  void Observe(const std::vector<GpuSample>& samples, MonoTime now);
  // The run ended at `now`: returns its usage and forgets it. A run never started gives zeros.
  // `gpu_seconds` counts the whole run (GPUs x elapsed), not only the sampled part.
  JobUsage Finish(JobRun run, MonoTime now);
  bool empty() const { return jobs_.empty(); }

 private:
  struct Entry {
    GpuSet gpus;
    MonoTime start{};
    MonoTime last{};
    double util_integral = 0;  // sum over GPUs of percent x seconds
    double sampled_seconds = 0;
    double util_max = 0;
    uint64_t mem_max_mb = 0;
    double energy_joules = 0;
    std::map<uint32_t, double> energy_last;  // each GPU's counter at the last sample
  };
  std::map<JobRun, Entry> jobs_;
};

}  // namespace corral::agent
