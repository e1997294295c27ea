#include "controller/routes.h"

namespace corral::controller {

namespace {

using api::Action;
using enum RouteScope;

// clang-format off
constexpr RouteSpec kRoutes[] = {
  {"GET",    "/api/v1/health",                         Action::kReadCluster,    kAnonymous, "liveness"},
  {"POST",   "/api/v1/jobs",                           Action::kSubmitJob,      kCluster,   "submit a job or an array"},
  {"GET",    "/api/v1/jobs",                           Action::kReadCluster,    kCluster,   "list jobs (as privacy allows)"},
  {"GET",    "/api/v1/jobs/{id}",                      Action::kReadJob,        kJob,       "one job (as privacy allows)"},
  {"GET",    "/api/v1/jobs/{id}/wait",                 Action::kReadJob,        kJob,       "long poll until the job ends"},
  {"POST",   "/api/v1/jobs/{id}/cancel",               Action::kCancelJob,      kJob,       "cancel a job"},
  {"DELETE", "/api/v1/jobs/{id}",                      Action::kCancelJob,      kJob,       "cancel a job"},
  {"POST",   "/api/v1/jobs/{id}/requeue",              Action::kRequeueJob,     kJob,       "requeue a job"},
  {"POST",   "/api/v1/jobs/{id}/hold",                 Action::kHoldJob,        kJob,       "hold a pending job"},
  {"POST",   "/api/v1/jobs/{id}/release",              Action::kReleaseJob,     kJob,       "release a held job"},
  {"POST",   "/api/v1/jobs/{id}/signal",               Action::kCancelJob,      kJob,       "signal a running job"},
  {"POST",   "/api/v1/jobs/{id}/time_limit",           Action::kUpdateJob,      kJob,       "change a job's time limit"},
  {"POST",   "/api/v1/jobs/{id}/steps",                Action::kCreateStep,     kJob,       "start a step"},
  {"GET",    "/api/v1/jobs/{id}/steps",                Action::kReadJob,        kJob,       "a job's steps (argv as privacy allows)"},
  {"GET",    "/api/v1/jobs/{id}/steps/{step}",         Action::kReadJob,        kJob,       "one step"},
  {"GET",    "/api/v1/jobs/{id}/steps/{step}/wait",    Action::kReadJob,        kJob,       "long poll until the step ends"},
  {"POST",   "/api/v1/jobs/{id}/steps/{step}/cancel",  Action::kCreateStep,     kJob,       "cancel a step"},
  {"POST",   "/api/v1/jobs/{id}/checkpoint",           Action::kCheckpointDone, kJob,       "acknowledge a checkpoint"},
  {"GET",    "/api/v1/jobs/{id}/why",                  Action::kReadJob,        kJob,       "what holds a job back"},
  {"GET",    "/api/v1/jobs/{id}/gpustats",             Action::kReadJob,        kJob,       "a job's GPU statistics (as privacy allows)"},
  {"GET",    "/api/v1/jobs/{id}/timeline",             Action::kReadJob,        kJob,       "a job's path: submission, start and end marks"},
  {"GET",    "/api/v1/nodes",                          Action::kReadCluster,    kCluster,   "list nodes"},
  {"GET",    "/api/v1/nodes/{name}",                   Action::kReadCluster,    kCluster,   "one node"},
  {"POST",   "/api/v1/nodes/{name}/drain",             Action::kDrainNode,      kCluster,   "drain a node"},
  {"POST",   "/api/v1/nodes/{name}/resume",            Action::kResumeNode,     kCluster,   "resume a node"},
  {"POST",   "/api/v1/nodes/{name}/gpus/{index}/resume", Action::kResumeGpu,    kCluster,   "return a failed GPU to service"},
  {"POST",   "/api/v1/nodes/{name}/inject",            Action::kConfigure,      kCluster,   "inject a simulated GPU fault"},
  {"GET",    "/api/v1/priorities",                     Action::kReadCluster,    kCluster,   "pending jobs' priorities (as privacy allows)"},
  {"GET",    "/api/v1/partitions",                     Action::kReadCluster,    kCluster,   "list partitions"},
  {"GET",    "/api/v1/reports/waste",                  Action::kReadCluster,    kCluster,   "GPU-waste report (every user's for operators and admins)"},
  {"POST",   "/api/v1/agents/register",                Action::kNodeRegister,   kAgentNode, "an agent registers its node"},
  {"POST",   "/api/v1/agents/heartbeat",               Action::kNodeHeartbeat,  kAgentNode, "an agent's heartbeat"},
  {"POST",   "/api/v1/agents/events",                  Action::kNodeEvent,      kAgentNode, "an agent's job and task events"},
  {"GET",    "/metrics",                               Action::kReadMetrics,    kCluster,   "Prometheus metrics of the cluster, queue and scheduler"},
  {"GET",    "/metrics/targets",                       Action::kReadMetrics,    kCluster,   "Prometheus HTTP service discovery of the agents"},
  {"GET",    "/api/v1/audit",                          Action::kReadAudit,      kCluster,   "the audit log (admins and operators)"},
  {"GET",    "/api/v1/audit/verify",                   Action::kReadAudit,      kCluster,   "verify the audit log's hash chain"},
  {"GET",    "/api/v1/reports/usage",                  Action::kReadCluster,    kCluster,   "usage report: CPU/GPU-hours and energy by account, user, partition, GPU model (as privacy allows)"},
  {"GET",    "/api/v1/fairshare",                      Action::kReadCluster,    kCluster,   "the fair-share tree, as sshare shows it (as privacy allows)"},
  {"GET",    "/api/v1/priorities/weights",             Action::kReadCluster,    kCluster,   "the multifactor priority weights (sprio -w)"},
  // Accounts, users and QOS as data (governance_routes.h, docs/governance.md).
  {"GET",    "/api/v1/accounts",                       Action::kReadCluster,    kCluster,   "list accounts"},
  {"GET",    "/api/v1/accounts/{name}",                Action::kReadCluster,    kCluster,   "one account"},
  {"POST",   "/api/v1/accounts",                       Action::kManageAccounts, kAccount,   "create an account"},
  {"PUT",    "/api/v1/accounts/{name}",                Action::kManageAccounts, kAccount,   "replace an account's settings and limits"},
  {"DELETE", "/api/v1/accounts/{name}",                Action::kManageAccounts, kAccount,   "delete an account"},
  {"GET",    "/api/v1/users",                          Action::kReadCluster,    kCluster,   "list users and their associations"},
  {"GET",    "/api/v1/users/{name}",                   Action::kReadCluster,    kCluster,   "one user"},
  {"POST",   "/api/v1/users",                          Action::kManageAccounts, kAccount,   "create a user with its associations"},
  {"PUT",    "/api/v1/users/{name}",                   Action::kManageAccounts, kAccount,   "replace a user's settings, limits and associations"},
  {"DELETE", "/api/v1/users/{name}",                   Action::kManageAccounts, kAccount,   "delete a user and its associations"},
  {"GET",    "/api/v1/qos",                            Action::kReadCluster,    kCluster,   "list QOS"},
  {"GET",    "/api/v1/qos/{name}",                     Action::kReadCluster,    kCluster,   "one QOS"},
  {"POST",   "/api/v1/qos",                            Action::kConfigure,      kCluster,   "create a QOS"},
  {"PUT",    "/api/v1/qos/{name}",                     Action::kConfigure,      kCluster,   "replace a QOS"},
  {"DELETE", "/api/v1/qos/{name}",                     Action::kConfigure,      kCluster,   "delete a QOS"},
  {"GET",    "/ui/{file*}",                            Action::kReadCluster,    kAnonymous, "the web dashboard's static files"},
  // `scontrol suspend|resume` (operators and admins, as Slurm) and `sdiag`.
  {"POST",   "/api/v1/jobs/{id}/suspend",              Action::kSuspendJob,     kJob,       "suspend a running job (stop its processes)"},
  {"POST",   "/api/v1/jobs/{id}/resume",               Action::kSuspendJob,     kJob,       "resume a suspended job"},
  {"POST",   "/api/v1/jobs/{id}/top",                  Action::kTopJob,         kJob,       "move a pending job ahead of its user's like jobs"},
  {"GET",    "/api/v1/diag",                           Action::kReadMetrics,    kCluster,   "scheduler and request statistics (sdiag)"},
  // `sstat` and `sbcast`: the job's agents asked on the caller's behalf (job_node_routes.h).
  {"GET",    "/api/v1/jobs/{id}/stats",                Action::kReadJobPrivate, kJob,       "live usage of a running job's steps (sstat)"},
  {"POST",   "/api/v1/jobs/{id}/bcast",                Action::kCreateStep,     kJob,       "copy a file to each node of a running job (sbcast)"},
  // Budgets' spend (budget_routes.h; issue 16 item 5); budgets are set on their accounts.
  {"GET",    "/api/v1/budgets",                        Action::kReadCluster,    kCluster,   "every account budget with its spend this period"},
  // Probes and high availability (issue 11; docs/operations.md, "High availability").
  {"GET",    "/livez",                                 Action::kReadCluster,    kAnonymous, "liveness probe: the process serves HTTP"},
  {"GET",    "/readyz",                                Action::kReadCluster,    kAnonymous, "readiness probe: this controller leads and serves the API"},
  // Account coordinators (issue 16 item 2): admins and the coordinators of the account.
  {"POST",   "/api/v1/accounts/{name}/coordinators",   Action::kManageAccounts, kAccount,   "add coordinators to an account"},
  {"DELETE", "/api/v1/accounts/{name}/coordinators/{user}", Action::kManageAccounts, kAccount, "remove a coordinator from an account"},
};
// clang-format on

}  // namespace

std::span<const RouteSpec> ControllerRoutes() { return kRoutes; }

const RouteSpec* FindControllerRoute(std::string_view method, std::string_view pattern) {
  for (const RouteSpec& r : kRoutes) {
    if (r.method == method && r.pattern == pattern) return &r;
  }
  return nullptr;
}

}  // namespace corral::controller
