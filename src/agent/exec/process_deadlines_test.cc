// The supervisor's deadlines on a manual clock, with no process: when the warning, SIGTERM
// and SIGKILL fall due, and how a cancel and a new time limit move them.
#include "agent/exec/process_deadlines.h"

#include <signal.h>

#include <gtest/gtest.h>

#include "core/testing/fake_clock.h"

namespace corral::agent {
namespace {

using Due = ProcessDeadlines::Due;

constexpr Due kNothing{};
constexpr Due kWarn{.warn = true};
constexpr Due kTerm{.term = true};
constexpr Due kKill{.kill = true};

class ProcessDeadlinesTest : public ::testing::Test {
 protected:
  // A process started now whose limit counts from its own start.
  ProcessDeadlines Start(Duration limit, Duration grace, SignalSpec warn = {}) {
    return ProcessDeadlines(limit, Timestamp{}, grace, warn, clock_.Now(), clock_.MonotonicNow());
  }
  MonoTime At(Duration since_start) const { return start_ + since_start; }

  testing::FakeClock clock_;
  const MonoTime start_ = clock_.MonotonicNow();
};

TEST_F(ProcessDeadlinesTest, TermAtTheLimitThenKillAfterTheGrace) {
  ProcessDeadlines d = Start(Minutes(10), Seconds(30));
  EXPECT_EQ(d.Next(), At(Minutes(10)));
  EXPECT_EQ(d.Take(At(Minutes(10) - Millis(1))), kNothing);
  EXPECT_FALSE(d.timed_out());
  EXPECT_EQ(d.Take(At(Minutes(10))), kTerm);
  EXPECT_TRUE(d.timed_out());
  EXPECT_FALSE(d.cancelled());
  EXPECT_EQ(d.Next(), At(Minutes(10) + Seconds(30)));
  EXPECT_EQ(d.Take(At(Minutes(10) + Seconds(29))), kNothing);
  EXPECT_EQ(d.Take(At(Minutes(10) + Seconds(30))), kKill);
  EXPECT_EQ(d.Next(), ProcessDeadlines::kNever);
  EXPECT_EQ(d.Take(At(Minutes(100))), kNothing);  // each once
}

TEST_F(ProcessDeadlinesTest, LateCheckSendsWhatIsDueInOnePass) {
  ProcessDeadlines d = Start(Minutes(10), Seconds(0), {.signal = SIGUSR1, .before = Minutes(1)});
  EXPECT_EQ(d.Take(At(Minutes(20))), (Due{.warn = true, .term = true, .kill = true}));
}

TEST_F(ProcessDeadlinesTest, UnlimitedHasNoDeadline) {
  ProcessDeadlines d = Start(kUnlimited, Seconds(30), {.signal = SIGUSR1, .before = Minutes(1)});
  EXPECT_EQ(d.Next(), ProcessDeadlines::kNever);
  EXPECT_EQ(d.Take(At(Minutes(100000))), kNothing);
}

TEST_F(ProcessDeadlinesTest, LimitAlreadyOverEndsItOneMillisecondAfterTheStart) {
  // A step task whose job started 2 hours ago under a 1 hour limit.
  ProcessDeadlines d(Minutes(60), clock_.Now() - Minutes(120), Seconds(30), {}, clock_.Now(),
                     clock_.MonotonicNow());
  EXPECT_EQ(d.Next(), At(Millis(1)));
  EXPECT_EQ(d.Take(At(Millis(1))), kTerm);
}

TEST_F(ProcessDeadlinesTest, WarningComesBeforeTheLimit) {
  ProcessDeadlines d = Start(Minutes(10), Seconds(30), {.signal = SIGUSR1, .before = Minutes(3)});
  EXPECT_EQ(d.Next(), At(Minutes(7)));
  EXPECT_EQ(d.Take(At(Minutes(7))), kWarn);
  EXPECT_EQ(d.Next(), At(Minutes(10)));
  EXPECT_EQ(d.Take(At(Minutes(10))), kTerm);
  EXPECT_EQ(d.warn().signal, SIGUSR1);
}

TEST_F(ProcessDeadlinesTest, WarningTimeAlreadyPastAtTheStart) {
  // Counted from its own start: sent at once.
  ProcessDeadlines own = Start(Minutes(2), Seconds(30), {.signal = SIGUSR1, .before = Minutes(5)});
  EXPECT_EQ(own.Take(start_), kWarn);
  // A step task started after its job's warning time: never.
  clock_.Advance(Minutes(58));
  ProcessDeadlines late(Minutes(60), clock_.Now() - Minutes(58), Seconds(30),
                        {.signal = SIGUSR1, .before = Minutes(5)}, clock_.Now(),
                        clock_.MonotonicNow());
  EXPECT_EQ(late.Next(), start_ + Minutes(60));
  EXPECT_EQ(late.Take(start_ + Minutes(60)), kTerm);
}

TEST_F(ProcessDeadlinesTest, CancelTerminatesOnceAndKillsAfterTheGrace) {
  ProcessDeadlines d = Start(Minutes(10), Seconds(30), {.signal = SIGUSR1, .before = Minutes(3)});
  EXPECT_TRUE(d.Cancel(At(Minutes(1))));
  EXPECT_TRUE(d.cancelled());
  EXPECT_FALSE(d.Cancel(At(Minutes(1) + Seconds(10))));  // the grace is not restarted
  EXPECT_EQ(d.Next(), At(Minutes(1) + Seconds(30)));     // no warning, no SIGTERM left
  EXPECT_EQ(d.Take(At(Minutes(1) + Seconds(30))), kKill);
  EXPECT_FALSE(d.timed_out());
}

TEST_F(ProcessDeadlinesTest, CancelDuringTheGraceOfATimeoutKeepsTheEarlierKill) {
  ProcessDeadlines d = Start(Minutes(10), Seconds(30));
  EXPECT_EQ(d.Take(At(Minutes(10))), kTerm);
  EXPECT_TRUE(d.Cancel(At(Minutes(10) + Seconds(20))));
  EXPECT_EQ(d.Next(), At(Minutes(10) + Seconds(30)));
}

TEST_F(ProcessDeadlinesTest, LoweringAndRaisingTheLimit) {
  ProcessDeadlines d = Start(Minutes(60), Seconds(30));
  ASSERT_TRUE(d.SetLimit(Minutes(45), At(Minutes(1))));
  EXPECT_EQ(d.Next(), At(Minutes(45)));
  ASSERT_TRUE(d.SetLimit(Minutes(90), At(Minutes(44))));
  EXPECT_EQ(d.Take(At(Minutes(60))), kNothing);  // past the old limit
  EXPECT_EQ(d.Take(At(Minutes(90))), kTerm);
  // Once terminating it is left alone.
  EXPECT_FALSE(d.SetLimit(Minutes(200), At(Minutes(90))));
  EXPECT_EQ(d.Next(), At(Minutes(90) + Seconds(30)));
}

TEST_F(ProcessDeadlinesTest, ALimitBelowTheTimeRunIsDueNow) {
  ProcessDeadlines d = Start(Minutes(60), Seconds(30));
  ASSERT_TRUE(d.SetLimit(Minutes(20), At(Minutes(30))));
  EXPECT_EQ(d.Next(), At(Minutes(20)));
  EXPECT_EQ(d.Take(At(Minutes(30))), kTerm);
}

TEST_F(ProcessDeadlinesTest, UnlimitedLimitRemovesTheDeadline) {
  ProcessDeadlines d = Start(Minutes(1), Seconds(30), {.signal = SIGUSR1, .before = Seconds(10)});
  ASSERT_TRUE(d.SetLimit(kUnlimited, At(Seconds(5))));
  EXPECT_EQ(d.Next(), ProcessDeadlines::kNever);
  EXPECT_EQ(d.Take(At(Minutes(100000))), kNothing);
}

TEST_F(ProcessDeadlinesTest, WarningIsSentOnceAndReArmedByALaterLimit) {
  ProcessDeadlines d = Start(Minutes(10), Seconds(30), {.signal = SIGUSR1, .before = Minutes(5)});
  EXPECT_EQ(d.Take(At(Minutes(6))), kWarn);
  // The same deadline again, or a later one whose warning time is past too: not sent again.
  ASSERT_TRUE(d.SetLimit(Minutes(10), At(Minutes(6))));
  ASSERT_TRUE(d.SetLimit(Minutes(11), At(Minutes(6))));
  EXPECT_EQ(d.Take(At(Minutes(6))), kNothing);
  // A limit whose warning time is ahead re-arms it: due at 25 minutes, not before.
  ASSERT_TRUE(d.SetLimit(Minutes(30), At(Minutes(6))));
  EXPECT_EQ(d.Next(), At(Minutes(25)));
  EXPECT_EQ(d.Take(At(Minutes(24))), kNothing);
  EXPECT_EQ(d.Take(At(Minutes(26))), kWarn);
  EXPECT_EQ(d.Take(At(Minutes(31))), kTerm);
}

TEST_F(ProcessDeadlinesTest, AWarningWhoseTimeHasPassedUnsentIsDueNow) {
  ProcessDeadlines d = Start(Minutes(60), Seconds(30), {.signal = SIGUSR1, .before = Minutes(5)});
  ASSERT_TRUE(d.SetLimit(Minutes(12), At(Minutes(10))));  // warning time 7 minutes: past
  EXPECT_EQ(d.Next(), At(Minutes(10)));
  EXPECT_EQ(d.Take(At(Minutes(10))), kWarn);
  EXPECT_EQ(d.Next(), At(Minutes(12)));
}

TEST(AddSaturatingTest, SaturatesAtNever) {
  MonoTime t(Seconds(5));
  EXPECT_EQ(AddSaturating(t, Seconds(1)), MonoTime(Seconds(6)));
  EXPECT_EQ(AddSaturating(t, kUnlimited), ProcessDeadlines::kNever);
  EXPECT_EQ(AddSaturating(t, Duration(-1)), ProcessDeadlines::kNever);
  EXPECT_EQ(AddSaturating(ProcessDeadlines::kNever - Seconds(1), Seconds(2)),
            ProcessDeadlines::kNever);
}

}  // namespace
}  // namespace corral::agent
