// The `Fields()` tables of `sdiag`'s figures (api/diag.h).
//
// Part of the JSON codecs (api/json_codec.h): included through json_fields.h only.
#pragma once

#include "api/diag.h"
#include "api/internal/json_base.h"

namespace corral::api::internal {

template <typename V, Is<DiagRoute> S>
void Fields(V& v, S& s) {
  v("method", s.method);
  v("route", s.route);
  v("count", s.count);
  v("total_seconds", s.total_seconds);
}

template <typename V, Is<DiagUser> S>
void Fields(V& v, S& s) {
  v("user", s.user);
  v("uid", s.uid);
  v("count", s.count);
  v("total_seconds", s.total_seconds);
}

template <typename V, Is<DiagInfo> S>
void Fields(V& v, S& s) {
  v("now", s.now);
  v("since", s.since);
  v("server_threads", s.server_threads);
  v("jobs_submitted", s.jobs_submitted);
  v("jobs_started", s.jobs_started);
  v("jobs_completed", s.jobs_completed);
  v("jobs_canceled", s.jobs_canceled);
  v("jobs_failed", s.jobs_failed);
  v("jobs_pending", s.jobs_pending);
  v("jobs_running", s.jobs_running);
  v("cycles", s.cycles);
  v("last_cycle_seconds", s.last_cycle_seconds);
  v("max_cycle_seconds", s.max_cycle_seconds);
  v("total_cycle_seconds", s.total_cycle_seconds);
  v("examined_total", s.examined_total);
  v("last_queue_length", s.last_queue_length);
  v("last_examined", s.last_examined);
  v("backfilled_total", s.backfilled_total);
  v("last_backfilled", s.last_backfilled);
  v("last_reservations", s.last_reservations);
  v("last_pass_time", s.last_pass_time);
  v("routes", s.routes);
  v("users", s.users);
}

}  // namespace corral::api::internal
