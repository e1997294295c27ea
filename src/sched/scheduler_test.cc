#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include "sched/policy_factory.h"
#include "sched/testing/cluster_builder.h"

namespace corral::sched {
namespace {

using testing::Gpus;
using testing::MakeJob;
using testing::MakeNode;
using testing::Occupy;

const Timestamp kNow = FromMicros(int64_t{1'700'000'000} * 1'000'000);

ClusterSnapshot Snapshot(const SchedulerConfig& c, std::vector<NodeView> nodes) {
  ClusterSnapshot s;
  s.nodes = std::move(nodes);
  s.partitions = c.partitions;
  return s;
}

const PendingReason* ReasonOf(const Plan& p, uint64_t job) {
  for (const PendingReason& r : p.pending) {
    if (r.job == JobId(job)) return &r;
  }
  return nullptr;
}

const Placement* StartOf(const Plan& p, uint64_t job) {
  for (const Placement& s : p.starts) {
    if (s.job == JobId(job)) return &s;
  }
  return nullptr;
}

ErrorCode CodeOf(const Status& s) { return s.has_value() ? ErrorCode::kInternal : s.error().code; }

std::vector<uint64_t> StartedIds(const Plan& p) {
  std::vector<uint64_t> out;
  for (const Placement& s : p.starts) out.push_back(s.job.value);
  return out;
}

TEST(SchedulerTest, BestFitAcrossNodesAndNumaInsideANode) {
  SchedulerConfig c = DefaultSchedulerConfig();
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 8), MakeNode(2, "n2", 8), MakeNode(3, "n3", 8)};
  std::vector<RunningJobView> running = {
      Occupy(&nodes[0], 900, Gpus({0, 1, 2, 4, 5, 6}), kNow, kNow + Minutes(60)),
      Occupy(&nodes[2], 901, Gpus({0, 1, 4}), kNow, kNow + Minutes(60))};
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = running;
  s.pending = {MakeJob(1, 1, 2), MakeJob(2, 1, 2), MakeJob(3, 1, 1), MakeJob(4, 1, 4)};
  Plan p = Scheduler(c).Decide(s, kNow);
  ASSERT_EQ(StartedIds(p), (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(p.starts[0].nodes[0].node_name, "n1");  // the fullest node that fits
  EXPECT_EQ(p.starts[0].nodes[0].gpus, Gpus({3, 7}));
  EXPECT_EQ(p.starts[1].nodes[0].node_name, "n3");
  EXPECT_EQ(p.starts[1].nodes[0].gpus, Gpus({2, 3}));  // NUMA 0 has exactly two free
  EXPECT_EQ(p.starts[2].nodes[0].node_name, "n3");
  EXPECT_EQ(p.starts[2].nodes[0].gpus, Gpus({5}));
  EXPECT_EQ(p.starts[3].nodes[0].node_name, "n2");
  EXPECT_EQ(p.starts[3].nodes[0].gpus, Gpus({0, 1, 2, 3}));  // one NUMA node
  EXPECT_EQ(p.starts[3].partition, "main");
  EXPECT_EQ(p.starts[3].nodes[0].cpus, 1u);
  EXPECT_EQ(p.starts[3].nodes[0].mem_mb, 1024u);
  EXPECT_FALSE(p.starts[3].backfilled);
  EXPECT_TRUE(p.pending.empty());
  EXPECT_TRUE(p.preemptions.empty());
}

TEST(SchedulerTest, NvlinkDomainsWithoutNvSwitch) {
  SchedulerConfig c = DefaultSchedulerConfig();
  NodeView n = MakeNode(1, "n1", 8, "a100", 64, 512 * 1024, /*nvlink=*/false, /*numa=*/1);
  // Two NVLink islands: {0,1,2,3} and {4,5,6,7}; GPU 0 and 4 are busy.
  for (uint32_t g = 0; g < 8; ++g) {
    for (uint32_t p = 0; p < 8; ++p) {
      if (p != g && p / 4 == g / 4) n.gpus[g].nvlink_peers.push_back(p);
    }
  }
  std::vector<NodeView> nodes = {n};
  RunningJobView r = Occupy(&nodes[0], 900, Gpus({0, 4, 5}), kNow, kNow + Minutes(60));
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = {r};
  s.pending = {MakeJob(1, 1, 3), MakeJob(2, 1, 2)};
  Plan p = Scheduler(c).Decide(s, kNow);
  ASSERT_EQ(StartedIds(p), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(p.starts[0].nodes[0].gpus, Gpus({1, 2, 3}));  // the island with exactly three free
  EXPECT_EQ(p.starts[1].nodes[0].gpus, Gpus({6, 7}));
}

SchedulerConfig TwoLeaves() {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.switches = {SwitchConfig{.name = "leafA", .nodes = {"n1", "n2", "n3", "n4"}},
                SwitchConfig{.name = "leafB", .nodes = {"n5", "n6", "n7", "n8"}},
                SwitchConfig{.name = "spine", .switches = {"leafA", "leafB"}}};
  return c;
}

std::vector<NodeView> EightNodes() {
  std::vector<NodeView> nodes;
  for (uint32_t i = 1; i <= 8; ++i) nodes.push_back(MakeNode(i, "n" + std::to_string(i), 4));
  return nodes;
}

TEST(SchedulerTest, GangJobsGoToTheFewestLeafSwitches) {
  SchedulerConfig c = TwoLeaves();
  std::vector<NodeView> nodes = EightNodes();
  std::vector<RunningJobView> running = {
      Occupy(&nodes[0], 900, GpuSet::FirstN(4), kNow, kNow + Minutes(60)),
      Occupy(&nodes[1], 901, GpuSet::FirstN(4), kNow, kNow + Minutes(60))};
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = running;
  s.pending = {MakeJob(1, 2, 4), MakeJob(2, 3, 4), MakeJob(3, 2, 4)};
  Plan p = Scheduler(c).Decide(s, kNow);
  ASSERT_EQ(StartedIds(p), (std::vector<uint64_t>{1, 2}));
  ASSERT_EQ(p.starts[0].nodes.size(), 2u);
  EXPECT_EQ(p.starts[0].nodes[0].node_name, "n3");  // leafA has exactly two free nodes
  EXPECT_EQ(p.starts[0].nodes[1].node_name, "n4");
  ASSERT_EQ(p.starts[1].nodes.size(), 3u);
  EXPECT_EQ(p.starts[1].nodes[0].node_name, "n5");
  EXPECT_EQ(p.starts[1].nodes[2].node_name, "n7");
  for (const NodeAllocation& a : p.starts[1].nodes) EXPECT_EQ(a.gpus, GpuSet::FirstN(4));
  // Job 3 (two nodes) finds only n8: all or nothing.
  ASSERT_EQ(p.pending.size(), 1u);
  EXPECT_EQ(p.pending[0].job, JobId(3));
  EXPECT_EQ(p.pending[0].code, "Resources");
  EXPECT_EQ(p.pending[0].detail, "waiting for 2 nodes with 4 GPUs each in partition main");
}

TEST(SchedulerTest, GangJobSpansLeavesOnlyWhenItMust) {
  SchedulerConfig c = TwoLeaves();
  std::vector<NodeView> nodes = EightNodes();
  std::vector<RunningJobView> running;
  for (int i : {0, 4, 5})
    running.push_back(Occupy(&nodes[i], 900 + i, Gpus({0}), kNow, kNow + Minutes(60)));
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = running;
  s.pending = {MakeJob(1, 4, 4)};
  Plan p = Scheduler(c).Decide(s, kNow);
  ASSERT_EQ(p.starts.size(), 1u);
  std::vector<std::string> names;
  for (const NodeAllocation& a : p.starts[0].nodes) names.push_back(a.node_name);
  // Three free nodes in leafA, two in leafB: the fuller leaf first, then one more.
  EXPECT_EQ(names, (std::vector<std::string>{"n2", "n3", "n4", "n7"}));
}

TEST(SchedulerTest, MultifactorPriorityOrdersJobsAndShowsFactors) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.priority =
      PriorityConfig{.weight_age = 1000, .weight_qos = 2000, .max_age = Minutes(10 * 24 * 60)};
  c.qos = {QosConfig{.name = "normal"}, QosConfig{.name = "high", .priority = 100}};
  ClusterSnapshot s = Snapshot(c, {MakeNode(1, "n1", 1)});
  PendingJobView j1 = MakeJob(1, 1, 1);
  j1.submit_time = kNow - Minutes(5 * 24 * 60);
  PendingJobView j2 = MakeJob(2, 1, 1);
  j2.submit_time = kNow - Minutes(24 * 60);
  j2.qos = "high";
  PendingJobView j3 = MakeJob(3, 1, 1);
  j3.submit_time = kNow - Minutes(5 * 24 * 60);
  j3.nice = 100;
  s.pending = {j1, j2, j3};
  Scheduler sched(c);
  std::vector<PriorityFactors> f = sched.Priorities(s, kNow);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].job, JobId(1));
  EXPECT_DOUBLE_EQ(f[0].age, 0.5);
  EXPECT_EQ(f[0].age_points, 500);
  EXPECT_EQ(f[0].qos_points, 0);
  EXPECT_EQ(f[0].priority, 500);
  EXPECT_EQ(f[0].qos, "normal");
  EXPECT_EQ(f[1].age_points, 100);
  EXPECT_DOUBLE_EQ(f[1].qos_factor, 1.0);
  EXPECT_EQ(f[1].qos_points, 2000);
  EXPECT_EQ(f[1].priority, 2100);
  EXPECT_EQ(f[2].priority, 400);
  EXPECT_EQ(f[2].nice, 100);

  Plan p = sched.Decide(s, kNow);
  EXPECT_EQ(StartedIds(p), (std::vector<uint64_t>{2}));
  ASSERT_EQ(p.pending.size(), 2u);
  EXPECT_EQ(p.pending[0].job, JobId(1));  // priority order
  EXPECT_EQ(p.pending[0].priority, 500);
  EXPECT_EQ(p.pending[0].code, "Resources");
  EXPECT_EQ(p.pending[0].estimated_start, kNow + Minutes(60));  // when job 2 ends
  ASSERT_EQ(p.reservations.size(), 1u);
  EXPECT_EQ(p.reservations[0].job, JobId(1));
  EXPECT_EQ(p.pending[1].job, JobId(3));
  EXPECT_EQ(p.pending[1].priority, 400);
}

TEST(SchedulerTest, PartitionTierComesBeforePriority) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.partitions = {Partition{.name = "main", .is_default = true},
                  Partition{.name = "urgent", .priority_tier = 5}};
  ClusterSnapshot s = Snapshot(c, {MakeNode(1, "n1", 1)});
  s.pending = {MakeJob(1, 1, 1), MakeJob(2, 1, 1, Minutes(60), "urgent")};
  Plan p = Scheduler(c).Decide(s, kNow);
  EXPECT_EQ(StartedIds(p), (std::vector<uint64_t>{2}));
  EXPECT_EQ(p.starts[0].partition, "urgent");
}

TEST(SchedulerTest, FairShareFavoursTheAccountThatUsedLess) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.priority = PriorityConfig{.weight_age = 0, .weight_fairshare = 1000};
  c.accounts = {AccountConfig{.name = "a", .users = {"ua"}},
                AccountConfig{.name = "b", .users = {"ub"}}};
  ClusterSnapshot s = Snapshot(c, {MakeNode(1, "n1", 1)});
  PendingJobView j1 = MakeJob(1, 1, 1);
  j1.account = "a";
  j1.user = "ua";
  PendingJobView j2 = MakeJob(2, 1, 1);
  j2.account = "b";
  j2.user = "ub";
  s.pending = {j1, j2};
  s.usage = {AssociationUsage{.account = "a", .user = "ua", .decayed_usage = 1000}};
  Scheduler sched(c);
  std::vector<PriorityFactors> f = sched.Priorities(s, kNow);
  EXPECT_DOUBLE_EQ(f[0].fairshare, 0.5);
  EXPECT_DOUBLE_EQ(f[1].fairshare, 1.0);
  Plan p = sched.Decide(s, kNow);
  EXPECT_EQ(StartedIds(p), (std::vector<uint64_t>{2}));
}

