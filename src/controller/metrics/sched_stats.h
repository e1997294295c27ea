// SchedStats: what `sdiag` shows of the scheduler, kept by the controller's state thread as
// passes run (Controller::Schedule) and copied into each metrics snapshot.
//
// Value type; not thread-safe (state thread only).
#pragma once

#include <cstdint>

#include "controller/metrics/histogram.h"
#include "core/time.h"

namespace corral::controller::metrics {

struct PassFigures {
  uint64_t queue_length = 0;  // pending jobs when the pass began
  uint64_t examined = 0;      // pending jobs the pass got to (max_jobs_per_pass)
  uint64_t started = 0;       // jobs it started (backfilled ones included)
  uint64_t backfilled = 0;    // of those, started ahead of a higher-priority job's reservation
  uint64_t reservations = 0;  // start times it holds for blocked jobs (backfill reservations)
};

struct SchedStats {
  LatencyHistogram cycle;  // duration of every pass that ran the policy
  double last_cycle_seconds = 0;
  double max_cycle_seconds = 0;
  PassFigures last;  // the last pass's
  uint64_t examined_total = 0;
  uint64_t started_total = 0;
  uint64_t backfilled_total = 0;
  Timestamp last_pass_time{};

  void RecordPass(Duration cost, const PassFigures& figures, Timestamp now) {
    double seconds = ToSecondsF(cost);
    cycle.Observe(seconds);
    last_cycle_seconds = seconds;
    if (seconds > max_cycle_seconds) max_cycle_seconds = seconds;
    last = figures;
    examined_total += figures.examined;
    started_total += figures.started;
    backfilled_total += figures.backfilled;
    last_pass_time = now;
  }
};

}  // namespace corral::controller::metrics
