// Account coordinators (issue 16 item 2): who coordinates what, what a coordinator may change,
// and the changes of the coordinator lists (governance.h, "Account coordinators").
#include <algorithm>
#include <set>

#include "controller/internal/governance.h"

namespace corral::controller::internal {
namespace {

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

bool Governance::Coordinates(const std::string& user, const std::string& account) const {
  if (user.empty()) return false;
  for (const std::string& a : AccountChain(account)) {
    if (Has(accounts_.at(a).coordinators, user)) return true;
  }
  return false;
}

std::vector<std::string> Governance::CoordinatedAccounts(const std::string& user) const {
  std::vector<std::string> out;
  for (const auto& [name, a] : accounts_) {
    if (Coordinates(user, name)) out.push_back(name);
  }
  return out;
}

bool Governance::CoordinatorMayPutAccount(const std::string& user, const AccountConfig& a,
                                          bool create) const {
  if (a.parent.empty() || !Coordinates(user, a.parent)) return false;
  if (create) return true;
  auto it = accounts_.find(a.name);
  // Her own account's settings are her parent's coordinator's: strictly below only.
  return it != accounts_.end() && !it->second.parent.empty() &&
         Coordinates(user, it->second.parent);
}

bool Governance::CoordinatorMayPutUser(const std::string& user, const api::UserInfo& u,
                                       bool create) const {
  std::set<std::string> before;
  for (const auto& [name, a] : accounts_) {
    if (Has(a.users, u.user.name)) before.insert(name);
  }
  const std::set<std::string> after(u.accounts.begin(), u.accounts.end());
  if (create && after.empty()) return false;  // a user of none of her accounts
  std::set<std::string> all = before;
  all.insert(after.begin(), after.end());
  for (const std::string& a : all) {
    const bool changed = before.count(a) != after.count(a);
    if (changed && !Coordinates(user, a)) return false;
  }
  auto it = users_.find(u.user.name);
  UserConfig wanted = u.user;
  // The default account the change will give (governance.cc: the first when none is named).
  if (wanted.default_account.empty() && !u.accounts.empty()) {
    wanted.default_account = u.accounts.front();
  }
  // An association's limits are its account's coordinators' (as in Slurm); the user's own
  // settings (over all its accounts) need every one of its accounts.
  const std::vector<AssociationLimits> none;
  const std::vector<AssociationLimits>& old_assoc =
      it == users_.end() ? none : it->second.association_limits;
  for (const std::string& a : all) {
    const Limits* x = FindAssociationLimits(wanted, a);
    const Limits* y = it == users_.end() ? nullptr : FindAssociationLimits(it->second, a);
    const bool same = (x == nullptr || *x == Limits{}) ? (y == nullptr || *y == Limits{})
                                                       : (y != nullptr && *x == *y);
    if (!same && !Coordinates(user, a)) return false;
  }
  wanted.association_limits = old_assoc;
  const bool own_settings_change = it == users_.end() || !(it->second == wanted);
  if (own_settings_change) {
    if (all.empty()) return false;
    for (const std::string& a : all) {
      if (!Coordinates(user, a)) return false;
    }
  }
  return true;
}

bool Governance::CoordinatorMayDeleteUser(const std::string& user, const std::string& name) const {
  bool any = false;
  for (const auto& [acct, a] : accounts_) {
    if (!Has(a.users, name)) continue;
    if (!Coordinates(user, acct)) return false;
    any = true;
  }
  return any;
}

Result<sched::SchedulerConfig> Governance::AddCoordinators(const sched::SchedulerConfig& base,
                                                           const std::string& account,
                                                           const std::vector<std::string>& users) {
  const std::string where = "account " + Quote(account);
  auto it = accounts_.find(account);
  if (it == accounts_.end()) return NotFound(where + ": no such account");
  if (users.empty()) return InvalidArgument(where + ": users: none named");
  AccountMap accounts = accounts_;
  std::vector<std::string>& coords = accounts[account].coordinators;
  for (const std::string& u : users) {
    if (!users_.count(u)) {
      return InvalidArgument(where + ": coordinators: no such user " + Quote(u) +
                             " (add the user first)");
    }
    if (!Has(coords, u)) coords.push_back(u);
  }
  std::sort(coords.begin(), coords.end());
  return Commit(base, std::move(accounts), users_, qos_);
}

Result<sched::SchedulerConfig> Governance::RemoveCoordinator(const sched::SchedulerConfig& base,
                                                             const std::string& account,
                                                             const std::string& user) {
  const std::string where = "account " + Quote(account);
  auto it = accounts_.find(account);
  if (it == accounts_.end()) return NotFound(where + ": no such account");
  if (!Has(it->second.coordinators, user)) {
    std::string why = where + ": " + Quote(user) + " is not one of its coordinators";
    for (const std::string& a : AccountChain(account)) {
      if (a != account && Has(accounts_.at(a).coordinators, user)) {
        why += " (it coordinates it as a coordinator of " + Quote(a) + ": remove it there)";
        break;
      }
    }
    return InvalidArgument(why);
  }
  AccountMap accounts = accounts_;
  std::erase(accounts[account].coordinators, user);
  return Commit(base, std::move(accounts), users_, qos_);
}

}  // namespace corral::controller::internal
