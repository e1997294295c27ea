#include "controller/internal/job_lifecycle.h"

#include <signal.h>

#include <algorithm>
#include <variant>

#include <gtest/gtest.h>

#include "controller/internal/controller_state.h"
#include "controller/testing/requests.h"
#include "core/testing/fake_clock.h"
#include "sched/first_fit_policy.h"

namespace corral::controller::internal {
namespace {

class JobLifecycleTest : public ::testing::Test {
 protected:
  JobLifecycleTest() {
    for (const char* name : {"node02", "node01"}) {
      s_.nodes.Register(testing::NodeRegistration(name, 4).inventory, clock_.Now(),
                        clock_.MonotonicNow());
    }
  }

  // A pending job of alice, started on 2 GPUs of each node (the placement lists node02
  // first).
  JobEntry& StartTwoNodeJob(SignalSpec signal = {}, bool requeue = false) {
    JobEntry e;
    e.job.id = s_.jobs.AllocateId();
    e.job.state = JobState::kPending;
    e.job.spec.user = "alice";
    e.job.spec.signal = signal;
    e.job.spec.requeue = requeue;
    JobId id = e.job.id;
    s_.jobs.Add(std::move(e));
    JobEntry& added = *s_.jobs.Find(id);
    sched::Placement placement{.job = id, .partition = "main"};
    placement.nodes = {{.node_name = "node02", .cpus = 2, .gpus = GpuSet(0b11)},
                       {.node_name = "node01", .cpus = 2, .gpus = GpuSet(0b11)}};
    s_.lifecycle.Start(added, placement);
    return added;
  }

  std::vector<OutgoingCommand> TakeOutbox() {
    std::vector<OutgoingCommand> out = std::move(s_.out.outbox);
    s_.out.outbox.clear();
    return out;
  }

  corral::testing::FakeClock clock_;
  ControllerState s_{ControllerConfig{}, sched::DefaultSchedulerConfig(),
                     std::make_unique<sched::FirstFitPolicy>(), clock_};
};

TEST_F(JobLifecycleTest, AStartHoldsTheNodesAndLaunchesOnTheFirstInHostListOrder) {
  JobEntry& e = StartTwoNodeJob();
  EXPECT_EQ(e.job.state, JobState::kRunning);
  EXPECT_EQ(s_.jobs.running(), (std::set<JobId>{e.job.id}));
  EXPECT_EQ(e.job.allocation.generation, Generation(1));
  ASSERT_EQ(e.job.allocation.nodes.size(), 2u);
  EXPECT_EQ(e.job.allocation.nodes[0].node_name, "node01");
  EXPECT_EQ(s_.nodes.Find("node02")->usage.gpus, GpuSet(0b11));
  auto out = TakeOutbox();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to.node, "node01");
  EXPECT_EQ(std::get<api::LaunchRequest>(out[0].request).job.allocation, e.job.allocation);
}

TEST_F(JobLifecycleTest, AnEndReleasesTheNodesAndEndsTheSteps) {
  JobEntry& e = StartTwoNodeJob();
  StepSpec spec;
  spec.argv = {"true"};
  ASSERT_TRUE(s_.steps.Create(e, spec).has_value());
  TakeOutbox();
  s_.lifecycle.Finish(e, JobState::kCompleted, "None");
  EXPECT_EQ(e.job.state, JobState::kCompleted);
  EXPECT_EQ(e.job.end_time, clock_.Now());
  EXPECT_TRUE(s_.nodes.Find("node01")->usage.gpus.empty());
  EXPECT_TRUE(s_.nodes.Find("node02")->jobs.empty());
  EXPECT_EQ(s_.steps.Find(e.job.id, 0)->info.state, JobState::kCancelled);
  EXPECT_EQ(TakeOutbox().size(), 2u) << "the step's tasks are stopped on both nodes";
  EXPECT_EQ(s_.jobs.TakeFinished(), (std::vector<JobId>{e.job.id}));
}

TEST_F(JobLifecycleTest, ALostJobIsRequeuedCancelledOrEndsNodeFail) {
  JobEntry& plain = StartTwoNodeJob();
  JobEntry& requeueable = StartTwoNodeJob({}, /*requeue=*/true);
  s_.lifecycle.FailJobsOn(*s_.nodes.Find("node02"), "stopped responding");
  EXPECT_EQ(plain.job.state, JobState::kNodeFail);
  EXPECT_EQ(plain.job.reason, "node node02 stopped responding");
  EXPECT_EQ(requeueable.job.state, JobState::kPending);
  EXPECT_EQ(requeueable.job.restart_count, 1u);
  EXPECT_EQ(requeueable.job.reason, "NodeFail requeued: node node02 stopped responding");
  // Their batch steps ran on node01, which is still up: they are stopped there.
  int cancels = 0;
  for (const auto& c : TakeOutbox()) {
    cancels += std::holds_alternative<api::CancelRequest>(c.request) && c.to.node == "node01";
  }
  EXPECT_EQ(cancels, 2);
}

TEST_F(JobLifecycleTest, AStopSignalsThenActsWhenTheGraceEnds) {
  JobEntry& e = StartTwoNodeJob({.signal = SIGUSR1}, /*requeue=*/true);
  TakeOutbox();
  s_.lifecycle.SignalCheckpointAndStop(e, Seconds(30), StopAction::kRequeue, "preempted", 0);
  auto out = TakeOutbox();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<api::SignalRequest>(out[0].request).signal, SIGUSR1);
  s_.lifecycle.SignalCheckpointAndStop(e, Seconds(300), StopAction::kCancel, "again", 0);
  EXPECT_TRUE(TakeOutbox().empty()) << "the first stop stands";
  EXPECT_EQ(s_.stops.NextDeadline(), clock_.MonotonicNow() + Seconds(30));
  clock_.Advance(Seconds(29));
  s_.lifecycle.RunDueStops();
  EXPECT_EQ(e.job.state, JobState::kRunning);
  clock_.Advance(Seconds(1));
  s_.lifecycle.RunDueStops();
  EXPECT_EQ(e.job.state, JobState::kPending);
  EXPECT_EQ(e.job.reason, "preempted");
  EXPECT_TRUE(std::holds_alternative<api::CancelRequest>(TakeOutbox().at(0).request));
}

