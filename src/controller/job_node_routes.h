// The handlers that ask a running job's agents on the user's behalf and wait for their
// answers (docs/slurm.md, "sstat" and "sbcast"), rows of the route table (controller/routes.cc)
// registered by `RegisterRoutes`:
//   GET  /api/v1/jobs/{id}/stats   `kReadJobPrivate`: the job's user (its job credential too),
//                                  operators and admins, as Slurm lets only the owner and
//                                  SlurmUser read a step's usage. Every node's answer to
//                                  GET /api/v1/stats at its agent, within a deadline (a node
//                                  that does not answer in time is listed with its error).
//   POST /api/v1/jobs/{id}/bcast   `kCreateStep`: the job's user (its job credential too) and
//                                  admins. The body is the file (at most api::kMaxBcastBytes),
//                                  the query its path and options (api/job_stats.h); each node's
//                                  agent writes it as the job's user (uid and gid from the job's
//                                  record, never from the request). 200 when every node wrote
//                                  it, else the first node's error, naming the node.
// The job is authorized on the state thread (`Controller::JobRunNodes`); the agents are called
// from the handler's thread, in parallel, with the controller's credential for each node.
//
// Thread-safety: the handlers are thread-safe.
#pragma once

#include "api/http.h"
#include "api/identity.h"
#include "controller/service.h"
#include "controller/service_routes.h"
#include "core/ids.h"

namespace corral::controller {

api::HttpResponse ServeJobStats(ControllerService& service, const RouteContext& ctx, JobId id,
                                const api::Identity& who);
api::HttpResponse ServeBcast(ControllerService& service, const RouteContext& ctx, JobId id,
                             const api::HttpRequest& req, const api::Identity& who);

}  // namespace corral::controller