TEST(SchedulerTest, LimitsHoldJobsBackWithTheirNumbers) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.accounts = {AccountConfig{.name = "lab"}, AccountConfig{.name = "nlp", .parent = "lab"},
                AccountConfig{.name = "other"}};
  c.accounts[0].limits.max_gpus = 4;
  c.accounts[1].limits.max_gpu_minutes = 1000;
  c.users = {UserConfig{.name = "carol"}};
  c.users[0].limits.max_running_jobs = 1;
  c.qos[0].per_user.max_gpus = 3;
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 8)};
  RunningJobView r = Occupy(&nodes[0], 900, Gpus({0, 1}), kNow, kNow + Minutes(60));
  r.account = "lab";
  r.user = "dave";
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = {r};
  auto job = [](uint64_t id, uint32_t gpus, std::string account, std::string user) {
    PendingJobView j = MakeJob(id, 1, gpus);
    j.account = std::move(account);
    j.user = std::move(user);
    return j;
  };
  s.pending = {job(1, 2, "lab", "erin"),     // lab: 2 + 2 = 4, at the limit
               job(2, 1, "lab", "frank"),    // lab would be 5 > 4
               job(3, 1, "nlp", "carol"),    // GPU-minutes: 990 used + 60 > 1000; and lab is full
               job(4, 4, "other", "gina")};  // qos normal per user: 4 > 3
  s.usage = {AssociationUsage{.account = "nlp", .user = "carol", .period_gpu_seconds = 990 * 60}};
  Plan p = Scheduler(c).Decide(s, kNow);
  EXPECT_EQ(StartedIds(p), (std::vector<uint64_t>{1}));
  const PendingReason* r2 = ReasonOf(p, 2);
  ASSERT_NE(r2, nullptr);
  EXPECT_EQ(r2->code, "AssocGrpGRES");
  EXPECT_EQ(r2->detail, "account lab at its GPU limit 4/4 (job asks 1)");
  ASSERT_EQ(r2->blockers.size(), 1u);
  EXPECT_EQ(r2->blockers[0].scope, "account");
  EXPECT_EQ(r2->blockers[0].entity, "lab");
  EXPECT_EQ(r2->blockers[0].resource, "gpu");
  EXPECT_EQ(r2->blockers[0].used, 4);
  EXPECT_EQ(r2->blockers[0].limit, 4);
  EXPECT_EQ(r2->blockers[0].requested, 1);
  const PendingReason* r3 = ReasonOf(p, 3);
  ASSERT_NE(r3, nullptr);
  ASSERT_EQ(r3->blockers.size(), 2u);  // every blocker, the account's own first
  EXPECT_EQ(r3->blockers[0].code, "AssocGrpGRESMinutes");
  EXPECT_EQ(r3->blockers[0].detail,
            "account nlp has used 990 of 1000 GPU-minutes this period (job may use 60)");
  EXPECT_EQ(r3->blockers[1].code, "AssocGrpGRES");
  EXPECT_EQ(r3->blockers[1].entity, "lab");
  const PendingReason* r4 = ReasonOf(p, 4);
  ASSERT_NE(r4, nullptr);
  EXPECT_EQ(r4->code, "QOSMaxGRESPerUser");
  EXPECT_EQ(r4->detail, "qos normal for user gina at its GPU limit 0/3 (job asks 4)");
}

