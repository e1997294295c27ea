#include "core/duration.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

int64_t Secs(std::string_view text) {
  auto d = ParseSlurmDuration(text);
  EXPECT_TRUE(d.has_value()) << text << ": " << (d ? "" : d.error().message);
  return d ? std::chrono::duration_cast<std::chrono::seconds>(*d).count() : -1;
}

TEST(DurationTest, ParsesEverySlurmForm) {
  EXPECT_EQ(Secs("30"), 30 * 60);
  EXPECT_EQ(Secs("30:00"), 30 * 60);
  EXPECT_EQ(Secs("30:15"), 30 * 60 + 15);
  EXPECT_EQ(Secs("1:00:00"), 3600);
  EXPECT_EQ(Secs("2-12"), 2 * 86400 + 12 * 3600);
  EXPECT_EQ(Secs("2-12:30"), 2 * 86400 + 12 * 3600 + 30 * 60);
  EXPECT_EQ(Secs("2-12:30:00"), 2 * 86400 + 12 * 3600 + 30 * 60);
  EXPECT_EQ(Secs("0"), 0);
  EXPECT_EQ(Secs("90:00"), 90 * 60);
  EXPECT_EQ(Secs("5-"), 5 * 86400);  // days alone, as Slurm accepts
}

TEST(DurationTest, UnlimitedInAnyCase) {
  EXPECT_EQ(*ParseSlurmDuration("UNLIMITED"), kUnlimited);
  EXPECT_EQ(*ParseSlurmDuration("unlimited"), kUnlimited);
  EXPECT_EQ(*ParseSlurmDuration("INFINITE"), kUnlimited);
}

TEST(DurationTest, RejectsMalformed) {
  for (std::string_view bad : {"", "abc", "1:2:3:4", "-5", "-", "1--2", "1:", ":1", "1.5", "1h",
                               "99999999999999999999"}) {
    auto d = ParseSlurmDuration(bad);
    ASSERT_FALSE(d.has_value()) << bad;
    EXPECT_EQ(d.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(d.error().message.find("invalid time"), std::string::npos);
  }
}

TEST(DurationTest, FormatsAsSlurm) {
  EXPECT_EQ(FormatSlurmDuration(Seconds(0)), "0:00");
  EXPECT_EQ(FormatSlurmDuration(Seconds(65)), "1:05");
  EXPECT_EQ(FormatSlurmDuration(Seconds(3600)), "1:00:00");
  EXPECT_EQ(FormatSlurmDuration(Seconds(2 * 86400 + 12 * 3600 + 1800)), "2-12:30:00");
  EXPECT_EQ(FormatSlurmDuration(kUnlimited), "UNLIMITED");
}

TEST(DurationTest, RoundTrips) {
  for (int64_t s : {0, 59, 60, 3599, 3600, 86399, 86400, 90061, 10 * 86400 + 1}) {
    EXPECT_EQ(Secs(FormatSlurmDuration(Seconds(s))), s) << s;
  }
}

}  // namespace
}  // namespace corral
