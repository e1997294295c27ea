// The handlers of the usage and fair-share reports (docs/governance.md, "Reports"), rows of the
// route table (controller/routes.cc) registered by `RegisterRoutes`:
//   GET /api/v1/reports/usage?start=S&end=E[&jobs=1]  `kReadCluster`: usage over [S, E) (Unix
//        seconds; the last day when absent) from the stored job records. With `[privacy]
//        private_data` "jobs" or "usage", users other than operators and admins get a report of
//        their own jobs only (`own_only`), as Slurm's PrivateData=usage does for sreport.
//   GET /api/v1/fairshare          `kReadCluster`: the fair-share tree (`sshare`); with
//        [privacy] as above, other users' rows are left out for users
//   GET /api/v1/priorities/weights `kReadCluster`: the multifactor weights (`sprio -w`)
// The usage report reads the store off the state thread (`Store::QueryJobs`); the state thread
// only lists the nodes. The fair-share tree is computed on the state thread from the usage
// ledger and the scheduler's configuration (accounts x users: cheap).
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

// GET /api/v1/reports/usage for `who`. 400 naming the parameter for a bad `start`, `end` or
// `jobs`, or an `end` not after `start`.
api::HttpResponse ServeUsageReport(ControllerService& service, store::Store& store,
                                   const Clock& clock, const PrivacyConfig& privacy,
                                   const api::HttpRequest& req, const api::Identity& who);

// GET /api/v1/fairshare for `who`.
api::HttpResponse ServeShareReport(ControllerService& service, const PrivacyConfig& privacy,
                                   const api::Identity& who);

// GET /api/v1/priorities/weights.
api::HttpResponse ServePriorityWeights(ControllerService& service);

}  // namespace corral::controller
