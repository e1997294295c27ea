// The route of budgets' spend (docs/governance.md, "Budgets"; api/budget_codec.h):
// GET /api/v1/budgets, every account budget with its spend in the current period. Budgets are
// set through the account routes (governance_routes.h: the account's `budget` field).
//
// With `[privacy] private_data` ("jobs" or "usage", as for the usage reports), a user other
// than an operator or admin sees only the budgets of the accounts she belongs to (a member of
// the account or of an account below it, whose jobs spend from it) or coordinates.
//
// Thread-safe: the handler runs on an HTTP thread and calls the state thread.
#pragma once

#include <vector>

#include "api/budget_codec.h"
#include "api/http.h"
#include "api/identity.h"
#include "controller/config.h"
#include "core/governance.h"

namespace corral::controller {

class ControllerService;

api::HttpResponse ServeBudgets(ControllerService& service, const PrivacyConfig& privacy,
                               const api::Identity& who);

// The budgets of `all` that `who` may see under `privacy` (see the file comment); `accounts`
// is the account tree with its users and coordinators.
std::vector<api::BudgetStatus> VisibleBudgets(const api::Identity& who,
                                              const PrivacyConfig& privacy,
                                              const std::vector<AccountConfig>& accounts,
                                              std::vector<api::BudgetStatus> all);

}  // namespace corral::controller
