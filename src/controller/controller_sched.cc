// Controller: scheduling passes (the snapshot to `sched::Policy::Decide`, then the plan's
// starts, preemption orders and pending reasons applied), and what the policy engine says of
// pending jobs (`corral priority`, `corral why`). See controller.h.
#include <algorithm>

#include "controller/controller.h"
#include "controller/internal/controller_state.h"
#include "core/log.h"

namespace corral::controller {
namespace {

using internal::ControllerState;
using internal::JobEntry;

// Preemption orders: each victim gets its checkpoint signal, then is requeued (or cancelled,
// for a job that may not be requeued or a QOS that cancels) when its grace time ends.
void ApplyPreemptions(ControllerState& s, const sched::Plan& plan) {
  for (const auto& order : plan.preemption_orders) {
    JobEntry* e = s.jobs.Find(order.job);
    if (e == nullptr || e->job.state != JobState::kRunning) continue;
    StopAction action = order.mode == sched::PreemptMode::kCancel || !e->job.spec.requeue
                            ? StopAction::kCancel
                            : StopAction::kRequeue;
    CORRAL_LOG(Info) << "job " << order.job.ToString() << ": preempted for job "
                     << order.preemptor.ToString() << " (" << order.reason << "), "
                     << (action == StopAction::kRequeue ? "requeue" : "cancel") << " after "
                     << ToSecondsF(order.grace_time) << " s";
    s.stops.SetPreemptor(order.job, order.preemptor);
    s.lifecycle.SignalCheckpointAndStop(*e, order.grace_time, action, "preempted: " + order.reason,
                                        /*fallback_signal=*/0);
  }
  // Forget preemptors of jobs that no longer run.
  s.stops.ForgetPreemptorsUnless([&](JobId id) { return s.jobs.running().contains(id); });
}

}  // namespace

Duration Controller::PassSpacing() const {
  return std::max<Duration>(s_->config.sched_min_interval, s_->last_pass_cost);
}

void Controller::Schedule() {
  ControllerState& s = *s_;
  s.out.sched_dirty = false;
  s.last_pass = s.clock.MonotonicNow();
  struct CostRecorder {
    ControllerState& s;
    ~CostRecorder() { s.last_pass_cost = s.clock.MonotonicNow() - s.last_pass; }
  } record_cost{s};
  Timestamp now = s.clock.Now();
  s.usage.Advance(now, s.snapshots.RunningViews());
  internal::TickBudgets(s, now);
  if (s.jobs.pending().empty()) return;
  metrics::PassFigures figures{.queue_length = s.jobs.pending().size()};
  sched::Plan plan = s.policy->Decide(s.snapshots.BuildForPass(), now);
  figures.started = plan.starts.size();
  figures.examined = plan.starts.size();
  figures.reservations = plan.reservations.size();
  for (const auto& placement : plan.starts) figures.backfilled += placement.backfilled ? 1 : 0;
  for (const auto& reason : plan.pending) figures.examined += reason.examined ? 1 : 0;
  for (const auto& placement : plan.starts) {
    JobEntry* e = s.jobs.Find(placement.job);
    if (e == nullptr || e->job.state != JobState::kPending || placement.nodes.empty()) {
      CORRAL_LOG(Error) << "policy placed job " << placement.job.ToString()
                        << " which is not pending";
      continue;
    }
    s.lifecycle.Start(*e, placement);
    e->blockers.clear();
  }
  ApplyPreemptions(s, plan);
  for (auto& reason : plan.pending) {  // the plan is ours: its explanations are moved
    JobEntry* e = s.jobs.Find(reason.job);
    if (e == nullptr || e->job.state != JobState::kPending) continue;
    e->priority = reason.priority;
    // Beyond max_jobs_per_pass a job is not examined: its last explanation still stands.
    if (!reason.examined && !e->blockers.empty()) continue;
    e->job.reason = std::move(reason.code);  // shown, not persisted until the next state change
    s.jobs.Recount(*e);
    e->reason_detail = std::move(reason.detail);
    e->estimated_start = reason.estimated_start;
    e->blockers = std::move(reason.blockers);
  }
  s.metrics.sched.RecordPass(s.clock.MonotonicNow() - s.last_pass, figures, now);
}

Result<std::vector<sched::PriorityFactors>> Controller::Priorities(std::optional<JobId> job) const {
  if (job) {
    CORRAL_ASSIGN_OR_RETURN(const JobEntry* e, s_->jobs.Get(*job));
    if (e->job.state != JobState::kPending) {
      return FailedPrecondition("job " + job->ToString() + ": not pending (" +
                                std::string(JobStateName(e->job.state)) + ")");
    }
  }
  std::vector<sched::PriorityFactors> all =
      s_->engine->Priorities(s_->snapshots.Build(), s_->clock.Now());
  if (!job) return all;
  std::vector<sched::PriorityFactors> one;
  for (auto& f : all) {
    if (f.job == *job) one.push_back(std::move(f));
  }
  return one;
}

Result<std::vector<sched::Blocker>> Controller::Blockers(JobId id) const {
  CORRAL_ASSIGN_OR_RETURN(const JobEntry* e, s_->jobs.Get(id));
  return e->blockers;
}

std::vector<sched::ShareTreeNode> Controller::ShareTree() const {
  return sched::ComputeShareTree(sched_config(), s_->usage.ledger().Entries());
}

std::string Controller::PartitionOf(JobId id) const {
  const JobEntry* e = s_->jobs.Find(id);
  return e == nullptr ? std::string() : e->job.partition;
}

}  // namespace corral::controller
