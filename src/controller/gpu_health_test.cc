// Controller: per-GPU health (internal/gpu_health_tracker.h) — GPUs taken out of service from
// the agents' heartbeats, the failover of the jobs on them through SignalCheckpointAndStop
// (checkpoint signal, then requeue or NODE_FAIL), node-level problems, and returning GPUs to
// service.
#include <csignal>

#include <gtest/gtest.h>

#include "controller/controller.h"
#include "controller/testing/controller_test_base.h"
#include "controller/testing/requests.h"

namespace corral::controller {
namespace {

using testing::As;
using testing::CommandsOf;
using testing::kAdmin;
using testing::kAlice;
using testing::NodeRegistration;

class GpuHealthTest : public testing::ControllerTestBase {
 protected:
  GpuHealthTest() { Start(); }

  // A controller on `store_` (a restart when called again), with node01 and node02
  // registered (node01 reporting `running_`); returns what it sent.
  std::vector<OutgoingCommand> Start() {
    ControllerConfig config = TestConfig();
    config.node_timeout = Seconds(3600);  // these nodes heartbeat only when a test says so
    StartController(config);
    std::vector<api::RunningJobRef> running;
    for (const auto& [id, gen] : running_) running.push_back({id, gen});
    Register(NodeRegistration("node01", 4, "http://node01:6901", running));
    Register(NodeRegistration("node02", 4, "http://node02:6901"));
    return Flush();
  }

  // A 1-GPU job (on node01 GPU 0 first, then GPU 1, ...) as alice, started.
  Job StartJob(SignalSpec signal = {}, bool requeue = false) {
    JobSpec s = testing::BatchJob(1, 1, "sleep 100");
    s.signal = signal;
    s.requeue = requeue;
    return SubmitAndStart(s);
  }

  GpuSet Gpus(const Job& j) { return j.allocation.nodes.at(0).gpus; }

  // node01's heartbeat reporting `problems` (and `node_problem`).
  api::HeartbeatResponse Heartbeat(std::vector<api::GpuHealth> problems,
                                   std::string node_problem = "", bool auto_resume = false) {
    api::HeartbeatRequest req{.node = "node01"};
    for (const auto& [id, j] : running_) req.running.push_back({id, j});
    req.gpu_problems = std::move(problems);
    req.node_problem = std::move(node_problem);
    req.auto_resume = auto_resume;
    auto r = controller_->Heartbeat(req);
    EXPECT_TRUE(r.has_value()) << r.error().message;
    return r ? *r : api::HeartbeatResponse{};
  }

  // The job's batch script exits (on node01).
  void Exit(const Job& j, int code, int signal = 0, std::string gpu_failure = "") {
    api::JobEvent ev{.type = api::JobEventType::kExited,
                     .job = j.id,
                     .generation = j.allocation.generation,
                     .exit_code = code,
                     .signal = signal};
    ev.gpu_failure = std::move(gpu_failure);
    ev.usage.gpu_seconds = 42;
    EXPECT_TRUE(controller_->HandleEvents({.node = "node01", .events = {ev}}).has_value());
  }

  static inline const api::GpuHealth kXid79{
      .gpu = 0, .reason = "XID 79 (GPU has fallen off the bus)", .latched = true};

