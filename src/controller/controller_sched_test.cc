// The controller with the policy engine: submission checks against accounts, QOS and limits,
// pending reasons with their blockers, preemption through the checkpoint signal, priorities,
// and the fair-share usage ledger surviving a restart.
#include <gtest/gtest.h>

#include "controller/controller.h"
#include "controller/testing/controller_test_base.h"
#include "controller/testing/requests.h"
#include "sched/config.h"
#include "sched/policy_factory.h"

namespace corral::controller {
namespace {

using api::Identity;
using api::Role;
using testing::As;
using testing::Is;
using testing::kAlice;
using testing::kBob;
using testing::kMallory;
using testing::NodeRegistration;

constexpr const char* kConfig = R"(
[scheduler]
policy = "default"
[scheduler.priority]
weight_age = 100
weight_fairshare = 1000
weight_qos = 10000
[scheduler.preemption]
grace_time = "0:30"
[[partition]]
name = "gpu"
default = true
[[account]]
name = "nlp"
users = ["alice", "bob"]
max_gpus = 2
[[account]]
name = "ops"
users = ["alice", "bob"]
[[qos]]
name = "normal"
priority = 10
[[qos]]
name = "high"
priority = 100
preempt = ["scavenger"]
preempt_mode = "off"
[[qos]]
name = "scavenger"
preempt_mode = "requeue"
grace_time = "0:10"
)";

class ControllerSchedTest : public testing::ControllerTestBase {
 protected:
  ControllerSchedTest() { Reset(); }

  // A new controller over the same store, with kConfig's accounts, QOS and policy.
  void Reset() {
    auto config = sched::ParseSchedulerConfig(kConfig, "test.toml");
    ASSERT_TRUE(config.has_value()) << config.error().message;
    auto policy = sched::MakePolicy(config->policy, *config);
    ASSERT_TRUE(policy.has_value());
    StartController(TestConfig(), *config, std::move(*policy));
  }

  void RegisterNode(const std::string& name, uint32_t gpus) {
    Register(NodeRegistration(name, gpus));
  }

  JobSpec Spec(const std::string& account, uint32_t gpus, const std::string& qos = "") {
    JobSpec s = testing::BatchJob(gpus, 1, "sleep 100");
    s.account = account;
    s.qos = qos;
    return s;
  }