TEST(SchedulerTest, UserRunningJobLimitCountsJobsStartedInThePass) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.users = {UserConfig{.name = "alice"}};
  c.users[0].limits.max_running_jobs = 2;
  ClusterSnapshot s = Snapshot(c, {MakeNode(1, "n1", 8)});
  s.pending = {MakeJob(1, 1, 1), MakeJob(2, 1, 1), MakeJob(3, 1, 1)};
  Plan p = Scheduler(c).Decide(s, kNow);
  EXPECT_EQ(StartedIds(p), (std::vector<uint64_t>{1, 2}));
  ASSERT_EQ(p.pending.size(), 1u);
  EXPECT_EQ(p.pending[0].code, "AssocGrpJobsLimit");
  EXPECT_EQ(p.pending[0].detail, "user alice at its running-job limit 2/2");
  EXPECT_EQ(p.pending[0].blockers[0].scope, "user");
}

TEST(SchedulerTest, EasyBackfillNeverDelaysTheReservation) {
  SchedulerConfig c = DefaultSchedulerConfig();
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 8)};
  RunningJobView r =
      Occupy(&nodes[0], 900, Gpus({0, 1, 2, 3}), kNow - Minutes(10), kNow + Minutes(60));
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = {r};
  s.pending = {MakeJob(1, 1, 8, Minutes(120)),  // blocked: reserved at +60 min
               MakeJob(2, 1, 4, Minutes(120)),  // would run past +60 min on reserved GPUs
               MakeJob(3, 1, 4, Minutes(30))};  // ends before the reservation: backfilled
  Plan p = Scheduler(c).Decide(s, kNow);
  ASSERT_EQ(StartedIds(p), (std::vector<uint64_t>{3}));
  EXPECT_TRUE(p.starts[0].backfilled);
  EXPECT_EQ(p.starts[0].nodes[0].gpus, Gpus({4, 5, 6, 7}));
  ASSERT_EQ(p.reservations.size(), 1u);
  EXPECT_EQ(p.reservations[0].job, JobId(1));
  EXPECT_EQ(p.reservations[0].start, kNow + Minutes(60));
  EXPECT_EQ(p.reservations[0].nodes[0].gpus, GpuSet::FirstN(8));
  ASSERT_EQ(p.pending.size(), 2u);
  EXPECT_EQ(p.pending[0].job, JobId(1));
  EXPECT_EQ(p.pending[0].code, "Resources");
  EXPECT_EQ(p.pending[0].detail, "waiting for 8 GPUs in partition main");
  EXPECT_EQ(p.pending[0].estimated_start, kNow + Minutes(60));
  EXPECT_EQ(p.pending[1].job, JobId(2));
  EXPECT_EQ(p.pending[1].code, "Priority");
  EXPECT_EQ(p.pending[1].detail,
            "waiting for 4 GPUs in partition main, held for higher-priority job 1");
  EXPECT_EQ(p.pending[1].blockers[0].jobs, (std::vector<JobId>{JobId(1)}));
}

TEST(SchedulerTest, BackfillReservationsAreBoundedAndWindowed) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.backfill.reservations = 1;
  c.backfill.window = Minutes(90);
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 2), MakeNode(2, "n2", 2)};
  std::vector<RunningJobView> running = {
      Occupy(&nodes[0], 900, GpuSet::FirstN(2), kNow, kNow + Minutes(60)),
      Occupy(&nodes[1], 901, GpuSet::FirstN(2), kNow, kNow + Minutes(120))};
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = running;
  s.pending = {MakeJob(1, 2, 2), MakeJob(2, 1, 2)};
  Plan p = Scheduler(c).Decide(s, kNow);
  // Job 1 could start at +120 min, beyond the window: no reservation; job 2 then takes the one.
  ASSERT_EQ(p.reservations.size(), 1u);
  EXPECT_EQ(p.reservations[0].job, JobId(2));
  EXPECT_EQ(p.reservations[0].start, kNow + Minutes(60));
  EXPECT_EQ(ReasonOf(p, 1)->estimated_start, Timestamp{});
}

