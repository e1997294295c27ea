#include "sched/internal/limits.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sched/internal/test_pass.h"
#include "sched/testing/cluster_builder.h"

namespace corral::sched::internal {
namespace {

using testing::MakeJob;
using testing::Occupy;

// Accounts "org" > "team"; four 8-GPU nodes; a running 4-GPU job of bob in "team".
struct World : TestWorld {
  World() {
    config.accounts = {AccountConfig{.name = "org"},
                       AccountConfig{.name = "team", .parent = "org"}};
    snapshot.nodes = testing::MakeNodes(4, 8);
    RunningJobView r =
        Occupy(&snapshot.nodes[0], 100, GpuSet::FirstN(4), kNow - Minutes(5), kNow + Minutes(55));
    r.account = "team";
    r.qos = "normal";
    snapshot.running = {r};
    snapshot.partitions = config.partitions;
  }
  PendingJobView Job(uint64_t id, uint32_t gpus, std::string user = "alice") {
    PendingJobView j = MakeJob(id, 1, gpus);
    j.account = "team";
    j.user = std::move(user);
    return j;
  }
};

std::vector<std::string> Codes(const std::vector<Blocker>& bs) {
  std::vector<std::string> out;
  for (const Blocker& b : bs) out.push_back(b.code + "/" + b.scope + "/" + b.entity);
  return out;
}

TEST(UseLimitsTest, AnAccountCountsItsWholeSubtree) {
  World w;
  w.config.accounts[0].limits.max_gpus = 8;  // org
  w.snapshot.pending = {w.Job(1, 4), w.Job(2, 5)};
  TestPass pass(w.config, w.snapshot, kNow);
  EXPECT_EQ(pass.limits.account_gpus(pass.jobs.FindAccount("org")), 4u);
  std::vector<Blocker> out;
  pass.limits.Check(pass.Job(1), &out);
  EXPECT_TRUE(out.empty());
  pass.limits.Check(pass.Job(2), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].code, "AssocGrpGRES");
  EXPECT_EQ(out[0].entity, "org");
  EXPECT_EQ(out[0].used, 4);
  EXPECT_EQ(out[0].limit, 8);
  EXPECT_EQ(out[0].requested, 5);
  EXPECT_EQ(out[0].detail, "account org at its GPU limit 4/8 (job asks 5)");
}

TEST(UseLimitsTest, JobsStartedInThePassCountAgainstLaterOnes) {
  World w;
  w.config.qos[0].per_user.max_running_jobs = 1;
  w.snapshot.pending = {w.Job(1, 1), w.Job(2, 1), w.Job(3, 1, "carol")};
  TestPass pass(w.config, w.snapshot, kNow);
  std::vector<Blocker> out;
  pass.limits.Check(pass.Job(2), &out);
  EXPECT_TRUE(out.empty());  // bob's running job is bob's
  pass.limits.Add(pass.Job(1), {});
  pass.limits.Check(pass.Job(2), &out);
  EXPECT_EQ(Codes(out), (std::vector<std::string>{"QOSMaxJobsPerUserLimit/qos/normal"}));
  EXPECT_EQ(out[0].detail, "qos normal for user alice at its running-job limit 1/1");
  out.clear();
  pass.limits.Check(pass.Job(3), &out);  // another user
  EXPECT_TRUE(out.empty());
}

TEST(UseLimitsTest, EveryLimitReachedInChainOrder) {
  World w;
  w.config.accounts[1].limits.max_running_jobs = 1;  // team: bob's job fills it
  w.config.accounts[0].limits.max_gpus_per_job = 1;  // org
  w.config.users = {UserConfig{.name = "alice"}};
  w.config.users[0].limits.max_gpus = 1;
  w.config.qos[0].limits.max_gpus = 5;
  w.config.qos[0].max_time = Minutes(30);
  w.snapshot.pending = {w.Job(1, 2)};
  TestPass pass(w.config, w.snapshot, kNow);
  std::vector<Blocker> out;
  pass.limits.Check(pass.Job(1), &out);
  EXPECT_EQ(Codes(out), (std::vector<std::string>{
                            "AssocGrpJobsLimit/account/team", "AssocMaxGRESPerJob/account/org",
                            "AssocGrpGRES/user/alice", "QOSGrpGRES/qos/normal",
                            "QOSMaxWallDurationPerJobLimit/qos/normal"}));
}

// Limits of one (user, account) association (Slurm's `sacctmgr modify user bob where
// account=team set ...`): they count bob's jobs in team only, with Slurm's reasons.
TEST(UseLimitsTest, AnAssociationLimitCountsTheUsersJobsInThatAccountOnly) {
  World w;
  w.config.accounts.push_back(AccountConfig{.name = "other", .parent = "org"});
  w.config.users = {UserConfig{.name = "bob"}};
  w.config.users[0].association_limits = {
      {.account = "team",
       .limits = {.max_gpus = 5, .max_running_jobs = 2, .max_gpu_minutes = 600,
                  .max_wall = Minutes(30)}}};
  w.snapshot.usage = {
      AssociationUsage{.account = "team", .user = "bob", .period_gpu_seconds = 500 * 60},
      AssociationUsage{.account = "other", .user = "bob", .period_gpu_seconds = 9000 * 60}};
  PendingJobView bob_team = w.Job(1, 2, "bob");  // bob holds 4 of 5 GPUs in team
  bob_team.time_limit = Minutes(20);
  PendingJobView bob_other = w.Job(2, 2, "bob");
  bob_other.account = "other";
  PendingJobView alice_team = w.Job(3, 2);
  PendingJobView bob_small = w.Job(4, 1, "bob");  // 60 minutes, over max_wall
  w.snapshot.pending = {bob_team, bob_other, alice_team, bob_small};
  TestPass pass(w.config, w.snapshot, kNow);
  std::vector<Blocker> out;
  pass.limits.Check(pass.Job(2), &out);
  pass.limits.Check(pass.Job(3), &out);
  EXPECT_TRUE(out.empty()) << Codes(out).front();
  pass.limits.Check(pass.Job(1), &out);
  ASSERT_EQ(Codes(out), (std::vector<std::string>{"AssocGrpGRES/account/team"}));
  EXPECT_EQ(out[0].detail, "account team for user bob at its GPU limit 4/5 (job asks 2)");
  out.clear();
  pass.limits.Check(pass.Job(4), &out);
  EXPECT_EQ(Codes(out), (std::vector<std::string>{"AssocMaxWallDurationPerJobLimit/account/team"}));
  EXPECT_EQ(out[0].detail,
            "time limit 1:00:00 exceeds account team for user bob max_wall 30:00");
  // A job started in the pass fills the running-job limit (Slurm's MaxJobs: AssocMaxJobsLimit)
  // and its GPU-minutes are the association's: 500 used, 20 more asked of 600.
  pass.limits.Add(pass.Job(2), {});  // in "other": not this association's
  out.clear();
  pass.limits.Check(pass.Job(1), &out);
  EXPECT_EQ(Codes(out), (std::vector<std::string>{"AssocGrpGRES/account/team"}));
  w.config.users[0].association_limits[0].limits.max_gpus.reset();
  w.config.users[0].association_limits[0].limits.max_gpu_minutes = 520;
  TestPass again(w.config, w.snapshot, kNow);
  again.limits.Add(again.Job(4), {});
  out.clear();
  again.limits.Check(again.Job(1), &out);
  EXPECT_EQ(Codes(out), (std::vector<std::string>{"AssocMaxJobsLimit/account/team",
                                                  "AssocGrpGRESMinutes/account/team"}));
  EXPECT_EQ(out[0].detail, "account team for user bob at its running-job limit 2/2");
  EXPECT_EQ(out[1].detail,
            "account team for user bob has used 500 of 520 GPU-minutes this period (job may "
            "use 40)");
}

TEST(UseLimitsTest, GpuMinutesOfTheUsagePeriod) {
  World w;
  w.config.accounts[1].limits.max_gpu_minutes = 600;
  w.snapshot.usage = {
      AssociationUsage{.account = "team", .user = "bob", .period_gpu_seconds = 500 * 60}};
  PendingJobView fits = w.Job(1, 1);  // 60 GPU-minutes: 560 of 600
  PendingJobView over = w.Job(2, 2);  // 120: 620
  PendingJobView unlimited = w.Job(3, 8);
  unlimited.time_limit = kUnlimited;  // blocked only once the use reaches the limit
  w.snapshot.pending = {fits, over, unlimited};
  TestPass pass(w.config, w.snapshot, kNow);
  std::vector<Blocker> out;
  pass.limits.Check(pass.Job(1), &out);
  pass.limits.Check(pass.Job(3), &out);
  EXPECT_TRUE(out.empty());
  pass.limits.Check(pass.Job(2), &out);
  ASSERT_EQ(Codes(out), (std::vector<std::string>{"AssocGrpGRESMinutes/account/team"}));
  EXPECT_EQ(out[0].used, 500);
  EXPECT_EQ(out[0].requested, 120);
  EXPECT_EQ(out[0].detail,
            "account team has used 500 of 600 GPU-minutes this period (job may use 120)");
}

TEST(UseLimitsTest, ArrayTasksRunningCountFromTheSnapshotAndThePass) {
  World w;
  w.snapshot.running[0].array_job_id = JobId(50);
  PendingJobView task = w.Job(51, 1);
  task.array_job_id = JobId(50);
  w.snapshot.pending = {task};
  TestPass pass(w.config, w.snapshot, kNow);
  EXPECT_EQ(pass.limits.array_running(JobId(50)), 1u);
  EXPECT_EQ(pass.limits.array_running(JobId(60)), 0u);
  pass.limits.Add(pass.Job(51), {});
  EXPECT_EQ(pass.limits.array_running(JobId(50)), 2u);
}

}  // namespace
}  // namespace corral::sched::internal

