#include "api/access.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace corral::api {
namespace {

// A buffer for the reentrant passwd/group calls, grown on ERANGE up to 1 MiB.
template <typename Call>
bool WithBuffer(Call call) {
  long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::string buf(hint > 0 ? static_cast<size_t>(hint) : 16384, '\0');
  while (true) {
    int rc = call(buf.data(), buf.size());
    if (rc == ERANGE && buf.size() < (1u << 20)) {
      buf.resize(buf.size() * 2);
      continue;
    }
    return rc == 0;
  }
}

class SystemDirectory final : public UserDirectory {
 public:
  std::optional<std::string> UserName(uint32_t uid) const override {
    passwd pw{};
    passwd* result = nullptr;
    std::optional<std::string> name;
    WithBuffer([&](char* buf, size_t size) {
      int rc = getpwuid_r(uid, &pw, buf, size, &result);
      if (rc == 0 && result != nullptr && pw.pw_name != nullptr && pw.pw_name[0] != '\0') {
        name = pw.pw_name;
      }
      return rc;
    });
    return name;
  }

  std::vector<std::string> GroupNames(const std::string& user, uint32_t gid) const override {
    std::vector<gid_t> gids(64);
    int n = static_cast<int>(gids.size());
    if (getgrouplist(user.c_str(), gid, gids.data(), &n) < 0) {
      gids.resize(static_cast<size_t>(n));
      if (getgrouplist(user.c_str(), gid, gids.data(), &n) < 0) n = 0;
    }
    gids.resize(static_cast<size_t>(std::max(n, 0)));
    if (gids.empty()) gids.push_back(gid);
    std::vector<std::string> names;
    for (gid_t g : gids) {
      group gr{};
      group* result = nullptr;
      WithBuffer([&](char* buf, size_t size) {
        int rc = getgrgid_r(g, &gr, buf, size, &result);
        if (rc == 0 && result != nullptr && gr.gr_name != nullptr) names.push_back(gr.gr_name);
        return rc;
      });
    }
    return names;
  }
};

bool Listed(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

bool AnyListed(const std::vector<std::string>& list, const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return Listed(list, n); });
}

// One row of the header's table.
struct Rule {
  Action action;
  std::string_view name;
  bool user_kinds;    // false: users, operators and admins are refused
  bool owner_only;    // users: own jobs only
  bool operator_any;  // operators: any job (else own, or refused when !operator_ok)
  bool operator_ok;   // operators may do it at all
  bool admin_ok;
  bool job_ok;         // a job principal may (its job, or anything for reads)
  bool job_own_user;   // a job principal: its user's jobs (reads) instead of its job
  bool job_any;        // a job principal: any target (public reads)
  bool controller_ok;  // the controller (not bound to a node) may
  bool metrics_ok;     // the metrics principal (a scraper) may
};