TEST(SchedulerTest, UnlimitedRunningJobsGiveNoEstimate) {
  SchedulerConfig c = DefaultSchedulerConfig();
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 1)};
  RunningJobView r = Occupy(&nodes[0], 900, GpuSet::FirstN(1), kNow, Timestamp::max());
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = {r};
  s.pending = {MakeJob(1, 1, 1, kUnlimited)};
  Plan p = Scheduler(c).Decide(s, kNow);
  EXPECT_TRUE(p.reservations.empty());
  EXPECT_EQ(p.pending[0].code, "Resources");
  EXPECT_EQ(p.pending[0].estimated_start, Timestamp{});
}

TEST(SchedulerTest, ReservationWindowsKeepOtherJobsAway) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.reservations = {Reservation{.name = "maint",
                                .nodes = {"n1"},
                                .start = kNow + Minutes(60),
                                .end = kNow + Minutes(9 * 60),
                                .users = {"alice"},
                                .maintenance = true}};
  ClusterSnapshot s = Snapshot(c, {MakeNode(1, "n1", 8)});
  PendingJobView in_window = MakeJob(3, 1, 1);
  in_window.reservation = "maint";
  PendingJobView stranger = MakeJob(4, 1, 1);
  stranger.reservation = "maint";
  stranger.user = "mallory";
  s.pending = {MakeJob(1, 1, 1, Minutes(120)), MakeJob(2, 1, 1, Minutes(30)), in_window, stranger};
  Plan p = Scheduler(c).Decide(s, kNow);
  EXPECT_EQ(StartedIds(p), (std::vector<uint64_t>{2}));
  const PendingReason* r1 = ReasonOf(p, 1);
  ASSERT_EQ(r1->blockers.size(), 2u);
  EXPECT_EQ(r1->code, "Resources");
  EXPECT_EQ(r1->blockers[1].code, "ReqNodeNotAvail");
  EXPECT_EQ(r1->blockers[1].entity, "maint");
  EXPECT_EQ(
      r1->blockers[1].detail,
      "reserved for maintenance: maint holds nodes of partition main from 2023-11-14T23:13:20 to "
      "2023-11-15T07:13:20");
  EXPECT_EQ(r1->estimated_start, kNow + Minutes(9 * 60));  // after the window
  const PendingReason* r3 = ReasonOf(p, 3);
  EXPECT_EQ(r3->code, "Reservation");
  EXPECT_EQ(r3->detail, "reservation maint starts at 2023-11-14T23:13:20");
  EXPECT_EQ(r3->estimated_start, kNow + Minutes(60));
  EXPECT_EQ(ReasonOf(p, 4)->detail, "user mallory (account acct) may not use reservation maint");

  // Inside the window, the reservation's own jobs run there and nobody else's.
  Plan later = Scheduler(c).Decide(s, kNow + Minutes(61));
  EXPECT_EQ(StartedIds(later), (std::vector<uint64_t>{3}));
}

TEST(SchedulerTest, DependenciesAndTheirNeverSatisfiedCases) {
  SchedulerConfig c = DefaultSchedulerConfig();
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 8)};
  RunningJobView running = Occupy(&nodes[0], 102, Gpus({7}), kNow - Minutes(5), kNow + Minutes(60));
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = {running};
  s.finished = {FinishedJobView{.id = JobId(100),
                                .state = JobState::kCompleted,
                                .start_time = kNow - Minutes(9),
                                .end_time = kNow - Minutes(1)},
                FinishedJobView{.id = JobId(101), .state = JobState::kFailed, .exit_code = 1}};
  auto dep = [](uint64_t id, DependencyType t, std::vector<uint64_t> on) {
    PendingJobView j = MakeJob(id, 1, 1);
    Dependency d{.type = t};
    for (uint64_t x : on) d.jobs.push_back(JobId(x));
    j.dependencies = {d};
    return j;
  };
  PendingJobView any = MakeJob(7, 1, 1);
  any.dependencies = {Dependency{.type = DependencyType::kAfterOk, .jobs = {JobId(101)}},
                      Dependency{.type = DependencyType::kAfterOk, .jobs = {JobId(100)}}};
  any.dependency_any = true;
  PendingJobView single1 = MakeJob(8, 1, 1);
  single1.name = "s";
  single1.dependencies = {Dependency{.type = DependencyType::kSingleton}};
  PendingJobView single2 = single1;
  single2.id = JobId(9);
  s.pending = {dep(1, DependencyType::kAfterOk, {100}),
               dep(2, DependencyType::kAfterOk, {101}),
               dep(3, DependencyType::kAfterNotOk, {101}),
               dep(4, DependencyType::kAfterAny, {102}),
               dep(5, DependencyType::kAfter, {102}),
               dep(6, DependencyType::kAfterOk, {999}),
               any,
               single1,
               single2};
  Plan p = Scheduler(c).Decide(s, kNow);
  EXPECT_EQ(StartedIds(p), (std::vector<uint64_t>{1, 3, 5, 7, 8}));
  EXPECT_EQ(ReasonOf(p, 2)->code, "DependencyNeverSatisfied");
  EXPECT_EQ(ReasonOf(p, 2)->detail, "dependency on job 101 can never be satisfied");
  EXPECT_EQ(ReasonOf(p, 2)->blockers[0].jobs, (std::vector<JobId>{JobId(101)}));
  EXPECT_EQ(ReasonOf(p, 4)->code, "Dependency");
  EXPECT_EQ(ReasonOf(p, 4)->detail, "dependency on job 102");
  EXPECT_EQ(ReasonOf(p, 6)->code, "DependencyNeverSatisfied");
  EXPECT_EQ(ReasonOf(p, 9)->code, "Dependency");
  EXPECT_EQ(ReasonOf(p, 9)->detail, "singleton: another job named s of alice runs or is older");
}

TEST(SchedulerTest, ArrayThrottleHoldsTasksBack) {
  SchedulerConfig c = DefaultSchedulerConfig();
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 8)};
  RunningJobView r = Occupy(&nodes[0], 50, Gpus({0}), kNow, kNow + Minutes(60));
  r.array_job_id = JobId(50);
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = {r};
  for (uint64_t id : {51, 52}) {
    PendingJobView t = MakeJob(id, 1, 1);
    t.array_job_id = JobId(50);
    t.array_task_id = static_cast<uint32_t>(id - 50);
    t.array_max_running = 2;
    s.pending.push_back(t);
  }
  Plan p = Scheduler(c).Decide(s, kNow);
  EXPECT_EQ(StartedIds(p), (std::vector<uint64_t>{51}));
  EXPECT_EQ(p.pending[0].code, "JobArrayTaskLimit");
  EXPECT_EQ(p.pending[0].detail, "array 50 runs 2 of at most 2 tasks at once");
}

