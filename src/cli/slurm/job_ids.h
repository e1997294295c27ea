// Job id arguments of scancel, squeue -j, scontrol and sacct -j, in Slurm's forms:
// "12", "12_3" (one array task), "12_[1-5,7]" (some tasks), "12_*" (every task), joined by
// ',' or given as separate arguments; and sbatch's submission message.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace corral::slurm {

struct JobIdSpec {
  uint64_t job_id = 0;                // the job, or the array's job id
  bool all_tasks = false;             // "12_*"
  std::vector<uint32_t> array_tasks;  // "12_3", "12_[1-5]": these tasks only; empty = the id
  bool operator==(const JobIdSpec&) const = default;
};

// Parses a comma-separated list of job ids. Returns kInvalidArgument ("Invalid job id
// specified" naming the item) for anything else.
Result<std::vector<JobIdSpec>> ParseJobIdList(std::string_view text);

// What sbatch prints once a job is submitted: "Submitted batch job 12\n", or with --parsable
// "12\n" ("12;CLUSTER\n" when `cluster` is not empty, as with -M).
std::string SubmittedMessage(uint64_t job_id, bool parsable, std::string_view cluster = "");

}  // namespace corral::slurm
