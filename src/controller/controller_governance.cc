// Controller: accounts, users and QOS as data, changed live (see controller.h and
// internal/governance.h).
#include "controller/controller.h"
#include "controller/internal/controller_state.h"
#include "core/log.h"

namespace corral::controller {
namespace {

// The active jobs (pending or running) that use each account, user and QOS.
internal::ActiveUse ActiveUseOf(const internal::ControllerState& s) {
  auto count = [&s](auto pred) {
    uint32_t n = 0;
    for (const auto* ids : {&s.jobs.pending(), &s.jobs.running()}) {
      for (JobId id : *ids) {
        const internal::JobEntry* e = s.jobs.Find(id);
        if (e != nullptr && pred(e->job)) ++n;
      }
    }
    return n;
  };
  return {
      .account_jobs =
          [count](const std::string& a) {
            return count([&](const Job& j) { return j.spec.account == a; });
          },
      .user_jobs =
          [count](const std::string& u) {
            return count([&](const Job& j) { return j.spec.user == u; });
          },
      .qos_jobs =
          [count, &s](const std::string& q) {
            return count([&](const Job& j) {
              const std::string& qos = j.spec.qos.empty()
                                           ? sched::DefaultQos(s.sched_config, j.spec.account)
                                           : j.spec.qos;
              return qos == q;
            });
          },
  };
}

// Authorizes `who` (`coordinator`: a coordinator may make this change, decided by the
// governance from the stored tree), then makes the change (`change`: the governance's) and
// installs the configuration it gives. Returns the first error of the two.
template <typename Change>
Status ChangeGovernance(internal::ControllerState& s, const api::Identity& who, api::Action action,
                        const std::string& what, Change change, bool coordinator = false) {
  Status allowed = api::Authorize(who, action, {.coordinator = coordinator});
  if (!allowed && action == api::Action::kManageAccounts &&
      (who.role == api::Role::kUser || who.role == api::Role::kOperator)) {
    // Say why in a coordinator's terms (issue 16 item 2).
    std::vector<std::string> mine = s.governance.CoordinatedAccounts(who.user);
    std::string list;
    for (const std::string& a : mine) list += (list.empty() ? "\"" : ", \"") + a + "\"";
    return MakeError(ErrorCode::kPermissionDenied,
                     std::string(api::RoleName(who.role)) + " " + who.user + " may not change " +
                         what + ": only admins and its account's " + "coordinators may" +
                         (mine.empty() ? std::string(" (it coordinates no account)")
                                       : " (it coordinates " + list + ")"));
  }
  CORRAL_RETURN_IF_ERROR(allowed);
  CORRAL_ASSIGN_OR_RETURN(sched::SchedulerConfig changed, change());
  s.Reconfigure(std::move(changed));
  CORRAL_LOG(Info) << who.user << " changed " << what;
  return {};
}

}  // namespace

std::vector<AccountConfig> Controller::ListAccounts() const { return s_->governance.Accounts(); }

Result<AccountConfig> Controller::GetAccount(const std::string& name) const {
  return s_->governance.Account(name);
}

Result<AccountConfig> Controller::PutAccount(const api::Identity& who, AccountConfig a,
                                             bool create) {
  std::string name = a.name;
  const bool coordinator = s_->governance.CoordinatorMayPutAccount(who.user, a, create);
  CORRAL_RETURN_IF_ERROR(ChangeGovernance(
      *s_, who, api::Action::kManageAccounts, "account \"" + name + "\"",
      [&] { return s_->governance.PutAccount(s_->sched_config, std::move(a), create); },
      coordinator));
  return s_->governance.Account(name);
}

Status Controller::DeleteAccount(const api::Identity& who, const std::string& name) {
  CORRAL_RETURN_IF_ERROR(ChangeGovernance(
      *s_, who, api::Action::kManageAccounts, "account \"" + name + "\" (deleted)",
      [&] { return s_->governance.DeleteAccount(s_->sched_config, name, ActiveUseOf(*s_)); }));
  return {};
}

std::vector<api::UserInfo> Controller::ListUsers() const { return s_->governance.Users(); }

Result<api::UserInfo> Controller::GetUser(const std::string& name) const {
  return s_->governance.User(name);
}

Result<api::UserInfo> Controller::PutUser(const api::Identity& who, api::UserInfo u, bool create) {
  std::string name = u.user.name;
  const bool coordinator = s_->governance.CoordinatorMayPutUser(who.user, u, create);
  CORRAL_RETURN_IF_ERROR(ChangeGovernance(
      *s_, who, api::Action::kManageAccounts, "user \"" + name + "\"",
      [&] { return s_->governance.PutUser(s_->sched_config, std::move(u), create); }, coordinator));
  return s_->governance.User(name);
}

Status Controller::DeleteUser(const api::Identity& who, const std::string& name) {
  CORRAL_RETURN_IF_ERROR(ChangeGovernance(
      *s_, who, api::Action::kManageAccounts, "user \"" + name + "\" (deleted)",
      [&] { return s_->governance.DeleteUser(s_->sched_config, name, ActiveUseOf(*s_)); },
      s_->governance.CoordinatorMayDeleteUser(who.user, name)));
  return {};
}

std::vector<QosConfig> Controller::ListQos() const { return s_->governance.Qos(); }

Result<QosConfig> Controller::GetQos(const std::string& name) const {
  return s_->governance.OneQos(name);
}

Result<QosConfig> Controller::PutQos(const api::Identity& who, QosConfig q, bool create) {
  std::string name = q.name;
  CORRAL_RETURN_IF_ERROR(ChangeGovernance(
      *s_, who, api::Action::kConfigure, "qos \"" + name + "\"",
      [&] { return s_->governance.PutQos(s_->sched_config, std::move(q), create); }));
  return s_->governance.OneQos(name);
}

Status Controller::DeleteQos(const api::Identity& who, const std::string& name) {
  CORRAL_RETURN_IF_ERROR(ChangeGovernance(
      *s_, who, api::Action::kConfigure, "qos \"" + name + "\" (deleted)",
      [&] { return s_->governance.DeleteQos(s_->sched_config, name, ActiveUseOf(*s_)); }));
  return {};
}

// --- Account coordinators (issue 16 item 2) ---

Result<AccountConfig> Controller::AddCoordinators(const api::Identity& who,
                                                  const std::string& account,
                                                  const std::vector<std::string>& users) {
  CORRAL_RETURN_IF_ERROR(ChangeGovernance(
      *s_, who, api::Action::kManageAccounts, "the coordinators of account \"" + account + "\"",
      [&] { return s_->governance.AddCoordinators(s_->sched_config, account, users); },
      s_->governance.Coordinates(who.user, account)));
  return s_->governance.Account(account);
}

Result<AccountConfig> Controller::RemoveCoordinator(const api::Identity& who,
                                                    const std::string& account,
                                                    const std::string& user) {
  CORRAL_RETURN_IF_ERROR(ChangeGovernance(
      *s_, who, api::Action::kManageAccounts, "the coordinators of account \"" + account + "\"",
      [&] { return s_->governance.RemoveCoordinator(s_->sched_config, account, user); },
      s_->governance.Coordinates(who.user, account)));
  return s_->governance.Account(account);
}

bool Controller::Coordinates(const std::string& user, const std::string& account) const {
  return s_->governance.Coordinates(user, account);
}

}  // namespace corral::controller
