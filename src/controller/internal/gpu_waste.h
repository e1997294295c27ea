// GPU waste: the pure decisions behind the controller's GPU-waste policy and report
// (docs/metrics-jobs.md). No state, no clock: the caller passes the kept series, the policy
// and `now`.
//
// `DecideWaste`, for one running job:
//   1. A track (one GPU) is idle since the end of its last bucket whose mean utilisation is at
//      or over the threshold, or since its first sample when it has none; its idle time runs
//      to its last sample. A track with no sample for a whole window is not judged (the agent
//      is not reporting; node liveness deals with that), nor is a job without tracks.
//   2. The job wastes its GPUs when every track has been idle for at least the window.
//   3. Wasting and not flagged: kFlag. Flagged and no longer wasting: kClear. Flagged, still
//      wasting, an action other than notify, and flagged for at least the grace: kAct.
//      Otherwise kNone. A disabled policy gives kClear for a flagged job, else kNone.
//
// Thread-safe (pure functions).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/messages.h"
#include "controller/config.h"
#include "core/gpu_series.h"
#include "core/job.h"

namespace corral::controller::internal {

struct WasteVerdict {
  enum class Kind { kNone, kFlag, kClear, kAct };
  Kind kind = Kind::kNone;
  std::string note;  // kFlag/kAct: "GPUs gpu01:0,1 under 5% utilisation for 31m"
  bool operator==(const WasteVerdict&) const = default;
};

WasteVerdict DecideWaste(const JobGpuSeries& series, const GpuWastePolicy& policy, Timestamp now);

// The GPU-waste report over `jobs` (any states; those without GPUs count for nothing): per
// job, GPU-hours = GPUs x its run time (to its end, or `now` while it runs); wasted GPU-hours
// = the run time x the sum over its GPUs of the share of their samples in buckets under
// `threshold` (`WastedFraction`). A job without a series has no wasted hours. Rows sorted by
// wasted GPU-hours, most first, then name.
api::WasteReport BuildWasteReport(const std::vector<Job>& jobs,
                                  const std::map<JobId, JobGpuSeries>& series, double threshold,
                                  Timestamp since, Timestamp now);

}  // namespace corral::controller::internal