  // Lets time pass with node01 heartbeating (reporting what runs on it) every second.
  void Advance(Duration d) {
    for (Duration done{0}; done < d; done += Seconds(1)) {
      clock_.Advance(Seconds(1));
      api::HeartbeatRequest hb{.node = "node01"};
      for (const auto& info : controller_->ListJobs({.states = {JobState::kRunning}})) {
        hb.running.push_back({info.job.id, info.job.allocation.generation});
      }
      ASSERT_TRUE(controller_->Heartbeat(hb).has_value());
      controller_->Tick();
    }
  }
};

TEST_F(ControllerSchedTest, SubmissionsAreCheckedAgainstAccountsQosAndLimits) {
  RegisterNode("node01", 4);
  Flush();
  auto no_account = controller_->Submit(kMallory, Spec("nlp", 1));
  ASSERT_FALSE(no_account.has_value());
  EXPECT_EQ(no_account.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(no_account.error().message.find("mallory"), std::string::npos)
      << no_account.error().message;
  auto bad_qos = controller_->Submit(kAlice, Spec("nlp", 1, "platinum"));
  ASSERT_FALSE(bad_qos.has_value());
  EXPECT_NE(bad_qos.error().message.find("platinum"), std::string::npos);
  auto never = controller_->Submit(kAlice, Spec("nlp", 3));  // nlp may hold 2 GPUs at most
  ASSERT_FALSE(never.has_value());
  EXPECT_NE(never.error().message.find("nlp"), std::string::npos) << never.error().message;
  EXPECT_EQ(controller_->job_count(), 0u);
  EXPECT_FALSE(controller_->HasPendingWrites());
}

// The scheduler sees a running job end at its start plus its current limit: lowering or
// raising it moves the estimated start of the job waiting for its GPUs.
TEST_F(ControllerSchedTest, ChangingARunningJobsLimitMovesTheEstimatedStartOfTheNext) {
  RegisterNode("node01", 2);
  JobSpec long_job = Spec("ops", 2);
  long_job.time_limit = Minutes(120);
  JobId a = *controller_->Submit(kAlice, long_job).transform([](auto r) { return r.job_id; });
  controller_->Tick();
  ASSERT_EQ(Get(a).state, JobState::kRunning);
  Timestamp started = Get(a).start_time;
  JobSpec next = Spec("ops", 2);
  next.time_limit = Minutes(10);
  JobId b = *controller_->Submit(kBob, next).transform([](auto r) { return r.job_id; });
  Advance(Seconds(1));
  ASSERT_EQ(Get(b).state, JobState::kPending);
  EXPECT_EQ(controller_->GetJob(b)->estimated_start, started + Minutes(120));
  ASSERT_TRUE(controller_->UpdateTimeLimit(kAlice, a, Minutes(30)).has_value());
  Advance(Seconds(1));
  EXPECT_EQ(controller_->GetJob(b)->estimated_start, started + Minutes(30));
  const Identity admin{.user = "root", .uid = 0, .gid = 0, .role = Role::kAdmin};
  ASSERT_TRUE(controller_->UpdateTimeLimit(admin, a, Minutes(300)).has_value());
  Advance(Seconds(1));
  EXPECT_EQ(controller_->GetJob(b)->estimated_start, started + Minutes(300));
}

TEST_F(ControllerSchedTest, AccountAtItsLimitWaitsWithThatReason) {
  RegisterNode("node01", 4);
  JobId a = *controller_->Submit(kAlice, Spec("nlp", 2)).transform([](auto r) { return r.job_id; });
  JobId b = *controller_->Submit(kBob, Spec("nlp", 1)).transform([](auto r) { return r.job_id; });
  JobId c = *controller_->Submit(kBob, Spec("ops", 1)).transform([](auto r) { return r.job_id; });
  controller_->Tick();
  EXPECT_EQ(Get(a).state, JobState::kRunning);
  EXPECT_EQ(Get(c).state, JobState::kRunning);  // another account still runs
  Job jb = Get(b);
  EXPECT_EQ(jb.state, JobState::kPending);
  EXPECT_EQ(jb.reason, "AssocGrpGRES");
  auto blockers = controller_->Blockers(b);
  ASSERT_TRUE(blockers.has_value());
  ASSERT_FALSE(blockers->empty());
  EXPECT_EQ((*blockers)[0].scope, "account");
  EXPECT_EQ((*blockers)[0].entity, "nlp");
  EXPECT_EQ((*blockers)[0].limit, 2);
  EXPECT_NE(controller_->GetJob(b)->reason_detail.find("nlp"), std::string::npos);
}

TEST_F(ControllerSchedTest, PreemptionSignalsTheVictimThenRequeuesIt) {
  RegisterNode("node01", 2);
  JobSpec scav = Spec("ops", 2, "scavenger");
  scav.requeue = true;
  scav.signal = {.signal = 10, .before = Seconds(60)};  // SIGUSR1 as its checkpoint signal
  JobId victim = controller_->Submit(kAlice, scav)->job_id;
  controller_->Tick();
  ASSERT_EQ(Get(victim).state, JobState::kRunning);
  Generation first = Get(victim).allocation.generation;
  Flush();

  JobId urgent = controller_->Submit(kBob, Spec("ops", 2, "high"))->job_id;
  controller_->Tick();
  auto out = Flush();
  bool signalled = false;
  for (const auto& c : out) {
    if (Is<api::SignalRequest>(c) && As<api::SignalRequest>(c).job == victim) {
      EXPECT_EQ(As<api::SignalRequest>(c).signal, 10);
      EXPECT_EQ(As<api::SignalRequest>(c).generation, first);
      signalled = true;
    }
  }
  EXPECT_TRUE(signalled) << "the victim gets its checkpoint signal first";
  EXPECT_EQ(Get(victim).state, JobState::kRunning);
  EXPECT_EQ(Get(urgent).state, JobState::kPending);

  // The grace time (10 s for scavenger) passes: the victim is requeued and the urgent job runs.
  Advance(Seconds(11));
  Job v = Get(victim);
  EXPECT_EQ(v.restart_count, 1u);
  EXPECT_NE(v.state, JobState::kCancelled);
  EXPECT_EQ(Get(urgent).state, JobState::kRunning)
      << Get(urgent).reason << ": " << controller_->GetJob(urgent)->reason_detail;
}

TEST_F(ControllerSchedTest, PrioritiesShowTheirFactors) {
  RegisterNode("node01", 1);
  JobId a = controller_->Submit(kAlice, Spec("ops", 1))->job_id;
  JobId b = controller_->Submit(kBob, Spec("ops", 1, "high"))->job_id;
  clock_.Advance(Seconds(10));
  auto all = controller_->Priorities(std::nullopt);
  ASSERT_TRUE(all.has_value());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].job, a);
  EXPECT_EQ((*all)[1].qos, "high");
  auto one = controller_->Priorities(b);
  ASSERT_TRUE(one.has_value());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ(controller_->Priorities(JobId(99)).error().code, ErrorCode::kNotFound);
}

