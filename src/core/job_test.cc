#include "core/job.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

TEST(JobStateTest, AllowedTransitions) {
  EXPECT_TRUE(CheckTransition(JobState::kPending, JobState::kRunning).has_value());
  EXPECT_TRUE(CheckTransition(JobState::kPending, JobState::kCancelled).has_value());
  for (JobState end : {JobState::kCompleted, JobState::kFailed, JobState::kCancelled,
                       JobState::kTimeout, JobState::kNodeFail}) {
    EXPECT_TRUE(CheckTransition(JobState::kRunning, end).has_value());
    EXPECT_TRUE(IsTerminal(end));
    // Requeue of a finished job.
    EXPECT_TRUE(CheckTransition(end, JobState::kPending).has_value());
  }
  EXPECT_TRUE(CheckTransition(JobState::kRunning, JobState::kPending).has_value());
}

TEST(JobStateTest, ForbiddenTransitionsNameBothStates) {
  auto s = CheckTransition(JobState::kPending, JobState::kCompleted);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(s.error().message, "cannot go from PENDING to COMPLETED");
  EXPECT_FALSE(CheckTransition(JobState::kCompleted, JobState::kRunning).has_value());
  EXPECT_FALSE(CheckTransition(JobState::kRunning, JobState::kRunning).has_value());
  EXPECT_FALSE(IsTerminal(JobState::kPending));
  EXPECT_FALSE(IsTerminal(JobState::kRunning));
}

TEST(JobStateTest, NamesRoundTrip) {
  for (JobState s : {JobState::kPending, JobState::kRunning, JobState::kCompleted, JobState::kFailed,
                     JobState::kCancelled, JobState::kTimeout, JobState::kNodeFail}) {
    EXPECT_EQ(*ParseJobState(JobStateName(s)), s);
    EXPECT_EQ(*ParseJobState(JobStateShortName(s)), s);
  }
  EXPECT_EQ(*ParseJobState("running"), JobState::kRunning);
  EXPECT_FALSE(ParseJobState("sleeping").has_value());
}

TEST(GpuSetTest, SetOperations) {
  GpuSet a;
  a.insert(0);
  a.insert(3);
  a.insert(63);
  EXPECT_EQ(a.size(), 3u);
  EXPECT_EQ(a.ToString(), "0,3,63");
  EXPECT_EQ(GpuSet::FirstN(4).ToString(), "0,1,2,3");
  EXPECT_EQ((GpuSet::FirstN(4) - a).ToString(), "1,2");
  EXPECT_TRUE(a.Intersects(GpuSet::FirstN(1)));
  EXPECT_FALSE((GpuSet::FirstN(4) - a).Intersects(a));
  EXPECT_EQ(GpuSet::FirstN(64).size(), 64u);
}

}  // namespace
}  // namespace corral
