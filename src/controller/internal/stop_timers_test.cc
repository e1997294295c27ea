#include "controller/internal/stop_timers.h"

#include <gtest/gtest.h>

namespace corral::controller::internal {
namespace {

const MonoTime kM0 = MonoTime(Seconds(100));

TEST(StopTimersTest, AStopBelongsToOneRun) {
  StopTimers stops;
  stops.Start(JobId(1), {.generation = Generation(3), .deadline = kM0, .reason = "preempted"});
  EXPECT_NE(stops.Find(JobId(1), Generation(3)), nullptr);
  EXPECT_EQ(stops.Find(JobId(1), Generation(4)), nullptr);
  EXPECT_EQ(stops.Take(JobId(1), Generation(4)), std::nullopt) << "another run's: kept";
  auto taken = stops.Take(JobId(1), Generation(3));
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->reason, "preempted");
  EXPECT_EQ(stops.Find(JobId(1), Generation(3)), nullptr);
  // A stop of a later run replaces the earlier run's.
  stops.Start(JobId(2), {.generation = Generation(1), .deadline = kM0});
  stops.Start(JobId(2), {.generation = Generation(2), .deadline = kM0 + Seconds(1)});
  EXPECT_EQ(stops.Find(JobId(2), Generation(1)), nullptr);
  stops.Forget(JobId(2));
  EXPECT_EQ(stops.NextDeadline(), MonoTime::max());
}

TEST(StopTimersTest, DueStopsAreTakenByJobIdWhateverTheirRun) {
  StopTimers stops;
  stops.Start(JobId(5), {.generation = Generation(1), .deadline = kM0 + Seconds(10)});
  stops.Start(JobId(3), {.generation = Generation(1), .deadline = kM0 + Seconds(10)});
  stops.Start(JobId(4), {.generation = Generation(9), .deadline = kM0 + Seconds(30)});
  EXPECT_EQ(stops.NextDeadline(), kM0 + Seconds(10));
  EXPECT_TRUE(stops.TakeDue(kM0 + Seconds(9)).empty());
  auto due = stops.TakeDue(kM0 + Seconds(10));
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].first, JobId(3));
  EXPECT_EQ(due[1].first, JobId(5));
  EXPECT_EQ(stops.NextDeadline(), kM0 + Seconds(30));
}

TEST(StopTimersTest, PreemptorsAreForgottenWithTheirVictims) {
  StopTimers stops;
  stops.SetPreemptor(JobId(1), JobId(10));
  stops.SetPreemptor(JobId(2), JobId(10));
  EXPECT_EQ(stops.PreemptorOf(JobId(1)), JobId(10));
  stops.ForgetPreemptorsUnless([](JobId victim) { return victim == JobId(2); });
  EXPECT_EQ(stops.PreemptorOf(JobId(1)), std::nullopt);
  EXPECT_EQ(stops.PreemptorOf(JobId(2)), JobId(10));
}

}  // namespace
}  // namespace corral::controller::internal
