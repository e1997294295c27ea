// The agent's core on a manual clock, with no process, socket or file: fencing, the journal,
// events until acknowledged, reconciliation, and the timing of registrations, heartbeats and
// tokens.
#include "agent/agent_core.h"

#include <signal.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/testing/fake_clock.h"

namespace corral::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using Kind = ControllerCall::Kind;

constexpr const char* kNode = "n1";

class AgentCoreTest : public ::testing::Test {
 protected:
  AgentCoreTest()
      : core_({.node_name = kNode, .controller_url = "http://controller:6900"}, journal_, clock_,
              [this](Timestamp now, Duration lifetime) {
                mints_.push_back({now, lifetime});
                return "Bearer token" + std::to_string(mints_.size());
              }) {
    NodeInventory inv;
    inv.name = kNode;
    inv.cpus = 8;
    core_.SetInventory(inv);
  }

  // Job `id`'s run of generation `gen`, batch host `nodes[0]`.
  static Job MakeJob(uint64_t id, uint64_t gen, std::vector<std::string> nodes = {kNode}) {
    Job job;
    job.id = JobId(id);
    job.spec.uid = 1000;  // a user's job (root's are refused by default)
    job.spec.gid = 1000;
    job.allocation.generation = Generation(gen);
    for (const auto& n : nodes) job.allocation.nodes.push_back({.node_name = n});
    return job;
  }
  static JobRun Run(uint64_t id, uint64_t gen) { return {JobId(id), Generation(gen)}; }

  // Launches the batch step of `id`.`gen` and reports it started as `pid`.
  Effects StartBatch(uint64_t id, uint64_t gen, int pid = 100) {
    LaunchDecision d = core_.OnLaunch(MakeJob(id, gen));
    EXPECT_TRUE(d.start) << (d.answer ? "" : d.answer.error().message);
    return core_.OnBatchStarted(
        Run(id, gen), AgentCore::BatchStarted{{pid, "start" + std::to_string(pid)}, 29500});
  }

  // A step launch of `tasks` ranks, all on this node unless `node` says otherwise.
  static api::StepLaunchRequest StepLaunch(uint64_t id, uint64_t gen, uint32_t step, uint32_t tasks,
                                           const std::string& node = kNode) {
    api::StepLaunchRequest r;
    r.job = MakeJob(id, gen, {"batch-host", node});
    r.step = step;
    r.spec.argv = {"hostname"};
    for (uint32_t t = 0; t < tasks; ++t) r.layout.tasks.push_back({.rank = t, .node = node});
    return r;
  }

  static ProcessExit Exit(uint64_t id, uint64_t gen, uint32_t step = kBatchStepId,
                          uint32_t task = 0) {
    ProcessExit x;
    x.job = JobId(id);
    x.generation = Generation(gen);
    x.step = step;
    x.task = task;
    return x;
  }

  // The events queued by `fx`, the way the service queues them once it carried `fx` out.
  void Queue(Effects fx) { core_.QueueEvents(std::move(fx.events)); }

  // Sends every queued event and has the controller acknowledge it; returns them.
  std::vector<api::JobEvent> Deliver() {
    std::vector<api::JobEvent> all;
    while (auto batch = core_.TakeEventBatch()) {
      all.insert(all.end(), batch->events.begin(), batch->events.end());
      core_.OnEventBatchReply(200);
    }
    return all;
  }

  void Register(Duration interval = Seconds(5)) {
    ControllerCall call = core_.NextControllerCall({});
    ASSERT_EQ(call.kind, Kind::kRegister);
    api::RegisterResponse r;
    r.node_id = NodeId(3);
    r.heartbeat_interval = interval;
    r.cluster_name = "lab";
    Effects fx = core_.OnRegisterReply(r);
    EXPECT_TRUE(fx.empty());
  }

  std::vector<JobRun> Listed(const std::vector<JobRun>& isolated = {}) const {
    std::vector<JobRun> out;
    for (const auto& r : core_.RunningRefs(isolated)) out.push_back({r.job, r.generation});
    return out;
  }

  testing::FakeClock clock_;
  MemoryRunJournal journal_;
  std::vector<std::pair<Timestamp, Duration>> mints_;
  AgentCore core_;
};

// --- Launches and fencing ---

TEST_F(AgentCoreTest, ALaunchStartsOnceAndIsJournaledAndReported) {
  Effects fx = StartBatch(7, 1, 4321);
  EXPECT_TRUE(fx.commands.empty());
  ASSERT_EQ(fx.events.size(), 1u);
  EXPECT_EQ(fx.events[0].type, api::JobEventType::kStarted);
  EXPECT_EQ(fx.events[0].job, JobId(7));
  EXPECT_EQ(fx.events[0].generation, Generation(1));
  EXPECT_EQ(fx.events[0].master_port, 29500u);
  EXPECT_EQ(fx.events[0].time, clock_.Now());
  EXPECT_THAT(journal_.List(), ElementsAre(JournalEntry{"7.1", 4321, "start4321"}));
  // The same launch again (the controller retried): nothing to do.
  LaunchDecision again = core_.OnLaunch(MakeJob(7, 1));
  EXPECT_FALSE(again.start);
  EXPECT_TRUE(again.answer.has_value());
  EXPECT_TRUE(again.effects.empty());
  EXPECT_THAT(Listed(), ElementsAre(Run(7, 1)));
}