  std::map<JobId, Generation> running_;  // what node01 reports running
};

TEST_F(GpuHealthTest, AFailingGpuGoesOutOfServiceAloneAndDurably) {
  Heartbeat({kXid79});
  EXPECT_EQ(Node("node01").node.failed_gpus, GpuSet(0b1));
  ASSERT_EQ(Node("node01").gpu_problems.size(), 1u);
  EXPECT_EQ(Node("node01").gpu_problems[0].reason, "XID 79 (GPU has fallen off the bus)");
  EXPECT_TRUE(Node("node02").node.failed_gpus.empty());
  EXPECT_FALSE(Node("node01").node.drain) << "a GPU problem does not drain the node";
  Flush();
  // Durable: a restarted controller keeps GPU 0 out.
  bool stored = false;
  auto state = store_.Load();
  ASSERT_TRUE(state.has_value());
  for (const auto& n : state->nodes)
    stored |= n.inventory.name == "node01" && n.failed_gpus == GpuSet(0b1);
  EXPECT_TRUE(stored);
  // The node's other GPUs keep working: new jobs land on GPU 1, never on GPU 0.
  Job j = StartJob();
  EXPECT_EQ(j.allocation.nodes[0].node_name, "node01");
  EXPECT_EQ(Gpus(j), GpuSet(0b10));
  // Problems on GPUs the node does not have are ignored.
  Heartbeat({kXid79, {.gpu = 9, .reason = "XID 79"}});
  EXPECT_EQ(Node("node01").node.failed_gpus, GpuSet(0b1));
}

TEST_F(GpuHealthTest, RequeueableJobGetsItsCheckpointSignalThenIsRequeued) {
  Job j = StartJob({.signal = SIGUSR1, .before = Seconds(90)}, /*requeue=*/true);
  Job bystander = StartJob();
  ASSERT_EQ(Gpus(j), GpuSet(0b1));
  ASSERT_EQ(Gpus(bystander), GpuSet(0b10));
  Heartbeat({kXid79});
  auto out = Flush();
  auto signals = CommandsOf<api::SignalRequest>(out);
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(As<api::SignalRequest>(signals[0]).job, j.id);
  EXPECT_EQ(As<api::SignalRequest>(signals[0]).signal, SIGUSR1);
  EXPECT_EQ(signals[0].to.node, "node01");
  EXPECT_TRUE(CommandsOf<api::CancelRequest>(out).empty());
  EXPECT_EQ(Get(j.id).state, JobState::kRunning);
  // Its grace is its --signal's 90 s.
  EXPECT_LE(controller_->NextTickDeadline(), clock_.MonotonicNow() + Seconds(90));
  // A second report changes nothing.
  Heartbeat({kXid79});
  EXPECT_TRUE(CommandsOf<api::SignalRequest>(Flush()).empty());
  clock_.Advance(Seconds(89));
  controller_->Tick();
  EXPECT_EQ(Get(j.id).state, JobState::kRunning);
  clock_.Advance(Seconds(2));
  controller_->Tick();
  Job requeued = Get(j.id);
  EXPECT_EQ(requeued.restart_count, 1u);
  EXPECT_NE(requeued.allocation.generation, j.allocation.generation);
  EXPECT_EQ(requeued.state, JobState::kRunning) << "placed again at once, on a healthy GPU";
  EXPECT_FALSE(Gpus(requeued).contains(0));
  bool cancelled = false;
  for (const auto& c : CommandsOf<api::CancelRequest>(Flush())) {
    cancelled |= As<api::CancelRequest>(c).job == j.id &&
                 As<api::CancelRequest>(c).generation == j.allocation.generation;
  }
  EXPECT_TRUE(cancelled) << "the old run is stopped";
  EXPECT_EQ(Get(bystander.id).state, JobState::kRunning);
  // The old run's exit is stale.
  api::JobEvent stale{
      .type = api::JobEventType::kExited, .job = j.id, .generation = j.allocation.generation};
  EXPECT_EQ(controller_->HandleEvents({.node = "node01", .events = {stale}}).error().code,
            ErrorCode::kAborted);
}

TEST_F(GpuHealthTest, TheGraceIsCappedAtTenMinutes) {
  Job j = StartJob({.signal = SIGUSR1, .before = Minutes(120)}, /*requeue=*/true);
  Heartbeat({kXid79});
  Flush();
  EXPECT_LE(controller_->NextTickDeadline(), clock_.MonotonicNow() + Minutes(10));
  clock_.Advance(Minutes(10) + Seconds(1));
  controller_->Tick();
  EXPECT_EQ(Get(j.id).restart_count, 1u);
}

TEST_F(GpuHealthTest, AJobThatCheckpointsAndExitsIsRequeuedAtOnce) {
  Job j = StartJob({.signal = SIGUSR1, .before = Seconds(300)}, /*requeue=*/true);
  Heartbeat({kXid79});
  Flush();
  // It writes its checkpoint and exits 0 within the grace: requeued, not COMPLETED.
  Exit(j, 0);
  EXPECT_EQ(Get(j.id).state, JobState::kPending);
  controller_->Tick();
  Job requeued = Get(j.id);
  EXPECT_EQ(requeued.restart_count, 1u);
  EXPECT_NE(requeued.allocation.generation, j.allocation.generation);
  EXPECT_NE(requeued.state, JobState::kCompleted);
  EXPECT_FALSE(Gpus(requeued).contains(0));
  // The stop is over: nothing fires later.
  clock_.Advance(Seconds(301));
  controller_->Tick();
  EXPECT_EQ(Get(j.id).restart_count, 1u);
}

TEST_F(GpuHealthTest, AcknowledgedCheckpointRequeuesAtOnce) {
  Job j =
      StartJob({.signal = SIGUSR1, .before = Seconds(300), .batch_only = true}, /*requeue=*/true);
  Heartbeat({kXid79});
  auto signals = CommandsOf<api::SignalRequest>(Flush());
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_TRUE(As<api::SignalRequest>(signals[0]).batch_only) << "B: is kept";
  ASSERT_TRUE(controller_->AcknowledgeCheckpoint(kAlice, j.id).has_value());
  EXPECT_EQ(Get(j.id).restart_count, 1u);
  EXPECT_EQ(Get(j.id).reason.rfind("GPU failure, requeued: node node01 gpu 0: XID 79", 0), 0u)
      << Get(j.id).reason;
}

TEST_F(GpuHealthTest, NonRequeueableJobWithoutASignalGetsSigtermThenEndsNodeFail) {
  Job j = StartJob();
  running_[j.id] = j.allocation.generation;
  Heartbeat({{.gpu = 0, .reason = "temperature 97 C over 90 C"}});
  auto out = Flush();
  auto signals = CommandsOf<api::SignalRequest>(out);
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(As<api::SignalRequest>(signals[0]).signal, SIGTERM);
  EXPECT_FALSE(As<api::SignalRequest>(signals[0]).batch_only);
  EXPECT_EQ(Get(j.id).state, JobState::kRunning);
  // It dies of the SIGTERM: NODE_FAIL (not FAILED), with what the agent measured.
  Exit(j, 0, SIGTERM);
  Job ended = Get(j.id);
  EXPECT_EQ(ended.state, JobState::kNodeFail);
  EXPECT_EQ(ended.reason, "GPU failure: node node01 gpu 0: temperature 97 C over 90 C");
  EXPECT_DOUBLE_EQ(ended.usage.gpu_seconds, 42);
  EXPECT_EQ(ended.restart_count, 0u);
}

TEST_F(GpuHealthTest, AJobThatIgnoresItsSignalIsStoppedAfterTheGrace) {
  Job j = StartJob();
  Heartbeat({kXid79});
  Flush();
  clock_.Advance(Seconds(29));
  controller_->Tick();
  EXPECT_EQ(Get(j.id).state, JobState::kRunning);
  clock_.Advance(Seconds(2));
  controller_->Tick();
  EXPECT_EQ(Get(j.id).state, JobState::kNodeFail);
  auto cancels = CommandsOf<api::CancelRequest>(Flush());
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(As<api::CancelRequest>(cancels[0]).generation, j.allocation.generation);
  // Its GPU is free again for the scheduler, GPU 0 excepted.
  Job next = StartJob();
  EXPECT_EQ(Gpus(next), GpuSet(0b10));
}

TEST_F(GpuHealthTest, ACancelDuringTheGraceWins) {
  Job j = StartJob({.signal = SIGUSR1, .before = Seconds(60)}, /*requeue=*/true);
  Heartbeat({kXid79});
  Flush();
  ASSERT_TRUE(controller_->Cancel(kAlice, j.id).has_value());
  Exit(j, 0, SIGTERM);
  EXPECT_EQ(Get(j.id).state, JobState::kCancelled);
  EXPECT_EQ(Get(j.id).restart_count, 0u);
}

TEST_F(GpuHealthTest, AJobThatCrashesWithItsGpuEndsNodeFailOrIsRequeued) {
  Job plain = StartJob();
  Job requeueable = StartJob({}, /*requeue=*/true);
  // The exits come before any heartbeat: the agent names the GPU problem in the exit.
  Exit(plain, 1, 0, "gpu 0: XID 79 (GPU has fallen off the bus)");
  EXPECT_EQ(Get(plain.id).state, JobState::kNodeFail);
  EXPECT_EQ(Get(plain.id).reason,
            "GPU failure: node node01 gpu 0: XID 79 (GPU has fallen off the bus)");
  Exit(requeueable, 1, 0, "gpu 1: XID 48 (double-bit ECC error)");
  EXPECT_EQ(Get(requeueable.id).restart_count, 1u);
  // An exit without a GPU problem is the job's own.
  Job other = StartJob();
  Exit(other, 3);
  EXPECT_EQ(Get(other.id).state, JobState::kFailed);
}

TEST_F(GpuHealthTest, ResumingAGpu) {
  Heartbeat({kXid79, {.gpu = 1, .reason = "temperature 97 C over 90 C"}});
  ASSERT_EQ(Node("node01").node.failed_gpus, GpuSet(0b11));
  EXPECT_EQ(controller_->ResumeGpu(kAlice, "node01", 0).error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(controller_->ResumeGpu(kAdmin, "node09", 0).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(controller_->ResumeGpu(kAdmin, "node01", 7).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(controller_->ResumeGpu(kAdmin, "node01", 2).error().code,
            ErrorCode::kFailedPrecondition);
  // A state check still failing: refused, naming it.
  auto hot = controller_->ResumeGpu(kAdmin, "node01", 1);
  ASSERT_FALSE(hot.has_value());
  EXPECT_EQ(hot.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(hot.error().message.find("temperature 97 C over 90 C"), std::string::npos)
      << hot.error().message;
  // A latched event: resumed at once, and the agent is told to drop it.
  ASSERT_TRUE(controller_->ResumeGpu(kAdmin, "node01", 0).has_value());
  EXPECT_EQ(Node("node01").node.failed_gpus, GpuSet(0b10));
  api::HeartbeatResponse r =
      Heartbeat({kXid79, {.gpu = 1, .reason = "temperature 97 C over 90 C"}});
  EXPECT_EQ(r.clear_gpus, (std::vector<uint32_t>{0}));
  EXPECT_EQ(Node("node01").node.failed_gpus, GpuSet(0b10))
      << "the latched XID it still reports is ignored";
  r = Heartbeat({{.gpu = 1, .reason = "temperature 97 C over 90 C"}});
  EXPECT_TRUE(r.clear_gpus.empty());
  // A new XID on GPU 0 takes it out again.
  Heartbeat({kXid79, {.gpu = 1, .reason = "temperature 97 C over 90 C"}});
  EXPECT_EQ(Node("node01").node.failed_gpus, GpuSet(0b11));
  // Cooled down: `corral resume NODE` returns what passes its checks (no auto_resume).
  Heartbeat({kXid79});
  EXPECT_EQ(Node("node01").node.failed_gpus, GpuSet(0b11));
  ASSERT_TRUE(controller_->Resume(kAdmin, "node01").has_value());
  EXPECT_TRUE(Node("node01").node.failed_gpus.empty());
}

TEST_F(GpuHealthTest, AutoResumeReturnsGpusWhoseStateChecksPassAgain) {
  Heartbeat({{.gpu = 2, .reason = "power 650 W over 500 W"}}, "", /*auto_resume=*/true);
  EXPECT_EQ(Node("node01").node.failed_gpus, GpuSet(0b100));
  Heartbeat({}, "", /*auto_resume=*/true);
  EXPECT_TRUE(Node("node01").node.failed_gpus.empty());
  // Without auto_resume it stays out.
  Heartbeat({{.gpu = 2, .reason = "power 650 W over 500 W"}});
  Heartbeat({});
  EXPECT_EQ(Node("node01").node.failed_gpus, GpuSet(0b100));
}

TEST_F(GpuHealthTest, ANodeProblemDrainsTheNodeAndItsJobsRunOn) {
  Job j = StartJob();
  running_[j.id] = j.allocation.generation;
  Heartbeat({}, "health script: ERROR: nhc: /scratch is full", /*auto_resume=*/true);
  api::NodeInfo n = Node("node01");
  EXPECT_TRUE(n.node.drain);
  EXPECT_EQ(n.node.reason, "health: health script: ERROR: nhc: /scratch is full");
  EXPECT_TRUE(n.node.failed_gpus.empty());
  EXPECT_EQ(Get(j.id).state, JobState::kRunning);
  EXPECT_TRUE(CommandsOf<api::SignalRequest>(Flush()).empty());
  // It passes again: auto_resume undrains what the health checks drained.
  Heartbeat({}, "", /*auto_resume=*/true);
  EXPECT_FALSE(Node("node01").node.drain);
  // An operator's drain stays.
  ASSERT_TRUE(controller_->Drain(kAdmin, "node01", "maintenance").has_value());
  Heartbeat({}, "health script: ERROR", /*auto_resume=*/true);
  Heartbeat({}, "", /*auto_resume=*/true);
  EXPECT_TRUE(Node("node01").node.drain);
  EXPECT_EQ(Node("node01").node.reason, "maintenance");
}

// A restarted controller has forgotten the pending stops (not durable) but not the failed
// GPUs: it stops the jobs still running on them again.
TEST_F(GpuHealthTest, ARestartedControllerStopsTheJobsOnFailedGpusAgain) {
  Job j = StartJob({.signal = SIGUSR1, .before = Seconds(60)}, /*requeue=*/true);
  running_[j.id] = j.allocation.generation;
  Heartbeat({kXid79});
  Flush();
  auto signals = CommandsOf<api::SignalRequest>(Start());  // a new controller, same store
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(As<api::SignalRequest>(signals[0]).job, j.id);
  EXPECT_EQ(As<api::SignalRequest>(signals[0]).signal, SIGUSR1);
  clock_.Advance(Seconds(61));
  controller_->Tick();
  EXPECT_EQ(Get(j.id).restart_count, 1u);
}

}  // namespace
}  // namespace corral::controller
