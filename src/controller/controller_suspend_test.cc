// `scontrol suspend|resume` (Controller::Suspend) and `sdiag`'s state figures
// (Controller::CollectDiag), with a fake clock and transport.
#include <csignal>

#include <gtest/gtest.h>

#include "controller/controller.h"
#include "controller/testing/controller_test_base.h"
#include "controller/testing/requests.h"

namespace corral::controller {
namespace {

using testing::As;
using testing::BatchJob;
using testing::Is;
using testing::JobExit;
using testing::kAdmin;
using testing::kAlice;
using testing::kBob;
using testing::NodeRegistration;

const api::Identity kOperator{
    .user = "olga", .uid = 1005, .gid = 1005, .role = api::Role::kOperator};

class SuspendTest : public testing::ControllerTestBase {
 protected:
  SuspendTest() { Reset(); }
  void Reset() {
    StartController(TestConfig(), {Partition{.name = "main", .is_default = true}}, nullptr);
  }
};

// The commands `out` holds, as "node:signal N" / "node:limit SECONDS|unlimited".
std::vector<std::string> Commands(const std::vector<OutgoingCommand>& out) {
  std::vector<std::string> v;
  for (const auto& c : out) {
    if (Is<api::SignalRequest>(c)) {
      v.push_back(c.to.node + ":signal " + std::to_string(As<api::SignalRequest>(c).signal));
    } else if (Is<api::TimeLimitRequest>(c)) {
      Duration d = As<api::TimeLimitRequest>(c).time_limit;
      v.push_back(c.to.node + ":limit " +
                  (d == kUnlimited ? std::string("unlimited") : std::to_string(ToSecondsF(d))));
    } else {
      v.push_back(c.to.node + ":other");
    }
  }
  return v;
}

TEST_F(SuspendTest, SuspendStopsTheRunAndItsClockResumeExtendsTheLimit) {
  Register(NodeRegistration("node01", 2));
  JobSpec s = BatchJob(1);
  s.time_limit = Minutes(10);
  JobId a = Submit(s);
  controller_->Tick();
  ASSERT_EQ(Get(a).state, JobState::kRunning);
  Flush();
  const Timestamp start = Get(a).start_time;

  // The owner may not (Slurm: operators and admins), nor may another user; nothing changes.
  for (const api::Identity& who : {kAlice, kBob}) {
    auto refused = controller_->Suspend(who, a, true);
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied) << refused.error().message;
  }
  EXPECT_TRUE(controller_->TakeWrites().empty());
  EXPECT_TRUE(Flush().empty());
  // Resuming a job that is not suspended.
  auto not_suspended = controller_->Suspend(kOperator, a, false);
  ASSERT_FALSE(not_suspended.has_value());
  EXPECT_EQ(not_suspended.error().message, "job " + a.ToString() + ": not suspended");

  // Two minutes in, an operator suspends it: SIGSTOP, then no deadline while it is stopped.
  clock_.Advance(Minutes(2));
  ASSERT_TRUE(controller_->Suspend(kOperator, a, true).has_value());
  EXPECT_EQ(Commands(Flush()), (std::vector<std::string>{"node01:signal " + std::to_string(SIGSTOP),
                                                         "node01:limit unlimited"}));
  Job j = Get(a);
  EXPECT_EQ(j.state, JobState::kRunning);  // it keeps its GPU
  EXPECT_TRUE(IsSuspended(j));
  EXPECT_EQ(ShownStateName(j), "SUSPENDED");
  EXPECT_EQ(ShownStateShortName(j), "S");
  EXPECT_EQ(j.allocation.pre_suspend, Minutes(2));
  EXPECT_EQ(j.allocation.suspend_time, start + Minutes(2));
  EXPECT_EQ(controller_->GetNode("node01")->alloc_gpus.size(), 1u);
  // Again: nothing to do, no command.
  ASSERT_TRUE(controller_->Suspend(kAdmin, a, true).has_value());
  EXPECT_TRUE(Flush().empty());
  // No new step in a suspended job.
  auto step = controller_->CreateStep(kAlice, a, StepSpec{.argv = {"true"}});
  ASSERT_FALSE(step.has_value());
  EXPECT_EQ(step.error().message, "job " + a.ToString() + ": suspended");

  // Suspended for five minutes: the run time stands still.
  clock_.Advance(Minutes(5));
  EXPECT_EQ(RunTime(Get(a), clock_.Now()), Minutes(2));
  // A restarted controller knows it is suspended.
  Flush();
  Reset();
  EXPECT_TRUE(IsSuspended(Get(a)));
  Flush();

  // Resumed: the new deadline (10 + 5 minutes from the start) before SIGCONT.
  ASSERT_TRUE(controller_->Suspend(kAdmin, a, false).has_value());
  EXPECT_EQ(Commands(Flush()),
            (std::vector<std::string>{"node01:limit " + std::to_string(ToSecondsF(Minutes(15))),
                                      "node01:signal " + std::to_string(SIGCONT)}));
  j = Get(a);
  EXPECT_FALSE(IsSuspended(j));
  EXPECT_EQ(ShownStateName(j), "RUNNING");
  EXPECT_EQ(j.allocation.suspended_for, Minutes(5));
  EXPECT_EQ(j.allocation.suspend_time, start + Minutes(7));
  EXPECT_EQ(RunDeadlineLimit(j), Minutes(15));
  clock_.Advance(Minutes(1));
  EXPECT_EQ(RunTime(Get(a), clock_.Now()), Minutes(3));

