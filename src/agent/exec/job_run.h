// JobRun: one run of a job on a node — the job's id and the generation of its allocation.
// A requeued job runs again under a new generation, possibly on the same node while its
// previous run is still being torn down, so everything the agent keeps per job (processes,
// cgroups, usage) is keyed by the run.
//
// Value type; thread-safe.
#pragma once

#include <compare>
#include <string>

#include "core/ids.h"

namespace corral::agent {

struct JobRun {
  JobId job;
  Generation generation;
  auto operator<=>(const JobRun&) const = default;
  // "42.7" (job.generation), as in logs and file names.
  std::string ToString() const { return job.ToString() + "." + generation.ToString(); }
};

}  // namespace corral::agent
