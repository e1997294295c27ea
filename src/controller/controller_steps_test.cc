// Controller: steps (`corral run`), checkpoint acknowledgements, and the checkpoint signal
// before a requeue or cancel (controller_steps.cc, controller_jobs.cc).
#include <csignal>

#include <gtest/gtest.h>

#include "controller/controller.h"
#include "controller/testing/controller_test_base.h"
#include "controller/testing/requests.h"
#include "sched/first_fit_policy.h"

namespace corral::controller {
namespace {

using testing::As;
using testing::Is;
using testing::kAlice;
using testing::kBob;
using testing::NodeRegistration;
using testing::TaskExit;

// First fit, remembering the last snapshot it was given.
class RecordingPolicy final : public sched::Policy {
 public:
  explicit RecordingPolicy(sched::ClusterSnapshot* last) : last_(last) {}
  sched::Plan Decide(const sched::ClusterSnapshot& snapshot, Timestamp now) override {
    *last_ = snapshot;
    return inner_.Decide(snapshot, now);
  }

 private:
  sched::ClusterSnapshot* last_;
  sched::FirstFitPolicy inner_;
};

class ControllerStepsTest : public testing::ControllerTestBase {
 protected:
  // node01 (10.0.0.1) and node02 (10.0.0.2), 4 GPUs each.
  ControllerStepsTest() {
    StartController(TestConfig(), std::vector<Partition>{},
                    std::make_unique<RecordingPolicy>(&snapshot_));
    Register(NodeRegistration("node01", 4, "http://10.0.0.1:6901"));
    Register(NodeRegistration("node02", 4, "http://10.0.0.2:6901"));
    Flush();
  }

  // Submits a 2-node job (2 GPUs and 2 tasks per node) as alice and starts it.
  Job StartJob(SignalSpec signal = {}, bool requeue = false) {
    JobSpec s = testing::BatchJob(/*gpus_per_node=*/2, /*nodes=*/2, "sleep 100");
    s.resources.ntasks = 4;
    s.resources.ntasks_per_node = 2;
    s.signal = signal;
    s.requeue = requeue;
    return SubmitAndStart(s);
  }

  StepSpec Run(std::vector<std::string> argv) { return testing::StepRun(std::move(argv)); }

