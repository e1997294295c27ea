// Who may do what: the roles of Unix users (from configuration) and the decision for every
// action a principal can ask for (DESIGN.md, "Trust"; issue 15 items 3, 4 and 9).
//
// Roles of users. The configuration lists admin and operator users and Unix groups;
// `RoleResolver::RoleOf` decides when a request is authenticated:
//  1. uid 0, a listed admin user or a member of a listed admin group: kAdmin;
//  2. a listed operator user or a member of a listed operator group: kOperator;
//  3. anyone else: kUser.
// A credential never decides this (a token that says "admin" is a user token), so that taking
// someone off a list takes effect at their next request. Groups are looked up (getgrouplist)
// only when a group list is configured and the user is not listed by name.
//
// What each principal may do (`Authorize`); "own" is a job whose user is the caller's user,
// "its job" the job (and run) a job credential was minted for:
//
//   action                          user  operator  admin  job       agent     controller  metrics
//   kReadCluster, kReadJob          yes   yes       yes    yes       -         yes         -
//   kReadMetrics                    -     yes       yes    -         -         yes (1)     yes
//   kReadJobPrivate                 own   yes       yes    own       -         yes         -
//   kSubmitJob                      yes   yes       yes    its user  -         -           -
//   kCancelJob, kRequeueJob         own   yes       yes    its job   -         yes         -
//   kHoldJob, kReleaseJob           own   yes       yes    -         -         yes         -
//   kUpdateJob                      own   own       yes    -         -         yes         -
//   kCreateStep, kCheckpointDone    own   own       yes    its job   -         yes         -
//   kDrainNode .. kResumeGpu        -     yes       yes    -         -         yes         -
//   kConfigure, kManageIdentities   -     -         yes    -         -         -           -
//   kNodeRegister .. kNodeEvent     -     -         -      -         its node  -           -
//   kAgentCall                      -     -         -      -         -         its node    -
//   kReadAudit                      -     yes       yes    -         -         -           -
//   kManageAccounts                 -     -         yes    -         -         -           -
//   kSuspendJob, kTopJob            -     yes       yes    -         -         -           -
//
// Account coordinators (issue 16 item 2; docs/governance.md, "Coordinators"): a user or an
// operator who coordinates the account a job or a change is about (`Resource::coordinator`,
// decided by the controller from the verified user and the stored account tree, never from
// the request) may also kCancelJob, kHoldJob, kReleaseJob, kRequeueJob and kUpdateJob that job
// and kManageAccounts that account, as Slurm lets a coordinator do.
//
// (1) The controller's call for a node also reads that node's metrics at its agent.
// The metrics principal (a scraper: the scrape token, or a token of role "metrics") reads
// metrics and nothing else.
//
// An agent is never an admin and acts for its own node only; the controller's calls to an
// agent are valid for the node named in its credential only.
//
// Thread-safe: `RoleResolver` is immutable; `Authorize` is a pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/identity.h"
#include "core/result.h"

namespace corral::api {

// The passwd and group databases. Thread-safe.
class UserDirectory {
 public:
  virtual ~UserDirectory() = default;
  // The name of `uid` in the passwd database, or nullopt when it has no entry.
  virtual std::optional<std::string> UserName(uint32_t uid) const = 0;
  // The names of the groups `user` is a member of, its primary group `gid` included.
  virtual std::vector<std::string> GroupNames(const std::string& user, uint32_t gid) const = 0;
};

// The host's databases (getpwuid_r, getgrouplist, getgrgid_r; NSS, so LDAP/SSSD too).
const UserDirectory& SystemUserDirectory();

struct RoleConfig {
  std::vector<std::string> admin_users;
  std::vector<std::string> admin_groups;
  std::vector<std::string> operator_users;
  std::vector<std::string> operator_groups;
  bool operator==(const RoleConfig&) const = default;
};

// Decides the role of a Unix user. Thread-safe; `directory` must outlive it.
class RoleResolver {
 public:
  explicit RoleResolver(RoleConfig config = {},
                        const UserDirectory& directory = SystemUserDirectory());
  // Steps 1-3 of the header.
  Role RoleOf(const std::string& user, uint32_t uid, uint32_t gid) const;
  // Step 1 alone.
  bool IsAdmin(const std::string& user, uint32_t uid, uint32_t gid) const;
  // Step 2 alone (true only for listed operators: an admin is not an operator unless listed).
  bool IsOperator(const std::string& user, uint32_t uid, uint32_t gid) const;

  const RoleConfig& config() const { return config_; }

 private:
  RoleConfig config_;
  const UserDirectory* directory_;
};

enum class Action {
  kReadCluster,     // nodes, partitions, the queue as privacy allows, GPU-waste reports
  kReadMetrics,     // the controller's /metrics and /metrics/targets
  kReadJob,         // one job's metadata and GPU statistics, as privacy allows
  kReadJobPrivate,  // a job's script, environment, arguments and step argv
  kSubmitJob,
  kCancelJob,
  kHoldJob,
  kReleaseJob,
  kRequeueJob,
  kUpdateJob,   // change a job's limits, name, dependencies...
  kCreateStep,  // start a step in the job's allocation, signal its steps
  kCheckpointDone,
  kDrainNode,
  kResumeNode,
  kDrainGpu,
  kResumeGpu,
  kConfigure,         // partitions, QOS, accounts, reconfiguration
  kManageIdentities,  // tokens, keys, certificates, users
  kNodeRegister,      // an agent's registration and address
  kNodeHeartbeat,
  kNodeEvent,  // an agent's job and task events
  kAgentCall,  // the controller's launch/cancel/signal/... to an agent
  kReadAudit,  // the audit log and its verification (docs/governance.md)
  // Accounts and users (their associations and limits; docs/governance.md). Admins, and the
  // account coordinators of the account concerned (`Resource::coordinator`), decided against
  // the account tree on the state thread.
  kManageAccounts,
  kSuspendJob,  // stop and continue a running job's processes (`scontrol suspend|resume`)
  kTopJob,      // move a pending job ahead of its user's like jobs (`scontrol top`)
};
std::string_view ActionName(Action a);  // "read-cluster", "cancel-job", ...

// What an action is applied to. Fields that do not apply to the action are ignored.
struct Resource {
  JobId job{};              // job actions: the job
  std::string job_user;     // job actions: its user
  Generation generation{};  // job actions: its current run, or 0 when unknown
  std::string node;         // node actions and agent calls: the node
  // The caller coordinates the account the action is about (the job's, or the account being
  // changed): set only by the controller, from the stored account tree (issue 16 item 2).
  bool coordinator = false;
};

// The table of the header. Returns kPermissionDenied naming the principal and the action.
Status Authorize(const Identity& who, Action action, const Resource& target);

}  // namespace corral::api
