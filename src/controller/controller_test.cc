#include "controller/controller.h"

#include <gtest/gtest.h>

#include "controller/testing/controller_test_base.h"
#include "controller/testing/requests.h"
#include "sched/first_fit_policy.h"

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

class ControllerTest : public testing::ControllerTestBase {
 protected:
  ControllerTest() { Reset(); }

  // A new controller over the same store, with partitions "main" (the default) and "short"
  // (at most 30 minutes).
  void Reset(std::unique_ptr<sched::Policy> policy = nullptr) {
    StartController(TestConfig(),
                    {Partition{.name = "main", .is_default = true},
                     Partition{.name = "short", .max_time = Minutes(30)}},
                    std::move(policy));
  }

  void RegisterNode(const std::string& name, uint32_t gpus,
                    std::vector<api::RunningJobRef> running = {}) {
    last_kill_ = Register(NodeRegistration(name, gpus, "", std::move(running))).kill;
  }

  std::vector<api::RunningJobRef> last_kill_;
};

TEST_F(ControllerTest, SubmitScheduleLaunchAndComplete) {
  RegisterNode("node01", 4);
  Flush();
  JobId a = Submit(BatchJob(2));
  JobId b = Submit(BatchJob(2));
  EXPECT_EQ(Get(a).state, JobState::kPending);
  EXPECT_EQ(Get(a).spec.user, "alice");
  EXPECT_EQ(Get(a).spec.uid, 1000u);
  controller_->Tick();
  auto out = Flush();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(Is<api::LaunchRequest>(out[0]));
  EXPECT_EQ(out[0].to.node, "node01");
  Job ja = Get(a), jb = Get(b);
  EXPECT_EQ(ja.state, JobState::kRunning);
  EXPECT_EQ(ja.allocation.nodes[0].gpus.ToString(), "0,1");
  EXPECT_EQ(jb.allocation.nodes[0].gpus.ToString(), "2,3");
  EXPECT_NE(ja.allocation.generation, jb.allocation.generation);
  EXPECT_EQ(As<api::LaunchRequest>(out[0]).job.allocation, ja.allocation);
  // The store holds the allocation before the launch is released.
  auto stored = store_.Load();
  EXPECT_EQ(stored->jobs[0].state, JobState::kRunning);

  ASSERT_TRUE(controller_->HandleEvents(JobExit("node01", ja, 0)).has_value());
  ASSERT_TRUE(controller_->HandleEvents(JobExit("node01", jb, 3)).has_value());
  EXPECT_EQ(Get(a).state, JobState::kCompleted);
  EXPECT_EQ(Get(b).state, JobState::kFailed);
  EXPECT_EQ(Get(b).exit_code, 3);
  EXPECT_EQ(controller_->TakeFinished(), (std::vector<JobId>{a, b}));
  auto node = controller_->GetNode("node01");
  EXPECT_TRUE(node->alloc_gpus.empty());
  EXPECT_EQ(node->state, NodeState::kIdle);
}

TEST_F(ControllerTest, TimeoutEventGivesTimeoutState) {
  RegisterNode("node01", 1);
  JobId a = Submit(BatchJob(1));
  controller_->Tick();
  ASSERT_TRUE(
      controller_->HandleEvents(JobExit("node01", Get(a), 0, 0, /*timed_out=*/true)).has_value());
  EXPECT_EQ(Get(a).state, JobState::kTimeout);
}

TEST_F(ControllerTest, MultiNodeJobsAreAllOrNothing) {
  RegisterNode("node01", 4);
  RegisterNode("node02", 4);
  JobId small = Submit(BatchJob(3));
  JobId big = Submit(BatchJob(2, 2));  // needs two nodes with 2 free GPUs: only node02 has them
  controller_->Tick();
  Job js = Get(small);
  EXPECT_EQ(js.state, JobState::kRunning);
  Job jb = Get(big);
  EXPECT_EQ(jb.state, JobState::kPending);
  EXPECT_TRUE(jb.allocation.nodes.empty());
  EXPECT_TRUE(controller_->GetNode("node02")->alloc_gpus.empty()) << "no partial allocation";
  ASSERT_TRUE(controller_->HandleEvents(JobExit("node01", js, 0)).has_value());
  controller_->Tick();
  jb = Get(big);
  ASSERT_EQ(jb.state, JobState::kRunning);
  ASSERT_EQ(jb.allocation.nodes.size(), 2u);
  EXPECT_EQ(jb.allocation.nodes[0].node_name, "node01");
  EXPECT_EQ(jb.allocation.nodes[1].node_name, "node02");
  EXPECT_EQ(jb.allocation.nodes[1].gpus.ToString(), "0,1");
}

