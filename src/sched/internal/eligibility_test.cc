#include "sched/internal/eligibility.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sched/internal/test_pass.h"
#include "sched/testing/cluster_builder.h"

namespace corral::sched::internal {
namespace {

using testing::MakeJob;
using testing::MakeNode;
using testing::Occupy;

struct Reasons {
  std::vector<std::string> codes;
  std::vector<Blocker> blockers;
  Timestamp estimate{};
};

// The eligibility blockers of every pending job of `s`, by job id.
std::map<uint64_t, Reasons> Check(const SchedulerConfig& c, const ClusterSnapshot& s) {
  TestPass pass(c, s, kNow);
  Eligibility e(pass.index, pass.snapshot, pass.nodes.windows(), pass.limits, kNow);
  std::map<uint64_t, Reasons> out;
  for (const JobInfo& j : pass.jobs.pending()) {
    Reasons& r = out[j.view->id.value];
    e.Check(j, &r.blockers, &r.estimate);
    for (const Blocker& b : r.blockers) r.codes.push_back(b.code);
  }
  return out;
}

using Codes = std::vector<std::string>;

ClusterSnapshot OneNode(const SchedulerConfig& c) {
  ClusterSnapshot s;
  s.nodes = {MakeNode(1, "n1", 8)};
  s.partitions = c.partitions;
  return s;
}

TEST(EligibilityTest, HoldsAndBeginTimeInOrder) {
  SchedulerConfig c = DefaultSchedulerConfig();
  ClusterSnapshot s = OneNode(c);
  PendingJobView j = MakeJob(1, 1, 1);
  j.held = true;
  j.held_by_admin = true;
  j.begin_time = kNow + Minutes(30);
  PendingJobView past = MakeJob(2, 1, 1);
  past.begin_time = kNow;  // not after now: no blocker
  s.pending = {j, past};
  auto r = Check(c, s);
  EXPECT_EQ(r[1].codes, (Codes{"JobHeldUser", "JobHeldAdmin", "BeginTime"}));
  EXPECT_EQ(r[1].estimate, kNow + Minutes(30));
  EXPECT_TRUE(r[2].codes.empty());
}

TEST(EligibilityTest, DependenciesOnRunningPendingAndFinishedJobs) {
  SchedulerConfig c = DefaultSchedulerConfig();
  ClusterSnapshot s = OneNode(c);
  s.running = {Occupy(&s.nodes[0], 10, GpuSet::FirstN(1), kNow - Minutes(20), kNever)};
  s.finished = {FinishedJobView{.id = JobId(20), .state = JobState::kCompleted},
                FinishedJobView{.id = JobId(21),
                                .state = JobState::kFailed,
                                .exit_code = 1,
                                .end_time = kNow - Minutes(5)}};
  auto job = [&](uint64_t id, DependencyType type, std::vector<JobId> on, Duration delay = {}) {
    PendingJobView j = MakeJob(id, 1, 1);
    j.dependencies = {Dependency{.type = type, .jobs = std::move(on), .delay = delay}};
    return j;
  };
  s.pending = {
      job(1, DependencyType::kAfterOk, {JobId(20)}),                // met
      job(2, DependencyType::kAfterOk, {JobId(21)}),                // never: it failed
      job(3, DependencyType::kAfterNotOk, {JobId(21)}),             // met
      job(4, DependencyType::kAfter, {JobId(10)}, Minutes(10)),     // running 20 min: met
      job(5, DependencyType::kAfter, {JobId(10)}, Minutes(30)),     // not yet
      job(6, DependencyType::kAfterAny, {JobId(21)}, Minutes(10)),  // ended 5 min ago: wait
      job(7, DependencyType::kAfterOk, {JobId(1), JobId(99)}),      // pending, unknown
      job(8, DependencyType::kAfterOk, {JobId(10)}),                // running: wait
  };
  PendingJobView any = job(9, DependencyType::kAfterOk, {JobId(21), JobId(20)});
  any.dependency_any = true;  // one of them is enough
  PendingJobView any_never = job(10, DependencyType::kAfterOk, {JobId(21), JobId(98)});
  any_never.dependency_any = true;
  s.pending.push_back(any);
  s.pending.push_back(any_never);
  auto r = Check(c, s);
  EXPECT_TRUE(r[1].codes.empty());
  EXPECT_EQ(r[2].codes, Codes{"DependencyNeverSatisfied"});
  EXPECT_EQ(r[2].blockers[0].jobs, std::vector<JobId>{JobId(21)});
  EXPECT_EQ(r[2].blockers[0].detail, "dependency on job 21 can never be satisfied");
  EXPECT_TRUE(r[3].codes.empty());
  EXPECT_TRUE(r[4].codes.empty());
  EXPECT_EQ(r[5].codes, Codes{"Dependency"});
  EXPECT_EQ(r[6].codes, Codes{"Dependency"});
  EXPECT_EQ(r[7].codes, Codes{"DependencyNeverSatisfied"});  // one unknown target is enough
  EXPECT_EQ(r[7].blockers[0].jobs, std::vector<JobId>{JobId(99)});
  EXPECT_EQ(r[8].codes, Codes{"Dependency"});
  EXPECT_EQ(r[8].blockers[0].detail, "dependency on job 10");
  EXPECT_TRUE(r[9].codes.empty());
  EXPECT_EQ(r[10].codes, Codes{"DependencyNeverSatisfied"});
  EXPECT_EQ(r[10].blockers[0].jobs, (std::vector<JobId>{JobId(21), JobId(98)}));
}

TEST(EligibilityTest, SingletonWaitsForTheRunningAndTheOlder) {
  SchedulerConfig c = DefaultSchedulerConfig();
  ClusterSnapshot s = OneNode(c);
  auto single = [](uint64_t id, std::string user, std::string name) {
    PendingJobView j = MakeJob(id, 1, 1);
    j.user = std::move(user);
    j.name = std::move(name);
    j.dependencies = {Dependency{.type = DependencyType::kSingleton}};
    return j;
  };
  RunningJobView r = Occupy(&s.nodes[0], 5, GpuSet::FirstN(1), kNow, kNever);
  r.user = "bob";
  r.name = "train";
  s.running = {r};
  s.pending = {single(1, "alice", "eval"), single(2, "alice", "eval"), single(3, "bob", "train"),
               single(4, "carol", "eval")};
  auto got = Check(c, s);
  EXPECT_TRUE(got[1].codes.empty());
  EXPECT_EQ(got[2].codes, Codes{"Dependency"});  // job 1 is older
  EXPECT_EQ(got[2].blockers[0].detail,
            "singleton: another job named eval of alice runs or is older");
  EXPECT_EQ(got[3].codes, Codes{"Dependency"});  // bob's train runs
  EXPECT_TRUE(got[4].codes.empty());
}

TEST(EligibilityTest, ArrayThrottleAndReservations) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.reservations = {Reservation{.name = "soon", .start = kNow + Minutes(10), .users = {"alice"}},
                    Reservation{.name = "over", .start = kNow - Minutes(60), .end = kNow},
                    Reservation{.name = "team", .start = kNow - Minutes(1), .accounts = {"other"}}};
  ClusterSnapshot s = OneNode(c);
  RunningJobView task = Occupy(&s.nodes[0], 5, GpuSet::FirstN(1), kNow, kNever);
  task.array_job_id = JobId(4);
  s.running = {task};
  PendingJobView throttled = MakeJob(6, 1, 1);
  throttled.array_job_id = JobId(4);
  throttled.array_max_running = 1;
  auto in = [](uint64_t id, std::string reservation) {
    PendingJobView j = MakeJob(id, 1, 1);
    j.reservation = std::move(reservation);
    return j;
  };
  s.pending = {throttled, in(7, "soon"), in(8, "over"), in(9, "team"), in(10, "nosuch")};
  auto r = Check(c, s);
  EXPECT_EQ(r[6].codes, Codes{"JobArrayTaskLimit"});
  EXPECT_EQ(r[6].blockers[0].used, 1);
  EXPECT_EQ(r[7].blockers.at(0).detail,
            "reservation soon starts at " + FormatTimestamp(kNow + Minutes(10)));
  EXPECT_EQ(r[7].estimate, kNow + Minutes(10));
  EXPECT_EQ(r[8].blockers.at(0).detail, "reservation over ended at " + FormatTimestamp(kNow));
  EXPECT_EQ(r[9].blockers.at(0).detail, "user alice (account acct) may not use reservation team");
  EXPECT_EQ(r[10].blockers.at(0).detail, "no such reservation nosuch");
}

TEST(EligibilityTest, AccountsAndQos) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.accounts = {AccountConfig{.name = "acct", .users = {"alice"}, .allowed_qos = {"normal"}}};
  c.qos.push_back(QosConfig{.name = "high"});
  ClusterSnapshot s = OneNode(c);
  PendingJobView stranger = MakeJob(1, 1, 1);
  stranger.user = "mallory";
  PendingJobView high = MakeJob(2, 1, 1);
  high.qos = "high";
  PendingJobView nowhere = MakeJob(3, 1, 1);
  nowhere.account = "nope";
  nowhere.qos = "gold";
  s.pending = {stranger, high, nowhere, MakeJob(4, 1, 1)};
  auto r = Check(c, s);
  EXPECT_EQ(r[1].blockers.at(0).detail, "user mallory is not a member of account acct");
  EXPECT_EQ(r[2].codes, Codes{"InvalidQOS"});
  EXPECT_EQ(r[2].blockers[0].detail, "account acct may not use qos high");
  EXPECT_EQ(r[3].codes, (Codes{"InvalidAccount", "InvalidQOS"}));
  EXPECT_EQ(r[3].blockers[1].detail, "no such qos gold");
  EXPECT_TRUE(r[4].codes.empty());
}

}  // namespace
}  // namespace corral::sched::internal
