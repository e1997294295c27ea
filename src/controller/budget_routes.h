// The route of budgets' spend (docs/governance.md, "Budgets"; api/budget_codec.h):
// GET /api/v1/budgets, every account budget with its spend in the current period. Budgets are
// set through the account routes (governance_routes.h: the account's `budget` field).
//
// Thread-safe: the handler runs on an HTTP thread and calls the state thread.
#pragma once

#include "api/http.h"

namespace corral::controller {

class ControllerService;

api::HttpResponse ServeBudgets(ControllerService& service);

}  // namespace corral::controller