namespace corral::sched::internal {
namespace {

// CPUs and memory held count like GPUs (the running job holds 1 CPU and 1024 MB; a job of
// `World` asks for 1 CPU and 1024 MB per node), and a time limit over an association's
// max_wall holds the job.
TEST(UseLimitsTest, CpuMemoryAndWallLimitsOfAnAssociation) {
  World w;
  w.config.accounts[1].limits.max_cpus = 1;      // team: held 1 already
  w.config.accounts[0].limits.max_mem_mb = 2048;  // org: held 1024, a job asks 1024
  w.config.accounts[0].limits.max_wall = Minutes(60);
  w.snapshot.pending = {w.Job(1, 0), w.Job(2, 0)};
  w.snapshot.pending[1].time_limit = Minutes(90);
  TestPass pass(w.config, w.snapshot, kNow);
  std::vector<Blocker> out;
  pass.limits.Check(pass.Job(1), &out);
  EXPECT_EQ(Codes(out), (std::vector<std::string>{"AssocGrpCpuLimit/account/team"}));
  EXPECT_EQ(out[0].detail, "account team at its CPU limit 1/1 (job asks 1)");
  out.clear();
  // A job started in the pass holds what its allocation holds.
  pass.limits.Add(pass.Job(1), {NodeAllocation{.cpus = 0, .mem_mb = 1024}});
  pass.limits.Check(pass.Job(2), &out);
  EXPECT_EQ(Codes(out), (std::vector<std::string>{"AssocGrpCpuLimit/account/team",
                                                  "AssocGrpMemLimit/account/org",
                                                  "AssocMaxWallDurationPerJobLimit/account/org"}));
  EXPECT_EQ(out[1].used, 2048);
  EXPECT_EQ(out[1].requested, 1024);
}

}  // namespace
}  // namespace corral::sched::internal

