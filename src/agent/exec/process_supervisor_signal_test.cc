// The process supervisor's time limits, warnings, cancels and signals on this machine's real
// processes (the `os` group), with its deadlines on the fixture's fake clock.
#include <signal.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "agent/exec/testing/process_supervisor_fixture.h"

namespace corral::agent {
namespace {

using ::corral::testing::ProcessGone;
using ::corral::testing::WaitGone;

TEST_F(ProcessSupervisorTest, TimeLimitTermTrapExitsOnItsOwn) {
  ProcessSpec spec = Trapping(1, Millis(700), /*term_exit=*/7);
  spec.kill_grace = Seconds(60);
  LaunchReady(spec);
  clock_.Advance(Millis(699));
  Recheck(1, Millis(700));
  EXPECT_EQ(exits_.Count(JobId(1)), 0u);
  clock_.Advance(Millis(1));
  Recheck(1, Millis(700));
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_TRUE(x.timed_out);
  EXPECT_FALSE(x.cancelled);
  EXPECT_EQ(x.exit_code, 7);
  EXPECT_EQ(x.signal, 0);
  EXPECT_EQ(Ran(x), Millis(700));  // by its trap, long before the grace ends
  EXPECT_EQ(ReadFile(spec.stdout_path), "term\n");
}

TEST_F(ProcessSupervisorTest, TimeLimitIgnoredTermIsFollowedByKill) {
  // The script ignores SIGTERM; a `sleep` it started before that does not, and its end shows
  // that the SIGTERM has been sent.
  std::string ready = Fifo("ready").path();
  ProcessSpec spec = Sh(1, "sleep 1000 & canary=$!; trap '' TERM; echo $canary > " + ready +
                               "; while :; do sleep 1000 & wait; done");
  spec.time_limit = Millis(700);
  spec.kill_grace = Millis(300);
  ASSERT_TRUE(sup_->Launch(spec).has_value());
  int canary = std::stoi(Line("ready"));
  clock_.Advance(Millis(700));
  Recheck(1, Millis(700));
  ASSERT_TRUE(WaitGone(canary));  // SIGTERM sent; the script ignores it
  EXPECT_EQ(exits_.Count(JobId(1)), 0u);
  clock_.Advance(Millis(300));
  Recheck(1, Millis(700));
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_TRUE(x.timed_out);
  EXPECT_EQ(x.signal, SIGKILL);
  EXPECT_EQ(Ran(x), Millis(1000));
}

TEST_F(ProcessSupervisorTest, WarningSignalComesBeforeTheLimit) {
  ProcessSpec spec = Trapping(1, Millis(1200));
  spec.warn = SignalSpec{.signal = SIGUSR1, .before = Millis(500)};
  LaunchReady(spec);
  clock_.Advance(Millis(700));
  Recheck(1, Millis(1200));
  ASSERT_EQ(Line("events1"), "warned");
  clock_.Advance(Millis(500));
  Recheck(1, Millis(1200));
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_TRUE(x.timed_out);
  EXPECT_EQ(x.exit_code, 0);
  EXPECT_EQ(ReadFile(spec.stdout_path), "warned\nterm\n");
}

TEST_F(ProcessSupervisorTest, CancelEndsTheWholeGroup) {
  std::string bg = Fifo("bg.pid").path();
  ProcessSpec spec =
      Sh(1, "sleep 1000 & echo $! > " + bg + "; (sleep 1000; true) & echo $! > " + bg + "; wait");
  ASSERT_TRUE(sup_->Launch(spec).has_value());
  std::vector<int> pids;
  for (int i = 0; i < 2; ++i) pids.push_back(std::stoi(Line("bg.pid")));
  for (int p : pids) EXPECT_FALSE(ProcessGone(p));
  ASSERT_TRUE(sup_->Cancel(JobId(1), Generation(1)).has_value());
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_TRUE(x.cancelled);
  EXPECT_FALSE(x.timed_out);
  EXPECT_EQ(x.signal, SIGTERM);
  for (int p : pids) EXPECT_TRUE(WaitGone(p)) << p;
  EXPECT_TRUE(sup_->Running().empty());
  EXPECT_EQ(sup_->Cancel(JobId(1), Generation(1)).error().code, ErrorCode::kNotFound);
}

TEST_F(ProcessSupervisorTest, CancelKillsAfterTheGraceWhenTermIsIgnored) {
  std::string ready = Fifo("ready").path();
  ProcessSpec spec =
      Sh(1, "trap '' TERM; echo ready > " + ready + "; sleep 1000 & wait; wait; wait");
  spec.kill_grace = Millis(200);
  ASSERT_TRUE(sup_->Launch(spec).has_value());
  ASSERT_EQ(Line("ready"), "ready");
  ASSERT_TRUE(sup_->Cancel(JobId(1), Generation(1)).has_value());
  clock_.Advance(Millis(200));
  Recheck(1, kUnlimited);
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_TRUE(x.cancelled);
  EXPECT_EQ(x.signal, SIGKILL);
}

TEST_F(ProcessSupervisorTest, LeaderExitKillsWhatIsLeftOfTheGroup) {
  // One child that would die of SIGTERM/SIGHUP, one that ignores both.
  ProcessSpec spec = Sh(1,
                        "echo $$ > leader.pid; sleep 1000 & echo $! > bg.pid; "
                        "(trap '' TERM HUP; sleep 1000; true) & echo $! >> bg.pid; exit 4");
  ProcessExit x = Run(spec);
  EXPECT_EQ(x.exit_code, 4);
  int leader = std::stoi(ReadFile(dir_ / "leader.pid"));
  std::istringstream in(ReadFile(dir_ / "bg.pid"));
  std::vector<int> pids;
  for (int p; in >> p;) pids.push_back(p);
  ASSERT_EQ(pids.size(), 2u);
  for (int p : pids) EXPECT_TRUE(WaitGone(p)) << p;
  // Nothing that still runs is left in the job's process group (the background sleeps'
  // own children included): each member still seen is waited for.
  for (int p : GroupMembers(leader)) EXPECT_TRUE(WaitGone(p)) << p;
  EXPECT_TRUE(GroupMembers(leader).empty());
}

TEST_F(ProcessSupervisorTest, SignalReachesTheTrap) {
  std::string ready = Fifo("ready").path();
  ProcessSpec spec = Sh(1, "trap 'echo got; exit 5' USR1; echo ready > " + ready +
                               "; while :; do sleep 1000 & wait; done");
  ASSERT_TRUE(sup_->Launch(spec).has_value());
  ASSERT_EQ(Line("ready"), "ready");
  EXPECT_EQ(sup_->Signal(JobId(1), Generation(2), SIGUSR1).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(sup_->Signal(JobId(2), Generation(1), SIGUSR1).error().code, ErrorCode::kNotFound);
  ASSERT_TRUE(sup_->Signal(JobId(1), Generation(1), SIGUSR1).has_value());
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_EQ(x.exit_code, 5);
  EXPECT_FALSE(x.cancelled);
  EXPECT_EQ(ReadFile(spec.stdout_path), "got\n");
  EXPECT_EQ(sup_->Signal(JobId(1), Generation(1), SIGUSR1).error().code, ErrorCode::kNotFound);
}

// A requeued job starts again (generation 2) while its previous run is still being killed:
// both run, and each is signalled, cancelled and reported under its own generation.
TEST_F(ProcessSupervisorTest, ANewRunOfAJobStartsWhileThePreviousOneEnds) {
  std::string ready = Fifo("ready").path();
  ProcessSpec old_run = Sh(1, "trap '' TERM; echo ready > " + ready + "; sleep 1000");
  old_run.kill_grace = Millis(300);  // it ignores SIGTERM: killed after the grace
  ASSERT_TRUE(sup_->Launch(old_run).has_value());
  ASSERT_EQ(Line("ready"), "ready");
  ASSERT_TRUE(sup_->Cancel(JobId(1), Generation(1)).has_value());
  ProcessSpec new_run = Sh(1, "sleep 1000");
  new_run.generation = Generation(2);
  ASSERT_TRUE(sup_->Launch(new_run).has_value());
  EXPECT_EQ(sup_->Launch(new_run).error().code, ErrorCode::kAlreadyExists);
  auto running = sup_->Running();
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0].generation, Generation(1));
  EXPECT_EQ(running[1].generation, Generation(2));
  clock_.Advance(Millis(300));
  Recheck(1, kUnlimited);  // the old run's grace is over
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_EQ(x.generation, Generation(1));
  EXPECT_TRUE(x.cancelled);
  EXPECT_EQ(x.signal, SIGKILL);
  ASSERT_EQ(sup_->Running().size(), 1u);
  EXPECT_EQ(sup_->Running()[0].generation, Generation(2));
  EXPECT_EQ(sup_->Cancel(JobId(1), Generation(1)).error().code, ErrorCode::kNotFound);
  ASSERT_TRUE(sup_->Cancel(JobId(1), Generation(2)).has_value());
  EXPECT_TRUE(exits_.WaitCountOf(JobId(1), 2));
}

TEST_F(ProcessSupervisorTest, SignalStepReachesOnlyThatStep) {
  std::string ready = Fifo("ready").path();
  ProcessSpec batch = Sh(1, "trap 'echo batch-got' USR1; echo batch > " + ready +
                                "; while :; do sleep 1000 & wait; done");
  ASSERT_TRUE(sup_->Launch(batch).has_value());
  ProcessSpec task = Sh(1, "trap 'echo task-got; exit 3' USR1; echo task > " + ready +
                               "; while :; do sleep 1000 & wait; done");
  task.step = 0;
  task.stdout_path = dir_ / "task.out";
  ASSERT_TRUE(sup_->Launch(task).has_value());
  std::set<std::string> ready_ones = {Line("ready"), Line("ready")};
  ASSERT_EQ(ready_ones, (std::set<std::string>{"batch", "task"}));
  ASSERT_TRUE(sup_->SignalStep(JobId(1), Generation(1), 0, SIGUSR1).has_value());
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_EQ(x.step, 0u);
  EXPECT_EQ(x.exit_code, 3);
  EXPECT_EQ(ReadFile(dir_ / "task.out"), "task-got\n");
  EXPECT_EQ(ReadFile(batch.stdout_path), "");
  EXPECT_EQ(sup_->SignalStep(JobId(1), Generation(1), 0, SIGUSR1).error().code,
            ErrorCode::kNotFound);
  ASSERT_TRUE(sup_->Cancel(JobId(1), Generation(1)).has_value());
}

// Time limits changed while the processes run: each `SetTimeLimit` is also the moment the
// deadlines of the fake time are checked.
class ProcessSupervisorLimitTest : public ProcessSupervisorTest {};

TEST_F(ProcessSupervisorLimitTest, ALimitBelowTheTimeRunEndsTheProcessNow) {
  ProcessSpec a = Trapping(1, Minutes(60));
  LaunchReady(a);
  clock_.Advance(Minutes(30));
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(1), Generation(1), Minutes(20)).has_value());
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_TRUE(x.timed_out);
  EXPECT_FALSE(x.cancelled);
  EXPECT_EQ(x.exit_code, 0);
  EXPECT_EQ(Ran(x), Minutes(30));
  EXPECT_EQ(ReadFile(a.stdout_path), "term\n");
  // Bad input changes nothing; a run that is not there is not found.
  EXPECT_EQ(sup_->SetTimeLimit(JobId(1), Generation(1), Minutes(5)).error().code,
            ErrorCode::kNotFound);
  EXPECT_EQ(sup_->SetTimeLimit(JobId(1), Generation(1), Seconds(0)).error().code,
            ErrorCode::kInvalidArgument);
}