// clang-format off
constexpr Rule kRules[] = {
  //  action                     name                 users  owner  op-any op-ok  admin  job    j-user j-any  ctrl   metrics
  {Action::kReadCluster,       "read-cluster",       true,  false, true,  true,  true,  true,  false, true,  true,  false},
  {Action::kReadMetrics,       "read-metrics",       false, false, true,  true,  true,  false, false, false, true,  true},
  {Action::kReadJob,           "read-job",           true,  false, true,  true,  true,  true,  false, true,  true,  false},
  {Action::kReadJobPrivate,    "read-job-private",   true,  true,  true,  true,  true,  true,  true,  false, true,  false},
  {Action::kSubmitJob,         "submit-job",         true,  false, true,  true,  true,  true,  false, true,  false, false},
  {Action::kCancelJob,         "cancel-job",         true,  true,  true,  true,  true,  true,  false, false, true,  false},
  {Action::kHoldJob,           "hold-job",           true,  true,  true,  true,  true,  false, false, false, true,  false},
  {Action::kReleaseJob,        "release-job",        true,  true,  true,  true,  true,  false, false, false, true,  false},
  {Action::kRequeueJob,        "requeue-job",        true,  true,  true,  true,  true,  true,  false, false, true,  false},
  {Action::kUpdateJob,         "update-job",         true,  true,  false, true,  true,  false, false, false, true,  false},
  {Action::kCreateStep,        "create-step",        true,  true,  false, true,  true,  true,  false, false, true,  false},
  {Action::kCheckpointDone,    "checkpoint-done",    true,  true,  false, true,  true,  true,  false, false, true,  false},
  {Action::kDrainNode,         "drain-node",         false, false, true,  true,  true,  false, false, false, true,  false},
  {Action::kResumeNode,        "resume-node",        false, false, true,  true,  true,  false, false, false, true,  false},
  {Action::kDrainGpu,          "drain-gpu",          false, false, true,  true,  true,  false, false, false, true,  false},
  {Action::kResumeGpu,         "resume-gpu",         false, false, true,  true,  true,  false, false, false, true,  false},
  {Action::kConfigure,         "configure",          false, false, false, false, true,  false, false, false, false, false},
  {Action::kManageIdentities,  "manage-identities",  false, false, false, false, true,  false, false, false, false, false},
  {Action::kNodeRegister,      "node-register",      false, false, false, false, false, false, false, false, false, false},
  {Action::kNodeHeartbeat,     "node-heartbeat",     false, false, false, false, false, false, false, false, false, false},
  {Action::kNodeEvent,         "node-event",         false, false, false, false, false, false, false, false, false, false},
  {Action::kAgentCall,         "agent-call",         false, false, false, false, false, false, false, false, false, false},
  {Action::kReadAudit,         "read-audit",         false, false, true,  true,  true,  false, false, false, false, false},
  {Action::kManageAccounts,    "manage-accounts",    false, false, false, false, true,  false, false, false, false, false},
  {Action::kSuspendJob,        "suspend-job",        false, false, true,  true,  true,  false, false, false, false, false},
  {Action::kTopJob,            "top-job",            false, false, true,  true,  true,  false, false, false, false, false},
};
// clang-format on

const Rule& RuleFor(Action a) {
  for (const Rule& r : kRules) {
    if (r.action == a) return r;
  }
  return kRules[0];  // unreachable: every action has a row (checked by the tests)
}

bool IsNodeAction(Action a) {
  return a == Action::kNodeRegister || a == Action::kNodeHeartbeat || a == Action::kNodeEvent;
}

tl::unexpected<Error> Denied(const Identity& who, const Rule& rule, const Resource& target,
                             std::string_view why) {
  std::string subject = std::string(RoleName(who.role)) + " " + who.user;
  if (who.role == Role::kJob) subject = "the credential of job " + who.job.ToString();
  if (who.role == Role::kAgent) subject = "the agent of node " + who.node;
  std::string object;
  if (target.job.value != 0) object = " job " + target.job.ToString();
  if (!target.node.empty() &&
      (IsNodeAction(rule.action) || rule.action == Action::kAgentCall ||
       rule.action == Action::kDrainNode || rule.action == Action::kResumeNode)) {
    object = " node " + target.node;
  }
  return MakeError(ErrorCode::kPermissionDenied, subject + " may not " + std::string(rule.name) +
                                                     object + ": " + std::string(why));
}

}  // namespace

const UserDirectory& SystemUserDirectory() {
  static const SystemDirectory directory;
  return directory;
}

RoleResolver::RoleResolver(RoleConfig config, const UserDirectory& directory)
    : config_(std::move(config)), directory_(&directory) {}

bool RoleResolver::IsAdmin(const std::string& user, uint32_t uid, uint32_t gid) const {
  if (uid == 0 || Listed(config_.admin_users, user)) return true;
  if (config_.admin_groups.empty()) return false;
  return AnyListed(config_.admin_groups, directory_->GroupNames(user, gid));
}