TEST_F(AgentCoreTest, ALaunchForAnotherBatchHostIsInvalid) {
  LaunchDecision d = core_.OnLaunch(MakeJob(7, 1, {"n2", kNode}));
  EXPECT_FALSE(d.start);
  ASSERT_FALSE(d.answer.has_value());
  EXPECT_EQ(d.answer.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(d.answer.error().message, "job 7: node n1 is not its batch host");
  EXPECT_FALSE(core_.OnLaunch(MakeJob(7, 1, {})).answer.has_value());
  EXPECT_THAT(Listed(), IsEmpty());
}

TEST_F(AgentCoreTest, StaleGenerationsAreFenced) {
  StartBatch(7, 2);
  LaunchDecision old_launch = core_.OnLaunch(MakeJob(7, 1));
  EXPECT_FALSE(old_launch.start);
  ASSERT_FALSE(old_launch.answer.has_value());
  EXPECT_EQ(old_launch.answer.error().code, ErrorCode::kAborted);
  EXPECT_EQ(old_launch.answer.error().message,
            "job 7: stale launch of generation 1 (generation 2 was launched)");

  LaunchDecision old_step = core_.OnStepLaunch(StepLaunch(7, 1, 0, 1));
  ASSERT_FALSE(old_step.answer.has_value());
  EXPECT_EQ(old_step.answer.error().code, ErrorCode::kAborted);
  EXPECT_EQ(old_step.answer.error().message,
            "job 7 step 0: stale launch of generation 1 (generation 2 was launched)");

  Status old_limit = core_.OnTimeLimit({JobId(7), Generation(1), Minutes(5)});
  ASSERT_FALSE(old_limit.has_value());
  EXPECT_EQ(old_limit.error().code, ErrorCode::kAborted);
  EXPECT_EQ(old_limit.error().message,
            "job 7: stale time limit for generation 1 (generation 2 was launched)");
  EXPECT_TRUE(core_.OnTimeLimit({JobId(7), Generation(2), Minutes(5)}).has_value());
  // A job this node never ran: nothing to fence against.
  EXPECT_TRUE(core_.OnTimeLimit({JobId(8), Generation(1), Minutes(5)}).has_value());
  Status zero = core_.OnTimeLimit({JobId(7), Generation(2), Duration(0)});
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(zero.error().message, "job 7: time limit must be positive");
}

TEST_F(AgentCoreTest, ANewerStepGenerationFencesTimeLimitsAndSteps) {
  // The node runs only step tasks of job 7 (another node is its batch host).
  ASSERT_TRUE(core_.OnStepLaunch(StepLaunch(7, 3, 0, 1)).start);
  EXPECT_EQ(core_.OnTimeLimit({JobId(7), Generation(2), Minutes(5)}).error().code,
            ErrorCode::kAborted);
  EXPECT_EQ(core_.OnStepLaunch(StepLaunch(7, 2, 1, 1)).answer.error().code, ErrorCode::kAborted);
  EXPECT_TRUE(core_.OnStepLaunch(StepLaunch(7, 3, 1, 1)).start);
}

TEST_F(AgentCoreTest, ARequeuedRunArrivingWhileTheOldOneIsExitingKillsItAndIsRetried) {
  StartBatch(7, 1);
  LaunchDecision d = core_.OnLaunch(MakeJob(7, 2));
  EXPECT_FALSE(d.start);
  ASSERT_FALSE(d.answer.has_value());
  EXPECT_EQ(d.answer.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(d.answer.error().message, "job 7: generation 1 is still exiting; retry the launch");
  EXPECT_THAT(d.effects.commands, ElementsAre(Command(command::KillRun{Run(7, 1)})));
  // Retried while it still runs: the same answer. Once its exit is in, the new run starts.
  EXPECT_EQ(core_.OnLaunch(MakeJob(7, 2)).answer.error().code, ErrorCode::kUnavailable);
  Queue(core_.OnProcessExit(Exit(7, 1)));
  LaunchDecision retry = core_.OnLaunch(MakeJob(7, 2));
  EXPECT_TRUE(retry.start);
  EXPECT_TRUE(retry.effects.empty());
}

TEST_F(AgentCoreTest, OnlyAnOlderRunWithProcessesHoldsALaunchBack) {
  // Step tasks of an older run count too; a newer run of another job does not.
  ASSERT_TRUE(core_.OnStepLaunch(StepLaunch(7, 1, 0, 1)).start);
  core_.OnTaskStarted(Run(7, 1), 0, 0, StartedProcess{55, "s"});
  StartBatch(6, 9);
  LaunchDecision d = core_.OnLaunch(MakeJob(7, 2));
  EXPECT_EQ(d.answer.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(d.effects.commands, ElementsAre(Command(command::KillRun{Run(7, 1)})));
  Queue(core_.OnProcessExit(Exit(7, 1, 0, 0)));
  EXPECT_TRUE(core_.OnLaunch(MakeJob(7, 2)).start);
}

TEST_F(AgentCoreTest, ALaunchThatFailsIsReportedAndItsDirectoryRemoved) {
  ASSERT_TRUE(core_.OnLaunch(MakeJob(7, 1)).start);
  Effects fx = core_.OnBatchStarted(Run(7, 1), Internal("cannot write /x/script"));
  EXPECT_THAT(fx.commands, ElementsAre(Command(command::RemoveRunDir{Run(7, 1)})));
  ASSERT_EQ(fx.events.size(), 1u);
  EXPECT_EQ(fx.events[0].type, api::JobEventType::kLaunchFailed);
  EXPECT_EQ(fx.events[0].message, "cannot write /x/script");
  EXPECT_THAT(journal_.List(), IsEmpty());
  // Listed until the controller has the report.
  Queue(std::move(fx));
  EXPECT_THAT(Listed(), ElementsAre(Run(7, 1)));
  Deliver();
  EXPECT_THAT(Listed(), IsEmpty());
}

TEST_F(AgentCoreTest, ABatchExitEndsTheRunHereThenReportsIt) {
  StartBatch(7, 1);
  Deliver();
  ProcessExit x = Exit(7, 1);
  x.exit_code = 3;
  x.timed_out = true;
  x.cpu_seconds = 1.5;
  x.max_rss_mb = 12;
  x.end_time = clock_.Now() + Seconds(9);
  Effects fx = core_.OnProcessExit(x);
  EXPECT_THAT(fx.commands, ElementsAre(Command(command::CancelRun{Run(7, 1)}),
                                       Command(command::RemoveRunDir{Run(7, 1)}),
                                       Command(command::FinishRun{Run(7, 1), 0})));
  ASSERT_EQ(fx.events.size(), 1u);
  const api::JobEvent& ev = fx.events[0];
  EXPECT_EQ(ev.type, api::JobEventType::kExited);
  EXPECT_EQ(ev.exit_code, 3);
  EXPECT_TRUE(ev.timed_out);
  EXPECT_FALSE(ev.cancelled);
  EXPECT_EQ(ev.time, x.end_time);
  EXPECT_DOUBLE_EQ(ev.usage.cpu_seconds, 1.5);
  EXPECT_EQ(ev.usage.max_rss_mb, 12u);
  EXPECT_EQ(ev.step, 0u);  // a batch event names no step
  EXPECT_THAT(journal_.List(), IsEmpty());
  // Listed until its exit is acknowledged.
  Queue(std::move(fx));
  EXPECT_THAT(Listed(), ElementsAre(Run(7, 1)));
  EXPECT_EQ(Deliver().size(), 1u);
  EXPECT_THAT(Listed(), IsEmpty());
}

TEST_F(AgentCoreTest, StepTasksAreStartedJournaledAndReported) {
  // Two of the step's three tasks are on this node.
  api::StepLaunchRequest r = StepLaunch(7, 1, 0, 2);
  r.layout.tasks.push_back({.rank = 2, .node = "n2"});
  LaunchDecision d = core_.OnStepLaunch(r);
  ASSERT_TRUE(d.start);
  ASSERT_EQ(d.tasks.size(), 2u);
  EXPECT_EQ(d.tasks[1].rank, 1u);
  EXPECT_TRUE(core_.OnTaskStarted(Run(7, 1), 0, 0, StartedProcess{40, "a"}).empty());
  EXPECT_TRUE(core_.OnTaskStarted(Run(7, 1), 0, 1, StartedProcess{41, "b"}).empty());
  EXPECT_THAT(journal_.List(),
              ElementsAre(JournalEntry{"7.1.0.0", 40, "a"}, JournalEntry{"7.1.0.1", 41, "b"}));
  // A run with step tasks here is listed (the batch host is elsewhere).
  EXPECT_THAT(Listed(), ElementsAre(Run(7, 1)));
  // The same step again: nothing to start.
  LaunchDecision again = core_.OnStepLaunch(r);
  EXPECT_FALSE(again.start);
  EXPECT_TRUE(again.answer.has_value());

  ProcessExit x = Exit(7, 1, 0, 1);
  x.signal = SIGKILL;
  Effects fx = core_.OnProcessExit(x);
  EXPECT_THAT(fx.commands,
              ElementsAre(Command(command::FinishTask{Run(7, 1), 0, 1, /*killed=*/true})));
  ASSERT_EQ(fx.events.size(), 1u);
  EXPECT_EQ(fx.events[0].type, api::JobEventType::kTaskExited);
  EXPECT_EQ(fx.events[0].step, 0u);
  EXPECT_EQ(fx.events[0].task, 1u);
  EXPECT_EQ(fx.events[0].signal, SIGKILL);
  EXPECT_THAT(journal_.List(), ElementsAre(JournalEntry{"7.1.0.0", 40, "a"}));
  fx = core_.OnProcessExit(Exit(7, 1, 0, 0));
  EXPECT_THAT(fx.commands, ElementsAre(Command(command::FinishTask{Run(7, 1), 0, 0, false})));
  EXPECT_THAT(Listed(), IsEmpty());
}

TEST_F(AgentCoreTest, AStepWithNothingForThisNodeIsInvalid) {
  LaunchDecision d = core_.OnStepLaunch(StepLaunch(7, 1, 4, 2, "n2"));
  ASSERT_FALSE(d.answer.has_value());
  EXPECT_EQ(d.answer.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(d.answer.error().message, "job 7 step 4: no task to run on node n1");
  api::StepLaunchRequest no_program = StepLaunch(7, 1, 5, 1);
  no_program.spec.argv.clear();
  EXPECT_EQ(core_.OnStepLaunch(no_program).answer.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(AgentCoreTest, ATaskThatCannotStartIsReported) {
  ASSERT_TRUE(core_.OnStepLaunch(StepLaunch(7, 1, 0, 2)).start);
  Effects missing = core_.OnTaskStarted(Run(7, 1), 0, 0, NotFound("nope: command not found"));
  ASSERT_EQ(missing.events.size(), 1u);
  EXPECT_EQ(missing.events[0].type, api::JobEventType::kTaskLaunchFailed);
  EXPECT_EQ(missing.events[0].exit_code, 127);
  EXPECT_EQ(missing.events[0].message, "nope: command not found");
  EXPECT_EQ(missing.events[0].task, 0u);
  EXPECT_EQ(missing.events[0].time, clock_.Now());
  Effects broken = core_.OnTaskStarted(Run(7, 1), 0, 1, Internal("cgroup"));
  ASSERT_EQ(broken.events.size(), 1u);
  EXPECT_EQ(broken.events[0].exit_code, 1);
  EXPECT_THAT(journal_.List(), IsEmpty());
  EXPECT_THAT(Listed(), IsEmpty());
}

TEST_F(AgentCoreTest, RecentStepLaunchesAreRememberedUpTo4096) {
  for (uint32_t s = 0; s <= 4096; ++s) {
    ASSERT_TRUE(core_.OnStepLaunch(StepLaunch(7, 1, s, 1)).start) << s;
    core_.OnTaskStarted(Run(7, 1), s, 0, StartedProcess{});
  }
  EXPECT_FALSE(core_.OnStepLaunch(StepLaunch(7, 1, 4096, 1)).start);
  EXPECT_FALSE(core_.OnStepLaunch(StepLaunch(7, 1, 1, 1)).start);
  EXPECT_TRUE(core_.OnStepLaunch(StepLaunch(7, 1, 0, 1)).start);  // forgotten: the oldest
}

TEST_F(AgentCoreTest, AProcessThatEndsBeforeItsStartIsReportedIsNotJournaled) {
  ASSERT_TRUE(core_.OnLaunch(MakeJob(7, 1)).start);
  // The supervisor reaped it before the launch handler came back.
  Queue(core_.OnProcessExit(Exit(7, 1)));
  Queue(core_.OnBatchStarted(Run(7, 1), AgentCore::BatchStarted{{77, "s"}, 0}));
  EXPECT_THAT(journal_.List(), IsEmpty());
  // Nothing of it runs: a later generation starts at once.
  EXPECT_TRUE(core_.OnLaunch(MakeJob(7, 2)).start);
}

// --- Signals ---

TEST_F(AgentCoreTest, SignalsAndCancelsBecomeOrdersForTheSupervisor) {
  auto cancel = core_.OnCancel({JobId(7), Generation(1)});
  ASSERT_TRUE(cancel.has_value());
  EXPECT_EQ(*cancel, (SignalOrder{.run = Run(7, 1)}));

  auto sig = core_.OnSignal({JobId(7), Generation(1), SIGUSR1, /*batch_only=*/true});
  ASSERT_TRUE(sig.has_value());
  EXPECT_EQ(*sig, (SignalOrder{.run = Run(7, 1), .signal = SIGUSR1, .batch_script_only = true}));
  for (int bad : {0, -1, NSIG}) {
    auto r = core_.OnSignal({JobId(7), Generation(1), bad, false});
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(r.error().message, "signal: " + std::to_string(bad) + " is not a signal");
  }

  // A step signal of 0 cancels; nothing running is no error.
  auto step = core_.OnStepSignal({JobId(7), Generation(1), 2, 0});
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(*step, (SignalOrder{.run = Run(7, 1), .step = 2, .signal = 0, .missing_ok = true}));
  EXPECT_FALSE(core_.OnStepSignal({JobId(7), Generation(1), 2, -3}).has_value());
  EXPECT_FALSE(core_.OnStepSignal({JobId(7), Generation(1), 2, NSIG}).has_value());
}

// --- Reconciliation ---

TEST_F(AgentCoreTest, ReconciliationCancelsUnknownRunsAndReleasesThemOnceEmpty) {
  Register();
  StartBatch(7, 1);
  ASSERT_TRUE(core_.OnStepLaunch(StepLaunch(8, 1, 0, 1)).start);
  core_.OnTaskStarted(Run(8, 1), 0, 0, StartedProcess{80, "t"});
  const std::vector<JobRun> isolated = {Run(8, 1), Run(9, 1)};
  EXPECT_THAT(Listed(isolated), ElementsAre(Run(7, 1), Run(8, 1), Run(9, 1)));

  api::HeartbeatResponse hb;
  hb.kill = {{JobId(7), Generation(1)}, {JobId(8), Generation(1)}, {JobId(9), Generation(1)}};
  Effects fx = core_.OnHeartbeatReply(hb);
  // Each is cancelled; run 9 holds only a cgroup here: released at once. The others are
  // released once their last process here has ended.
  EXPECT_THAT(fx.commands, ElementsAre(Command(command::CancelRun{Run(7, 1), true}),
                                       Command(command::CancelRun{Run(8, 1), true}),
                                       Command(command::CancelRun{Run(9, 1), true}),
                                       Command(command::ReleaseRun{Run(9, 1)})));
  // Run 7 is no longer listed (its exit will be reported, and rejected as stale).
  EXPECT_THAT(Listed({Run(8, 1)}), ElementsAre(Run(8, 1)));

  fx = core_.OnProcessExit(Exit(8, 1, 0, 0));
  EXPECT_THAT(fx.commands, ElementsAre(Command(command::FinishTask{Run(8, 1), 0, 0, false}),
                                       Command(command::ReleaseRun{Run(8, 1)})));
  fx = core_.OnProcessExit(Exit(7, 1));
  EXPECT_THAT(fx.commands, ElementsAre(Command(command::CancelRun{Run(7, 1)}),
                                       Command(command::RemoveRunDir{Run(7, 1)}),
                                       Command(command::FinishRun{Run(7, 1), 0}),
                                       Command(command::ReleaseRun{Run(7, 1)})));
  // Released once: a later exit of the same run releases nothing.
  EXPECT_THAT(core_.OnProcessExit(Exit(8, 1, 0, 0)).commands,
              ElementsAre(Command(command::FinishTask{Run(8, 1), 0, 0, false})));
}

TEST_F(AgentCoreTest, TheRegistrationsKillListIsReconciledToo) {
  StartBatch(7, 1);
  ControllerCall call = core_.NextControllerCall({Run(9, 1)});
  ASSERT_EQ(call.kind, Kind::kRegister);
  EXPECT_EQ(call.register_request.inventory.name, kNode);
  EXPECT_EQ(call.register_request.inventory.cpus, 8u);
  EXPECT_EQ(
      call.register_request.running,
      (std::vector<api::RunningJobRef>{{JobId(7), Generation(1)}, {JobId(9), Generation(1)}}));
  api::RegisterResponse r;
  r.kill = {{JobId(7), Generation(1)}};
  EXPECT_THAT(core_.OnRegisterReply(r).commands,
              ElementsAre(Command(command::CancelRun{Run(7, 1), true})));
  EXPECT_THAT(Listed(), IsEmpty());
}

// --- Events ---

TEST_F(AgentCoreTest, EventsAreKeptUntilTheControllerAcknowledgesThem) {
  Register();
  Queue(StartBatch(7, 1));
  Queue(core_.OnProcessExit(Exit(7, 1)));
  EXPECT_EQ(core_.NextEventBatchTime(), MonoTime::min());  // now
  auto batch = core_.TakeEventBatch();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->node, kNode);
  ASSERT_EQ(batch->events.size(), 2u);
  EXPECT_EQ(batch->events[0].type, api::JobEventType::kStarted);
  EXPECT_EQ(batch->events[1].type, api::JobEventType::kExited);
  EXPECT_FALSE(core_.TakeEventBatch().has_value());  // one batch in flight at a time
  EXPECT_EQ(core_.NextEventBatchTime(), MonoTime::max());

  // Unreachable: sent again after 50 ms, then 100 ms, ... at most 2 s.
  core_.OnEventBatchReply(std::nullopt);
  EXPECT_EQ(core_.queued_events(), 2u);
  EXPECT_EQ(core_.NextEventBatchTime(), clock_.MonotonicNow() + Millis(50));
  clock_.Advance(Millis(49));
  EXPECT_FALSE(core_.TakeEventBatch().has_value());
  clock_.Advance(Millis(1));
  ASSERT_TRUE(core_.TakeEventBatch().has_value());
  core_.OnEventBatchReply(503);  // not an answer about the events: kept
  EXPECT_EQ(core_.NextEventBatchTime(), clock_.MonotonicNow() + Millis(100));
  for (Duration expected :
       {Millis(100), Millis(200), Millis(400), Millis(800), Millis(1600), Seconds(2), Seconds(2)}) {
    clock_.Advance(expected);
    ASSERT_TRUE(core_.TakeEventBatch().has_value());
    core_.OnEventBatchReply(500);
    clock_.Advance(Duration(0));
    Duration next = std::min<Duration>(expected * 2, Seconds(2));
    EXPECT_EQ(core_.NextEventBatchTime(), clock_.MonotonicNow() + next);
  }
  EXPECT_THAT(Listed(), ElementsAre(Run(7, 1)));  // its exit is not acknowledged yet

  clock_.Advance(Seconds(2));
  ASSERT_TRUE(core_.TakeEventBatch().has_value());
  core_.OnEventBatchReply(200);
  EXPECT_EQ(core_.queued_events(), 0u);
  EXPECT_THAT(Listed(), IsEmpty());
  // The backoff starts over.
  Queue(core_.OnBatchStarted(Run(8, 1), Internal("x")));
  ASSERT_TRUE(core_.TakeEventBatch().has_value());
  core_.OnEventBatchReply(std::nullopt);
  EXPECT_EQ(core_.NextEventBatchTime(), clock_.MonotonicNow() + Millis(50));
}

TEST_F(AgentCoreTest, StaleAndBadEventsAreConsumed) {
  for (int status : {200, 202, 400, 409}) {
    Queue(core_.OnProcessExit(Exit(7, 1)));
    ASSERT_TRUE(core_.TakeEventBatch().has_value());
    EXPECT_TRUE(core_.OnEventBatchReply(status));
    EXPECT_EQ(core_.queued_events(), 0u) << status;
  }
  for (int status : {401, 404, 500, 503}) {
    Queue(core_.OnProcessExit(Exit(7, 1)));
    ASSERT_TRUE(core_.TakeEventBatch().has_value());
    EXPECT_FALSE(core_.OnEventBatchReply(status));
    EXPECT_EQ(core_.queued_events(), 1u) << status;
    clock_.Advance(Seconds(2));
    ASSERT_TRUE(core_.TakeEventBatch().has_value());
    core_.OnEventBatchReply(200);
  }
}

TEST_F(AgentCoreTest, EventsGoInBatchesOf512AndEventsQueuedMeanwhileWait) {
  std::vector<api::JobEvent> many(1100);
  for (size_t i = 0; i < many.size(); ++i) many[i].job = JobId(i + 1);
  core_.QueueEvents(many);
  auto first = core_.TakeEventBatch();
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->events.size(), 512u);
  EXPECT_EQ(first->events.front().job, JobId(1));
  core_.QueueEvents({api::JobEvent{}});
  core_.OnEventBatchReply(200);
  auto second = core_.TakeEventBatch();
  ASSERT_EQ(second->events.size(), 512u);
  EXPECT_EQ(second->events.front().job, JobId(513));
  core_.OnEventBatchReply(200);
  EXPECT_EQ(core_.TakeEventBatch()->events.size(), 77u);
}

// --- The journal ---

TEST_F(AgentCoreTest, RecoveryKillsWhatThePreviousRunLeftAndEmptiesTheJournal) {
  ASSERT_TRUE(journal_.Put({"3.1", 4242, "9001"}).has_value());
  ASSERT_TRUE(journal_.Put({"3.1.0.2", 4243, "9002"}).has_value());
  ASSERT_TRUE(journal_.Put({"garbage", 0, ""}).has_value());
  ASSERT_TRUE(journal_.Put({"4.1", 1, "1"}).has_value());    // never init
  ASSERT_TRUE(journal_.Put({"5.1", 4244, ""}).has_value());  // no start time: unknown
  Effects fx = core_.Recover();
  EXPECT_THAT(fx.commands, ElementsAre(Command(command::KillOrphan{{"3.1", 4242, "9001"}}),
                                       Command(command::KillOrphan{{"3.1.0.2", 4243, "9002"}})));
  EXPECT_THAT(journal_.List(), IsEmpty());
  // Nothing of them is this run's.
  EXPECT_THAT(Listed(), IsEmpty());
  EXPECT_TRUE(core_.OnLaunch(MakeJob(3, 2)).start);
}

TEST_F(AgentCoreTest, TheJournalFollowsWhatRuns) {
  StartBatch(3, 1, 300);
  ASSERT_TRUE(core_.OnStepLaunch(StepLaunch(3, 1, 0, 1)).start);
  core_.OnTaskStarted(Run(3, 1), 0, 0, StartedProcess{301, "t"});
  // An agent restarted now (a new core on the same journal) kills both.
  MemoryRunJournal copy;
  for (const auto& e : journal_.List()) ASSERT_TRUE(copy.Put(e).has_value());
  AgentCore restarted({.node_name = kNode}, copy, clock_, [](Timestamp, Duration) { return ""; });
  EXPECT_EQ(restarted.Recover().commands.size(), 2u);
  // This one forgets each as it ends.
  core_.OnProcessExit(Exit(3, 1, 0, 0));
  EXPECT_THAT(journal_.List(), ElementsAre(JournalEntry{"3.1", 300, "start300"}));
  core_.OnProcessExit(Exit(3, 1));
  EXPECT_THAT(journal_.List(), IsEmpty());
}

// --- Registration and heartbeats ---

TEST_F(AgentCoreTest, RegistrationIsRetriedWithABackoff) {
  EXPECT_EQ(core_.NextControllerCall({}).kind, Kind::kRegister);
  for (Duration backoff :
       {Millis(100), Millis(200), Millis(400), Millis(800), Millis(1600), Seconds(2), Seconds(2)}) {
    core_.OnRegisterReply(Unavailable("connection refused"));
    ControllerCall wait = core_.NextControllerCall({});
    ASSERT_EQ(wait.kind, Kind::kWait);
    EXPECT_EQ(wait.wait_until, clock_.MonotonicNow() + backoff);
    core_.HealthChanged();  // no heartbeat before the node is registered
    clock_.Advance(backoff - Millis(1));
    EXPECT_EQ(core_.NextControllerCall({}).kind, Kind::kWait);
    clock_.Advance(Millis(1));
    ASSERT_EQ(core_.NextControllerCall({}).kind, Kind::kRegister);
  }
  api::RegisterResponse r;
  r.heartbeat_interval = Duration(0);  // none given: the default 2 s
  r.cluster_name = "lab";
  core_.OnRegisterReply(r);
  EXPECT_EQ(core_.cluster_name(), "lab");
  // The node's health changed meanwhile: the first heartbeat goes at once.
  EXPECT_EQ(core_.NextControllerCall({}).kind, Kind::kHeartbeat);
  core_.OnHeartbeatReply(api::HeartbeatResponse{});
  EXPECT_EQ(core_.NextControllerCall({}).wait_until, clock_.MonotonicNow() + Seconds(2));
}

TEST_F(AgentCoreTest, HeartbeatsComeEveryIntervalAndAtOnceOnAHealthChange) {
  Register(Seconds(5));
  ControllerCall wait = core_.NextControllerCall({});
  ASSERT_EQ(wait.kind, Kind::kWait);
  EXPECT_EQ(wait.wait_until, clock_.MonotonicNow() + Seconds(5));
  clock_.Advance(Seconds(5));
  StartBatch(7, 1);
  ControllerCall hb = core_.NextControllerCall({Run(9, 2)});
  ASSERT_EQ(hb.kind, Kind::kHeartbeat);
  EXPECT_EQ(hb.heartbeat.node, kNode);
  EXPECT_EQ(hb.heartbeat.running, (std::vector<api::RunningJobRef>{{JobId(7), Generation(1)},
                                                                   {JobId(9), Generation(2)}}));
  clock_.Advance(Millis(300));  // the controller took its time
  core_.OnHeartbeatReply(api::HeartbeatResponse{});
  EXPECT_EQ(core_.NextControllerCall({}).wait_until, clock_.MonotonicNow() + Seconds(5));
  clock_.Advance(Seconds(1));
  core_.HealthChanged();
  EXPECT_EQ(core_.NextControllerCall({}).kind, Kind::kHeartbeat);
  core_.OnHeartbeatReply(api::HeartbeatResponse{});
  EXPECT_EQ(core_.NextControllerCall({}).kind, Kind::kWait);
  // A failed heartbeat waits the interval too (and does not register again).
  clock_.Advance(Seconds(5));
  ASSERT_EQ(core_.NextControllerCall({}).kind, Kind::kHeartbeat);
  core_.OnHeartbeatReply(Unavailable("timeout"));
  EXPECT_EQ(core_.NextControllerCall({}).wait_until, clock_.MonotonicNow() + Seconds(5));
}

TEST_F(AgentCoreTest, AControllerThatForgotTheNodeHasItRegisterAgainAtOnce) {
  Register();
  clock_.Advance(Seconds(5));
  ASSERT_EQ(core_.NextControllerCall({}).kind, Kind::kHeartbeat);
  api::HeartbeatResponse hb;
  hb.reregister = true;
  hb.clear_gpus = {1, 3};
  Effects fx = core_.OnHeartbeatReply(hb);
  EXPECT_THAT(fx.commands, ElementsAre(Command(command::ClearGpus{{1, 3}})));
  EXPECT_EQ(core_.NextControllerCall({}).kind, Kind::kRegister);
}

// --- Identity ---

TEST_F(AgentCoreTest, TheTokenIsRenewedOnceItIsAMinuteOld) {
  const Timestamp t0 = clock_.Now();
  EXPECT_EQ(core_.Authorization(), "Bearer token1");
  clock_.Advance(Seconds(60));
  EXPECT_EQ(core_.Authorization(), "Bearer token1");
  clock_.Advance(Duration(1));
  EXPECT_EQ(core_.Authorization(), "Bearer token2");
  EXPECT_EQ(core_.Authorization(), "Bearer token2");
  ASSERT_EQ(mints_.size(), 2u);
  EXPECT_EQ(mints_[0], std::make_pair(t0, Duration(Seconds(300))));
  EXPECT_EQ(mints_[1].first, t0 + Seconds(60) + Duration(1));
}

// --- Effects ---

TEST_F(AgentCoreTest, JobsAndStepsAsRootAreRefusedUnlessTheNodeAllowsThem) {
  Job root = MakeJob(1, 1);
  root.spec.uid = 0;
  root.spec.gid = 0;
  LaunchDecision d = core_.OnLaunch(root);
  EXPECT_FALSE(d.start);
  ASSERT_FALSE(d.answer.has_value());
  EXPECT_EQ(d.answer.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(d.answer.error().message,
            "job 1: would run as uid 0 gid 0; node n1 runs no job as root ([launch] "
            "allow_root_jobs)");
  Job root_group = MakeJob(2, 1);
  root_group.spec.gid = 0;  // a user with root's group is as bad
  EXPECT_EQ(core_.OnLaunch(root_group).answer.error().code, ErrorCode::kPermissionDenied);
  api::StepLaunchRequest step = StepLaunch(3, 1, 0, 1);
  step.job.spec.uid = 0;
  d = core_.OnStepLaunch(step);
  EXPECT_FALSE(d.start);
  EXPECT_EQ(d.answer.error().code, ErrorCode::kPermissionDenied);
  // Nothing was recorded for the refused launch: the same job as a user starts.
  EXPECT_TRUE(core_.OnLaunch(MakeJob(1, 1)).start);

  MemoryRunJournal journal;
  AgentCore allowing({.node_name = kNode, .allow_root_jobs = true}, journal, clock_,
                     [](Timestamp, Duration) { return std::string(); });
  EXPECT_TRUE(allowing.OnLaunch(root).start);
  EXPECT_TRUE(allowing.OnStepLaunch(step).start);
}

TEST_F(AgentCoreTest, StepsRunAsTheirJobsUserWhateverTheRequestSays) {
  StartBatch(1, 1);  // uid 1000 gid 1000
  api::StepLaunchRequest step = StepLaunch(1, 1, 0, 1);
  step.job.allocation.nodes = {{.node_name = kNode}};
  step.job.spec.uid = 1001;  // another user's step in alice's job
  LaunchDecision d = core_.OnStepLaunch(step);
  EXPECT_FALSE(d.start);
  ASSERT_FALSE(d.answer.has_value());
  EXPECT_EQ(d.answer.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(d.answer.error().message,
            "job 1 step 0: would run as uid 1001 gid 1000, but the job runs as uid 1000 gid 1000 "
            "on node n1");
  step.job.spec.uid = 1000;
  step.job.spec.gid = 27;  // another group
  EXPECT_EQ(core_.OnStepLaunch(step).answer.error().code, ErrorCode::kPermissionDenied);
  step.job.spec.gid = 1000;
  EXPECT_TRUE(core_.OnStepLaunch(step).start);

  // On a node without the batch step the first step decides; the next must agree.
  api::StepLaunchRequest first = StepLaunch(5, 1, 0, 1);
  EXPECT_TRUE(core_.OnStepLaunch(first).start);
  api::StepLaunchRequest second = StepLaunch(5, 1, 1, 1);
  second.job.spec.uid = 2000;
  EXPECT_EQ(core_.OnStepLaunch(second).answer.error().code, ErrorCode::kPermissionDenied);
  // A requeued run (a newer generation) may be another user's (an admin resubmitted it).
  api::StepLaunchRequest requeued = StepLaunch(5, 2, 0, 1);
  requeued.job.spec.uid = 2000;
  EXPECT_TRUE(core_.OnStepLaunch(requeued).start);
}

TEST(EffectsTest, AppendKeepsEachFinishRunOnItsOwnEvent) {
  Effects a;
  a.events.resize(2);
  a.commands.push_back(command::FinishRun{{JobId(1), Generation(1)}, 1});
  Effects b;
  b.events.resize(1);
  b.commands.push_back(command::FinishRun{{JobId(2), Generation(1)}, 0});
  a.Append(std::move(b));
  ASSERT_EQ(a.events.size(), 3u);
  EXPECT_THAT(a.commands, ElementsAre(Command(command::FinishRun{{JobId(1), Generation(1)}, 1}),
                                      Command(command::FinishRun{{JobId(2), Generation(1)}, 2})));
}

}  // namespace
}  // namespace corral::agent