TEST_F(ProcessSupervisorLimitTest, LoweringTimesOutAtTheNewDeadline) {
  ProcessSpec b = Trapping(2, Minutes(60));
  LaunchReady(b);
  ProcessSpec sentinel = Trapping(3, Minutes(40));  // times out in the same pass as the check
  LaunchReady(sentinel);
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(2), Generation(1), Minutes(45)).has_value());
  EXPECT_EQ(sup_->SetTimeLimit(JobId(2), Generation(2), Minutes(45)).error().code,
            ErrorCode::kNotFound);
  clock_.Advance(Minutes(44));
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(2), Generation(1), Minutes(45)).has_value());
  EXPECT_TRUE(exits_.Wait(JobId(3)).timed_out);
  clock_.Advance(Minutes(2));
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(2), Generation(1), Minutes(45)).has_value());
  ProcessExit x = exits_.Wait(JobId(2));
  EXPECT_TRUE(x.timed_out);
  EXPECT_EQ(Ran(x), Minutes(46));  // not at 44 minutes, nor at the old 60
  EXPECT_EQ(ReadFile(b.stdout_path), "term\n");
}

TEST_F(ProcessSupervisorLimitTest, RaisingLetsItRunPastTheOldDeadline) {
  ProcessSpec c = Trapping(4, Minutes(10));
  LaunchReady(c);
  ProcessSpec sentinel = Trapping(5, Minutes(15));
  LaunchReady(sentinel);
  clock_.Advance(Minutes(5));
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(4), Generation(1), Minutes(60)).has_value());
  clock_.Advance(Minutes(15));  // 20 minutes: past the old limit
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(4), Generation(1), Minutes(60)).has_value());
  EXPECT_TRUE(exits_.Wait(JobId(5)).timed_out);
  EXPECT_EQ(exits_.Count(JobId(4)), 0u);
  clock_.Advance(Minutes(41));
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(4), Generation(1), Minutes(60)).has_value());
  ProcessExit x = exits_.Wait(JobId(4));
  EXPECT_TRUE(x.timed_out);
  EXPECT_EQ(Ran(x), Minutes(61));
  // An unlimited limit has no deadline at all.
  ProcessSpec d = Trapping(6, Minutes(1));
  LaunchReady(d);
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(6), Generation(1), kUnlimited).has_value());
  clock_.Advance(Minutes(100000));
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(6), Generation(1), kUnlimited).has_value());
  ASSERT_TRUE(sup_->Cancel(JobId(6), Generation(1)).has_value());
  ProcessExit y = exits_.Wait(JobId(6));
  EXPECT_TRUE(y.cancelled);
  EXPECT_FALSE(y.timed_out);
}

