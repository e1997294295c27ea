// sacct's output, rendered as Slurm 22.05's sacct prints it: the default fields
// (JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode), --format lists with "%N" widths
// ("JobName%30"; a positive width right-aligns, as in Slurm, a negative one left-aligns),
// -P/--parsable2 ("a|b|c"), -p/--parsable ("a|b|c|"), --delimiter, -n/--noheader and
// -X/--allocations. Field names match case-insensitively and by prefix, the first field of
// Slurm's table winning ("jobn" is JobName), as in sacct.
//
// Each job that ran gets its batch step line ("12.batch", JobName "batch") unless -X. Values
// are formatted as sacct formats them: over-long text cut with a final '+', times
// "2026-11-29T17:29:27" or "Unknown", durations "00:01:05" / "1-02:03:04", TRES lists
// alphabetical ("billing=4,cpu=4,gres/gpu=2,mem=2G,node=1"), cancelled jobs
// "CANCELLED by UID" (Corral records no canceller: the job's owner is shown).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "api/messages.h"
#include "cli/slurm/squeue.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::slurm {

struct SacctOptions {
  std::string format;        // --format/-o; "" = the default fields
  bool parsable = false;     // -p
  bool parsable2 = false;    // -P
  std::string delimiter;     // --delimiter ("" = "|")
  bool no_header = false;    // -n
  bool allocations = false;  // -X
  Timestamp now{};
  int64_t utc_offset_seconds = 0;
  std::function<std::string(uint32_t gid)> group_name;
};

inline constexpr const char* kSacctDefaultFormat =
    "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";

// Renders `jobs` in job id order. Returns kInvalidArgument ("sacct: error: Invalid field
// requested: \"X\"") for an unknown field name.
Result<RenderResult> RenderSacct(const std::vector<api::JobInfo>& jobs,
                                 const SacctOptions& options);

}  // namespace corral::slurm