  sched::ClusterSnapshot snapshot_;
};

TEST_F(ControllerStepsTest, StepLaunchesOnEveryNodeAndCompletesWhenAllTasksReport) {
  Job j = StartJob();
  api::JobEvent started{.type = api::JobEventType::kStarted,
                        .job = j.id,
                        .generation = j.allocation.generation,
                        .master_port = 29611};
  ASSERT_TRUE(controller_->HandleEvents({.node = "node01", .events = {started}}).has_value());
  StepSpec spec = Run({"python3", "train.py"});
  spec.io_port = 40000;
  spec.io_node = "node01";
  const std::string secret(32, 's');
  spec.io_token = "short";
  EXPECT_EQ(controller_->CreateStep(kAlice, j.id, spec).error().message,
            "io_token: the step's I/O secret must be at least 32 characters");
  spec.io_token = secret;
  spec.environment = {{"CORRAL_TOKEN", "t"},
                      {"CORRAL_JOB_CREDENTIAL", "c"},
                      {"CORRAL_KEY_FILE", "/k"},
                      {"HOME", "/home/alice"}};
  auto step = controller_->CreateStep(kAlice, j.id, spec);
  ASSERT_TRUE(step.has_value()) << step.error().message;
  EXPECT_EQ(step->step, 0u);
  EXPECT_EQ(step->state, JobState::kRunning);
  EXPECT_EQ(step->master_addr, "10.0.0.1");
  EXPECT_EQ(step->master_port, 29611u);
  EXPECT_EQ(step->tasks.size(), 4u);
  EXPECT_EQ(step->tasks_per_node, (std::vector<uint32_t>{2, 2}));
  auto out = Flush();
  ASSERT_EQ(out.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(Is<api::StepLaunchRequest>(out[i]));
    EXPECT_EQ(As<api::StepLaunchRequest>(out[i]).job.allocation.generation,
              j.allocation.generation);
    EXPECT_EQ(As<api::StepLaunchRequest>(out[i]).layout.tasks.size(), 4u);
    EXPECT_EQ(As<api::StepLaunchRequest>(out[i]).io_url, "https://10.0.0.1:40000");
    EXPECT_EQ(As<api::StepLaunchRequest>(out[i]).spec.io_token, secret);
    // The caller's credentials are dropped, whatever client sent the step.
    EXPECT_EQ(As<api::StepLaunchRequest>(out[i]).spec.environment,
              (std::map<std::string, std::string>{{"HOME", "/home/alice"}}));
    EXPECT_EQ(As<api::StepLaunchRequest>(out[i]).master_port, 29611u);
  }
  EXPECT_EQ(out[0].to.node, "node01");
  EXPECT_EQ(out[1].to.node, "node02");
  // The next step gets the next id.
  EXPECT_EQ(controller_->CreateStep(kAlice, j.id, Run({"true"}))->step, 1u);
  Flush();

  for (uint32_t task : {0u, 1u})
    ASSERT_TRUE(controller_->HandleEvents(TaskExit("node01", j, 0, task, 0)).has_value());
  ASSERT_TRUE(controller_->HandleEvents(TaskExit("node02", j, 0, 2, 0)).has_value());
  EXPECT_EQ(controller_->GetStep(j.id, 0)->state, JobState::kRunning);
  EXPECT_TRUE(controller_->TakeFinishedSteps().empty());
  ASSERT_TRUE(controller_->HandleEvents(TaskExit("node02", j, 0, 3, 0)).has_value());
  auto done = controller_->GetStep(j.id, 0);
  EXPECT_EQ(done->state, JobState::kCompleted);
  EXPECT_EQ(done->exit_code, 0);
  EXPECT_TRUE(done->tasks[3].ended);
  EXPECT_EQ(controller_->TakeFinishedSteps(), (std::vector<std::pair<JobId, uint32_t>>{{j.id, 0}}));
  EXPECT_EQ(controller_->ListSteps(j.id)->size(), 2u);
  // The job itself runs on.
  EXPECT_EQ(Get(j.id).state, JobState::kRunning);
}

TEST_F(ControllerStepsTest, StaleTaskReportsAreRejected) {
  Job j = StartJob();
  ASSERT_TRUE(controller_->CreateStep(kAlice, j.id, Run({"true"})).has_value());
  Flush();
  // Task 0 runs on node01, not node02; generation 999 is not this run's; no step 5.
  auto wrong_node = controller_->HandleEvents(TaskExit("node02", j, 0, 0, 0));
  ASSERT_FALSE(wrong_node.has_value());
  EXPECT_EQ(wrong_node.error().code, ErrorCode::kAborted);
  Job old = j;
  old.allocation.generation = Generation(999);
  EXPECT_FALSE(controller_->HandleEvents(TaskExit("node01", old, 0, 0, 0)).has_value());
  EXPECT_FALSE(controller_->HandleEvents(TaskExit("node01", j, 5, 0, 0)).has_value());
  EXPECT_FALSE(controller_->HandleEvents(TaskExit("node01", j, 0, 9, 0)).has_value());
  ASSERT_TRUE(controller_->HandleEvents(TaskExit("node01", j, 0, 0, 0)).has_value());
  // A repeated report is stale too.
  EXPECT_FALSE(controller_->HandleEvents(TaskExit("node01", j, 0, 0, 0)).has_value());
}

TEST_F(ControllerStepsTest, FailingTaskFailsTheStepWithTheHighestExitCode) {
  Job j = StartJob();
  ASSERT_TRUE(controller_->CreateStep(kAlice, j.id, Run({"false"})).has_value());
  Flush();
  ASSERT_TRUE(controller_->HandleEvents(TaskExit("node01", j, 0, 0, 0)).has_value());
  ASSERT_TRUE(controller_->HandleEvents(TaskExit("node01", j, 0, 1, 3)).has_value());
  ASSERT_TRUE(controller_->HandleEvents(TaskExit("node02", j, 0, 2, 0, SIGSEGV)).has_value());
  EXPECT_TRUE(Flush().empty());  // without --kill-on-bad-exit the others run on
  ASSERT_TRUE(controller_->HandleEvents(TaskExit("node02", j, 0, 3, 1)).has_value());
  auto s = controller_->GetStep(j.id, 0);
  EXPECT_EQ(s->state, JobState::kFailed);
  EXPECT_EQ(s->exit_code, 128 + SIGSEGV);
  EXPECT_EQ(s->reason, "task 1 on node01: exited with code 3");
}

TEST_F(ControllerStepsTest, KillOnBadExitEndsTheOtherTasks) {
  Job j = StartJob();
  StepSpec spec = Run({"train"});
  spec.kill_on_bad_exit = true;
  ASSERT_TRUE(controller_->CreateStep(kAlice, j.id, spec).has_value());
  Flush();
  ASSERT_TRUE(controller_->HandleEvents(TaskExit("node02", j, 0, 2, 4)).has_value());
  auto out = Flush();
  ASSERT_EQ(out.size(), 2u);
  for (const auto& c : out) {
    EXPECT_TRUE(Is<api::StepSignalRequest>(c));
    EXPECT_EQ(As<api::StepSignalRequest>(c).step, 0u);
    EXPECT_EQ(As<api::StepSignalRequest>(c).signal, 0);  // end them
  }
  for (uint32_t t : {0u, 1u}) {
    ASSERT_TRUE(controller_->HandleEvents(TaskExit("node01", j, 0, t, 0, SIGTERM)).has_value());
  }
  ASSERT_TRUE(controller_->HandleEvents(TaskExit("node02", j, 0, 3, 0, SIGTERM)).has_value());
  auto s = controller_->GetStep(j.id, 0);
  EXPECT_EQ(s->state, JobState::kFailed);
  EXPECT_EQ(s->reason, "task 2 on node02: exited with code 4");
  EXPECT_EQ(s->exit_code, 4);  // not 128 + SIGTERM of the tasks it ended
}

TEST_F(ControllerStepsTest, CancelStepEndsItCancelled) {
  Job j = StartJob();
  ASSERT_TRUE(controller_->CreateStep(kAlice, j.id, Run({"sleep", "100"})).has_value());
  Flush();
  EXPECT_EQ(controller_->CancelStep(kBob, j.id, 0).error().code, ErrorCode::kPermissionDenied);
  ASSERT_TRUE(controller_->CancelStep(kAlice, j.id, 0).has_value());
  EXPECT_EQ(Flush().size(), 2u);
  ASSERT_TRUE(controller_->CancelStep(kAlice, j.id, 0).has_value());  // again: nothing new
  EXPECT_TRUE(Flush().empty());
  for (uint32_t t = 0; t < 4; ++t) {
    ASSERT_TRUE(
        controller_->HandleEvents(TaskExit(t < 2 ? "node01" : "node02", j, 0, t, 0, SIGTERM))
            .has_value());
  }
  EXPECT_EQ(controller_->GetStep(j.id, 0)->state, JobState::kCancelled);
  EXPECT_EQ(controller_->CancelStep(kAlice, j.id, 0).error().code, ErrorCode::kFailedPrecondition);
}

TEST_F(ControllerStepsTest, JobEndEndsItsStepsOnEveryNode) {
  Job j = StartJob();
  ASSERT_TRUE(controller_->CreateStep(kAlice, j.id, Run({"sleep", "100"})).has_value());
  Flush();
  ASSERT_TRUE(controller_->HandleEvents(TaskExit("node02", j, 0, 2, 0)).has_value());
  ASSERT_TRUE(controller_->HandleEvents(TaskExit("node02", j, 0, 3, 0)).has_value());
  api::JobEvent exit{
      .type = api::JobEventType::kExited, .job = j.id, .generation = j.allocation.generation};
  ASSERT_TRUE(controller_->HandleEvents({.node = "node01", .events = {exit}}).has_value());
  EXPECT_EQ(Get(j.id).state, JobState::kCompleted);
  auto s = controller_->GetStep(j.id, 0);
  EXPECT_EQ(s->state, JobState::kCancelled);
  EXPECT_EQ(s->reason, "job " + j.id.ToString() + " ended");
  EXPECT_EQ(s->tasks[0].message, "job " + j.id.ToString() + " ended");
  auto out = Flush();
  ASSERT_EQ(out.size(), 1u);  // node02's tasks had all reported
  EXPECT_TRUE(Is<api::StepSignalRequest>(out[0]));
  EXPECT_EQ(out[0].to.node, "node01");
  EXPECT_EQ(controller_->TakeFinishedSteps().size(), 1u);
  // Late reports of the ended run are stale.
  EXPECT_FALSE(controller_->HandleEvents(TaskExit("node01", j, 0, 0, 0)).has_value());
  // And no step can start in an ended job.
  EXPECT_EQ(controller_->CreateStep(kAlice, j.id, Run({"true"})).error().code,
            ErrorCode::kFailedPrecondition);
}

TEST_F(ControllerStepsTest, StepLaunchFailureOnANodeFailsItsTasks) {
  Job j = StartJob();
  ASSERT_TRUE(controller_->CreateStep(kAlice, j.id, Run({"true"})).has_value());
  Flush();
  controller_->OnStepLaunchFailed(j.id, j.allocation.generation, 0, "node02",
                                  Error{ErrorCode::kAborted, "stale launch"});
  auto s = controller_->GetStep(j.id, 0);
  EXPECT_TRUE(s->tasks[2].ended);
  EXPECT_EQ(s->tasks[3].exit_code, 1);
  EXPECT_EQ(s->tasks[3].message, "launch on node02 failed: stale launch");
  EXPECT_EQ(s->state, JobState::kRunning);
  for (uint32_t t : {0u, 1u})
    ASSERT_TRUE(controller_->HandleEvents(TaskExit("node01", j, 0, t, 0)).has_value());
  EXPECT_EQ(controller_->GetStep(j.id, 0)->state, JobState::kFailed);
}

// Steps are stored with their job (meta "steps/<job>"): a controller recovered from the store
// knows the running step, takes its tasks' exits, ends it, and does not reuse its id.
TEST_F(ControllerStepsTest, StepsSurviveARestartFromTheStore) {
  Job j = StartJob();
  ASSERT_TRUE(controller_->CreateStep(kAlice, j.id, Run({"true"})).has_value());
  ASSERT_TRUE(controller_->CreateStep(kAlice, j.id, Run({"python3", "train.py"})).has_value());
  ASSERT_TRUE(controller_->CancelStep(kAlice, j.id, 0).has_value());
  for (uint32_t task : {0u, 1u})
    ASSERT_TRUE(controller_->HandleEvents(TaskExit("node01", j, 1, task, 0)).has_value());
  Flush();

  // A new controller from what the store holds.
  ControllerConfig config;
  config.heartbeat_interval = Seconds(1);
  config.node_timeout = Seconds(5);
  auto restarted = std::make_unique<Controller>(
      config, std::vector<Partition>{}, std::make_unique<RecordingPolicy>(&snapshot_), clock_);
  ASSERT_TRUE(restarted->Recover(*store_.Load()).has_value());
  auto cancelled = restarted->GetStep(j.id, 0);
  ASSERT_TRUE(cancelled.has_value());
  EXPECT_EQ(cancelled->state, JobState::kRunning);
  auto running = restarted->GetStep(j.id, 1);
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(running->state, JobState::kRunning);
  EXPECT_TRUE(running->tasks[0].ended);
  EXPECT_FALSE(running->tasks[2].ended);
  EXPECT_EQ(running->argv, (std::vector<std::string>{"python3", "train.py"}));
  // The other node's tasks end after the restart; the last one ends the step with its code.
  ASSERT_TRUE(restarted->HandleEvents(TaskExit("node02", j, 1, 2, 0)).has_value());
  EXPECT_EQ(restarted->GetStep(j.id, 1)->state, JobState::kRunning);
  ASSERT_TRUE(restarted->HandleEvents(TaskExit("node02", j, 1, 3, 7)).has_value());
  auto done = restarted->GetStep(j.id, 1);
  EXPECT_EQ(done->state, JobState::kFailed);
  EXPECT_EQ(done->exit_code, 7);
  // The cancel asked before the restart still decides how step 0 ends.
  for (auto [node, task] : std::vector<std::pair<std::string, uint32_t>>{
           {"node01", 0}, {"node01", 1}, {"node02", 2}, {"node02", 3}}) {
    ASSERT_TRUE(restarted->HandleEvents(TaskExit(node, j, 0, task, 0, SIGTERM)).has_value());
  }
  EXPECT_EQ(restarted->GetStep(j.id, 0)->state, JobState::kCancelled);
  EXPECT_EQ(restarted->CreateStep(kAlice, j.id, Run({"true"}))->step, 2u);
  ASSERT_TRUE(store_.Write(restarted->TakeWrites()).has_value());
  EXPECT_NE(store_.Load()->meta.at("steps/" + j.id.ToString()), "");
  // Once the job ends, nothing of its steps is kept.
  api::JobEvent exited{
      .type = api::JobEventType::kExited, .job = j.id, .generation = j.allocation.generation};
  ASSERT_TRUE(restarted->HandleEvents({.node = "node01", .events = {exited}}).has_value());
  ASSERT_TRUE(store_.Write(restarted->TakeWrites()).has_value());
  EXPECT_FALSE(store_.Load()->meta.contains("steps/" + j.id.ToString()));
}

// A job whose steps had all ended leaves nothing of them in the store either.
TEST_F(ControllerStepsTest, StoredStepsGoWhenTheJobEndsAfterThem) {
  Job j = StartJob();
  ASSERT_TRUE(controller_->CreateStep(kAlice, j.id, Run({"true"})).has_value());
  for (uint32_t task : {0u, 1u})
    ASSERT_TRUE(controller_->HandleEvents(TaskExit("node01", j, 0, task, 0)).has_value());
  for (uint32_t task : {2u, 3u})
    ASSERT_TRUE(controller_->HandleEvents(TaskExit("node02", j, 0, task, 0)).has_value());
  Flush();
  ASSERT_EQ(controller_->GetStep(j.id, 0)->state, JobState::kCompleted);
  EXPECT_TRUE(store_.Load()->meta.contains("steps/" + j.id.ToString()));
  api::JobEvent exited{
      .type = api::JobEventType::kExited, .job = j.id, .generation = j.allocation.generation};
  ASSERT_TRUE(controller_->HandleEvents({.node = "node01", .events = {exited}}).has_value());
  Flush();
  EXPECT_FALSE(store_.Load()->meta.contains("steps/" + j.id.ToString()));
}

// pyxis' --container-name: a later step naming the container gets its image.
TEST_F(ControllerStepsTest, NamedContainerGivesLaterStepsItsImage) {
  Job j = StartJob();
  StepSpec first = Run({"true"});
  first.container.image = "nvcr.io#nvidia/pytorch:24.01-py3";
  first.container.name = "train:auto";
  auto a = controller_->CreateStep(kAlice, j.id, first);
  ASSERT_TRUE(a.has_value()) << a.error().message;
  EXPECT_EQ(a->container.name, "train");
  StepSpec later = Run({"python3", "train.py"});
  later.container.name = "train";
  later.container.mounts = {"/data:/data"};
  auto out = Flush();
  auto b = controller_->CreateStep(kAlice, j.id, later);
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_EQ(b->container.image, "nvcr.io#nvidia/pytorch:24.01-py3");
  out = Flush();
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(As<api::StepLaunchRequest>(out[0]).spec.container.image,
            "nvcr.io#nvidia/pytorch:24.01-py3");
  EXPECT_EQ(As<api::StepLaunchRequest>(out[0]).spec.container.mounts,
            (std::vector<std::string>{"/data:/data"}));

  StepSpec unknown = Run({"true"});
  unknown.container.name = "eval";
  auto c = controller_->CreateStep(kAlice, j.id, unknown);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message,
            "job " + j.id.ToString() +
                ": --container-name=eval: no earlier step of this job made a container of "
                "that name; give --container-image with it the first time");
  unknown.container.name = "train:exec";
  EXPECT_EQ(controller_->CreateStep(kAlice, j.id, unknown).error().message,
            "job " + j.id.ToString() +
                ": --container-name=train:exec: the flag \"exec\" is not supported by Corral (only "
                "\"auto\")");
  // Mounts alone mean no container.
  StepSpec bare = Run({"true"});
  bare.container.mounts = {"/data:/data"};
  auto d = controller_->CreateStep(kAlice, j.id, bare);
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->container.image.empty());
  EXPECT_TRUE(d->container.mounts.empty());
}

