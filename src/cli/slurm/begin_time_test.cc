#include "cli/slurm/begin_time.h"

#include <gtest/gtest.h>

#include "core/time.h"

namespace corral::slurm {
namespace {

// 2026-11-29T17:19:43 UTC, the clock of the real Slurm run the expectations come from.
Timestamp Now() {
  return Timestamp(std::chrono::sys_days(std::chrono::year(2026) / 11 / 29) +
                   std::chrono::hours(17) + std::chrono::minutes(19) + std::chrono::seconds(43));
}

std::string Begin(std::string_view text, int64_t offset = 0) {
  auto r = ParseBeginTime(text, Now(), offset);
  if (!r.has_value()) return "error";
  if (*r == Timestamp{}) return "Unknown";
  return FormatTimestamp(*r);
}

// Every expectation is the EligibleTime a real Slurm 22.05.8 showed for `sbatch --begin=TEXT`
// submitted at Now() (machine time zone UTC).
TEST(BeginTimeTest, MatchesSlurm) {
  EXPECT_EQ(Begin("now"), "Unknown");
  EXPECT_EQ(Begin("now+1hour"), "2026-11-29T18:19:43");
  EXPECT_EQ(Begin("now+30"), "2026-11-29T17:20:13");
  EXPECT_EQ(Begin("now+2days"), "2026-12-01T17:19:43");
  EXPECT_EQ(Begin("now+1 hour"), "2026-11-29T18:19:43");
  EXPECT_EQ(Begin("now-1hour"), "Unknown");
  EXPECT_EQ(Begin("16:00"), "2026-11-30T16:00:00");
  EXPECT_EQ(Begin("4:30PM"), "2026-11-30T16:30:00");
  EXPECT_EQ(Begin("2027-01-02T03:04"), "2027-01-02T03:04:00");
  EXPECT_EQ(Begin("2027-01-02"), "2027-01-02T00:00:00");
  EXPECT_EQ(Begin("2027-01-02T03:04:05"), "2027-01-02T03:04:05");
  EXPECT_EQ(Begin("01/02"), "2027-01-02T00:00:00");
  EXPECT_EQ(Begin("0102"), "2027-01-02T00:00:00");
  EXPECT_EQ(Begin("01/02/27"), "2027-01-02T00:00:00");
  EXPECT_EQ(Begin("tomorrow"), "2026-11-30T00:00:00");
  EXPECT_EQ(Begin("midnight"), "2026-11-30T00:00:00");
  EXPECT_EQ(Begin("teatime"), "2026-11-30T16:00:00");
  EXPECT_EQ(Begin("noon"), "2026-11-30T12:00:00");
  // Rejected by Slurm too.
  EXPECT_EQ(Begin("now+1h"), "error");
  EXPECT_EQ(Begin("now+90min"), "error");
  EXPECT_EQ(Begin("garbage"), "error");
  EXPECT_EQ(Begin("2027-1-2"), "error");
  EXPECT_EQ(Begin("now+999999999weeks"), "error");
}

TEST(BeginTimeTest, UsesTheLocalZone) {
  // 18:00 in UTC+2 is 16:00 UTC: already passed at 17:19 UTC, so tomorrow.
  EXPECT_EQ(Begin("18:00", 2 * 3600), "2026-11-30T16:00:00");
  EXPECT_EQ(Begin("20:00", 2 * 3600), "2026-11-29T18:00:00");
  EXPECT_EQ(Begin("2027-01-02T03:04", -3600), "2027-01-02T04:04:00");
  EXPECT_EQ(Begin("12/25-10:30"), "2026-12-25T10:30:00");
}

}  // namespace
}  // namespace corral::slurm

namespace corral::slurm {
namespace {

std::string Past(std::string_view text, int64_t offset = 0) {
  auto r = ParsePastTime(text, Now(), offset);
  if (!r.has_value()) return "error";
  return FormatTimestamp(*r);
}

// sacct -S/-E: the same forms, rolled back instead of forward, and never "Unknown".
TEST(PastTimeTest, RollsBackLikeSacct) {
  EXPECT_EQ(Past("now"), "2026-11-29T17:19:43");
  EXPECT_EQ(Past("now-1hour"), "2026-11-29T16:19:43");
  EXPECT_EQ(Past("now-2days"), "2026-11-27T17:19:43");
  EXPECT_EQ(Past("16:00"), "2026-11-29T16:00:00");   // passed today
  EXPECT_EQ(Past("18:00"), "2026-11-28T18:00:00");   // still to come: yesterday's
  EXPECT_EQ(Past("today"), "2026-11-29T00:00:00");
  EXPECT_EQ(Past("midnight"), "2026-11-30T00:00:00");
  EXPECT_EQ(Past("2026-01-02T03:04"), "2026-01-02T03:04:00");
  EXPECT_EQ(Past("1102"), "2026-11-02T00:00:00");
  EXPECT_EQ(Past("12/24"), "2025-12-24T00:00:00");   // still to come this year: last year's
  EXPECT_EQ(Past("16:00", 3600), "2026-11-29T15:00:00");  // local 16:00 at UTC+1
  auto bad = ParsePastTime("yesterdayish", Now());
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "invalid time specification \"yesterdayish\"");
}

}  // namespace
}  // namespace corral::slurm