TEST(SchedulerTest, HoldsBeginTimeAndInvalidNames) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.accounts = {AccountConfig{.name = "acct", .users = {"alice"}}};
  ClusterSnapshot s = Snapshot(c, {MakeNode(1, "n1", 8)});
  PendingJobView held = MakeJob(1, 1, 1);
  held.held = true;
  PendingJobView admin = MakeJob(2, 1, 1);
  admin.held_by_admin = true;
  PendingJobView later = MakeJob(3, 1, 1);
  later.begin_time = kNow + Minutes(5);
  PendingJobView bad_qos = MakeJob(4, 1, 1);
  bad_qos.qos = "gold";
  PendingJobView bad_account = MakeJob(5, 1, 1);
  bad_account.account = "nope";
  PendingJobView outsider = MakeJob(6, 1, 1);
  outsider.user = "bob";
  s.pending = {held, admin, later, bad_qos, bad_account, outsider};
  Plan p = Scheduler(c).Decide(s, kNow);
  EXPECT_TRUE(p.starts.empty());
  EXPECT_EQ(ReasonOf(p, 1)->code, "JobHeldUser");
  EXPECT_EQ(ReasonOf(p, 2)->code, "JobHeldAdmin");
  EXPECT_EQ(ReasonOf(p, 3)->code, "BeginTime");
  EXPECT_EQ(ReasonOf(p, 3)->estimated_start, kNow + Minutes(5));
  EXPECT_EQ(ReasonOf(p, 4)->code, "InvalidQOS");
  EXPECT_EQ(ReasonOf(p, 5)->code, "InvalidAccount");
  EXPECT_EQ(ReasonOf(p, 5)->detail, "no such account nope");
  EXPECT_EQ(ReasonOf(p, 6)->detail, "user bob is not a member of account acct");
}

SchedulerConfig PreemptionConfig3Qos() {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.qos = {QosConfig{.name = "normal"},
           QosConfig{.name = "high", .priority = 100, .preempt = {"scavenger", "normal"}},
           QosConfig{.name = "scavenger", .grace_time = Minutes(5)}};
  c.qos[0].preempt_mode = PreemptMode::kOff;
  return c;
}

TEST(SchedulerTest, HigherQosPreemptsTheVictimThatLosesLeastWork) {
  SchedulerConfig c = PreemptionConfig3Qos();
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 4), MakeNode(2, "n2", 4)};
  // n1: two scavenger jobs; r1 checkpointed 10 minutes ago, r2 started 30 minutes ago.
  RunningJobView r1 =
      Occupy(&nodes[0], 901, Gpus({0, 1}), kNow - Minutes(120), kNow + Minutes(600));
  r1.qos = "scavenger";
  r1.last_checkpoint = kNow - Minutes(10);
  RunningJobView r2 = Occupy(&nodes[0], 902, Gpus({2, 3}), kNow - Minutes(30), kNow + Minutes(600));
  r2.qos = "scavenger";
  r2.requeue_allowed = false;
  // n2: a normal job, whose QOS may never be preempted.
  RunningJobView r3 =
      Occupy(&nodes[1], 903, GpuSet::FirstN(4), kNow - Minutes(1), kNow + Minutes(600));
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = {r1, r2, r3};
  PendingJobView hi = MakeJob(1, 1, 2);
  hi.qos = "high";
  s.pending = {hi};
  Scheduler sched(c);
  Plan p = sched.Decide(s, kNow);
  EXPECT_TRUE(p.starts.empty());
  ASSERT_EQ(p.preemptions, (std::vector<JobId>{JobId(901)}));
  ASSERT_EQ(p.preemption_orders.size(), 1u);
  EXPECT_EQ(p.preemption_orders[0].preemptor, JobId(1));
  EXPECT_EQ(p.preemption_orders[0].mode, PreemptMode::kRequeue);
  EXPECT_EQ(p.preemption_orders[0].grace_time, Minutes(5));
  EXPECT_EQ(p.preemption_orders[0].reason, "qos high preempts qos scavenger");
  ASSERT_EQ(p.reservations.size(), 1u);
  EXPECT_EQ(p.reservations[0].start, kNow + Minutes(5));
  EXPECT_EQ(p.reservations[0].nodes[0].gpus, Gpus({0, 1}));
  EXPECT_EQ(p.pending[0].code, "Resources");
  EXPECT_EQ(p.pending[0].detail,
            "waiting for 2 GPUs in partition main: preempting job 901 (grace 5:00)");
  EXPECT_EQ(p.pending[0].estimated_start, kNow + Minutes(5));

  // Next pass: the controller has signalled the victim; no second victim is chosen.
  s.running[0].preempt_deadline = kNow + Minutes(5);
  s.running[0].preempted_for = JobId(1);
  Plan next = sched.Decide(s, kNow + Minutes(1));
  EXPECT_TRUE(next.preemptions.empty());
  ASSERT_EQ(next.reservations.size(), 1u);
  EXPECT_EQ(next.reservations[0].start, kNow + Minutes(5));
  EXPECT_EQ(next.pending[0].detail,
            "waiting for 2 GPUs in partition main (freed by jobs being preempted for it)");

  // A victim that may not be requeued is cancelled.
  PendingJobView big = MakeJob(2, 1, 4);
  big.qos = "high";
  s.running[0].preempt_deadline = Timestamp{};
  s.running[0].preempted_for = JobId();
  s.pending = {big};
  Plan both = sched.Decide(s, kNow);
  ASSERT_EQ(both.preemptions, (std::vector<JobId>{JobId(901), JobId(902)}));
  EXPECT_EQ(both.preemption_orders[1].mode, PreemptMode::kCancel);
}

TEST(SchedulerTest, RememberedPreemptionFailuresDoNotUseTheBudget) {
  SchedulerConfig c = PreemptionConfig3Qos();
  c.preemption.max_preemptors_per_pass = 2;
  c.backfill.enabled = false;  // job 1's reservation would hold every GPU of n1
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 4)};
  RunningJobView scav =
      Occupy(&nodes[0], 901, Gpus({0, 1}), kNow - Minutes(5), kNow + Minutes(600));
  scav.qos = "scavenger";
  RunningJobView normal =
      Occupy(&nodes[0], 902, Gpus({2, 3}), kNow - Minutes(5), kNow + Minutes(600));
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = {scav, normal};
  auto high = [](uint64_t id, uint32_t gpus) {
    PendingJobView j = MakeJob(id, 1, gpus);
    j.qos = "high";
    return j;
  };
  s.pending = {high(1, 4), high(2, 4), high(3, 2)};  // 1 and 2 can never find victims
  Plan p = Scheduler(c).Decide(s, kNow);
  EXPECT_EQ(p.preemptions, (std::vector<JobId>{JobId(901)}));
  EXPECT_EQ(p.preemption_orders[0].preemptor, JobId(3));
}

