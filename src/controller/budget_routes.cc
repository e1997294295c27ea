#include "controller/budget_routes.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "api/http_status.h"
#include "controller/controller.h"
#include "controller/internal/access.h"
#include "controller/service.h"

namespace corral::controller {

std::vector<api::BudgetStatus> VisibleBudgets(const api::Identity& who,
                                              const PrivacyConfig& privacy,
                                              const std::vector<AccountConfig>& accounts,
                                              std::vector<api::BudgetStatus> all) {
  if (!(privacy.jobs || privacy.usage) || internal::IsPrivileged(who)) return all;
  std::map<std::string, const AccountConfig*> by_name;
  for (const AccountConfig& a : accounts) by_name[a.name] = &a;
  // `a` and the accounts above it (the tree has no loops: the configuration is validated).
  auto chain = [&by_name](const AccountConfig& a) {
    std::vector<const AccountConfig*> out;
    for (const AccountConfig* x = &a; x != nullptr && out.size() <= by_name.size();) {
      out.push_back(x);
      auto up = by_name.find(x->parent);
      x = x->parent.empty() || up == by_name.end() ? nullptr : up->second;
    }
    return out;
  };
  auto has = [&who](const std::vector<std::string>& users) {
    return std::find(users.begin(), users.end(), who.user) != users.end();
  };
  // Her accounts and those above them (her jobs spend from their budgets), and the accounts
  // she coordinates (directly or through an account above).
  std::set<std::string> visible;
  for (const AccountConfig& a : accounts) {
    const std::vector<const AccountConfig*> up = chain(a);
    if (has(a.users)) {
      for (const AccountConfig* x : up) visible.insert(x->name);
    }
    if (std::any_of(up.begin(), up.end(),
                    [&](const AccountConfig* x) { return has(x->coordinators); })) {
      visible.insert(a.name);
    }
  }
  std::erase_if(all, [&](const api::BudgetStatus& b) { return !visible.count(b.account); });
  return all;
}

api::HttpResponse ServeBudgets(ControllerService& service, const PrivacyConfig& privacy,
                               const api::Identity& who) {
  using Both = std::pair<std::vector<api::BudgetStatus>, std::vector<AccountConfig>>;
  auto r = service.Call<Both>(
      [](Controller& c) -> Result<Both> { return Both(c.Budgets(), c.ListAccounts()); });
  if (!r) return api::ErrorResponse(r.error());
  api::HttpResponse out;
  out.status = 200;
  out.body = api::EncodeBudgetStatusList(
      VisibleBudgets(who, privacy, r->second, std::move(r->first)));
  return out;
}

}  // namespace corral::controller