  // Its end: RunTime leaves the suspended time out for good; a pending or ended job cannot be
  // suspended.
  ASSERT_TRUE(controller_->HandleEvents(JobExit("node01", Get(a), 0)).has_value());
  EXPECT_EQ(RunTime(Get(a), clock_.Now() + Minutes(30)), Minutes(3));
  auto ended = controller_->Suspend(kAdmin, a, true);
  ASSERT_FALSE(ended.has_value());
  EXPECT_EQ(ended.error().code, ErrorCode::kFailedPrecondition);
  JobId pending = Submit(BatchJob(2));  // no pass runs: it stays pending
  auto p = controller_->Suspend(kAdmin, pending, true);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().message, "job " + pending.ToString() + ": pending");
  EXPECT_EQ(controller_->Suspend(kAdmin, JobId(999), true).error().code, ErrorCode::kNotFound);
}

TEST_F(SuspendTest, ARequeuedSuspendedJobsNextRunStartsUnsuspended) {
  Register(NodeRegistration("node01", 1));
  JobId a = Submit(BatchJob(1));
  controller_->Tick();
  ASSERT_TRUE(controller_->Suspend(kAdmin, a, true).has_value());
  ASSERT_TRUE(controller_->Requeue(kAdmin, a).has_value());
  EXPECT_EQ(ShownStateName(Get(a)), "PENDING");
  controller_->Tick();
  Job j = Get(a);
  ASSERT_EQ(j.state, JobState::kRunning);
  EXPECT_FALSE(j.allocation.suspended);
  EXPECT_EQ(j.allocation.suspend_time, Timestamp{});
  EXPECT_EQ(j.allocation.suspended_for, Duration(0));
}

TEST_F(SuspendTest, DiagCountsJobsSinceTheStartAndThePasses) {
  Register(NodeRegistration("node01", 2));
  const Timestamp since = clock_.Now();
  JobId a = Submit(BatchJob(1));
  JobId b = Submit(BatchJob(1));
  JobId c = Submit(BatchJob(1));
  Submit(BatchJob(2));  // waits
  controller_->Tick();
  ASSERT_TRUE(controller_->HandleEvents(JobExit("node01", Get(a), 0)).has_value());
  ASSERT_TRUE(controller_->HandleEvents(JobExit("node01", Get(b), 3)).has_value());
  ASSERT_TRUE(controller_->Cancel(kAlice, c).has_value());
  clock_.Advance(Seconds(5));
  api::DiagInfo d = controller_->CollectDiag();
  EXPECT_EQ(d.since, since);
  EXPECT_EQ(d.now, since + Seconds(5));
  EXPECT_EQ(d.jobs_submitted, 4u);
  EXPECT_EQ(d.jobs_started, 2u);
  EXPECT_EQ(d.jobs_completed, 1u);
  EXPECT_EQ(d.jobs_failed, 1u);
  EXPECT_EQ(d.jobs_canceled, 1u);
  EXPECT_EQ(d.jobs_pending, 1u);
  EXPECT_EQ(d.jobs_running, 0u);
  EXPECT_GE(d.cycles, 1u);
  EXPECT_EQ(d.last_queue_length, 4u);
  // A restart starts the counts again (as slurmctld's).
  Flush();
  Reset();
  d = controller_->CollectDiag();
  EXPECT_EQ(d.jobs_submitted, 0u);
  EXPECT_EQ(d.jobs_pending, 1u);
}

TEST_F(SuspendTest, TopPutsAPendingJobAheadOfItsUsersLikeJobsByNice) {
  Register(NodeRegistration("node01", 1));
  JobId running = Submit(BatchJob(1));
  controller_->Tick();
  ASSERT_EQ(Get(running).state, JobState::kRunning);
  JobId a = Submit(BatchJob(1));
  JobId b = Submit(BatchJob(1));
  JobSpec other_account = BatchJob(1);
  other_account.account = "physics";
  JobId c = Submit(other_account);
  JobId bobs = Submit(BatchJob(1), kBob);
  controller_->Tick();  // priorities of the pending jobs, all equal here: submit order decides
  Flush();
  auto priority = [&](JobId id) { return controller_->GetJob(id)->priority; };
  const int64_t p = priority(a);
  ASSERT_EQ(priority(b), p);

  EXPECT_EQ(controller_->Top(kAlice, b).error().code, ErrorCode::kPermissionDenied);
  auto not_pending = controller_->Top(kAdmin, running);
  ASSERT_FALSE(not_pending.has_value());
  EXPECT_EQ(not_pending.error().message, "job " + running.ToString() + ": not pending");
  EXPECT_TRUE(controller_->TakeWrites().empty());

  ASSERT_TRUE(controller_->Top(kOperator, b).has_value());
  EXPECT_EQ(Get(b).spec.nice, -1);  // one above a, submitted earlier at the same priority
  EXPECT_EQ(priority(b), p + 1);
  EXPECT_EQ(Get(a).spec.nice, 0);
  EXPECT_EQ(Get(c).spec.nice, 0);     // another account: not one of the set
  EXPECT_EQ(Get(bobs).spec.nice, 0);  // another user
  // Back: a goes on top again and b takes a's priority (nice +1 from -1).
  ASSERT_TRUE(controller_->Top(kAdmin, a).has_value());
  EXPECT_EQ(priority(a), p + 1);
  EXPECT_EQ(Get(a).spec.nice, -1);
  EXPECT_EQ(priority(b), p);
  EXPECT_EQ(Get(b).spec.nice, 0);
  // Stored.
  Flush();
  Reset();
  EXPECT_EQ(Get(a).spec.nice, -1);
}

}  // namespace
}  // namespace corral::controller