TEST_F(ControllerTest, StaleReportsAreRejectedAndChangeNothing) {
  RegisterNode("node01", 1);
  JobId a = Submit(BatchJob(1));
  controller_->Tick();
  Job first = Get(a);
  ASSERT_TRUE(controller_->Requeue(kAlice, a).has_value());
  controller_->Tick();
  Job second = Get(a);
  ASSERT_EQ(second.state, JobState::kRunning);
  EXPECT_GT(second.allocation.generation, first.allocation.generation);
  EXPECT_EQ(second.restart_count, 1u);
  Flush();
  auto s = controller_->HandleEvents(JobExit("node01", first, 0));
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kAborted);
  EXPECT_NE(s.error().message.find("stale"), std::string::npos);
  EXPECT_EQ(Get(a).state, JobState::kRunning);
  EXPECT_FALSE(controller_->HasPendingWrites());
  // A report from another node about the job is stale too.
  RegisterNode("node02", 1);
  EXPECT_FALSE(controller_->HandleEvents(JobExit("node02", second, 0)).has_value());
}

TEST_F(ControllerTest, NodeTimeoutFailsOrRequeuesItsJobs) {
  RegisterNode("node01", 2);
  RegisterNode("node02", 2);
  JobSpec plain = BatchJob(2);
  JobSpec requeue = BatchJob(2);
  requeue.requeue = true;
  JobId a = Submit(plain);
  JobId b = Submit(requeue);
  controller_->Tick();
  ASSERT_EQ(Get(a).allocation.nodes[0].node_name, "node01");
  ASSERT_EQ(Get(b).allocation.nodes[0].node_name, "node02");
  Flush();
  // node02 keeps heartbeating; node01 goes silent.
  for (int i = 0; i < 6; ++i) {
    clock_.Advance(Seconds(1));
    ASSERT_TRUE(
        controller_->Heartbeat({.node = "node02", .running = {{b, Get(b).allocation.generation}}})
            .has_value());
    controller_->Tick();
  }
  EXPECT_EQ(controller_->GetNode("node01")->state, NodeState::kDown);
  EXPECT_EQ(Get(a).state, JobState::kNodeFail);
  EXPECT_EQ(Get(b).state, JobState::kRunning);

  // Now node02 dies: its requeueable job goes back to PENDING and cannot start anywhere.
  clock_.Advance(Seconds(6));
  controller_->Tick();
  Job jb = Get(b);
  EXPECT_EQ(jb.state, JobState::kPending);
  EXPECT_EQ(jb.restart_count, 1u);
  EXPECT_TRUE(jb.allocation.nodes.empty());
  // node01 comes back and takes it, with a new generation.
  RegisterNode("node01", 2);
  controller_->Tick();
  EXPECT_EQ(Get(b).state, JobState::kRunning);
  EXPECT_EQ(Get(b).allocation.nodes[0].node_name, "node01");
}

TEST_F(ControllerTest, RegistrationReconcilesBothWays) {
  RegisterNode("node01", 2);
  JobId a = Submit(BatchJob(1));
  controller_->Tick();
  Flush();
  // The agent restarted: it runs an old job the controller does not know, and not job a.
  RegisterNode("node01", 2, {{JobId(999), Generation(3)}});
  ASSERT_EQ(last_kill_.size(), 1u);
  EXPECT_EQ(last_kill_[0].job, JobId(999));
  EXPECT_EQ(Get(a).state, JobState::kNodeFail);
}

TEST_F(ControllerTest, HeartbeatKillsUnknownAndFailsLostJobs) {
  RegisterNode("node01", 2);
  JobId a = Submit(BatchJob(1));
  controller_->Tick();
  Generation gen = Get(a).allocation.generation;
  controller_->OnLaunchAccepted(a, gen);
  // Right after the launch, a heartbeat without the job is no proof it is lost.
  auto hb = controller_->Heartbeat({.node = "node01", .running = {{JobId(77), Generation(1)}}});
  ASSERT_TRUE(hb.has_value());
  EXPECT_EQ(hb->kill.size(), 1u);
  EXPECT_EQ(Get(a).state, JobState::kRunning);
  clock_.Advance(Seconds(3));
  ASSERT_TRUE(controller_->Heartbeat({.node = "node01", .running = {}}).has_value());
  EXPECT_EQ(Get(a).state, JobState::kNodeFail);
  // An unknown node is told to register.
  EXPECT_TRUE(controller_->Heartbeat({.node = "ghost"})->reregister);
}

