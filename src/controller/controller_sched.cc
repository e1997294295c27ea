// The controller's side of scheduling: the snapshot it hands to `sched::Policy::Decide`, the
// application of the plan (starts, preemption orders, pending reasons), submission checks with
// the policy engine's rules, priorities for `corral priority`, and the fair-share usage ledger
// (advanced every pass, charged when a job releases its resources, persisted in the store).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <sstream>

#include "controller/controller.h"
#include "core/array_spec.h"
#include "core/check.h"
#include "core/log.h"

namespace corral::controller {
namespace {

Timestamp ExpectedEnd(const Job& j) {
  if (j.time_limit == kUnlimited || j.time_limit.count() <= 0) return Timestamp::max();
  return j.start_time + j.time_limit;
}

constexpr const char* kUsageKey = "sched.usage";
constexpr const char* kUsageTimeKey = "sched.usage_time";
constexpr Duration kUsagePersistInterval = Seconds(60);

std::string FormatDouble(double v) {
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, p);
}

}  // namespace

sched::SchedulerConfig Controller::SchedulerConfigWith(std::vector<Partition> partitions) {
  sched::SchedulerConfig c = sched::DefaultSchedulerConfig();
  if (!partitions.empty()) c.partitions = std::move(partitions);
  return c;
}

void Controller::InitScheduling(sched::SchedulerConfig config) {
  sched_config_ = std::move(config);
  auto engine = sched::Scheduler::Create(sched_config_);
  CORRAL_CHECK(engine.has_value()) << "invalid scheduler config: " << engine.error().message;
  engine_ = std::move(*engine);
  auto has = [](const sched::Limits& l) { return l.max_submitted_jobs.has_value(); };
  for (const auto& a : sched_config_.accounts) submit_limits_ |= has(a.limits);
  for (const auto& u : sched_config_.users) submit_limits_ |= has(u.limits);
  for (const auto& q : sched_config_.qos) submit_limits_ |= has(q.limits) || has(q.per_user);
}

sched::RunningJobView Controller::MakeRunningView(const JobEntry& e) const {
  const Job& j = e.job;
  sched::RunningJobView v;
  v.id = j.id;
  v.user = j.spec.user;
  v.account = j.spec.account;
  v.qos = j.spec.qos.empty() ? sched::DefaultQos(sched_config_, j.spec.account) : j.spec.qos;
  v.partition = j.partition;
  v.start_time = j.start_time;
  v.expected_end = ExpectedEnd(j);
  v.allocation = j.allocation;
  v.name = j.spec.name;
  v.last_checkpoint = j.last_checkpoint;
  v.requeue_allowed = j.spec.requeue;
  if (auto it = stops_.find(j.id);
      it != stops_.end() && it->second.generation == j.allocation.generation) {
    Duration left = it->second.deadline - clock_.MonotonicNow();
    v.preempt_deadline = clock_.Now() + std::max(left, Duration(0));
    if (auto p = preempted_for_.find(j.id); p != preempted_for_.end()) v.preempted_for = p->second;
  }
  v.array_job_id = j.array_job_id;
  return v;
}

sched::PendingJobView Controller::MakePendingView(const JobEntry& e) const {
  sched::PendingJobView v;
  FillPendingView(e, &v);
  return v;
}

