// The handlers of per-job GPU statistics and the GPU-waste report (docs/metrics-jobs.md), rows
// of the route table (controller/routes.cc) registered by `RegisterRoutes`:
//   GET /api/v1/jobs/{id}/gpustats          whoever may read the job (`kReadJob`, privacy as
//                                           GET /api/v1/jobs/{id}); with `[privacy]
//                                           private_data` "usage", only who sees its usage
//   GET /api/v1/reports/waste?since=SECONDS  `kReadCluster`: admins and operators see every
//                                           user's jobs, others their own user's
// They read the store off the state thread (`Store::GetGpuSeries`, `Store::QueryJobs`) and
// the controller's live series through `ControllerService::Call`.
//
// Thread-safety: the handlers are thread-safe.
#pragma once

#include "api/http.h"
#include "api/identity.h"
#include "controller/config.h"
#include "controller/service.h"
#include "core/clock.h"
#include "store/store.h"

namespace corral::controller {

// GET /api/v1/jobs/{id}/gpustats for `who` (authenticated). 403 when `who` may not see the
// job or (with `privacy.usage`) its usage; 404 for an unknown job; 400 for a bad id.
api::HttpResponse ServeGpuStats(ControllerService& service, store::Store& store,
                                const PrivacyConfig& privacy, const api::HttpRequest& req,
                                const api::Identity& who);

// GET /api/v1/reports/waste for `who` (authorized for `kReadCluster`): jobs started since
// `since` (Unix seconds; a week ago when absent), 400 for a bad `since`.
api::HttpResponse ServeWasteReport(ControllerService& service, store::Store& store,
                                   const Clock& clock, double threshold,
                                   const api::HttpRequest& req, const api::Identity& who);

}  // namespace corral::controller