TEST_F(ControllerTest, BadSubmissionsGetClearErrorsAndChangeNothing) {
  RegisterNode("node01", 4);
  Flush();
  struct Case {
    std::function<void(JobSpec&)> edit;
    ErrorCode code;
    std::string message;
  } cases[] = {
      {[](JobSpec& s) { s.script = ""; }, ErrorCode::kInvalidArgument,
       "script: empty; a batch script is required"},
      {[](JobSpec& s) { s.script = "echo hi\n"; }, ErrorCode::kInvalidArgument,
       "script: the first line must start with #! followed by the path to an interpreter"},
      {[](JobSpec& s) { s.partitions = {"gpu"}; }, ErrorCode::kInvalidArgument,
       "partition: no such partition \"gpu\""},
      {[](JobSpec& s) { s.resources.gpus_per_node = 5; }, ErrorCode::kInvalidArgument,
       "resources.gpus: 5 GPUs per node requested, but no node of partition \"main\" has more than "
       "4"},
      {[](JobSpec& s) { s.resources.gpu_type = "a100"; }, ErrorCode::kInvalidArgument,
       "resources.gpus: 1 GPUs of type a100 per node requested, but no node of partition \"main\" "
       "has more than 0"},
      {[](JobSpec& s) { s.resources.nodes = 2; }, ErrorCode::kInvalidArgument,
       "resources.nodes: 2 nodes requested, but partition \"main\" has only 1 that can hold one "
       "share of the job"},
      {[](JobSpec& s) { s.resources.ntasks = 0; }, ErrorCode::kInvalidArgument,
       "resources.ntasks: must be at least 1"},
      {[](JobSpec& s) { s.resources.cpus_per_task = 17; }, ErrorCode::kInvalidArgument,
       "resources.cpus: 17 CPUs per node requested, but no node of partition \"main\" has more "
       "than 16"},
      {[](JobSpec& s) {
         s.partitions = {"short"};
         s.time_limit = Minutes(31);
       },
       ErrorCode::kInvalidArgument,
       "time_limit: 31:00 exceeds the maximum 30:00 of partition \"short\""},
      {[](JobSpec& s) { s.working_dir = "relative"; }, ErrorCode::kInvalidArgument,
       "working_dir: \"relative\" is not an absolute path"},
      {[](JobSpec& s) { s.user = "bob"; }, ErrorCode::kPermissionDenied,
       "user: alice may not submit jobs as bob"},
      {[](JobSpec& s) {
         s.dependencies = {{.type = DependencyType::kAfterOk, .jobs = {JobId(555)}}};
       },
       ErrorCode::kInvalidArgument, "dependency: no such job 555"},
      {[](JobSpec& s) { s.environment.Mutable()["A=B"] = "x"; }, ErrorCode::kInvalidArgument,
       "environment: invalid variable name \"A=B\""},
  };
  for (auto& c : cases) {
    JobSpec s = BatchJob(1);
    c.edit(s);
    auto r = controller_->Submit(kAlice, s);
    ASSERT_FALSE(r.has_value()) << c.message;
    EXPECT_EQ(r.error().code, c.code) << c.message;
    EXPECT_EQ(r.error().message, c.message);
  }
  EXPECT_EQ(controller_->job_count(), 0u);
  EXPECT_FALSE(controller_->HasPendingWrites());
}

// What a submission is checked against is kept between submissions (10,000 nodes made
// rebuilding it the cost of a submission): a node that registers in between counts at once.
TEST_F(ControllerTest, ASubmissionCountsANodeThatRegisteredSinceTheLastOne) {
  RegisterNode("node01", 4);
  Flush();
  JobSpec two = BatchJob(4);
  two.resources.nodes = 2;
  auto refused = controller_->Submit(kAlice, two);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message,
            "resources.nodes: 2 nodes requested, but partition \"main\" has only 1 that can hold "
            "one share of the job");
  RegisterNode("node02", 4);
  Flush();
  auto accepted = controller_->Submit(kAlice, two);
  EXPECT_TRUE(accepted.has_value()) << accepted.error().message;
  JobSpec eight = BatchJob(8);
  auto too_big = controller_->Submit(kAlice, eight);
  ASSERT_FALSE(too_big.has_value());
  RegisterNode("node03", 8);
  Flush();
  EXPECT_TRUE(controller_->Submit(kAlice, eight).has_value());
}