TEST_F(ControllerStepsTest, CreateStepErrors) {
  Job j = StartJob();
  EXPECT_EQ(controller_->CreateStep(kBob, j.id, Run({"true"})).error().code,
            ErrorCode::kPermissionDenied);
  EXPECT_EQ(controller_->CreateStep(kAlice, JobId(999), Run({"true"})).error().code,
            ErrorCode::kNotFound);
  StepSpec big = Run({"true"});
  big.nodes = 3;
  auto r = controller_->CreateStep(kAlice, j.id, big);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message, "nodes: 3 requested, but job " + j.id.ToString() + " holds only 2");
  StepSpec io = Run({"true"});
  io.io_port = 5000;
  io.io_node = "node09";
  EXPECT_EQ(controller_->CreateStep(kAlice, j.id, io).error().message,
            "io_node: \"node09\" is not a node of job " + j.id.ToString());
  EXPECT_EQ(controller_->GetStep(j.id, 0).error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(Flush().empty());
}

TEST_F(ControllerStepsTest, CheckpointAcknowledgementIsDurableAndReachesTheScheduler) {
  Job j = StartJob();
  clock_.Advance(Seconds(30));
  EXPECT_EQ(controller_->AcknowledgeCheckpoint(kBob, j.id).error().code,
            ErrorCode::kPermissionDenied);
  auto info = controller_->AcknowledgeCheckpoint(kAlice, j.id);
  ASSERT_TRUE(info.has_value()) << info.error().message;
  EXPECT_EQ(info->job.last_checkpoint, clock_.Now());
  Flush();
  EXPECT_EQ(store_.Load()->jobs.front().last_checkpoint, clock_.Now());
  // A pending job makes the next pass look at the running ones.
  JobSpec wait;
  wait.script = "#!/bin/sh\ntrue\n";
  wait.working_dir = "/tmp";
  wait.resources.gpus_per_node = 4;
  wait.resources.nodes = 2;
  ASSERT_TRUE(controller_->Submit(kAlice, wait).has_value());
  controller_->Schedule();
  ASSERT_EQ(snapshot_.running.size(), 1u);
  EXPECT_EQ(snapshot_.running[0].last_checkpoint, clock_.Now());
  // Not running: refused.
  api::JobEvent exit{
      .type = api::JobEventType::kExited, .job = j.id, .generation = j.allocation.generation};
  ASSERT_TRUE(controller_->HandleEvents({.node = "node01", .events = {exit}}).has_value());
  EXPECT_EQ(controller_->AcknowledgeCheckpoint(kAlice, j.id).error().code,
            ErrorCode::kFailedPrecondition);
}

