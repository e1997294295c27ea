#include "core/budget.h"

#include <chrono>
#include <cmath>

namespace corral {
namespace {

using std::chrono::days;
using std::chrono::floor;
using std::chrono::sys_days;
using std::chrono::year_month_day;

Timestamp AtDay(sys_days d) {
  return Timestamp(std::chrono::duration_cast<Duration>(d.time_since_epoch()));
}

std::string Number(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

Status CheckAmount(const std::string& where, std::string_view field, std::optional<double> v,
                   double max) {
  if (!v) return {};
  if (!std::isfinite(*v) || *v < 0) {
    return InvalidArgument(where + ": budget." + std::string(field) + ": " + Number(*v) +
                           " must be a number at least 0");
  }
  if (*v > max) {
    return InvalidArgument(where + ": budget." + std::string(field) + ": " + Number(*v) +
                           " is over the maximum " + Number(max));
  }
  return {};
}

}  // namespace

std::string_view BudgetPeriodName(BudgetPeriod p) {
  switch (p) {
    case BudgetPeriod::kDay:
      return "day";
    case BudgetPeriod::kWeek:
      return "week";
    case BudgetPeriod::kMonth:
      return "month";
    case BudgetPeriod::kWindow:
      return "window";
  }
  return "unknown";
}

std::optional<BudgetPeriod> ParseBudgetPeriod(std::string_view name) {
  for (BudgetPeriod p :
       {BudgetPeriod::kDay, BudgetPeriod::kWeek, BudgetPeriod::kMonth, BudgetPeriod::kWindow}) {
    if (BudgetPeriodName(p) == name) return p;
  }
  if (name == "daily") return BudgetPeriod::kDay;
  if (name == "weekly") return BudgetPeriod::kWeek;
  if (name == "monthly") return BudgetPeriod::kMonth;
  return std::nullopt;
}

BudgetWindow BudgetPeriodAt(const Budget& b, Timestamp now) {
  const sys_days today = floor<days>(now);
  switch (b.period) {
    case BudgetPeriod::kDay:
      return {AtDay(today), AtDay(today + days(1))};
    case BudgetPeriod::kWeek: {
      // 1970-01-01 was a Thursday: Monday is 3 days later in the week's cycle.
      const int64_t since_monday = ((today.time_since_epoch().count() + 3) % 7 + 7) % 7;
      const sys_days monday = today - days(since_monday);
      return {AtDay(monday), AtDay(monday + days(7))};
    }
    case BudgetPeriod::kMonth: {
      const year_month_day ymd(today);
      const auto first = ymd.year() / ymd.month() / std::chrono::day(1);
      const auto next = first + std::chrono::months(1);
      return {AtDay(sys_days(first)), AtDay(sys_days(next))};
    }
    case BudgetPeriod::kWindow:
      return {b.start, b.end};
  }
  return {b.start, b.end};
}

bool BudgetInForce(const Budget& b, Timestamp now) {
  if (b.period != BudgetPeriod::kWindow) return true;
  return now >= b.start && now < b.end;
}

Status ValidateBudget(const std::string& where, const Budget& b) {
  if (!b.gpu_hours && !b.energy_kwh) {
    return InvalidArgument(where + ": budget: sets neither gpu_hours nor energy_kwh");
  }
  CORRAL_RETURN_IF_ERROR(CheckAmount(where, "gpu_hours", b.gpu_hours, kMaxBudgetGpuHours));
  CORRAL_RETURN_IF_ERROR(CheckAmount(where, "energy_kwh", b.energy_kwh, kMaxBudgetEnergyKwh));
  if (b.period == BudgetPeriod::kWindow) {
    if (b.start == Timestamp{} || b.end == Timestamp{} || b.end <= b.start) {
      return InvalidArgument(where + ": budget: a window needs a start before its end");
    }
  } else if (b.start != Timestamp{} || b.end != Timestamp{}) {
    return InvalidArgument(where +
                           ": budget: start and end are for period \"window\" only (period " +
                           "is \"" + std::string(BudgetPeriodName(b.period)) + "\")");
  }
  if (b.warn_percent > 100) {
    return InvalidArgument(where + ": budget.warn_percent: " + std::to_string(b.warn_percent) +
                           " is over 100");
  }
  return {};
}

}  // namespace corral
