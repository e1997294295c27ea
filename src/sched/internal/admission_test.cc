#include "sched/internal/admission.h"

#include <string>

#include <gtest/gtest.h>

#include "sched/testing/cluster_builder.h"

namespace corral::sched::internal {
namespace {

using testing::MakeJob;
using testing::MakeNode;

// `ValidateSubmission` on `job` as "CODE: message", or "ok".
std::string Verdict(const SchedulerConfig& c, const PendingJobView& job, const ClusterSnapshot& s) {
  ConfigIndex index(c);
  Status st = ValidateSubmission(c, index, job, s);
  return st.has_value() ? "ok"
                        : std::string(ErrorCodeName(st.error().code)) + ": " + st.error().message;
}

std::string Code(ErrorCode c) { return std::string(ErrorCodeName(c)) + ": "; }

// Accounts "root" > "team" > "sub"; two 8-GPU nodes and one 4-GPU node with feature "ib".
struct World {
  SchedulerConfig config = DefaultSchedulerConfig();
  ClusterSnapshot snapshot;
  World() {
    config.accounts = {AccountConfig{.name = "root"},
                       AccountConfig{.name = "team", .parent = "root"},
                       AccountConfig{.name = "sub", .parent = "team"}};
    NodeView small = MakeNode(3, "n3", 4, "a100");
    small.features = {"ib"};
    snapshot.nodes = {MakeNode(1, "n1", 8), MakeNode(2, "n2", 8), small};
    snapshot.partitions = config.partitions;
  }
  PendingJobView Job(uint64_t id, uint32_t nodes, uint32_t gpus) const {
    PendingJobView j = MakeJob(id, nodes, gpus);
    j.account = "sub";
    return j;
  }
};

TEST(AdmissionTest, LimitsOfEveryAncestorApply) {
  World w;
  w.config.accounts[0].limits.max_gpus = 12;  // root
  EXPECT_EQ(Verdict(w.config, w.Job(1, 1, 8), w.snapshot), "ok");
  EXPECT_EQ(Verdict(w.config, w.Job(1, 2, 8), w.snapshot),
            Code(ErrorCode::kInvalidArgument) +
                "job 1: account \"root\" may hold at most 12 GPUs, job asks 16");
  w.config.accounts[1].limits.max_gpus_per_job = 4;  // team, checked before root
  EXPECT_EQ(Verdict(w.config, w.Job(1, 2, 8), w.snapshot),
            Code(ErrorCode::kInvalidArgument) +
                "job 1: account \"team\" allows at most 4 GPUs per job, job asks 16");
}

TEST(AdmissionTest, QosLimitsAndTimeLimit) {
  World w;
  w.config.qos[0].per_user.max_gpus = 4;
  w.config.qos[0].max_time = Minutes(30);
  EXPECT_EQ(Verdict(w.config, w.Job(2, 1, 8), w.snapshot),
            Code(ErrorCode::kInvalidArgument) +
                "job 2: qos \"normal\" per user may hold at most 4 GPUs, job asks 8");
  PendingJobView j = w.Job(2, 1, 2);
  EXPECT_EQ(Verdict(w.config, j, w.snapshot),
            Code(ErrorCode::kInvalidArgument) +
                "job 2: time limit 1:00:00 exceeds qos \"normal\" max_time 30:00");
  j.time_limit = Minutes(30);
  EXPECT_EQ(Verdict(w.config, j, w.snapshot), "ok");
}

TEST(AdmissionTest, NodesThatCouldEverHoldTheJob) {
  World w;
  // Three nodes of 8+ GPUs are needed; two exist.
  EXPECT_EQ(Verdict(w.config, w.Job(3, 3, 8), w.snapshot),
            Code(ErrorCode::kInvalidArgument) +
                "job 3: partition \"main\": only 2 nodes can ever hold 8 GPUs, 1 CPUs and 1G of "
                "memory, job needs 3");
  EXPECT_EQ(Verdict(w.config, w.Job(3, 3, 4), w.snapshot), "ok");  // the 4-GPU node counts
  PendingJobView j = w.Job(3, 1, 4);
  j.resources.constraint = "ib";
  j.resources.exclude = {"n3"};
  EXPECT_EQ(Verdict(w.config, j, w.snapshot),
            Code(ErrorCode::kInvalidArgument) +
                "job 3: partition \"main\": no node can ever hold 4 GPUs, 1 CPUs and 1G of "
                "memory with features ib");
  j.resources.exclude.clear();
  EXPECT_EQ(Verdict(w.config, j, w.snapshot), "ok");
  j.resources.nodelist = {"n9"};
  EXPECT_EQ(Verdict(w.config, j, w.snapshot),
            Code(ErrorCode::kInvalidArgument) +
                "job 3: partition \"main\": requested node \"n9\" is not in it");
}

TEST(AdmissionTest, TheFirstPartitionsReasonWhenNoneFits) {
  World w;
  w.config.partitions = {Partition{.name = "short", .max_time = Minutes(10)},
                         Partition{.name = "small", .max_gpus_per_job = 2}};
  w.snapshot.partitions = {w.config.partitions[0]};  // "small" only in the config
  PendingJobView j = w.Job(4, 1, 4);
  j.partitions = {"short", "small"};
  EXPECT_EQ(Verdict(w.config, j, w.snapshot),
            Code(ErrorCode::kInvalidArgument) +
                "job 4: partition \"short\": time limit 1:00:00 exceeds max_time 10:00");
  j.partitions = {"nosuch", "short"};
  EXPECT_EQ(Verdict(w.config, j, w.snapshot),
            Code(ErrorCode::kInvalidArgument) + "job 4: no such partition \"nosuch\"");
  j.resources.gpus_per_node = 2;
  j.partitions = {"short", "small"};
  EXPECT_EQ(Verdict(w.config, j, w.snapshot), "ok");
  j.partitions.clear();
  EXPECT_EQ(Verdict(w.config, j, w.snapshot),
            Code(ErrorCode::kInvalidArgument) + "job 4: no partition");
}

TEST(AdmissionTest, SubmittedJobsOfSubAccountsCountForTheirAncestors) {
  World w;
  w.config.accounts[1].limits.max_submitted_jobs = 2;  // team
  PendingJobView queued = w.Job(10, 1, 1);             // in "sub", under "team"
  RunningJobView running =
      testing::Occupy(&w.snapshot.nodes[0], 11, GpuSet::FirstN(1), FromMicros(0), FromMicros(1));
  running.account = "team";
  w.snapshot.pending = {queued};
  w.snapshot.running = {running};
  EXPECT_EQ(Verdict(w.config, w.Job(12, 1, 1), w.snapshot),
            Code(ErrorCode::kResourceExhausted) +
                "job 12: account \"team\" has 2 of at most 2 submitted jobs");
  // The job itself, already queued, does not count against itself.
  EXPECT_EQ(Verdict(w.config, queued, w.snapshot), "ok");
  PendingJobView elsewhere = w.Job(12, 1, 1);
  elsewhere.account = "root";  // above "team": its limit does not apply
  EXPECT_EQ(Verdict(w.config, elsewhere, w.snapshot), "ok");
}

TEST(AdmissionTest, QosPerUserSubmittedLimitCountsTheDefaultQos) {
  World w;
  w.config.qos[0].per_user.max_submitted_jobs = 1;
  PendingJobView other = w.Job(20, 1, 1);
  other.qos = "";  // the default: "normal"
  w.snapshot.pending = {other};
  EXPECT_EQ(Verdict(w.config, w.Job(21, 1, 1), w.snapshot),
            Code(ErrorCode::kResourceExhausted) +
                "job 21: qos \"normal\" for user \"alice\" has 1 of at most 1 submitted jobs");
  w.snapshot.pending[0].user = "bob";
  EXPECT_EQ(Verdict(w.config, w.Job(21, 1, 1), w.snapshot), "ok");
}

// Limits of one (user, account) association: its submitted jobs are the user's in that
// account only (Slurm's MaxSubmitJobs, refused in Slurm's words); its GPU limits refuse a job
// that could never fit.
TEST(AdmissionTest, AnAssociationLimitsTheUsersJobsInThatAccount) {
  World w;
  w.config.users = {UserConfig{.name = "alice"}};
  w.config.users[0].association_limits = {
      {.account = "sub", .limits = {.max_gpus = 4, .max_submitted_jobs = 1}}};
  PendingJobView elsewhere = w.Job(40, 1, 1);
  elsewhere.account = "team";
  w.snapshot.pending = {elsewhere};
  EXPECT_EQ(Verdict(w.config, w.Job(41, 1, 1), w.snapshot), "ok");
  w.snapshot.pending.push_back(w.Job(42, 1, 1));
  EXPECT_EQ(Verdict(w.config, w.Job(41, 1, 1), w.snapshot),
            Code(ErrorCode::kResourceExhausted) +
                "job 41: Job violates accounting/QOS policy (job submit limit, user's size "
                "and/or time limits): AssocMaxSubmitJobLimit: user \"alice\" in account "
                "\"sub\" has 1 of at most 1 submitted jobs");
  PendingJobView bob = w.Job(41, 1, 1);
  bob.user = "bob";
  EXPECT_EQ(Verdict(w.config, bob, w.snapshot), "ok");
  EXPECT_EQ(Verdict(w.config, w.Job(43, 1, 8), w.snapshot),
            Code(ErrorCode::kInvalidArgument) +
                "job 43: user \"alice\" in account \"sub\" may hold at most 4 GPUs, job asks 8");
}

TEST(AdmissionTest, UnregisteredNodesCannotBeJudged) {
  World w;
  w.snapshot.nodes.clear();
  EXPECT_EQ(Verdict(w.config, w.Job(30, 4, 64), w.snapshot), "ok");
}

}  // namespace
}  // namespace corral::sched::internal