TEST(SchedulerTest, GuaranteedAccountReclaimsBorrowedGpus) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.accounts = {AccountConfig{.name = "prod", .guaranteed_gpus = 4}, AccountConfig{.name = "nlp"}};
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 4)};
  RunningJobView borrowed =
      Occupy(&nodes[0], 900, GpuSet::FirstN(4), kNow - Minutes(60), kNow + Minutes(600));
  borrowed.account = "nlp";
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = {borrowed};
  PendingJobView owner = MakeJob(1, 1, 2);
  owner.account = "prod";
  PendingJobView other = MakeJob(2, 1, 2);
  other.account = "nlp";
  s.pending = {owner, other};
  Plan p = Scheduler(c).Decide(s, kNow);
  ASSERT_EQ(p.preemptions, (std::vector<JobId>{JobId(900)}));
  EXPECT_EQ(p.preemption_orders[0].reason,
            "account prod reclaims its guaranteed GPUs from account nlp");
  EXPECT_EQ(p.preemption_orders[0].grace_time, Minutes(2));  // [scheduler.preemption] default
  EXPECT_EQ(ReasonOf(p, 2)->code, "Resources");              // nlp has no guarantee to reclaim
  c.preemption.reclaim = false;
  EXPECT_TRUE(Scheduler(c).Decide(s, kNow).preemptions.empty());
}

TEST(SchedulerTest, PartitionChecksAndFallbackToTheNextPartition) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.accounts = {AccountConfig{.name = "acct"}, AccountConfig{.name = "vip"}};
  c.partitions = {Partition{.name = "main",
                            .nodes = {"n1"},
                            .is_default = true,
                            .max_time = Minutes(60),
                            .max_gpus_per_job = 4,
                            .max_nodes_per_job = 1},
                  Partition{.name = "big", .nodes = {"n2"}},
                  Partition{.name = "closed", .nodes = {"n2"}, .allowed_accounts = {"vip"}},
                  Partition{.name = "off", .nodes = {"n2"}, .up = false}};
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 4), MakeNode(2, "n2", 8)};
  RunningJobView r = Occupy(&nodes[0], 900, GpuSet::FirstN(4), kNow, kNow + Minutes(30));
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = {r};
  PendingJobView both = MakeJob(1, 1, 2, Minutes(30));
  both.partitions = {"main", "big"};  // main is full: starts in big
  PendingJobView too_long = MakeJob(2, 1, 1, Minutes(120));
  PendingJobView too_many = MakeJob(3, 2, 1, Minutes(30));
  PendingJobView too_big = MakeJob(4, 1, 8, Minutes(30));
  PendingJobView wrong_type = MakeJob(5, 1, 1, Minutes(30), "big");
  wrong_type.resources.gpu_type = "a100";
  PendingJobView closed = MakeJob(6, 1, 1, Minutes(30), "closed");
  PendingJobView off = MakeJob(7, 1, 1, Minutes(30), "off");
  PendingJobView nowhere = MakeJob(8, 1, 1, Minutes(30), "nosuch");
  PendingJobView features = MakeJob(9, 1, 1, Minutes(30), "big");
  features.resources.constraint = "ib&nvme";
  PendingJobView huge = MakeJob(10, 1, 16, Minutes(30), "big");
  s.pending = {both, too_long, too_many, too_big, wrong_type, closed, off, nowhere, features, huge};
  Plan p = Scheduler(c).Decide(s, kNow);
  ASSERT_EQ(StartedIds(p), (std::vector<uint64_t>{1}));
  EXPECT_EQ(p.starts[0].partition, "big");
  EXPECT_EQ(ReasonOf(p, 2)->code, "PartitionTimeLimit");
  EXPECT_EQ(ReasonOf(p, 2)->detail, "time limit 2:00:00 exceeds partition main max_time 1:00:00");
  EXPECT_EQ(ReasonOf(p, 3)->code, "PartitionNodeLimit");
  EXPECT_EQ(ReasonOf(p, 4)->code, "PartitionConfig");
  EXPECT_EQ(ReasonOf(p, 4)->detail, "job asks 8 GPUs, partition main allows 4 per job");
  EXPECT_EQ(ReasonOf(p, 5)->code, "BadConstraints");
  EXPECT_EQ(ReasonOf(p, 5)->detail, "no node of partition big has GPUs of type a100");
  EXPECT_EQ(ReasonOf(p, 6)->code, "InvalidAccount");
  EXPECT_EQ(ReasonOf(p, 6)->detail, "account acct may not use partition closed");
  EXPECT_EQ(ReasonOf(p, 7)->code, "PartitionDown");
  EXPECT_EQ(ReasonOf(p, 8)->code, "PartitionConfig");
  EXPECT_EQ(ReasonOf(p, 8)->detail, "no such partition nosuch");
  EXPECT_EQ(ReasonOf(p, 9)->code, "BadConstraints");
  EXPECT_EQ(ReasonOf(p, 9)->detail, "no node of partition big has features ib&nvme");
  EXPECT_EQ(ReasonOf(p, 10)->code, "PartitionConfig");
  EXPECT_EQ(ReasonOf(p, 10)->detail, "no node of partition big can hold 16 GPUs");
}