TEST_F(ControllerStepsTest, CheckpointSignalThenRequeueAfterTheGrace) {
  Job j = StartJob({.signal = SIGUSR1, .before = Seconds(60)}, /*requeue=*/true);
  ASSERT_TRUE(controller_->CreateStep(kAlice, j.id, Run({"train"})).has_value());
  Flush();
  // (The grace stays under the node timeout: these nodes never heartbeat.)
  ASSERT_TRUE(
      controller_->SignalCheckpointAndStop(j.id, Seconds(3), StopAction::kRequeue, "preempted")
          .has_value());
  auto out = Flush();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(Is<api::SignalRequest>(out[0]));
  EXPECT_EQ(out[0].to.node, "node01");
  EXPECT_EQ(As<api::SignalRequest>(out[0]).signal, SIGUSR1);
  EXPECT_FALSE(As<api::SignalRequest>(out[0]).batch_only);
  EXPECT_TRUE(Is<api::StepSignalRequest>(out[1]));  // the step's tasks on node02
  EXPECT_EQ(out[1].to.node, "node02");
  EXPECT_EQ(As<api::StepSignalRequest>(out[1]).step, kAllSteps);
  EXPECT_EQ(As<api::StepSignalRequest>(out[1]).signal, SIGUSR1);
  // A second order keeps the first deadline.
  ASSERT_TRUE(
      controller_->SignalCheckpointAndStop(j.id, Seconds(300), StopAction::kRequeue, "again")
          .has_value());
  EXPECT_TRUE(Flush().empty());
  EXPECT_LE(controller_->NextTickDeadline(), clock_.MonotonicNow() + Seconds(3));
  clock_.Advance(Seconds(2));
  controller_->Tick();
  EXPECT_EQ(Get(j.id).state, JobState::kRunning);
  clock_.Advance(Seconds(2));
  controller_->Tick();
  Job requeued = Get(j.id);
  EXPECT_EQ(requeued.restart_count, 1u);
  // Back in the queue (the same tick's pass may have started its next run already).
  EXPECT_TRUE(requeued.state == JobState::kPending ||
              requeued.allocation.generation != j.allocation.generation);
  EXPECT_EQ(controller_->GetStep(j.id, 0)->state, JobState::kCancelled);
  bool cancel_sent = false;
  for (const auto& c : Flush()) {
    cancel_sent |= Is<api::CancelRequest>(c) &&
                   As<api::CancelRequest>(c).generation == j.allocation.generation;
  }
  EXPECT_TRUE(cancel_sent);
  EXPECT_EQ(store_.Load()->jobs.front().restart_count, 1u);
}

