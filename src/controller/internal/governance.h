// Governance: the account tree, the users with their associations (user x account) and the
// QOS as data (docs/governance.md): kept in the store (`store::GovernanceRecord`, each in its
// API JSON form), changed live through the API, and turned into the scheduler's configuration
// (`sched::SchedulerConfig::accounts`, `users`, `qos`) after every change.
//
// Where the records come from (`Recover`):
//  1. A store that has held governance records (meta "governance.seeded") is authoritative:
//     its records are used, and the file's `[[account]]`, `[[user]]`, `[[qos]]` sections are
//     only compared with them (`Recovered::differs` names the first difference, for a warning).
//  2. Otherwise (the first start on this store) the file's sections are the records: written
//     to the store with the marker, in the first batch. Slurm sites move from slurm.conf-era
//     files to slurmdbd the same way.
// Every user named in an account's `users` has a user record (shares 1, no limits, when the
// file gives none).
//
// A change (`PutAccount`, `DeleteUser`, ...) is checked as a whole before anything changes:
// the request's own fields (names, absurd values), references (unknown parent, account or
// QOS: kInvalidArgument naming them), loops in the tree, and then the whole configuration
// through `sched::ValidateSchedulerConfig`. On success the records are replaced, their store
// writes appended to `Outputs`, and the new configuration returned for the caller to install
// (`ControllerState::Reconfigure`). On error nothing changes.
//
// Authorisation is the caller's (the route's action); what an account coordinator may change is
// decided here (`CoordinatorMay...`, below), from the stored tree.
//
// Not thread-safe; state thread only.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "api/governance_codec.h"
#include "controller/internal/outputs.h"
#include "core/governance.h"
#include "core/result.h"
#include "sched/config.h"
#include "store/store.h"

namespace corral::controller::internal {

// What holds a record: the active (pending or running) jobs that name it.
struct ActiveUse {
  std::function<uint32_t(const std::string& account)> account_jobs;
  std::function<uint32_t(const std::string& user)> user_jobs;
  std::function<uint32_t(const std::string& qos)> qos_jobs;
};

class Governance {
 public:
  explicit Governance(Outputs& out) : out_(out) {}
  Governance(const Governance&) = delete;
  Governance& operator=(const Governance&) = delete;

  // Takes the file's sections as the records, writing nothing (what a controller that is
  // never recovered, as in unit tests, works with).
  void Start(const sched::SchedulerConfig& file);

  struct Recovered {
    sched::SchedulerConfig config;  // `file` with the records' accounts, users and QOS
    bool seeded = false;            // the file's sections were written to the store
    std::string differs;            // "" or the first way the file differs from the store
  };
  // Steps 1-2 of the header. Returns kInternal naming a stored record that cannot be decoded,
  // kInvalidArgument when the stored records do not make a valid configuration with `file`.
  Result<Recovered> Recover(const sched::SchedulerConfig& file,
                            const std::vector<store::GovernanceRecord>& records,
                            const std::map<std::string, std::string>& meta);

  // The records, by name.
  std::vector<AccountConfig> Accounts() const;
  std::vector<api::UserInfo> Users() const;
  std::vector<QosConfig> Qos() const;
  // Returns kNotFound naming the record.
  Result<AccountConfig> Account(const std::string& name) const;
  Result<api::UserInfo> User(const std::string& name) const;
  Result<QosConfig> OneQos(const std::string& name) const;
  // `account` and its ancestors, from it up (empty when it does not exist).
  std::vector<std::string> AccountChain(const std::string& account) const;

