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

// Authorizes `who`, then makes the change (`change`: the governance's) and installs the
// configuration it gives. Returns the first error of the two.
template <typename Change>
Status ChangeGovernance(internal::ControllerState& s, const api::Identity& who, api::Action action,
                        const std::string& what, Change change) {
  CORRAL_RETURN_IF_ERROR(api::Authorize(who, action, {}));
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
  CORRAL_RETURN_IF_ERROR(ChangeGovernance(
      *s_, who, api::Action::kManageAccounts, "account \"" + name + "\"",
      [&] { return s_->governance.PutAccount(s_->sched_config, std::move(a), create); }));
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
  CORRAL_RETURN_IF_ERROR(ChangeGovernance(
      *s_, who, api::Action::kManageAccounts, "user \"" + name + "\"",
      [&] { return s_->governance.PutUser(s_->sched_config, std::move(u), create); }));
  return s_->governance.User(name);
}

Status Controller::DeleteUser(const api::Identity& who, const std::string& name) {
  CORRAL_RETURN_IF_ERROR(ChangeGovernance(
      *s_, who, api::Action::kManageAccounts, "user \"" + name + "\" (deleted)",
      [&] { return s_->governance.DeleteUser(s_->sched_config, name, ActiveUseOf(*s_)); }));
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

}  // namespace corral::controller