// Assigns every field (a view reused from an earlier pass keeps its strings' and vectors'
// storage, so a pass over a long queue does not allocate per job).
void Controller::FillPendingView(const JobEntry& e, sched::PendingJobView* out) const {
  const Job& j = e.job;
  sched::PendingJobView& v = *out;
  v.id = j.id;
  v.user = j.spec.user;
  v.account = j.spec.account;
  if (j.spec.qos.empty()) {
    v.qos = sched::DefaultQos(sched_config_, j.spec.account);
  } else {
    v.qos = j.spec.qos;
  }
  v.partitions = j.spec.partitions;
  v.resources = j.spec.resources;
  v.time_limit = j.time_limit;
  v.submit_time = j.submit_time;
  v.nice = j.spec.nice;
  // One of the two: the engine explains an admin hold as JobHeldAdmin, which Schedule then
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
      auto it = jobs_.find(target);
      if (it == jobs_.end()) continue;
      JobId array = it->second.job.array_job_id.value != 0 ? it->second.job.array_job_id : target;
      for (auto t = jobs_.lower_bound(array);
           t != jobs_.end() && t->second.job.array_job_id == array; ++t) {
        if (t->second.job.array_task_id == j.array_task_id) {
          target = t->first;
          break;
        }
      }
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

sched::ClusterSnapshot Controller::BuildSnapshot() const {
  sched::ClusterSnapshot s;
  BuildSnapshot(&s);
  return s;
}

void Controller::BuildSnapshot(sched::ClusterSnapshot* out) const {
  sched::ClusterSnapshot& s = *out;
  s.nodes.clear();
  s.running.clear();
  s.finished.clear();
  s.nodes.reserve(nodes_.size());
  for (const auto& [id, name] : node_names_) {
    const NodeEntry& n = nodes_.at(name);
    sched::NodeView v;
    v.id = n.node.id;
    v.name = name;
    v.cpus = n.node.inventory.cpus;
    v.mem_mb = n.node.inventory.memory_mb;
    v.gpus = n.node.inventory.gpus;
    for (const auto& g : v.gpus) v.usable_gpus.insert(g.index);
    v.usable_gpus = v.usable_gpus - n.node.failed_gpus;
    v.features = n.node.inventory.features;
    std::sort(v.features.begin(), v.features.end());
    v.schedulable = n.node.registered && n.node.responding && !n.node.drain && !n.node.powered_down;
    v.used_cpus = n.usage.cpus;
    v.used_mem_mb = n.usage.mem_mb;
    v.used_gpus = n.usage.gpus;
    v.running_jobs = n.usage.jobs;
    v.exclusive = n.usage.exclusive;
    s.nodes.push_back(std::move(v));
  }
  s.partitions = partitions_;
  s.running.reserve(running_.size());
  for (JobId id : running_) s.running.push_back(MakeRunningView(jobs_.at(id)));
  // Pending views are reused from the last pass (FillPendingView assigns every field).
  s.pending.resize(pending_.size());
  std::set<JobId> targets;
  size_t i = 0;
  for (JobId id : pending_) {
    sched::PendingJobView& v = s.pending[i++];
    FillPendingView(jobs_.at(id), &v);
    for (const auto& dep : v.dependencies) targets.insert(dep.jobs.begin(), dep.jobs.end());
  }
  // Dependency targets that are neither running nor pending.
  for (JobId t : targets) {
    if (running_.contains(t) || pending_.contains(t)) continue;
    auto it = jobs_.find(t);
    if (it == jobs_.end()) continue;
    const Job& j = it->second.job;
    s.finished.push_back({.id = j.id,
                          .state = j.state,
                          .exit_code = j.exit_code,
                          .start_time = j.start_time,
                          .end_time = j.end_time});
  }
  s.usage = ledger_.Entries();
}

Duration Controller::PassSpacing() const {
  return std::max<Duration>(config_.sched_min_interval, last_pass_cost_);
}

void Controller::Schedule() {
  sched_dirty_ = false;
  last_pass_ = clock_.MonotonicNow();
  struct CostRecorder {
    Controller* c;
    ~CostRecorder() { c->last_pass_cost_ = c->clock_.MonotonicNow() - c->last_pass_; }
  } record_cost{this};
  Timestamp now = clock_.Now();
  std::vector<sched::RunningJobView> running;
  running.reserve(running_.size());
  for (JobId id : running_) running.push_back(MakeRunningView(jobs_.at(id)));
  ledger_.Advance(now, running, sched_config_);
  if (pending_.empty()) return;
  BuildSnapshot(&pass_snapshot_);
  sched::Plan plan = policy_->Decide(pass_snapshot_, now);
  for (const auto& placement : plan.starts) {
    auto it = jobs_.find(placement.job);
    if (it == jobs_.end() || it->second.job.state != JobState::kPending ||
        placement.nodes.empty()) {
      CORRAL_LOG(Error) << "policy placed job " << placement.job.ToString()
                        << " which is not pending";
      continue;
    }
    StartJob(it->second, placement);
    it->second.blockers.clear();
  }
  ApplyPreemptions(plan);
  for (auto& reason : plan.pending) {  // the plan is ours: its explanations are moved
    auto it = jobs_.find(reason.job);
    if (it == jobs_.end() || it->second.job.state != JobState::kPending) continue;
    JobEntry& e = it->second;
    e.priority = reason.priority;
    // Beyond max_jobs_per_pass a job is not examined: its last explanation still stands.
    if (!reason.examined && !e.blockers.empty()) continue;
    e.job.reason = std::move(reason.code);  // shown, not persisted until the next state change
    e.reason_detail = std::move(reason.detail);
    e.estimated_start = reason.estimated_start;
    e.blockers = std::move(reason.blockers);
  }
}

void Controller::ApplyPreemptions(const sched::Plan& plan) {
  for (const auto& order : plan.preemption_orders) {
    auto it = jobs_.find(order.job);
    if (it == jobs_.end() || it->second.job.state != JobState::kRunning) continue;
    StopAction action = order.mode == sched::PreemptMode::kCancel || !it->second.job.spec.requeue
                            ? StopAction::kCancel
                            : StopAction::kRequeue;
    CORRAL_LOG(Info) << "job " << order.job.ToString() << ": preempted for job "
                     << order.preemptor.ToString() << " (" << order.reason << "), "
                     << (action == StopAction::kRequeue ? "requeue" : "cancel") << " after "
                     << ToSecondsF(order.grace_time) << " s";
    preempted_for_[order.job] = order.preemptor;
    Status s =
        SignalCheckpointAndStop(order.job, order.grace_time, action, "preempted: " + order.reason);
    if (!s) CORRAL_LOG(Warn) << "job " << order.job.ToString() << ": " << s.error().message;
  }
  // Forget preemptors of jobs that no longer run.
  for (auto it = preempted_for_.begin(); it != preempted_for_.end();) {
    it = running_.contains(it->first) ? std::next(it) : preempted_for_.erase(it);
  }
}

Status Controller::ValidateWithScheduler(const Job& job) const {
  JobEntry e;
  e.job = job;
  sched::PendingJobView view = MakePendingView(e);
  // Only the node capacities matter for "could it ever run"; the queue only for limits on
  // submitted jobs (building it for every submission would cost O(jobs)).
  sched::ClusterSnapshot s;
  s.partitions = partitions_;
  for (const auto& [id, name] : node_names_) {
    const NodeEntry& n = nodes_.at(name);
    if (!n.node.registered) continue;
    sched::NodeView v;
    v.id = n.node.id;
    v.name = name;
    v.cpus = n.node.inventory.cpus;
    v.mem_mb = n.node.inventory.memory_mb;
    v.gpus = n.node.inventory.gpus;
    for (const auto& g : v.gpus) v.usable_gpus.insert(g.index);
    v.features = n.node.inventory.features;
    std::sort(v.features.begin(), v.features.end());
    v.schedulable = true;
    s.nodes.push_back(std::move(v));
  }
  if (submit_limits_) {
    for (JobId id : running_) s.running.push_back(MakeRunningView(jobs_.at(id)));
    for (JobId id : pending_) s.pending.push_back(MakePendingView(jobs_.at(id)));
  }
  return engine_->ValidateSubmission(view, s);
}

Result<std::vector<sched::PriorityFactors>> Controller::Priorities(std::optional<JobId> job) const {
  if (job) {
    auto it = jobs_.find(*job);
    if (it == jobs_.end()) return NotFound("job " + job->ToString() + ": no such job");
    if (it->second.job.state != JobState::kPending) {
      return FailedPrecondition("job " + job->ToString() + ": not pending (" +
                                std::string(JobStateName(it->second.job.state)) + ")");
    }
  }
  std::vector<sched::PriorityFactors> all = engine_->Priorities(BuildSnapshot(), clock_.Now());
  if (!job) return all;
  std::vector<sched::PriorityFactors> one;
  for (auto& f : all) {
    if (f.job == *job) one.push_back(std::move(f));
  }
  return one;
}

Result<std::vector<sched::Blocker>> Controller::Blockers(JobId id) const {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return NotFound("job " + id.ToString() + ": no such job");
  return it->second.blockers;
}

void Controller::ChargeUsage(const JobEntry& e) {
  if (e.job.state != JobState::kRunning || e.job.allocation.nodes.empty()) return;
  ledger_.ChargeEnded(MakeRunningView(e), clock_.Now(), sched_config_);
}

void Controller::RecoverUsage(const store::StoredState& state) {
  auto text = state.meta.find(kUsageKey);
  auto time = state.meta.find(kUsageTimeKey);
  if (text == state.meta.end() || time == state.meta.end()) return;
  std::vector<sched::AssociationUsage> entries;
  std::istringstream in(text->second);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    sched::AssociationUsage u;
    std::string decayed, period;
    if (std::getline(fields, u.account, '\t') && std::getline(fields, u.user, '\t') &&
        std::getline(fields, decayed, '\t') && std::getline(fields, period, '\t')) {
      std::from_chars(decayed.data(), decayed.data() + decayed.size(), u.decayed_usage);
      std::from_chars(period.data(), period.data() + period.size(), u.period_gpu_seconds);
      entries.push_back(std::move(u));
    }
  }
  int64_t micros = 0;
  std::from_chars(time->second.data(), time->second.data() + time->second.size(), micros);
  ledger_ = sched::UsageLedger(entries, FromMicros(micros));
}

void Controller::PersistUsage(bool force) {
  MonoTime now = clock_.MonotonicNow();
  if (!force && now - usage_persisted_ < kUsagePersistInterval) return;
  usage_persisted_ = now;
  std::string text;
  for (const auto& u : ledger_.Entries()) {
    text += u.account + "\t" + u.user + "\t" + FormatDouble(u.decayed_usage) + "\t" +
            FormatDouble(u.period_gpu_seconds) + "\n";
  }
  batch_.PutMeta(kUsageKey, text);
  batch_.PutMeta(kUsageTimeKey, std::to_string(ToMicros(ledger_.last_update())));
}

}  // namespace corral::controller
