// The text of `corral jobstats`, `seff`, `corral report waste` (docs/metrics-jobs.md) and
// `corral report usage` (docs/governance.md):
// pure functions of the job's record and its GPU statistics, so that tests check them
// without a cluster. Internal to cli.
//
// Thread-safe (pure functions).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/messages.h"
#include "api/report_messages.h"

namespace corral::cli::internal {

// Plain-language notes on how a job used its GPUs, most important first, in the manner of
// Princeton's jobstats:
//   - no readings at all ("no GPU readings were recorded ...");
//   - the job is flagged as wasting its GPUs (the controller's note);
//   - a GPU idle (under 1%) for at least half of its readings ("GPU 3 on gpu01 was idle 95% of
//     the time"), else one with a low mean ("GPU 3 on gpu01 averaged 12% utilisation");
//   - peak memory under a quarter of a GPU of 20 GB or more, on every GPU ("peak memory 9 of
//     80 GB per GPU: a MIG slice would do").
std::vector<std::string> JobstatsNotes(const api::JobInfo& job, const api::GpuStatsInfo& stats);

// `corral jobstats JOB`: the job, a line per GPU (mean and peak utilisation, peak memory,
// peak power, energy), then the notes.
std::string FormatJobstats(const api::JobInfo& job, const api::GpuStatsInfo& stats);

// `seff JOB`: Slurm's seff lines (Job ID, Cluster, User/Group, State, Cores, CPU Utilized, CPU
// Efficiency, Job Wall-clock time, Memory Utilized, Memory Efficiency), then GPU lines.
// `group` is the group's name ("" prints the gid); `now` ends the wall clock of a running job.
std::string FormatSeff(const api::JobInfo& job, const api::GpuStatsInfo& stats,
                       const std::string& cluster, const std::string& group, Timestamp now);

// `corral report waste`: wasted GPU-hours by user, then by account.
std::string FormatWasteReport(const api::WasteReport& report);

// `corral report usage`: the window, the cluster's allocated share of its capacity, then CPU-
// and GPU-hours and energy (kWh) by account, by (account, user), by partition, by GPU model
// and, when the report has them, by job. With `parents` (the account tree: account -> parent,
// "" = under the root), the accounts come in tree order, each holding its sub-accounts' usage
// too and indented by its depth, as sreport's AccountUtilizationByUser rolls them up.
std::string FormatUsageReport(const api::UsageReport& report,
                              const std::map<std::string, std::string>& parents = {});

}  // namespace corral::cli::internal