TEST_F(ControllerTest, CredentialVariablesOfASubmittedEnvironmentAreDropped) {
  // A raw API submission (the CLI already leaves them out) with a caller's credentials in the
  // job's environment: the job keeps the rest, in memory and in the store.
  JobSpec spec = BatchJob(1);
  spec.environment = {{"CORRAL_TOKEN", "eyJ.secret"},
                      {"CORRAL_JOB_CREDENTIAL", "eyJ.job"},
                      {"CORRAL_KEY_FILE", "/home/alice/.corral/keyring"},
                      {"CORRAL_CA_FILE", "/etc/corral/ca.crt"},
                      {"PATH", "/usr/bin"}};
  JobId id = Submit(spec);
  const std::map<std::string, std::string> kept = {{"CORRAL_CA_FILE", "/etc/corral/ca.crt"},
                                                   {"PATH", "/usr/bin"}};
  EXPECT_EQ(Get(id).spec.environment, kept);
  Flush();
  auto stored = store_.Load();
  ASSERT_TRUE(stored.has_value());
  ASSERT_EQ(stored->jobs.size(), 1u);
  EXPECT_EQ(stored->jobs[0].spec.environment, kept);
}

TEST_F(ControllerTest, CancelPendingAndRunningJobs) {
  RegisterNode("node01", 1);
  JobId running = Submit(BatchJob(1));
  JobId pending = Submit(BatchJob(1));
  controller_->Tick();
  Flush();
  EXPECT_EQ(controller_->Cancel(kBob, pending).error().code, ErrorCode::kPermissionDenied);
  ASSERT_TRUE(controller_->Cancel(kAlice, pending).has_value());
  EXPECT_EQ(Get(pending).state, JobState::kCancelled);
  ASSERT_TRUE(controller_->Cancel(kAdmin, running).has_value());
  auto out = Flush();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(Is<api::CancelRequest>(out[0]));
  EXPECT_EQ(Get(running).state, JobState::kRunning);  // until the agent reports the exit
  api::JobEventsRequest ev = JobExit("node01", Get(running), 0);
  ev.events[0].signal = 15;
  ASSERT_TRUE(controller_->HandleEvents(ev).has_value());
  EXPECT_EQ(Get(running).state, JobState::kCancelled);
  EXPECT_EQ(controller_->Cancel(kAlice, running).error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(controller_->Cancel(kAlice, JobId(999)).error().code, ErrorCode::kNotFound);
}

TEST_F(ControllerTest, DrainKeepsNewJobsAwayAndNeedsAnAdmin) {
  RegisterNode("node01", 2);
  EXPECT_EQ(controller_->Drain(kAlice, "node01", "maintenance").error().code,
            ErrorCode::kPermissionDenied);
  EXPECT_EQ(controller_->Drain(kAdmin, "node01", "").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(controller_->Drain(kAdmin, "node99", "x").error().code, ErrorCode::kNotFound);
  ASSERT_TRUE(controller_->Drain(kAdmin, "node01", "maintenance").has_value());
  JobId a = Submit(BatchJob(1));
  controller_->Tick();
  EXPECT_EQ(Get(a).state, JobState::kPending);
  EXPECT_EQ(controller_->GetNode("node01")->state, NodeState::kDrained);
  EXPECT_EQ(controller_->GetNode("node01")->node.reason, "maintenance");
  ASSERT_TRUE(controller_->Resume(kAdmin, "node01").has_value());
  controller_->Tick();
  EXPECT_EQ(Get(a).state, JobState::kRunning);
}

TEST_F(ControllerTest, RecoveryRestoresJobsNodesAllocationsAndCounters) {
  RegisterNode("node01", 2);
  JobId a = Submit(BatchJob(2));
  JobId b = Submit(BatchJob(1));
  controller_->Tick();
  Flush();
  Generation gen = Get(a).allocation.generation;

  Reset();  // a new controller over the same store
  EXPECT_EQ(Get(a).state, JobState::kRunning);
  EXPECT_EQ(Get(a).allocation.generation, gen);
  EXPECT_EQ(Get(b).state, JobState::kPending);
  // The recovered allocation still holds the GPUs, and the launch is sent again, with the
  // job's time limit (in case a change was stored but not delivered before the restart).
  auto out = Flush();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(Is<api::LaunchRequest>(out[0]));
  EXPECT_EQ(As<api::LaunchRequest>(out[0]).job.id, a);
  EXPECT_TRUE(Is<api::TimeLimitRequest>(out[1]));
  EXPECT_EQ(out[1].to.node, "node01");
  EXPECT_EQ(As<api::TimeLimitRequest>(out[1]), (api::TimeLimitRequest{a, gen, Get(a).time_limit}));
  controller_->Tick();
  EXPECT_EQ(Get(b).state, JobState::kPending);
  // Ids and generations continue where they were.
  JobId c = Submit(BatchJob(1));
  EXPECT_GT(c, b);
  ASSERT_TRUE(controller_->HandleEvents(JobExit("node01", Get(a), 0)).has_value());
  controller_->Tick();
  EXPECT_EQ(Get(b).state, JobState::kRunning);
  EXPECT_GT(Get(b).allocation.generation, gen);
}

TEST_F(ControllerTest, ArraysBecomeOneJobPerIndexWithConsecutiveIds) {
  RegisterNode("node01", 4);
  JobSpec s = BatchJob(1);
  s.array = "0-6:3,10";
  auto r = controller_->Submit(kAlice, s);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->task_ids.size(), 4u);
  EXPECT_EQ(r->job_id, r->task_ids[0]);
  std::vector<uint32_t> indices;
  for (size_t k = 0; k < r->task_ids.size(); ++k) {
    Job j = Get(r->task_ids[k]);
    EXPECT_EQ(j.id.value, r->job_id.value + k);
    EXPECT_EQ(j.array_job_id, r->job_id);
    indices.push_back(*j.array_task_id);
  }
  EXPECT_EQ(indices, (std::vector<uint32_t>{0, 3, 6, 10}));
  s.array = "5-1";
  auto bad = controller_->Submit(kAlice, s);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message.rfind("array: ", 0), 0u) << bad.error().message;
  EXPECT_EQ(controller_->job_count(), 4u);
}

