#include "sched/internal/time_math.h"

#include <gtest/gtest.h>

namespace corral::sched::internal {
namespace {

const Timestamp kT = FromMicros(int64_t{1'700'000'000} * 1'000'000);

TEST(TimeMathTest, AddSatStopsAtNever) {
  EXPECT_EQ(AddSat(kT, Minutes(5)), kT + Minutes(5));
  EXPECT_EQ(AddSat(kT, kUnlimited), kNever);
  EXPECT_EQ(AddSat(kNever, Minutes(5)), kNever);
  EXPECT_EQ(AddSat(kT, Duration(0)), kT);
  EXPECT_EQ(AddSat(kT, Duration(-5)), kT);
  EXPECT_EQ(AddSat(kNever - Minutes(1), Minutes(1)), kNever);  // exactly reaching it
  EXPECT_EQ(AddSat(kNever - Minutes(2), Minutes(1)), kNever - Minutes(1));
}

TEST(TimeMathTest, NonPositiveLimitsAreUnlimited) {
  EXPECT_EQ(EffectiveLimit(Duration(0)), kUnlimited);
  EXPECT_EQ(EffectiveLimit(Duration(-1)), kUnlimited);
  EXPECT_EQ(EffectiveLimit(Minutes(3)), Minutes(3));
}

TEST(TimeMathTest, SubSatNeverWraps) {
  EXPECT_EQ(SubSat(uint32_t{3}, uint32_t{5}), 0u);
  EXPECT_EQ(SubSat(uint32_t{5}, uint32_t{3}), 2u);
  EXPECT_EQ(SubSat(uint64_t{1} << 40, uint64_t{1}), (uint64_t{1} << 40) - 1);
  EXPECT_EQ(SubSat(uint64_t{0}, uint64_t{1}), 0u);
}

TEST(TimeMathTest, FormatTimeNamesNever) {
  EXPECT_EQ(FormatTime(kNever), "never");
  EXPECT_EQ(FormatTime(kT), FormatTimestamp(kT));
}

}  // namespace
}  // namespace corral::sched::internal