TEST(SchedulerTest, ConstraintsTypesExcludeNodelistAndExclusive) {
  SchedulerConfig c = DefaultSchedulerConfig();
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 4, "a100"), MakeNode(2, "n2", 4, "h100"),
                                 MakeNode(3, "n3", 7, "1g.10gb"), MakeNode(4, "n4", 4, "h100")};
  nodes[1].features = {"ib", "nvme"};
  nodes[3].features = {"ib"};
  RunningJobView r = Occupy(&nodes[3], 900, Gpus({0}), kNow, kNow + Minutes(60));
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = {r};
  PendingJobView typed = MakeJob(1, 1, 2);
  typed.resources.gpu_type = "a100";
  PendingJobView mig = MakeJob(2, 1, 3);
  mig.resources.gpu_type = "1g.10gb";
  PendingJobView feat = MakeJob(3, 1, 1);
  feat.resources.constraint = "ib&nvme";
  PendingJobView excl = MakeJob(4, 1, 0);
  excl.resources.exclusive = true;
  excl.resources.exclude = {"n1", "n2", "n3"};  // n4 is busy: waits
  PendingJobView listed = MakeJob(5, 1, 1);
  listed.resources.nodelist = {"n4"};
  s.pending = {typed, mig, feat, excl, listed};
  Plan p = Scheduler(c).Decide(s, kNow);
  ASSERT_EQ(StartedIds(p), (std::vector<uint64_t>{1, 2, 3, 5}));
  EXPECT_EQ(StartOf(p, 1)->nodes[0].node_name, "n1");
  EXPECT_EQ(StartOf(p, 2)->nodes[0].node_name, "n3");
  EXPECT_EQ(StartOf(p, 2)->nodes[0].gpus, Gpus({4, 5, 6}));  // the NUMA node with exactly three
  EXPECT_EQ(StartOf(p, 3)->nodes[0].node_name, "n2");
  EXPECT_EQ(StartOf(p, 5)->nodes[0].node_name, "n4");
  EXPECT_EQ(StartOf(p, 5)->nodes[0].gpus, Gpus({1}));
  EXPECT_EQ(ReasonOf(p, 4)->code, "Resources");
  EXPECT_EQ(ReasonOf(p, 4)->detail, "waiting for a whole node in partition main");

  // Exclusive on an idle node takes all of it.
  s.running.clear();
  s.nodes[3] = MakeNode(4, "n4", 4, "h100");
  s.nodes[3].features = {"ib"};
  s.pending = {excl};
  Plan q = Scheduler(c).Decide(s, kNow);
  ASSERT_EQ(q.starts.size(), 1u);
  EXPECT_EQ(q.starts[0].nodes[0].node_name, "n4");
  EXPECT_EQ(q.starts[0].nodes[0].gpus, GpuSet::FirstN(4));
  EXPECT_EQ(q.starts[0].nodes[0].cpus, 64u);
}

TEST(SchedulerTest, DrainedNodesAndPartitionDefaultMemory) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.partitions[0].def_mem_per_cpu_mb = 2048;
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 4), MakeNode(2, "n2", 4)};
  nodes[0].schedulable = false;
  ClusterSnapshot s = Snapshot(c, nodes);
  PendingJobView j = MakeJob(1, 1, 1);
  j.resources.mem_per_node_mb = 0;
  j.resources.cpus_per_task = 4;
  s.pending = {j};
  Plan p = Scheduler(c).Decide(s, kNow);
  ASSERT_EQ(p.starts.size(), 1u);
  EXPECT_EQ(p.starts[0].nodes[0].node_name, "n2");
  EXPECT_EQ(p.starts[0].nodes[0].mem_mb, 4u * 2048);
}

TEST(SchedulerTest, WholeNodeMemoryNeedsANodeWithAllItsMemoryFree) {
  SchedulerConfig c = DefaultSchedulerConfig();
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 4), MakeNode(2, "n2", 4)};
  RunningJobView r = Occupy(&nodes[0], 900, Gpus({0}), kNow, kNow + Minutes(60));
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = {r};
  PendingJobView all_mem = MakeJob(1, 1, 1);
  all_mem.resources.mem_per_node_mb = kWholeNodeMemory;  // --mem=0
  PendingJobView again = all_mem;
  again.id = JobId(2);
  s.pending = {all_mem, again};
  Scheduler sched(c);
  Plan p = sched.Decide(s, kNow);
  ASSERT_EQ(StartedIds(p), (std::vector<uint64_t>{1}));
  EXPECT_EQ(p.starts[0].nodes[0].node_name, "n2");
  EXPECT_EQ(p.starts[0].nodes[0].mem_mb, 512u * 1024);
  EXPECT_EQ(p.pending[0].code, "Resources");
  EXPECT_EQ(p.pending[0].estimated_start, kNow + Minutes(60));  // n1's memory frees at +60
  EXPECT_EQ(p.reservations[0].nodes[0].mem_mb, 512u * 1024);
  EXPECT_TRUE(sched.ValidateSubmission(all_mem, s).has_value());
}

TEST(SchedulerTest, FifoBlocksAndBackfillFillsTheGap) {
  SchedulerConfig c = DefaultSchedulerConfig();
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 4)};
  RunningJobView r = Occupy(&nodes[0], 900, Gpus({0, 1}), kNow, kNow + Minutes(60));
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = {r};
  s.pending = {MakeJob(1, 1, 4, Minutes(60)), MakeJob(2, 1, 1, Minutes(30))};
  auto fifo = MakePolicy("fifo", c);
  ASSERT_TRUE(fifo.has_value());
  Plan f = (*fifo)->Decide(s, kNow);
  EXPECT_TRUE(f.starts.empty());
  EXPECT_TRUE(f.reservations.empty());
  EXPECT_EQ(f.pending[1].code, "Priority");
  EXPECT_EQ(f.pending[1].detail, "waiting behind a higher-priority job in partition main");
  auto backfill = MakePolicy("backfill", c);
  ASSERT_TRUE(backfill.has_value());
  Plan b = (*backfill)->Decide(s, kNow);
  EXPECT_EQ(StartedIds(b), (std::vector<uint64_t>{2}));
  EXPECT_TRUE(b.starts[0].backfilled);
  EXPECT_EQ(b.reservations.size(), 1u);
  auto first_fit = MakePolicy("first_fit", c);
  ASSERT_TRUE(first_fit.has_value());
  EXPECT_EQ(StartedIds((*first_fit)->Decide(s, kNow)), (std::vector<uint64_t>{2}));
  auto unknown = MakePolicy("lottery", c);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(unknown.error().message.rfind(
                "no such policy \"lottery\" (known: fifo, backfill, default, first_fit", 0),
            0u)
      << unknown.error().message;
}

TEST(SchedulerTest, CustomPriorityReplacesMultifactor) {
  SchedulerConfig c = DefaultSchedulerConfig();
  // Shortest known duration first (an SJF oracle, as sjf_policy would do).
  SchedulerOptions o{.priority = [](const PendingJobView& j, Timestamp) {
    return -ToSecondsF(j.known_duration.value_or(kUnlimited));
  }};
  ClusterSnapshot s = Snapshot(c, {MakeNode(1, "n1", 1)});
  s.pending = {MakeJob(1, 1, 1), MakeJob(2, 1, 1), MakeJob(3, 1, 1)};
  s.pending[0].known_duration = Minutes(50);
  s.pending[1].known_duration = Minutes(5);
  Plan p = Scheduler(c, o).Decide(s, kNow);
  EXPECT_EQ(StartedIds(p), (std::vector<uint64_t>{2}));
  EXPECT_EQ(p.pending[0].job, JobId(1));
  EXPECT_EQ(p.pending[0].priority, -3000);
}

