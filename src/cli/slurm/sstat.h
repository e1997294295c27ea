// `sstat`'s output, as Slurm 22.05's sstat prints it (checked against a real 22.05.8 with
// jobacct_gather/linux): one line per running step, its fields aggregated over the step's
// tasks on every node — Max* the largest task (with the node and the task's rank), Min* the
// smallest, Ave* the mean over the tasks, NTasks; TRESUsageIn*/Out* the same as TRES lists
// ("cpu=00:00:01,energy=0,fs/disk=1685837,mem=64604K,pages=0,vmem=67772K", names in
// alphabetical order, with gres/gpumem and gres/gpuutil where the agent saw the run's GPUs:
// per node, as a node's GPUs serve all of its tasks). Memory is printed in Slurm's exact
// units (64608K, 64M) or, with --noconvert, in bytes; CPU times as "HH:MM:SS".
//
// From Corral's data (api/job_stats.h): each task is the agent's process group sum read from
// /proc when asked (MaxRSS is the sum of the members' peaks, AveRSS of their current sizes);
// AveCPUFreq is the mean of the tasks' `cpu_freq_khz` (0 when no task's is known); fields
// Corral has no figure for print as Slurm prints them without one (ReqCPUFreq* Unknown,
// ConsumedEnergy 0).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api/job_stats.h"
#include "core/result.h"

namespace corral::slurm {

struct SstatOptions {
  std::string format;       // -o/--format ("" = every field of `kSstatDefaultFields`)
  bool parsable = false;    // -p: "a|b|"
  bool parsable2 = false;   // -P: "a|b"
  bool no_header = false;   // -n
  bool no_convert = false;  // --noconvert: memory in bytes, no unit
};

// One step to print: `step` a step id or kBatchStepId; `label` its JobID ("12.0", "12.batch").
struct SstatStep {
  uint32_t step = 0;
  std::string label;
};

// The steps with tasks in `stats`, in step order (numbered steps, then batch).
std::vector<uint32_t> StepsIn(const api::JobStatsInfo& stats);

// The lines for `steps` of `stats` (header unless `no_header`). Returns kInvalidArgument
// ("Invalid field requested: \"X\"") for an unknown field of the format.
Result<std::string> RenderSstat(const api::JobStatsInfo& stats,
                                const std::vector<SstatStep>& steps,
                                const SstatOptions& options);

// The names of every field, as `sstat -e` prints them (four to a line, 19 wide).
std::string SstatFieldList();

}  // namespace corral::slurm
