#include "core/budget.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

using std::chrono::days;
using std::chrono::sys_days;

Timestamp At(std::chrono::year_month_day d, int hour = 0) {
  return Timestamp(std::chrono::duration_cast<Duration>(sys_days(d).time_since_epoch())) +
         Seconds(int64_t{3600} * hour);
}
using std::chrono::December;
using std::chrono::January;
using std::chrono::November;
using std::chrono::year;

TEST(BudgetTest, CalendarPeriodsAreUtcDaysWeeksFromMondayAndMonths) {
  const Timestamp now = At(year(2026) / December / 2, 13);  // a Wednesday
  Budget b;
  b.period = BudgetPeriod::kDay;
  EXPECT_EQ(BudgetPeriodAt(b, now),
            (BudgetWindow{At(year(2026) / December / 2), At(year(2026) / December / 3)}));
  b.period = BudgetPeriod::kWeek;
  EXPECT_EQ(BudgetPeriodAt(b, now),
            (BudgetWindow{At(year(2026) / November / 30), At(year(2026) / December / 7)}));
  // A Monday at 00:00 starts its own week.
  EXPECT_EQ(BudgetPeriodAt(b, At(year(2026) / November / 30)).start,
            At(year(2026) / November / 30));
  b.period = BudgetPeriod::kMonth;
  EXPECT_EQ(BudgetPeriodAt(b, now),
            (BudgetWindow{At(year(2026) / December / 1), At(year(2027) / January / 1)}));
  EXPECT_TRUE(BudgetInForce(b, now));
}

TEST(BudgetTest, AWindowIsInForceOnlyInsideIt) {
  Budget b{.gpu_hours = 10,
           .period = BudgetPeriod::kWindow,
           .start = At(year(2026) / December / 1),
           .end = At(year(2026) / December / 3)};
  EXPECT_EQ(BudgetPeriodAt(b, At(year(2026) / December / 2)), (BudgetWindow{b.start, b.end}));
  EXPECT_TRUE(BudgetInForce(b, b.start));
  EXPECT_FALSE(BudgetInForce(b, b.end));
  EXPECT_FALSE(BudgetInForce(b, b.start - Seconds(1)));
}

TEST(BudgetTest, PeriodNamesRoundTripAndSlurmStyleAliasesParse) {
  for (BudgetPeriod p :
       {BudgetPeriod::kDay, BudgetPeriod::kWeek, BudgetPeriod::kMonth, BudgetPeriod::kWindow}) {
    EXPECT_EQ(ParseBudgetPeriod(BudgetPeriodName(p)), p);
  }
  EXPECT_EQ(ParseBudgetPeriod("monthly"), BudgetPeriod::kMonth);
  EXPECT_EQ(ParseBudgetPeriod("fortnight"), std::nullopt);
}

TEST(BudgetTest, ValidationNamesTheField) {
  const std::string where = "account \"nlp\"";
  EXPECT_TRUE(ValidateBudget(where, Budget{.gpu_hours = 100}).has_value());
  auto error = [&](const Budget& b) {
    Status s = ValidateBudget(where, b);
    EXPECT_FALSE(s.has_value());
    return s ? std::string() : s.error().message;
  };
  EXPECT_EQ(error(Budget{}), "account \"nlp\": budget: sets neither gpu_hours nor energy_kwh");
  EXPECT_EQ(error(Budget{.gpu_hours = -5}),
            "account \"nlp\": budget.gpu_hours: -5 must be a number at least 0");
  EXPECT_EQ(error(Budget{.energy_kwh = 1e12}),
            "account \"nlp\": budget.energy_kwh: 1000000000000 is over the maximum 1000000000");
  EXPECT_NE(error(Budget{.gpu_hours = 1, .period = BudgetPeriod::kWindow}).find("window"),
            std::string::npos);
  EXPECT_NE(error(Budget{.gpu_hours = 1, .warn_percent = 101}).find("warn_percent"),
            std::string::npos);
  EXPECT_NE(error(Budget{.gpu_hours = 1, .start = At(year(2026) / December / 1)}).find("window"),
            std::string::npos);
}

}  // namespace
}  // namespace corral