TEST(SchedulerTest, MaxJobsPerPassBoundsTheWork) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.max_jobs_per_pass = 2;
  ClusterSnapshot s = Snapshot(c, {MakeNode(1, "n1", 8)});
  s.pending = {MakeJob(1, 1, 1), MakeJob(2, 1, 1), MakeJob(3, 1, 1)};
  Plan p = Scheduler(c).Decide(s, kNow);
  EXPECT_EQ(StartedIds(p), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(p.pending[0].code, "Priority");
  EXPECT_EQ(p.pending[0].detail, "not examined");
  EXPECT_FALSE(p.pending[0].examined);
  EXPECT_TRUE(p.pending[0].blockers.empty());
}

TEST(SchedulerTest, JobsWaitingOnPreemptionAreExaminedBeyondTheBound) {
  SchedulerConfig c = PreemptionConfig3Qos();
  c.max_jobs_per_pass = 1;
  c.backfill.enabled = false;
  std::vector<NodeView> nodes = {MakeNode(1, "n1", 4)};
  RunningJobView victim =
      Occupy(&nodes[0], 900, GpuSet::FirstN(4), kNow - Minutes(60), kNow + Minutes(600));
  victim.qos = "scavenger";
  victim.preempt_deadline = kNow + Minutes(5);
  victim.preempted_for = JobId(2);
  ClusterSnapshot s = Snapshot(c, nodes);
  s.running = {victim};
  PendingJobView hi = MakeJob(2, 1, 4);
  hi.qos = "high";
  s.pending = {MakeJob(1, 1, 1), hi};
  Plan p = Scheduler(c).Decide(s, kNow);
  ASSERT_EQ(p.reservations.size(), 1u);
  EXPECT_EQ(p.reservations[0].job, JobId(2));
  EXPECT_EQ(p.reservations[0].start, kNow + Minutes(5));
  EXPECT_TRUE(ReasonOf(p, 2)->examined);
}

TEST(SchedulerTest, SameInputSamePlan) {
  SchedulerConfig c = TwoLeaves();
  std::vector<NodeView> nodes = EightNodes();
  ClusterSnapshot s = Snapshot(c, nodes);
  for (uint64_t id = 1; id <= 20; ++id) s.pending.push_back(MakeJob(id, 1 + id % 3, 1 + id % 4));
  Scheduler sched(c);
  EXPECT_EQ(sched.Decide(s, kNow), sched.Decide(s, kNow));
  EXPECT_EQ(sched.Decide(s, kNow), Scheduler(c).Decide(s, kNow));
}

TEST(SchedulerTest, CreateRejectsAnInvalidConfig) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.default_qos = "gold";
  auto s = Scheduler::Create(c);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
}

TEST(SchedulerTest, ValidateSubmissionRejectsWhatCanNeverRun) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.partitions = {
      Partition{.name = "main", .is_default = true, .max_time = Minutes(60), .max_gpus_per_job = 8},
      Partition{.name = "vip", .allowed_accounts = {"prod"}}};
  c.accounts = {AccountConfig{.name = "acct", .users = {"alice"}, .allowed_qos = {"normal"}},
                AccountConfig{.name = "prod"}};
  c.accounts[0].limits.max_submitted_jobs = 2;
  c.qos.push_back(QosConfig{.name = "high", .max_time = Minutes(30)});
  c.reservations = {Reservation{.name = "r", .nodes = {"n1"}, .start = kNow, .users = {"bob"}}};
  ClusterSnapshot s = Snapshot(c, {MakeNode(1, "n1", 4)});
  Scheduler sched(c);
  auto check = [&](PendingJobView j) { return sched.ValidateSubmission(j, s); };
  auto message = [&](PendingJobView j) {
    Status st = check(std::move(j));
    return st.has_value() ? std::string("ok")
                          : std::string(ErrorCodeName(st.error().code)) + ": " + st.error().message;
  };
  PendingJobView ok = MakeJob(1, 1, 2);
  EXPECT_EQ(message(ok), "ok");
  PendingJobView j = ok;
  j.time_limit = Minutes(120);
  EXPECT_EQ(message(j),
            std::string(ErrorCodeName(ErrorCode::kInvalidArgument)) +
                ": job 1: partition \"main\": time limit 2:00:00 exceeds max_time 1:00:00");
  j = ok;
  j.resources.gpus_per_node = 16;
  EXPECT_NE(message(j).find("job asks 16 GPUs, at most 8 per job"), std::string::npos);
  j = ok;
  j.resources.gpus_per_node = 6;
  EXPECT_NE(message(j).find("job 1: partition \"main\": no node can ever hold 6 GPUs"),
            std::string::npos);
  j = ok;
  j.resources.gpu_type = "a100";
  EXPECT_NE(message(j).find("no node can ever hold 2 GPUs of type a100"), std::string::npos);
  j = ok;
  j.partitions = {"nosuch"};
  EXPECT_NE(message(j).find("job 1: no such partition \"nosuch\""), std::string::npos);
  j = ok;
  j.partitions = {"vip"};
  EXPECT_EQ(CodeOf(check(j)), ErrorCode::kPermissionDenied);
  j.partitions = {"vip", "main"};  // one usable partition is enough
  EXPECT_EQ(message(j), "ok");
  j = ok;
  j.account = "nope";
  EXPECT_EQ(CodeOf(check(j)), ErrorCode::kPermissionDenied);
  j = ok;
  j.user = "mallory";
  EXPECT_NE(message(j).find("user \"mallory\" is not a member of account \"acct\""),
            std::string::npos);
  j = ok;
  j.qos = "gold";
  EXPECT_NE(message(j).find("no such qos \"gold\""), std::string::npos);
  j.qos = "high";
  EXPECT_NE(message(j).find("account \"acct\" may not use qos \"high\""), std::string::npos);
  j = ok;
  j.reservation = "r";
  EXPECT_NE(message(j).find("may not use reservation \"r\""), std::string::npos);
  j.reservation = "x";
  EXPECT_NE(message(j).find("no such reservation \"x\""), std::string::npos);
  // Submitted-job limit: two already queued in the account.
  s.pending = {MakeJob(7, 1, 1), MakeJob(8, 1, 1)};
  EXPECT_EQ(CodeOf(check(ok)), ErrorCode::kResourceExhausted);
  EXPECT_NE(message(ok).find("account \"acct\" has 2 of at most 2 submitted jobs"),
            std::string::npos);
}

}  // namespace
}  // namespace corral::sched