TEST_F(ProcessSupervisorLimitTest, WarningIsSentOnceAndReArmedByALaterLimit) {
  ProcessSpec w = Trapping(7, Minutes(10));
  w.warn = SignalSpec{.signal = SIGUSR1, .before = Minutes(5)};
  LaunchReady(w);
  clock_.Advance(Minutes(6));  // past the warning time (5 minutes)
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(7), Generation(1), Minutes(10)).has_value());
  ASSERT_EQ(Line("events7"), "warned");
  // The same deadline again, or a later one whose warning time is past too: not sent again.
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(7), Generation(1), Minutes(10)).has_value());
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(7), Generation(1), Minutes(11)).has_value());
  // A limit whose warning time is ahead re-arms it: sent at 25 minutes, not before.
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(7), Generation(1), Minutes(30)).has_value());
  clock_.Advance(Minutes(18));  // 24 minutes
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(7), Generation(1), Minutes(30)).has_value());
  clock_.Advance(Minutes(2));  // 26 minutes
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(7), Generation(1), Minutes(30)).has_value());
  ASSERT_EQ(Line("events7"), "warned");
  clock_.Advance(Minutes(5));  // 31 minutes
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(7), Generation(1), Minutes(30)).has_value());
  ProcessExit x = exits_.Wait(JobId(7));
  EXPECT_TRUE(x.timed_out);
  EXPECT_EQ(ReadFile(w.stdout_path), "warned\nwarned\nterm\n");
}