TEST_F(ControllerSchedTest, UsageIsChargedAndSurvivesARestart) {
  RegisterNode("node01", 2);
  JobId a = controller_->Submit(kAlice, Spec("nlp", 2))->job_id;
  controller_->Tick();
  ASSERT_EQ(Get(a).state, JobState::kRunning);
  Advance(Seconds(100));
  api::JobEvent ev{
      .type = api::JobEventType::kExited, .job = a, .generation = Get(a).allocation.generation};
  ASSERT_TRUE(controller_->HandleEvents({.node = "node01", .events = {ev}}).has_value());
  Advance(Seconds(61));  // the ledger is persisted at most once a minute
  Flush();
  Reset();
  RegisterNode("node01", 2);
  // alice's usage (2 GPUs x 100 s) now lowers her fair share: bob's job goes first.
  JobId mine = controller_->Submit(kAlice, Spec("nlp", 2))->job_id;
  JobId his = controller_->Submit(kBob, Spec("nlp", 2))->job_id;
  auto p = controller_->Priorities(std::nullopt);
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].job, mine);
  EXPECT_LT((*p)[0].fairshare, (*p)[1].fairshare);
  EXPECT_LT((*p)[0].priority, (*p)[1].priority);
  controller_->Tick();
  EXPECT_EQ(Get(his).state, JobState::kRunning)
      << Get(his).reason << ": " << controller_->GetJob(his)->reason_detail;
  EXPECT_EQ(Get(mine).state, JobState::kPending) << Get(mine).reason;
}

TEST_F(ControllerSchedTest, AnAdminHoldIsReleasedOnlyByAnAdmin) {
  RegisterNode("node01", 1);
  JobId a = controller_->Submit(kAlice, Spec("ops", 1))->job_id;
  Identity admin{.user = "root", .uid = 0, .gid = 0, .role = Role::kAdmin};
  ASSERT_TRUE(controller_->Hold(admin, a, true).has_value());
  EXPECT_EQ(Get(a).reason, "JobHeldAdmin");
  EXPECT_EQ(controller_->Hold(kAlice, a, false).error().code, ErrorCode::kPermissionDenied);
  controller_->Tick();
  EXPECT_EQ(Get(a).state, JobState::kPending);
  // A scheduling pass explains the hold; it is still the administrator's.
  EXPECT_EQ(Get(a).reason, "JobHeldAdmin");
  EXPECT_EQ(controller_->Hold(kAlice, a, false).error().code, ErrorCode::kPermissionDenied);
  ASSERT_TRUE(controller_->Hold(admin, a, false).has_value());
  controller_->Tick();
  EXPECT_EQ(Get(a).state, JobState::kRunning);
}

TEST_F(ControllerSchedTest, RequeueHoldPutsARunningJobBackHeldInOneChange) {
  RegisterNode("node01", 1);
  JobId a = controller_->Submit(kAlice, Spec("ops", 1))->job_id;
  controller_->Tick();
  ASSERT_EQ(Get(a).state, JobState::kRunning);
  ASSERT_TRUE(controller_->Requeue(kAlice, a, /*hold=*/true).has_value());
  EXPECT_EQ(Get(a).state, JobState::kPending);
  EXPECT_EQ(Get(a).restart_count, 1);
  EXPECT_EQ(Get(a).reason, "JobHeldUser");
  // The node is free, and the held job stays pending until its user releases it.
  controller_->Tick();
  EXPECT_EQ(Get(a).state, JobState::kPending) << Get(a).reason;
  ASSERT_TRUE(controller_->Hold(kAlice, a, false).has_value());
  controller_->Tick();
  EXPECT_EQ(Get(a).state, JobState::kRunning);
}

}  // namespace
}  // namespace corral::controller