TEST_F(JobLifecycleTest, WithoutASignalAStopActsAtOnce) {
  JobEntry& e = StartTwoNodeJob();
  s_.lifecycle.SignalCheckpointAndStop(e, Seconds(30), StopAction::kNodeFail, "gpu", 0);
  EXPECT_EQ(e.job.state, JobState::kNodeFail);
  JobEntry& f = StartTwoNodeJob();
  TakeOutbox();
  s_.lifecycle.SignalCheckpointAndStop(f, Seconds(30), StopAction::kCancel, "preempted", SIGTERM);
  EXPECT_EQ(std::get<api::SignalRequest>(TakeOutbox().at(0).request).signal, SIGTERM)
      << "the fallback signal";
  // It exits within the grace: the stop's action, not what the exit says.
  api::JobEvent exit{.job = f.job.id, .generation = f.job.allocation.generation, .exit_code = 0};
  EXPECT_TRUE(s_.lifecycle.HandleStoppedExit(f, exit));
  EXPECT_EQ(f.job.state, JobState::kCancelled);
  EXPECT_EQ(f.job.reason, "preempted");
}

// Whatever requeues a job, its run is over at once: the job waits under a new generation (so a
// relaunch can never take up the old run's number, and a late report or credential of the old
// run is not current), and the old run is among the stopped ones (its job credential goes).
TEST_F(JobLifecycleTest, EveryRequeueMovesTheGenerationOnAtOnce) {
  auto expect_requeued = [&](const JobEntry& e, Generation old, const std::string& path) {
    EXPECT_EQ(e.job.state, JobState::kPending) << path;
    EXPECT_GT(e.job.allocation.generation, old) << path;
    auto stopped = s_.jobs.TakeStoppedRuns();
    EXPECT_NE(std::find(stopped.begin(), stopped.end(), std::pair{e.job.id, old}), stopped.end())
        << path;
  };
  // The requeue command (Controller::Requeue).
  JobEntry& command = StartTwoNodeJob({}, /*requeue=*/true);
  Generation old = command.job.allocation.generation;
  s_.lifecycle.Requeue(command, "requeued by alice");
  expect_requeued(command, old, "requeue command");
  // A node that stopped responding.
  JobEntry& lost = StartTwoNodeJob({}, /*requeue=*/true);
  old = lost.job.allocation.generation;
  s_.lifecycle.FailJobsOn(*s_.nodes.Find("node02"), "stopped responding");
  expect_requeued(lost, old, "node failure");
  // A preemption (or the waste policy) without a signal: at once.
  JobEntry& preempted = StartTwoNodeJob({}, /*requeue=*/true);
  old = preempted.job.allocation.generation;
  s_.lifecycle.SignalCheckpointAndStop(preempted, Seconds(30), StopAction::kRequeue, "preempted",
                                       0);
  expect_requeued(preempted, old, "preemption");
  // With a signal: when the grace ends, or when the job exits within it.
  JobEntry& idle = StartTwoNodeJob({.signal = SIGUSR1}, /*requeue=*/true);
  old = idle.job.allocation.generation;
  s_.lifecycle.SignalCheckpointAndStop(idle, Seconds(30), StopAction::kRequeue, "GPU idle", 0);
  clock_.Advance(Seconds(30));
  s_.lifecycle.RunDueStops();
  expect_requeued(idle, old, "waste policy after the grace");
  JobEntry& exits = StartTwoNodeJob({.signal = SIGUSR1}, /*requeue=*/true);
  old = exits.job.allocation.generation;
  s_.lifecycle.SignalCheckpointAndStop(exits, Seconds(30), StopAction::kRequeue, "preempted", 0);
  EXPECT_TRUE(s_.lifecycle.HandleStoppedExit(exits, {.job = exits.job.id, .generation = old}));
  expect_requeued(exits, old, "exit within the grace");
  // A GPU that failed under the job.
  JobEntry& gpu = StartTwoNodeJob({}, /*requeue=*/true);
  old = gpu.job.allocation.generation;
  api::JobEvent failed{.job = gpu.job.id, .generation = old, .gpu_failure = "gpu 0: XID 79"};
  EXPECT_TRUE(s_.lifecycle.HandleGpuFailedExit(gpu, failed, "node01"));
  expect_requeued(gpu, old, "GPU failure");
  // Its next start takes yet another.
  Generation waiting = gpu.job.allocation.generation;
  s_.lifecycle.Start(gpu, {.job = gpu.job.id,
                           .partition = "main",
                           .nodes = {{.node_name = "node01", .cpus = 2, .gpus = GpuSet(0b11)}}});
  EXPECT_GT(gpu.job.allocation.generation, waiting);
}

}  // namespace
}  // namespace corral::controller::internal
