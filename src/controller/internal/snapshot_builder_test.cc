#include "controller/internal/snapshot_builder.h"

#include <gtest/gtest.h>

#include "controller/internal/controller_state.h"
#include "controller/testing/requests.h"
#include "core/testing/fake_clock.h"
#include "sched/first_fit_policy.h"

namespace corral::controller::internal {
namespace {

class SnapshotBuilderTest : public ::testing::Test {
 protected:
  NodeEntry& AddNode(const std::string& name, std::vector<std::string> features = {}) {
    NodeInventory inv = testing::NodeRegistration(name, 4).inventory;
    inv.features = std::move(features);
    return s_.nodes.Register(inv, clock_.Now(), clock_.MonotonicNow());
  }

  JobEntry& AddJob(JobState state) {
    JobEntry e;
    e.job.id = s_.jobs.AllocateId();
    e.job.state = JobState::kPending;
    e.job.spec.user = "alice";
    JobId id = e.job.id;
    s_.jobs.Add(std::move(e));
    JobEntry& added = *s_.jobs.Find(id);
    if (state != JobState::kPending) s_.jobs.SetState(added, state);
    return added;
  }

  corral::testing::FakeClock clock_;
  ControllerState s_{ControllerConfig{}, sched::DefaultSchedulerConfig(),
                     std::make_unique<sched::FirstFitPolicy>(), clock_};
};

TEST_F(SnapshotBuilderTest, NodesAreSchedulableWhenUpAndTheirFailedGpusAreNotUsable) {
  NodeEntry& up = AddNode("n1", {"nvlink", "a100"});
  NodeEntry& drained = AddNode("n2");
  NodeEntry& down = AddNode("n3");
  up.node.failed_gpus = GpuSet(0b10);
  NodeTable::SetDrain(drained, "maintenance", clock_.Now());
  s_.nodes.MarkNotResponding(down, clock_.Now());
  NodeTable::AddJob(up, JobId(9), {.node_name = "n1", .cpus = 2, .gpus = GpuSet(0b1)}, false);
  const sched::ClusterSnapshot& snap = s_.snapshots.BuildForPass();
  ASSERT_EQ(snap.nodes.size(), 3u);
  EXPECT_TRUE(snap.nodes[0].schedulable);
  EXPECT_FALSE(snap.nodes[1].schedulable);
  EXPECT_FALSE(snap.nodes[2].schedulable);
  EXPECT_EQ(snap.nodes[0].usable_gpus, GpuSet(0b1101));
  EXPECT_EQ(snap.nodes[0].used_gpus, GpuSet(0b1));
  EXPECT_EQ(snap.nodes[0].used_cpus, 2u);
  EXPECT_EQ(snap.nodes[0].features, (std::vector<std::string>{"a100", "nvlink"}));
  // A submission is checked against capacities only: every node, every GPU.
  sched::ClusterSnapshot submit = s_.snapshots.ForSubmission(/*with_queue=*/false);
  ASSERT_EQ(submit.nodes.size(), 3u);
  EXPECT_TRUE(submit.nodes[1].schedulable);
  EXPECT_EQ(submit.nodes[0].usable_gpus, GpuSet(0b1111));
  EXPECT_EQ(submit.nodes[0].used_cpus, 0u);
  EXPECT_EQ(submit.partitions, s_.partitions.all());
}

TEST_F(SnapshotBuilderTest, JobsAppearByStateWithTheEndedOnesThatPendingJobsDependOn) {
  JobEntry& done = AddJob(JobState::kCompleted);
  done.job.exit_code = 3;
  JobEntry& running = AddJob(JobState::kRunning);
  JobEntry& waiting = AddJob(JobState::kPending);
  waiting.job.spec.dependencies = {{.type = DependencyType::kAfterOk, .jobs = {done.job.id}}};
  waiting.job.spec.hold = true;
  waiting.job.reason = "JobHeldAdmin";
  AddJob(JobState::kCompleted);  // nobody depends on it
  const sched::ClusterSnapshot& snap = s_.snapshots.BuildForPass();
  ASSERT_EQ(snap.running.size(), 1u);
  EXPECT_EQ(snap.running[0].id, running.job.id);
  ASSERT_EQ(snap.pending.size(), 1u);
  EXPECT_TRUE(snap.pending[0].held_by_admin);
  EXPECT_FALSE(snap.pending[0].held);
  ASSERT_EQ(snap.finished.size(), 1u);
  EXPECT_EQ(snap.finished[0].id, done.job.id);
  EXPECT_EQ(snap.finished[0].exit_code, 3);
  sched::ClusterSnapshot copy = s_.snapshots.Build();  // the same, in new storage
  EXPECT_EQ(copy.running, snap.running);
  EXPECT_EQ(copy.pending, snap.pending);
  EXPECT_EQ(copy.finished, snap.finished);
  EXPECT_EQ(s_.snapshots.ForSubmission(/*with_queue=*/true).pending.size(), 1u);
  EXPECT_TRUE(s_.snapshots.ForSubmission(/*with_queue=*/false).pending.empty());
}

TEST_F(SnapshotBuilderTest, AftercorrWaitsOnTheTaskWithTheSameIndex) {
  std::vector<JobId> first;
  for (uint32_t index : {0u, 1u}) {
    JobEntry e;
    e.job.id = s_.jobs.AllocateId();
    e.job.state = JobState::kPending;
    e.job.array_job_id = first.empty() ? e.job.id : first.front();
    e.job.array_task_id = index;
    first.push_back(e.job.id);
    s_.jobs.Add(std::move(e));
  }
  JobEntry task;
  task.job.id = s_.jobs.AllocateId();
  task.job.state = JobState::kPending;
  task.job.array_job_id = task.job.id;
  task.job.array_task_id = 1;
  task.job.spec.dependencies = {{.type = DependencyType::kAfterCorr, .jobs = {first[0]}}};
  sched::PendingJobView v = s_.snapshots.PendingView(task);
  ASSERT_EQ(v.dependencies.size(), 1u);
  EXPECT_EQ(v.dependencies[0].jobs, (std::vector<JobId>{first[1]}));
  EXPECT_EQ(v.array_task_id, 1u);
}

TEST_F(SnapshotBuilderTest, ARunBeingStoppedCarriesItsDeadlineAndItsPreemptor) {
  JobEntry& e = AddJob(JobState::kRunning);
  e.job.allocation.generation = Generation(2);
  e.job.start_time = clock_.Now();
  e.job.time_limit = Minutes(10);
  sched::RunningJobView before = s_.snapshots.RunningView(e);
  EXPECT_EQ(before.expected_end, clock_.Now() + Minutes(10));
  EXPECT_EQ(before.preempt_deadline, Timestamp{});
  s_.stops.Start(e.job.id,
                 {.generation = Generation(2), .deadline = clock_.MonotonicNow() + Seconds(30)});
  s_.stops.SetPreemptor(e.job.id, JobId(77));
  clock_.Advance(Seconds(10));
  sched::RunningJobView v = s_.snapshots.RunningView(e);
  EXPECT_EQ(v.preempt_deadline, clock_.Now() + Seconds(20));
  EXPECT_EQ(v.preempted_for, JobId(77));
  e.job.time_limit = kUnlimited;
  EXPECT_EQ(s_.snapshots.RunningView(e).expected_end, Timestamp::max());
}

}  // namespace
}  // namespace corral::controller::internal