  // Creates (`create`: kAlreadyExists when it exists) or replaces (kNotFound when it does
  // not) a record; `base` is the configuration in force, whose other sections are kept.
  // An account's `users` are kept as they are on replace (users are changed through the user
  // routes); a user's `accounts` are its associations: it is added to and removed from those
  // accounts' `users`. Returns the new configuration, or kInvalidArgument naming the field.
  Result<sched::SchedulerConfig> PutAccount(const sched::SchedulerConfig& base, AccountConfig a,
                                            bool create);
  Result<sched::SchedulerConfig> PutUser(const sched::SchedulerConfig& base, api::UserInfo u,
                                         bool create);
  Result<sched::SchedulerConfig> PutQos(const sched::SchedulerConfig& base, QosConfig q,
                                        bool create);
  // Deletes a record. Returns kNotFound, or kFailedPrecondition naming what still uses it: an
  // account's sub-accounts, users or active jobs; a user's active jobs; a QOS's active jobs,
  // or the QOS being `[scheduler] default_qos` (references from accounts or other QOS are
  // kInvalidArgument from the validation).
  Result<sched::SchedulerConfig> DeleteAccount(const sched::SchedulerConfig& base,
                                               const std::string& name, const ActiveUse& use);
  Result<sched::SchedulerConfig> DeleteUser(const sched::SchedulerConfig& base,
                                            const std::string& name, const ActiveUse& use);
  Result<sched::SchedulerConfig> DeleteQos(const sched::SchedulerConfig& base,
                                           const std::string& name, const ActiveUse& use);

  // --- Account coordinators (issue 16 item 2; governance_coordinators.cc) ---
  // What Slurm 22.05's slurmdbd lets a coordinator do (checked against it; docs/governance.md,
  // "Coordinators"). A user coordinates an account when it is a direct coordinator of it or of
  // one of its ancestors.
  bool Coordinates(const std::string& user, const std::string& account) const;
  // The accounts `user` coordinates (directly or through an ancestor), sorted.
  std::vector<std::string> CoordinatedAccounts(const std::string& user) const;
  // Whether coordinator `user` may make the change; each returns false for an admin's change.
  //  - create an account: under an account she coordinates (never at the root);
  //  - replace an account: one strictly below an account she coordinates (her own account's
  //    limits are her parent's coordinator's to set, as in Slurm), and its new parent too;
  //  - delete an account: never (Slurm refuses coordinators);
  //  - create or replace a user: every association added or removed is in an account she
  //    coordinates, and when the user's own settings (shares, limits, default account)
  //    change, every account the user has (before and after) is one she coordinates; the
  //    limits of one association (`association_limits`) change with its account's;
  //  - delete a user: every account of the user is one she coordinates (at least one);
  //  - add or remove coordinators of an account: she coordinates it.
  bool CoordinatorMayPutAccount(const std::string& user, const AccountConfig& a, bool create) const;
  bool CoordinatorMayPutUser(const std::string& user, const api::UserInfo& u, bool create) const;
  bool CoordinatorMayDeleteUser(const std::string& user, const std::string& name) const;
  // Adds `users` (each must have a user record) as direct coordinators of `account`, or
  // removes `user` from its direct coordinators. kNotFound for a missing account, kInvalidArgument
  // naming an unknown user or a user who is not a direct coordinator of it (one who coordinates
  // it through an ancestor is removed there).
  Result<sched::SchedulerConfig> AddCoordinators(const sched::SchedulerConfig& base,
                                                 const std::string& account,
                                                 const std::vector<std::string>& users);
  Result<sched::SchedulerConfig> RemoveCoordinator(const sched::SchedulerConfig& base,
                                                   const std::string& account,
                                                   const std::string& user);
  // --- end coordinators ---

 private:
  using AccountMap = std::map<std::string, AccountConfig>;
  using UserMap = std::map<std::string, UserConfig>;
  using QosMap = std::map<std::string, QosConfig>;

  // `base` with the sections of these records (accounts parents first). Returns
  // kInvalidArgument for a loop in the tree or what `ValidateSchedulerConfig` finds.
  static Result<sched::SchedulerConfig> Build(const sched::SchedulerConfig& base,
                                              const AccountMap& accounts, const UserMap& users,
                                              const QosMap& qos);
  // Builds with the candidate records; on success installs them and writes the records that
  // differ from the current ones (and deletes those that went).
  Result<sched::SchedulerConfig> Commit(const sched::SchedulerConfig& base, AccountMap accounts,
                                        UserMap users, QosMap qos);

  Outputs& out_;
  AccountMap accounts_;
  UserMap users_;
  QosMap qos_;
};

}  // namespace corral::controller::internal