TEST_F(ControllerTest, ListFiltersByUserStateAndPartition) {
  RegisterNode("node01", 1);
  JobId a = Submit(BatchJob(1));
  JobId b = Submit(BatchJob(1), kBob);
  JobSpec s = BatchJob(1);
  s.partitions = {"short"};
  JobId c = Submit(s);
  controller_->Tick();
  auto ids = [](const std::vector<api::JobInfo>& v) {
    std::vector<JobId> out;
    for (const auto& j : v) out.push_back(j.job.id);
    return out;
  };
  EXPECT_EQ(ids(controller_->ListJobs({.users = {"bob"}})), (std::vector<JobId>{b}));
  EXPECT_EQ(ids(controller_->ListJobs({.states = {JobState::kRunning}})), (std::vector<JobId>{a}));
  EXPECT_EQ(ids(controller_->ListJobs({.partitions = {"short"}})), (std::vector<JobId>{c}));
  EXPECT_EQ(ids(controller_->ListJobs({})), (std::vector<JobId>{a, b, c}));
}

TEST_F(ControllerTest, ListSelectsArraysAndTimeWindows) {
  RegisterNode("node01", 1);
  JobSpec s = BatchJob(1);
  s.array = "1-3";
  auto arr = controller_->Submit(kAlice, s);
  ASSERT_TRUE(arr.has_value()) << arr.error().message;
  JobId after = Submit(BatchJob(1));
  auto ids = [](const std::vector<api::JobInfo>& v) {
    std::vector<JobId> out;
    for (const auto& j : v) out.push_back(j.job.id);
    return out;
  };
  JobId first = arr->job_id;
  EXPECT_EQ(ids(controller_->ListJobs({.ids = {first}})), (std::vector<JobId>{first}));
  EXPECT_EQ(ids(controller_->ListJobs({.ids = {first}, .expand_arrays = true})), arr->task_ids);
  // A task's own id selects only that task.
  EXPECT_EQ(ids(controller_->ListJobs({.ids = {arr->task_ids[1]}, .expand_arrays = true})),
            (std::vector<JobId>{arr->task_ids[1]}));

  // Windows: the first task runs and ends; the others are still pending.
  controller_->Tick();
  Job running = Get(first);
  ASSERT_EQ(running.state, JobState::kRunning);
  clock_.Advance(Seconds(60));
  ASSERT_TRUE(controller_->HandleEvents(JobExit("node01", running, 0)).has_value());
  Timestamp ended = clock_.Now();
  clock_.Advance(Seconds(3600));
  clock_.Advance(Seconds(24 * 3600));  // long after: gone from the default list
  JobId late = Submit(BatchJob(1));
  auto window = [&](Timestamp from, Timestamp until) {
    return ids(controller_->ListJobs({.active_from = from, .active_until = until}));
  };
  // A window around the finished job's run shows it and the jobs pending then.
  EXPECT_EQ(window(ended - Seconds(30), ended - Seconds(10)),
            (std::vector<JobId>{first, arr->task_ids[1], arr->task_ids[2], after}));
  // A window after its end leaves it out; the late job is in a window that reaches it.
  EXPECT_EQ(window(ended + Seconds(10), ended + Seconds(20)),
            (std::vector<JobId>{arr->task_ids[1], arr->task_ids[2], after}));
  EXPECT_EQ(window(clock_.Now(), Timestamp{}),
            (std::vector<JobId>{arr->task_ids[1], arr->task_ids[2], after, late}));
}