// --- Budgets (core/budget.h) ---
namespace corral::sched::internal {
namespace {

// A 10 GPU-hour budget on "org" whose period ends in 30 minutes, 4 GPU-hours spent. The
// running 4-GPU job of "team" ends in 55 minutes: it may still use 4 x 30 min = 2 GPU-hours
// of the period.
struct BudgetWorld : World {
  BudgetWorld() {
    config.accounts[0].budget = Budget{.gpu_hours = 10};
    snapshot.budgets = {
        BudgetUse{.account = "org", .gpu_seconds = 4 * 3600.0, .period_end = kNow + Minutes(30)}};
  }
};

TEST(UseLimitsTest, ABudgetCountsTheSpendTheRunningJobsAndTheJobUpToThePeriodEnd) {
  BudgetWorld w;
  PendingJobView fits = w.Job(1, 8);  // 8 x 30 min = 4 GPU-hours: 4 + 2 + 4 = 10 of 10
  PendingJobView over = w.Job(2, 9);  // 4.5: 10.5
  PendingJobView unlimited = w.Job(3, 8);
  unlimited.time_limit = kUnlimited;  // counts nothing of its own
  PendingJobView cpu_only = w.Job(4, 0);
  w.snapshot.pending = {fits, over, unlimited, cpu_only};
  TestPass pass(w.config, w.snapshot, kNow);
  std::vector<Blocker> out;
  for (uint64_t id : {1, 3, 4}) pass.limits.Check(pass.Job(id), &out);
  EXPECT_TRUE(out.empty());
  pass.limits.Check(pass.Job(2), &out);
  ASSERT_EQ(Codes(out), (std::vector<std::string>{"AssocGrpGRESBudget/account/org"}));
  EXPECT_EQ(out[0].used, 6 * 3600);
  EXPECT_EQ(out[0].limit, 10 * 3600);
  EXPECT_EQ(out[0].requested, 9 * 1800);
  EXPECT_EQ(out[0].detail,
            "account org has spent 4.00 of its 10.00 GPU-hours budget this month (2.00 more "
            "held by running jobs, job may use 4.50)");
}

TEST(UseLimitsTest, JobsStartedInThePassCommitTheirBudget) {
  BudgetWorld w;
  w.snapshot.pending = {w.Job(1, 8), w.Job(2, 1)};
  TestPass pass(w.config, w.snapshot, kNow);
  std::vector<Blocker> out;
  pass.limits.Check(pass.Job(2), &out);
  EXPECT_TRUE(out.empty());
  pass.limits.Add(pass.Job(1), {});  // 4 GPU-hours: the budget is fully committed
  pass.limits.Check(pass.Job(2), &out);
  EXPECT_EQ(Codes(out), (std::vector<std::string>{"AssocGrpGRESBudget/account/org"}));
}

TEST(UseLimitsTest, ASpentBudgetBlocksEveryGpuJobAndAnEnergyBudgetEveryJob) {
  BudgetWorld w;
  w.config.accounts[1].budget = Budget{.energy_kwh = 2};
  w.snapshot.budgets[0].gpu_seconds = 10 * 3600;
  w.snapshot.budgets.push_back(
      BudgetUse{.account = "team", .energy_joules = 2 * 3.6e6, .period_end = kNow + Minutes(30)});
  PendingJobView unlimited = w.Job(1, 1);
  unlimited.time_limit = kUnlimited;
  w.snapshot.pending = {unlimited, w.Job(2, 0)};
  TestPass pass(w.config, w.snapshot, kNow);
  std::vector<Blocker> out;
  pass.limits.Check(pass.Job(1), &out);
  EXPECT_EQ(Codes(out), (std::vector<std::string>{"AssocGrpEnergyBudget/account/team",
                                                  "AssocGrpGRESBudget/account/org"}));
  EXPECT_EQ(out[0].detail, "account team has spent 2.000 of its 2.000 kWh energy budget this month");
  out.clear();
  pass.limits.Check(pass.Job(2), &out);  // no GPUs: only the energy budget holds it
  EXPECT_EQ(Codes(out), (std::vector<std::string>{"AssocGrpEnergyBudget/account/team"}));
}

TEST(UseLimitsTest, ABudgetWithoutItsSpendInTheSnapshotHoldsNothing) {
  BudgetWorld w;
  w.snapshot.budgets.clear();  // not in force (a window not yet open), or the simulator
  w.snapshot.pending = {w.Job(1, 32)};
  TestPass pass(w.config, w.snapshot, kNow);
  std::vector<Blocker> out;
  pass.limits.Check(pass.Job(1), &out);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace corral::sched::internal
