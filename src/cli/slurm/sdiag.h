// `sdiag` as Slurm 22.05 prints it (checked against a real 22.05.8), from Corral's figures
// (api/diag.h, GET /api/v1/diag): the header with the times, the job counters, "Main schedule
// statistics (microseconds)", "Backfilling stats", and the request statistics "by message
// type" (one line per API route: "POST /api/v1/jobs", in Slurm's columns) and "by user".
//
// What Corral has no figure for is left out rather than printed as zero: the agent and DBD
// queue lines, the gettimeofday latency, the pending-RPC section, the RPC ids in brackets
// (a route has none). One scheduling pass is Slurm's main and backfill cycle in one, so both
// sections show the passes (docs/slurm.md, "sdiag").
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "api/diag.h"

namespace corral::slurm {

enum class SdiagSort { kCount, kId, kTotalTime, kAverageTime };

struct SdiagOptions {
  SdiagSort sort = SdiagSort::kCount;  // -i: by route name; -t: total time; -T: average time
  int64_t utc_offset_seconds = 0;
};

std::string RenderSdiag(const api::DiagInfo& diag, const SdiagOptions& options);

}  // namespace corral::slurm
