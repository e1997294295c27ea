#include "controller/budget_routes.h"

#include "api/budget_codec.h"
#include "api/http_status.h"
#include "controller/controller.h"
#include "controller/service.h"

namespace corral::controller {

api::HttpResponse ServeBudgets(ControllerService& service) {
  auto r = service.Call<std::vector<api::BudgetStatus>>(
      [](Controller& c) -> Result<std::vector<api::BudgetStatus>> { return c.Budgets(); });
  if (!r) return api::ErrorResponse(r.error());
  api::HttpResponse out;
  out.status = 200;
  out.body = api::EncodeBudgetStatusList(*r);
  return out;
}

}  // namespace corral::controller
