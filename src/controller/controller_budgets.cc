// Controller: account budgets (controller.h; internal/budget_book.h; docs/governance.md,
// "Budgets"): their spend for the API and the scheduler, and their warnings.
#include <cstdio>

#include "controller/controller.h"
#include "controller/internal/controller_state.h"
#include "core/log.h"
#include "store/audit_chain.h"

namespace corral::controller {
namespace internal {

void TickBudgets(ControllerState& s, Timestamp now) {
  s.budgets.Refresh(now);
  for (const BudgetWarning& w : s.budgets.TakeWarnings(now)) {
    char figures[96];
    std::snprintf(figures, sizeof figures, "%.2f of %.2f", w.spent, w.limit);
    const std::string unit = w.resource == "gpu_hours" ? "GPU-hours" : "kWh";
    const std::string what = "account " + w.account + " has spent " + figures + " " + unit +
                             " of its budget (warning at " + std::to_string(w.percent) + "%)";
    CORRAL_LOG(Warn) << "budget: " << what;
    ++s.metrics.budget_warnings;
    AuditRecord r;
    r.principal = "controller";
    r.auth = "none";
    r.method = "EVENT";
    r.route = "budget.warning";
    r.target = "account:" + w.account;
    // The record holds no text: the digest of what was said, as a request's parameters.
    r.params_sha256 = store::Sha256Hex(what);
    r.status = 200;
    s.budget_events.push_back(std::move(r));
  }
}

}  // namespace internal

std::vector<api::BudgetStatus> Controller::Budgets() {
  const Timestamp now = s_->clock.Now();
  s_->budgets.Refresh(now);
  return s_->budgets.Status(now);
}

std::vector<AuditRecord> Controller::TakeBudgetEvents() {
  std::vector<AuditRecord> out = std::move(s_->budget_events);
  s_->budget_events.clear();
  return out;
}

}  // namespace corral::controller