TEST_F(ProcessSupervisorLimitTest, StepTasksCountTheirLimitFromTheJobsStart) {
  Timestamp job_start = clock_.Now();
  ProcessSpec batch = Trapping(8, Minutes(60));
  LaunchReady(batch);
  clock_.Advance(Minutes(10));
  ProcessSpec task = Sh(8, "trap 'echo term; exit 0' TERM; echo ready > " +
                               Fifo("task.ready").path() + "; while :; do sleep 1000 & wait; done");
  task.step = 0;
  task.stdout_path = dir_ / "task.out";
  task.time_limit = Minutes(60);
  task.limit_start = job_start;
  task.kill_grace = Minutes(600);
  ASSERT_TRUE(sup_->Launch(task).has_value());
  ASSERT_EQ(Line("task.ready"), "ready");
  clock_.Advance(Minutes(5));
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(8), Generation(1), Minutes(20)).has_value());
  clock_.Advance(Minutes(6));  // 21 minutes after the job's start, 11 after the task's
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(8), Generation(1), Minutes(20)).has_value());
  ASSERT_TRUE(exits_.WaitCountOf(JobId(8), 2));
  for (const ProcessExit& x : exits_.All()[JobId(8)]) {
    EXPECT_TRUE(x.timed_out) << "step " << x.step;
    EXPECT_EQ(x.end_time, job_start + Minutes(21));
  }
  EXPECT_EQ(ReadFile(task.stdout_path), "term\n");
}

// --- run as another user (needs root) ---

}  // namespace
}  // namespace corral::agent
