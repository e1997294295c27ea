#include "controller/internal/snapshot_builder.h"

#include <algorithm>
#include <set>

namespace corral::controller::internal {
namespace {

// A suspended job has no expected end until it is resumed; a resumed one ends later by the
// time it spent suspended.
Timestamp ExpectedEnd(const Job& j) {
  if (j.time_limit.count() <= 0) return Timestamp::max();
  Duration limit = RunDeadlineLimit(j);
  if (limit == kUnlimited) return Timestamp::max();
  return j.start_time + limit;
}

// A node's capacity as the scheduler sees it: schedulable, every GPU usable, nothing used.
sched::NodeView CapacityView(const NodeEntry& n) {
  sched::NodeView v;
  v.id = n.node.id;
  v.name = n.node.inventory.name;
  v.cpus = n.node.inventory.cpus;
  v.mem_mb = n.node.inventory.memory_mb;
  v.gpus = n.node.inventory.gpus;
  for (const auto& g : v.gpus) v.usable_gpus.insert(g.index);
  v.features = n.node.inventory.features;
  std::sort(v.features.begin(), v.features.end());
  v.schedulable = true;
  return v;
}

}  // namespace

sched::RunningJobView SnapshotBuilder::RunningView(const JobEntry& e) const {
  const Job& j = e.job;
  sched::RunningJobView v;
  v.id = j.id;
  v.user = j.spec.user;
  v.account = j.spec.account;
  v.qos = j.spec.qos.empty() ? sched::DefaultQos(config_, j.spec.account) : j.spec.qos;
  v.partition = j.partition;
  v.start_time = j.start_time;
  v.expected_end = ExpectedEnd(j);
  v.allocation = j.allocation;
  v.name = j.spec.name;
  v.last_checkpoint = j.last_checkpoint;
  v.requeue_allowed = j.spec.requeue;
  if (const PendingStop* stop = stops_.Find(j.id, j.allocation.generation)) {
    Duration left = stop->deadline - clock_.MonotonicNow();
    v.preempt_deadline = clock_.Now() + std::max(left, Duration(0));
    if (auto p = stops_.PreemptorOf(j.id)) v.preempted_for = *p;
  }
  v.array_job_id = j.array_job_id;
  return v;
}

std::vector<sched::RunningJobView> SnapshotBuilder::RunningViews() const {
  std::vector<sched::RunningJobView> running;
  running.reserve(jobs_.running().size());
  for (JobId id : jobs_.running()) running.push_back(RunningView(*jobs_.Find(id)));
  return running;
}

sched::PendingJobView SnapshotBuilder::PendingView(const JobEntry& e) const {
  sched::PendingJobView v;
  FillPendingView(e, &v);
  return v;
}

void SnapshotBuilder::FillPendingView(const JobEntry& e, sched::PendingJobView* out) const {
  const Job& j = e.job;
  sched::PendingJobView& v = *out;
  v.id = j.id;
  v.user = j.spec.user;
  v.account = j.spec.account;
  if (j.spec.qos.empty()) {
    v.qos = sched::DefaultQos(config_, j.spec.account);
  } else {
    v.qos = j.spec.qos;
  }
  v.partitions = j.spec.partitions;
  v.resources = j.spec.resources;
  v.time_limit = j.time_limit;
  v.submit_time = j.submit_time;
  v.nice = j.spec.nice;
  // One of the two: the engine explains an admin hold as JobHeldAdmin, which the pass then
  // stores as the job's reason, so the kind of hold outlives the pass.
  v.held_by_admin = j.spec.hold && j.reason == "JobHeldAdmin";
  v.held = j.spec.hold && !v.held_by_admin;
  v.name = j.spec.name;
  v.eligible_time = j.eligible_time;
  v.begin_time = j.spec.begin_time;
  v.dependencies = j.spec.dependencies;
  // aftercorr: task i of this array waits on task i of the named array.
  for (auto& dep : v.dependencies) {
    if (dep.type != DependencyType::kAfterCorr || !j.array_task_id) continue;
    for (JobId& target : dep.jobs) {
      if (auto task = jobs_.ArrayTask(target, *j.array_task_id)) target = *task;
    }
  }
  v.dependency_any = j.spec.dependency_any;
  v.reservation = j.spec.reservation;
  v.array_job_id = j.array_job_id;
  v.array_task_id = j.array_task_id.value_or(0);
  v.array_max_running = e.array_max_running;
  v.restart_count = j.restart_count;
  v.known_duration.reset();  // the controller does not know durations
  v.attained_service = Duration(0);
}

const sched::ClusterSnapshot& SnapshotBuilder::BuildForPass() {
  BuildInto(&pass_);
  return pass_;
}

sched::ClusterSnapshot SnapshotBuilder::Build() const {
  sched::ClusterSnapshot s;
  BuildInto(&s);
  return s;
}

void SnapshotBuilder::BuildInto(sched::ClusterSnapshot* out) const {
  sched::ClusterSnapshot& s = *out;
  s.nodes.clear();
  s.running.clear();
  s.finished.clear();
  s.nodes.reserve(nodes_.size());
  for (const auto& [id, name] : nodes_.names_by_id()) {
    const NodeEntry& n = *nodes_.Find(name);
    sched::NodeView v = CapacityView(n);
    v.usable_gpus = v.usable_gpus - n.node.failed_gpus;
    v.schedulable = n.node.registered && n.node.responding && !n.node.drain && !n.node.powered_down;
    v.used_cpus = n.usage.cpus;
    v.used_mem_mb = n.usage.mem_mb;
    v.used_gpus = n.usage.gpus;
    v.running_jobs = n.usage.jobs;
    v.exclusive = n.usage.exclusive;
    s.nodes.push_back(std::move(v));
  }
  s.partitions = partitions_.all();
  s.running.reserve(jobs_.running().size());
  for (JobId id : jobs_.running()) s.running.push_back(RunningView(*jobs_.Find(id)));
  // Pending views are reused from the last pass (FillPendingView assigns every field).
  s.pending.resize(jobs_.pending().size());
  std::set<JobId> targets;
  size_t i = 0;
  for (JobId id : jobs_.pending()) {
    sched::PendingJobView& v = s.pending[i++];
    FillPendingView(*jobs_.Find(id), &v);
    for (const auto& dep : v.dependencies) targets.insert(dep.jobs.begin(), dep.jobs.end());
  }
  // Dependency targets that are neither running nor pending.
  for (JobId t : targets) {
    if (jobs_.running().contains(t) || jobs_.pending().contains(t)) continue;
    const JobEntry* e = jobs_.Find(t);
    if (e == nullptr) continue;
    const Job& j = e->job;
    s.finished.push_back({.id = j.id,
                          .state = j.state,
                          .exit_code = j.exit_code,
                          .start_time = j.start_time,
                          .end_time = j.end_time});
  }
  s.usage = usage_.ledger().Entries();
  s.budgets = budgets_.Uses(clock_.Now());
}

const sched::ClusterSnapshot& SnapshotBuilder::ForSubmission(bool with_queue) const {
  // Only the node capacities matter for "could it ever run"; the queue only for limits on
  // submitted jobs (building it for every submission would cost O(jobs)).
  sched::ClusterSnapshot& s = submission_;
  s.partitions = partitions_.all();
  if (submission_nodes_version_ != nodes_.capacity_version()) {
    s.nodes.clear();
    for (const auto& [id, name] : nodes_.names_by_id()) {
      const NodeEntry& n = *nodes_.Find(name);
      if (n.node.registered) s.nodes.push_back(CapacityView(n));
    }
    submission_nodes_version_ = nodes_.capacity_version();
  }
  s.running.clear();
  s.pending.clear();
  if (with_queue) {
    for (JobId id : jobs_.running()) s.running.push_back(RunningView(*jobs_.Find(id)));
    for (JobId id : jobs_.pending()) s.pending.push_back(PendingView(*jobs_.Find(id)));
  }
  return s;
}

}  // namespace corral::controller::internal
