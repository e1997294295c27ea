// Per-job GPU statistics and GPU waste from the command line (docs/metrics-jobs.md):
//   corral jobstats JOB [--json]          per-GPU use and plain-language notes
//   corral report waste [--since TIME]    wasted GPU-hours by user and account
//   seff JOB                              Slurm's seff, plus GPU lines (a link to corral)
//
// Not thread-safe (process-wide state: the environment, stdout).
#pragma once

#include <string>
#include <vector>

#include "cli/client.h"

namespace corral::cli {

// `corral jobstats`: `jobs` are the job ids given. Returns 0, 1 after an error, 2 for a
// usage error.
int Jobstats(Client& client, const std::vector<std::string>& jobs, bool json);
// `corral report waste`: `args` are the words after `report` ("waste"); `since` is a time as
// sacct -S takes it ("" = the last 7 days).
int Report(Client& client, const std::vector<std::string>& args, const std::string& since,
           bool json);

}  // namespace corral::cli