TEST_F(ControllerTest, UpdateTimeLimitOfPendingJobs) {
  RegisterNode("node01", 1);
  JobId busy = Submit(BatchJob(1));
  controller_->Tick();
  ASSERT_EQ(Get(busy).state, JobState::kRunning);
  JobSpec s = BatchJob(1);
  s.time_limit = Minutes(60);
  JobId a = Submit(s);
  // The owner may lower it; the record and the spec change, durably.
  ASSERT_TRUE(controller_->UpdateTimeLimit(kAlice, a, Minutes(30)).has_value());
  EXPECT_EQ(Get(a).time_limit, Minutes(30));
  EXPECT_EQ(Get(a).spec.time_limit, Minutes(30));
  Flush();
  bool found = false;
  auto stored = store_.Load();
  ASSERT_TRUE(stored.has_value());
  for (const Job& j : stored->jobs) {
    if (j.id == a) {
      found = true;
      EXPECT_EQ(j.time_limit, Minutes(30));
    }
  }
  EXPECT_TRUE(found);
  // Raising it needs an admin; so does another user's job.
  auto raise = controller_->UpdateTimeLimit(kAlice, a, Minutes(90));
  ASSERT_FALSE(raise.has_value());
  EXPECT_EQ(raise.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(raise.error().message,
            "job " + a.ToString() +
                ": only an administrator may raise a time limit (from 30:00 to 1:30:00)");
  EXPECT_EQ(controller_->UpdateTimeLimit(kBob, a, Minutes(10)).error().code,
            ErrorCode::kPermissionDenied);
  ASSERT_TRUE(controller_->UpdateTimeLimit(kAdmin, a, kUnlimited).has_value());
  EXPECT_EQ(Get(a).time_limit, kUnlimited);
  // Not positive; unknown job; ended.
  EXPECT_EQ(controller_->UpdateTimeLimit(kAlice, a, Seconds(0)).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(controller_->UpdateTimeLimit(kAlice, JobId(999), Minutes(1)).error().code,
            ErrorCode::kNotFound);
  ASSERT_TRUE(controller_->HandleEvents(JobExit("node01", Get(busy), 0)).has_value());
  ASSERT_EQ(Get(busy).state, JobState::kCompleted);
  auto ended = controller_->UpdateTimeLimit(kAlice, busy, Minutes(1));
  ASSERT_FALSE(ended.has_value());
  EXPECT_EQ(ended.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(ended.error().message,
            "job " + busy.ToString() +
                ": COMPLETED: a time limit can only be changed while the job is "
                "pending or running");
  // A user may not go over the partition's maximum (30 minutes in "short").
  JobSpec in_short = BatchJob(1);
  in_short.partitions = {"short"};
  in_short.time_limit = Minutes(20);
  JobId b = Submit(in_short);
  ASSERT_TRUE(controller_->UpdateTimeLimit(kAlice, b, Minutes(10)).has_value());
}

TEST_F(ControllerTest, UpdateTimeLimitOfARunningJobReachesEveryNodeOfTheRun) {
  RegisterNode("node01", 1);
  RegisterNode("node02", 1);
  RegisterNode("node03", 1);
  Flush();
  JobSpec s = BatchJob(1, /*nodes=*/2);
  s.partitions = {"short"};
  s.time_limit = Minutes(20);
  JobId a = Submit(s);
  controller_->Tick();
  Job j = Get(a);
  ASSERT_EQ(j.state, JobState::kRunning);
  ASSERT_EQ(j.allocation.nodes.size(), 2u);
  Flush();  // the launch

  auto sent = [&](const std::vector<OutgoingCommand>& out) {
    std::vector<std::string> to;
    for (const auto& c : out) {
      EXPECT_TRUE(Is<api::TimeLimitRequest>(c));
      EXPECT_EQ(As<api::TimeLimitRequest>(c).job, a);
      EXPECT_EQ(As<api::TimeLimitRequest>(c).generation, j.allocation.generation);
      to.push_back(c.to.node);
    }
    return to;
  };
  std::vector<std::string> nodes = {j.allocation.nodes[0].node_name,
                                    j.allocation.nodes[1].node_name};

  // The owner lowers it: stored durably, and sent to both nodes of the allocation.
  ASSERT_TRUE(controller_->UpdateTimeLimit(kAlice, a, Minutes(10)).has_value());
  auto out = Flush();
  EXPECT_EQ(sent(out), nodes);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(As<api::TimeLimitRequest>(out[0]).time_limit, Minutes(10));
  EXPECT_EQ(Get(a).time_limit, Minutes(10));
  EXPECT_EQ(Get(a).state, JobState::kRunning);
  auto stored = store_.Load();
  ASSERT_TRUE(stored.has_value());
  bool found = false;
  for (const Job& sj : stored->jobs) {
    if (sj.id != a) continue;
    found = true;
    EXPECT_EQ(sj.time_limit, Minutes(10));
    EXPECT_EQ(sj.spec.time_limit, Minutes(10));
  }
  EXPECT_TRUE(found);

  // Raising it, going over the partition's maximum and another user's job are refused, and
  // change nothing: no record, no command.
  auto raise = controller_->UpdateTimeLimit(kAlice, a, Minutes(15));
  ASSERT_FALSE(raise.has_value());
  EXPECT_EQ(raise.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(raise.error().message,
            "job " + a.ToString() +
                ": only an administrator may raise a time limit (from 10:00 to 15:00)");
  EXPECT_EQ(controller_->UpdateTimeLimit(kBob, a, Minutes(5)).error().code,
            ErrorCode::kPermissionDenied);
  EXPECT_EQ(controller_->UpdateTimeLimit(kAlice, a, Seconds(0)).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(controller_->TakeWrites().empty());
  EXPECT_TRUE(Flush().empty());
  EXPECT_EQ(Get(a).time_limit, Minutes(10));

  // An administrator may raise it, past the partition's maximum too.
  ASSERT_TRUE(controller_->UpdateTimeLimit(kAdmin, a, Minutes(600)).has_value());
  out = Flush();
  EXPECT_EQ(sent(out), nodes);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(As<api::TimeLimitRequest>(out[0]).time_limit, Minutes(600));

  // A limit below the time run: the agents time the job out; its exit ends it TIMEOUT.
  clock_.Advance(Minutes(30));
  ASSERT_TRUE(controller_->UpdateTimeLimit(kAlice, a, Minutes(1)).has_value());
  EXPECT_EQ(sent(Flush()), nodes);
  ASSERT_TRUE(
      controller_->HandleEvents(JobExit(nodes[0], Get(a), 0, 0, /*timed_out=*/true)).has_value());
  EXPECT_EQ(Get(a).state, JobState::kTimeout);
  EXPECT_EQ(controller_->UpdateTimeLimit(kAdmin, a, Minutes(60)).error().code,
            ErrorCode::kFailedPrecondition);
  // A restarted controller has the last limit.
  Flush();
  Reset();
  EXPECT_EQ(Get(a).time_limit, Minutes(1));
}

// Reports the queue's order as priorities: the earlier the job, the higher.
class PriorityPolicy : public sched::Policy {
 public:
  sched::Plan Decide(const sched::ClusterSnapshot& snapshot, Timestamp now) override {
    sched::Plan plan = inner_.Decide(snapshot, now);
    for (auto& r : plan.pending) r.priority = 1000 - static_cast<int64_t>(r.job.value);
    return plan;
  }

 private:
  sched::FirstFitPolicy inner_;
};

TEST_F(ControllerTest, JobInfoCarriesThePendingPriority) {
  Reset(std::make_unique<PriorityPolicy>());
  RegisterNode("node01", 1);
  JobId a = Submit(BatchJob(1));
  JobId b = Submit(BatchJob(1));
  controller_->Tick();
  EXPECT_EQ(controller_->GetJob(a)->priority, 0);  // running
  EXPECT_EQ(controller_->GetJob(b)->priority, 1000 - static_cast<int64_t>(b.value));
}

// The trace (core/job_trace.h): the controller's marks from its clock at each step, the
// agent's from its reports; a requeue's new run starts a new run's marks; the marks are
// stored with the job's next record.
TEST_F(ControllerTest, TraceMarksEachStepOfTheJobsPath) {
  RegisterNode("node01", 1);
  Flush();
  const Timestamp t0 = clock_.Now();
  auto r = controller_->Submit(kAlice, BatchJob(1), t0 - Duration(300));  // read by the API
  ASSERT_TRUE(r.has_value()) << r.error().message;
  JobId a = r->job_id;
  EXPECT_EQ(controller_->Timeline(a)->trace.submitted, t0 - Duration(300));
  clock_.Advance(Duration(100));
  controller_->Tick();  // placed before the submission's commit, as in one service iteration
  clock_.Advance(Duration(200));
  auto out = Flush();
  ASSERT_EQ(out.size(), 1u);
  api::JobTimeline t = *controller_->Timeline(a);
  EXPECT_EQ(t.run, Get(a).allocation.generation);
  EXPECT_EQ(t.state, "RUNNING");
  EXPECT_EQ(t.trace.scheduled, t0 + Duration(100));
  EXPECT_EQ(t.trace.committed, t0 + Duration(300));
  EXPECT_EQ(t.trace.launch_sent, t0 + Duration(300));
  EXPECT_EQ(t.trace.reported, Timestamp{});

  // The agent's marks arrive with its reports.
  api::JobEventsRequest started{.node = "node01"};
  started.events.push_back({.type = api::JobEventType::kStarted,
                            .job = a,
                            .generation = t.run,
                            .trace = {.launch_received = t0 + Duration(400),
                                      .cgroup_ready = t0 + Duration(450),
                                      .spawned = t0 + Duration(460),
                                      .exec = t0 + Duration(900)}});
  ASSERT_TRUE(controller_->HandleEvents(started).has_value());
  clock_.Advance(Duration(10'000));
  api::JobEventsRequest exit = testing::JobExit("node01", Get(a), 0);
  exit.events[0].trace.exited = t0 + Duration(10'100);
  ASSERT_TRUE(controller_->HandleEvents(exit).has_value());
  EXPECT_EQ(controller_->Timeline(a)->trace.reported, t0 + Duration(10'300));
  clock_.Advance(Duration(50));
  Flush();
  t = *controller_->Timeline(a);
  EXPECT_EQ(t.state, "COMPLETED");
  EXPECT_EQ(t.trace.agent.launch_received, t0 + Duration(400));
  EXPECT_EQ(t.trace.agent.exec, t0 + Duration(900));
  EXPECT_EQ(t.trace.agent.exited, t0 + Duration(10'100));
  EXPECT_EQ(t.trace.end_committed, t0 + Duration(10'350));
  // Stored with the end's record: all but end_committed, which came after it.
  auto stored = store_.Load();
  ASSERT_TRUE(stored.has_value());
  JobTrace expected = t.trace;
  expected.end_committed = {};
  EXPECT_EQ(stored->jobs[0].trace, expected);

  // A requeued job's new run keeps the submission's marks and starts its own.
  JobId b = Submit(BatchJob(1));
  controller_->Tick();
  Flush();
  const Timestamp b_submitted = controller_->Timeline(b)->trace.submitted;
  ASSERT_TRUE(controller_->Requeue(kAlice, b).has_value());
  clock_.Advance(Duration(5'000));
  controller_->Tick();
  Flush();
  t = *controller_->Timeline(b);
  EXPECT_EQ(t.restart_count, 1u);
  EXPECT_EQ(t.trace.submitted, b_submitted);
  EXPECT_EQ(t.trace.scheduled, clock_.Now());
  EXPECT_EQ(t.trace.agent, AgentTrace{});
  EXPECT_FALSE(controller_->Timeline(JobId(999)).has_value());
}

}  // namespace
}  // namespace corral::controller