bool RoleResolver::IsOperator(const std::string& user, uint32_t, uint32_t gid) const {
  if (Listed(config_.operator_users, user)) return true;
  if (config_.operator_groups.empty()) return false;
  return AnyListed(config_.operator_groups, directory_->GroupNames(user, gid));
}

Role RoleResolver::RoleOf(const std::string& user, uint32_t uid, uint32_t gid) const {
  if (uid == 0 || Listed(config_.admin_users, user)) return Role::kAdmin;
  if (Listed(config_.operator_users, user)) return Role::kOperator;
  if (config_.admin_groups.empty() && config_.operator_groups.empty()) return Role::kUser;
  std::vector<std::string> groups = directory_->GroupNames(user, gid);  // one lookup
  if (AnyListed(config_.admin_groups, groups)) return Role::kAdmin;
  if (AnyListed(config_.operator_groups, groups)) return Role::kOperator;
  return Role::kUser;
}

std::string_view ActionName(Action a) { return RuleFor(a).name; }

namespace {

// What an account coordinator may do on her accounts' jobs and records (issue 16 item 2).
bool CoordinatorAction(Action a) {
  return a == Action::kCancelJob || a == Action::kHoldJob || a == Action::kReleaseJob ||
         a == Action::kRequeueJob || a == Action::kUpdateJob || a == Action::kManageAccounts;
}

}  // namespace

Status Authorize(const Identity& who, Action action, const Resource& target) {
  const Rule& rule = RuleFor(action);
  bool own = !who.user.empty() && who.user == target.job_user;
  if (target.coordinator && CoordinatorAction(action) &&
      (who.role == Role::kUser || who.role == Role::kOperator)) {
    return {};
  }
  switch (who.role) {
    case Role::kUser:
      if (!rule.user_kinds) return Denied(who, rule, target, "not a user's action");
      if (rule.owner_only && !own) return Denied(who, rule, target, "not the job's user");
      return {};
    case Role::kOperator:
      if (!rule.operator_ok) return Denied(who, rule, target, "operators may not");
      if (!rule.operator_any && !own) return Denied(who, rule, target, "not the job's user");
      return {};
    case Role::kAdmin:
      if (!rule.admin_ok) return Denied(who, rule, target, "not an admin's action");
      return {};
    case Role::kJob: {
      if (!rule.job_ok) return Denied(who, rule, target, "a job credential acts on its job only");
      if (rule.job_any) return {};
      if (rule.job_own_user) {
        if (!own) return Denied(who, rule, target, "not the job's user");
        return {};
      }
      bool same_run = target.generation.value == 0 || target.generation == who.generation;
      if (target.job != who.job || !same_run) {
        return Denied(who, rule, target,
                      "the credential is for job " + who.job.ToString() + " only");
      }
      return {};
    }
    case Role::kAgent:
      if (!IsNodeAction(action))
        return Denied(who, rule, target, "agents report for their node only");
      if (who.node.empty() || who.node != target.node) {
        return Denied(who, rule, target, "it is node " + who.node + "'s agent");
      }
      return {};
    case Role::kController:
      // At an agent: its calls, and the node's metrics (as a scraper may read them).
      if (action == Action::kAgentCall || (action == Action::kReadMetrics && !who.node.empty())) {
        if (who.node.empty() || who.node != target.node) {
          return Denied(who, rule, target, "the credential is for node " + who.node + " only");
        }
        return {};
      }
      // A controller identity bound to a node is a call to that agent, nothing else.
      if (!who.node.empty() || !rule.controller_ok) {
        return Denied(who, rule, target, "not the controller's action");
      }
      return {};
    case Role::kMetrics:
      if (!rule.metrics_ok) {
        return Denied(who, rule, target, "a metrics credential reads /metrics only");
      }
      return {};
  }
  return Denied(who, rule, target, "unknown role");
}

}  // namespace corral::api