TEST_F(ControllerStepsTest, AcknowledgedCheckpointStopsAtOnce) {
  Job j = StartJob({.signal = SIGUSR1, .before = Seconds(60), .batch_only = true});
  ASSERT_TRUE(
      controller_->SignalCheckpointAndStop(j.id, Minutes(5), StopAction::kCancel, "preempted")
          .has_value());
  auto out = Flush();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(As<api::SignalRequest>(out[0]).batch_only);
  ASSERT_TRUE(controller_->AcknowledgeCheckpoint(kAlice, j.id).has_value());
  out = Flush();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(Is<api::CancelRequest>(out[0]));
  api::JobEvent exit{.type = api::JobEventType::kExited,
                     .job = j.id,
                     .generation = j.allocation.generation,
                     .signal = SIGTERM,
                     .cancelled = true};
  ASSERT_TRUE(controller_->HandleEvents({.node = "node01", .events = {exit}}).has_value());
  EXPECT_EQ(Get(j.id).state, JobState::kCancelled);
  EXPECT_NE(Get(j.id).last_checkpoint, Timestamp{});
}

TEST_F(ControllerStepsTest, JobWithoutACheckpointSignalIsStoppedAtOnce) {
  Job j = StartJob();
  EXPECT_EQ(controller_->SignalCheckpointAndStop(JobId(999), Seconds(30), StopAction::kRequeue, "x")
                .error()
                .code,
            ErrorCode::kNotFound);
  ASSERT_TRUE(
      controller_->SignalCheckpointAndStop(j.id, Seconds(30), StopAction::kRequeue, "preempted")
          .has_value());
  Job requeued = Get(j.id);
  EXPECT_EQ(requeued.state, JobState::kPending);
  EXPECT_EQ(requeued.restart_count, 1u);
  EXPECT_EQ(requeued.reason, "preempted");
}

}  // namespace
}  // namespace corral::controller
