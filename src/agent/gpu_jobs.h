// GpuJobs: which job holds which of this node's GPUs, for the agent's /metrics labels
// (hpc_job, user, account) and dcgm-exporter's HPC job-mapping directory.
//
// The job-mapping directory (dcgm-exporter's `--hpc-job-mapping-dir`): one file per GPU,
// named by its index ("3"), or "GPU.GI" for a MIG slice (its parent GPU's index and GPU
// instance id), holding the ids of the jobs on it, one per line; a GPU that no job holds has
// no file. Rewritten (atomically, file by file) whenever a run starts or ends here, so a
// site's own dcgm-exporter labels its series with the jobs.
//
// Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "agent/exec/job_run.h"
#include "agent/gpu_metrics.h"
#include "core/gpu.h"
#include "core/result.h"

namespace corral::agent {

class GpuJobs {
 public:
  // `mapping_dir` "" = no job-mapping directory. `file_names`: GPU index -> its file's name
  // there (indices not listed use the index).
  GpuJobs(std::string mapping_dir, std::map<uint32_t, std::string> file_names);

  // Run `run` of job `holder.job` holds `gpus` here (again: no change).
  void Hold(JobRun run, GpuHolder holder, GpuSet gpus);
  // Run `run` no longer holds anything here.
  void Release(JobRun run);
  // Keeps only the runs in `live` (those that still hold a cgroup or a batch step here).
  void Retain(const std::vector<JobRun>& live);

  // GPU index -> the job holding it (the lowest job id when several do).
  std::map<uint32_t, GpuHolder> Holders() const;

  // Writes the job-mapping directory now. Returns the first write error (naming the path).
  Status WriteMappingDir();

 private:
  Status WriteLocked();  // requires mu_

  const std::string dir_;
  const std::map<uint32_t, std::string> file_names_;
  mutable std::mutex mu_;
  struct Held {
    GpuHolder holder;
    GpuSet gpus;
  };
  std::map<JobRun, Held> runs_;    // guarded by mu_
  std::set<std::string> written_;  // files this agent wrote; guarded by mu_
  bool scanned_ = false;           // the directory's old files are in written_
};

// The job-mapping file name of each of `backend`'s MIG slices ("GPU.GI"); whole GPUs are
// absent (they use their index). Empty when the backend has no readings.
std::map<uint32_t, std::string> JobMappingFileNames(GpuBackend& backend);

}  // namespace corral::agent
