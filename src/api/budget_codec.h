// Budgets as the API shows them (docs/governance.md, "Budgets"): a budget is a field of its
// account's record (`AccountConfig::budget`, set through the account routes); its spend is
// read here.
//
//   GET /api/v1/budgets -> {"budgets": [BudgetStatus]}   every account with a budget, by name
//
// Conventions as api/json_codec.h. Thread-safe (pure functions).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/budget.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::api {

// One account's budget in its current period. Amounts of a kind the budget does not set are 0.
struct BudgetStatus {
  std::string account;
  Budget budget;
  bool in_force = false;     // a window budget outside its window is not
  Timestamp period_start{};  // the current period (the window for a window budget)
  Timestamp period_end{};
  double spent_gpu_hours = 0;  // allocated GPU-hours of the account's subtree in the period,
                               // running jobs up to now
  double left_gpu_hours = 0;   // the budget less the spend, never below 0
  double spent_energy_kwh = 0;
  double left_energy_kwh = 0;
  bool warned = false;  // the spend crossed `budget.warn_percent` in this period
  bool operator==(const BudgetStatus&) const = default;
};

std::string EncodeBudgetStatusList(const std::vector<BudgetStatus>& budgets);
Result<std::vector<BudgetStatus>> DecodeBudgetStatusList(std::string_view json);

}  // namespace corral::api
