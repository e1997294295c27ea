// Per-job GPU statistics and GPU waste from the command line (docs/metrics-jobs.md):
//   corral jobstats JOB [--json]          per-GPU use and plain-language notes
//   corral report waste [--since TIME]    wasted GPU-hours by user and account
//   corral report usage [--since T] [--until T] [--jobs]   usage by account, user, model
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
// `corral report usage [--since T] [--until T] [--jobs]` (cli/reports.cc; docs/governance.md):
// times as sacct -S/-E take them ("" = the last 24 hours, until now).
int UsageReportCommand(Client& client, const std::string& since, const std::string& until,
                       bool jobs, bool json);

}  // namespace corral::cli
