// Budgets (docs/governance.md, "Budgets"): how many GPU-hours, and optionally how much energy,
// an account (with its whole subtree) may spend per period. A budget is part of the account's
// record (`AccountConfig::budget`), changed live through the account API; the controller
// computes the spend from the job records (controller/internal/budget_book.h) and the
// scheduler keeps a job pending with `kBudgetGpuReason` / `kBudgetEnergyReason` when it would
// exceed it (sched/internal/limits.h).
//
// Periods are calendar periods in UTC: a day from 00:00, a week from Monday 00:00, a month
// from the 1st at 00:00; or one fixed window [start, end).
//
// Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/time.h"

namespace corral {

enum class BudgetPeriod { kDay, kWeek, kMonth, kWindow };
std::string_view BudgetPeriodName(BudgetPeriod p);  // "day", "week", "month", "window"
// The period named `name` (`BudgetPeriodName`'s names; also "daily", "weekly", "monthly"),
// nullopt for any other.
std::optional<BudgetPeriod> ParseBudgetPeriod(std::string_view name);

struct Budget {
  std::optional<double> gpu_hours;   // GPU-hours allocated per period; unset = no GPU budget
  std::optional<double> energy_kwh;  // measured energy per period; unset = no energy budget
  BudgetPeriod period = BudgetPeriod::kMonth;
  Timestamp start{};  // kWindow only: the window [start, end)
  Timestamp end{};
  uint32_t warn_percent = 80;  // a warning when the spend crosses this share; 0 = none
  bool operator==(const Budget&) const = default;
};

// One period of a budget: [start, end).
struct BudgetWindow {
  Timestamp start{};
  Timestamp end{};
  bool operator==(const BudgetWindow&) const = default;
};

// The period of `b` that holds `now`. For a window, the window itself (whether or not `now`
// is inside it: see `BudgetInForce`).
BudgetWindow BudgetPeriodAt(const Budget& b, Timestamp now);
// Whether `b` applies at `now`: always for calendar periods, inside the window for kWindow.
bool BudgetInForce(const Budget& b, Timestamp now);

// The largest budget accepted: a typo of a few extra digits is caught (GPU-hours, kWh).
inline constexpr double kMaxBudgetGpuHours = 1e9;
inline constexpr double kMaxBudgetEnergyKwh = 1e9;

// Checks a budget's values. `where` names its owner ("account \"nlp\""). Returns
// kInvalidArgument naming the field: no amount set, an amount negative, not finite or over
// its maximum, a window without a start before its end (or a calendar period with one),
// warn_percent over 100.
Status ValidateBudget(const std::string& where, const Budget& b);

// The reasons of a job kept pending by a budget (Slurm has none; named after its
// AssocGrp<TRES>Minutes reasons).
inline constexpr const char* kBudgetGpuReason = "AssocGrpGRESBudget";
inline constexpr const char* kBudgetEnergyReason = "AssocGrpEnergyBudget";

}  // namespace corral
