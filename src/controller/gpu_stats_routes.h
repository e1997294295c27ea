// The HTTP routes of per-job GPU statistics and the GPU-waste report (docs/metrics-jobs.md):
//   GET /api/v1/jobs/{id}/gpustats          any authenticated caller (as GET /api/v1/jobs/{id})
//   GET /api/v1/reports/waste?since=SECONDS  admins and operators: every user; others: their own
// They read the store off the state thread (`Store::GetGpuSeries`, `Store::QueryJobs`) and
// the controller's live series through `ControllerService::Call`.
//
// Thread-safety: the handlers are thread-safe.
#pragma once

#include "api/auth.h"
#include "api/http.h"
#include "controller/config.h"
#include "controller/service.h"
#include "core/clock.h"
#include "store/store.h"

namespace corral::controller {

// `service`, `store`, `authenticator` and `clock` must outlive `server`'s handlers.
void AddGpuStatsRoutes(api::HttpServer& server, ControllerService& service, store::Store& store,
                       const api::Authenticator& authenticator, const Clock& clock,
                       const GpuWasteConfig& waste);

}  // namespace corral::controller
