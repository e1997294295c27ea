// Controller: requests about jobs (submit, cancel, signal, requeue, hold, time limit,
// checkpoints) and the agents' reports about them. See controller.h.
#include <algorithm>
#include <csignal>

#include "controller/controller.h"
#include "controller/internal/controller_state.h"
#include "core/array_spec.h"
#include "core/log.h"

namespace corral::controller {

using internal::JobEntry;

Result<api::SubmitResponse> Controller::Submit(const api::Identity& who, JobSpec spec,
                                               Timestamp received) {
  internal::ControllerState& s = *s_;
  CORRAL_ASSIGN_OR_RETURN(Job job, s.validator.ValidateSubmission(who, std::move(spec)));
  job.trace = JobTrace{};
  job.trace.submitted = received != Timestamp{} ? received : s.clock.Now();
  // An array becomes one job per index, with consecutive ids; the first is the array job id.
  std::vector<std::optional<uint32_t>> tasks = {std::nullopt};
  uint32_t array_max_running = 0;
  if (!job.spec.array.empty()) {
    tasks.clear();
    ArraySpec array = *ParseArraySpec(job.spec.array);  // validated
    for (uint32_t index : array.indices) tasks.push_back(index);
    array_max_running = array.max_running;
  }
  api::SubmitResponse response;
  for (const auto& task : tasks) {
    JobEntry e;
    e.job = job;
    e.job.id = s.jobs.AllocateId();
    e.array_max_running = array_max_running;
    if (task) {
      e.job.array_task_id = task;
      e.job.array_job_id = response.task_ids.empty() ? e.job.id : response.task_ids.front();
      response.task_ids.push_back(e.job.id);
    }
    if (response.job_id.value == 0) response.job_id = e.job.id;
    s.jobs.Add(std::move(e));
  }
  s.out.MarkDirty();
  return response;
}

Result<api::SubmitResponse> Controller::Submit(const api::Identity& who, JobSpec spec,
                                               const SubmitKey& key, Timestamp received) {
  internal::ControllerState& s = *s_;
  CORRAL_RETURN_IF_ERROR(internal::CheckSubmitKey(key.key));
  // Scoped to the caller (the identity, never the body's user): another user's key is
  // another key.
  CORRAL_ASSIGN_OR_RETURN(std::optional<api::SubmitResponse> earlier,
                          s.submit_keys.Find(who.user, key));
  if (earlier) {
    CORRAL_LOG(Info) << "submission of " << who.user << " repeated under its key: job "
                     << earlier->job_id.ToString();
    return *earlier;
  }
  CORRAL_ASSIGN_OR_RETURN(api::SubmitResponse response, Submit(who, std::move(spec), received));
  s.submit_keys.Remember(who.user, key, response, s.clock.Now());
  return response;
}

Status Controller::Cancel(const api::Identity& who, JobId id) {
  CORRAL_ASSIGN_OR_RETURN(JobEntry * e, s_->jobs.Get(id));
  CORRAL_RETURN_IF_ERROR(
      internal::AuthorizeJob(who, api::Action::kCancelJob, e->job,
                             s_->governance.Coordinates(who.user, e->job.spec.account)));
  if (IsTerminal(e->job.state)) {
    return FailedPrecondition("job " + id.ToString() + ": already " +
                              std::string(JobStateName(e->job.state)));
  }
  s_->lifecycle.Cancel(*e, who.user);
  return {};
}

Status Controller::SignalJob(const api::Identity& who, JobId id, int signal) {
  CORRAL_ASSIGN_OR_RETURN(JobEntry * e, s_->jobs.Get(id));
  CORRAL_RETURN_IF_ERROR(
      internal::AuthorizeJob(who, api::Action::kCancelJob, e->job,
                             s_->governance.Coordinates(who.user, e->job.spec.account)));
  if (signal < 1 || signal > 64 || signal >= NSIG) {
    return InvalidArgument("signal: " + std::to_string(signal) + " is not a signal number (1-64)");
  }
  if (e->job.state != JobState::kRunning) {
    return FailedPrecondition("job " + id.ToString() + ": not running");
  }
  if (s_->nodes.Find(e->job.allocation.nodes.front().node_name) == nullptr) {
    return Unavailable("job " + id.ToString() + ": its node is unknown");
  }
  s_->lifecycle.SignalEverywhere(*e, signal, /*batch_only=*/false);
  return {};
}

Status Controller::Suspend(const api::Identity& who, JobId id, bool suspend) {
  CORRAL_ASSIGN_OR_RETURN(JobEntry * e, s_->jobs.Get(id));
  CORRAL_RETURN_IF_ERROR(internal::AuthorizeJob(who, api::Action::kSuspendJob, e->job));
  const std::string what = "job " + id.ToString();
  if (e->job.state == JobState::kPending) return FailedPrecondition(what + ": pending");
  CORRAL_RETURN_IF_ERROR(internal::CheckRunning(e->job));
  if (e->cancel_requested) return FailedPrecondition(what + ": being cancelled");
  Allocation& a = e->job.allocation;
  if (!suspend && !a.suspended) return FailedPrecondition(what + ": not suspended");
  if (suspend && a.suspended) return {};
  if (s_->nodes.Find(a.nodes.front().node_name) == nullptr) {
    return Unavailable(what + ": its node is unknown");
  }
  const Timestamp now = s_->clock.Now();
  if (suspend) {
    a.pre_suspend = RunTime(e->job, now);
  } else if (now > a.suspend_time) {
    a.suspended_for += now - a.suspend_time;
  }
  a.suspended = suspend;
  a.suspend_time = now;
  s_->jobs.Put(*e);
  s_->out.MarkDirty();
  // Per node, commands reach the agent in order: the stop before the dropped deadline, the new
  // deadline before the continue (a run never runs on past its limit).
  if (suspend) {
    s_->lifecycle.SignalEverywhere(*e, SIGSTOP, /*batch_only=*/false, /*suspend=*/true);
    s_->lifecycle.SendTimeLimit(*e);
  } else {
    s_->lifecycle.SendTimeLimit(*e);
    s_->lifecycle.SignalEverywhere(*e, SIGCONT, /*batch_only=*/false, /*suspend=*/true);
  }
  CORRAL_LOG(Info) << what << (suspend ? " suspended by " : " resumed by ") << who.user;
  return {};
}

Status Controller::Top(const api::Identity& who, JobId id) {
  CORRAL_ASSIGN_OR_RETURN(JobEntry * e, s_->jobs.Get(id));
  CORRAL_RETURN_IF_ERROR(internal::AuthorizeJob(who, api::Action::kTopJob, e->job));
  if (e->job.state != JobState::kPending) {
    return FailedPrecondition("job " + id.ToString() + ": not pending");
  }
  const JobSpec& s = e->job.spec;
  std::vector<JobEntry*> set;  // by priority, highest first; ties by id
  for (JobId other : s_->jobs.pending()) {
    JobEntry* o = s_->jobs.Find(other);
    if (o == nullptr || o == e) continue;
    const JobSpec& os = o->job.spec;
    if (os.user == s.user && os.partitions == s.partitions && os.account == s.account &&
        os.qos == s.qos) {
      set.push_back(o);
    }
  }
  set.push_back(e);
  std::stable_sort(set.begin(), set.end(), [](const JobEntry* a, const JobEntry* b) {
    return a->priority != b->priority ? a->priority > b->priority : a->job.id < b->job.id;
  });
  std::vector<int64_t> priorities;
  for (const JobEntry* j : set) priorities.push_back(j->priority);
  std::stable_partition(set.begin(), set.end(), [e](const JobEntry* j) { return j == e; });
  // Equal priorities go in submit order: one more puts the job ahead of an earlier one.
  if (set.size() > 1 && priorities[0] == priorities[1] && set[1]->job.id < e->job.id) {
    ++priorities[0];
  }
  for (size_t i = 0; i < set.size(); ++i) {
    JobEntry* j = set[i];
    const int64_t change = priorities[i] - j->priority;  // priority = ... - nice
    if (change == 0) continue;
    const int64_t nice = std::clamp<int64_t>(j->job.spec.nice - change, -2147483647, 2147483647);
    j->job.spec.nice = static_cast<int32_t>(nice);
    j->priority = priorities[i];
    s_->jobs.Put(*j);
  }
  s_->out.MarkDirty();
  return {};
}

Status Controller::Requeue(const api::Identity& who, JobId id, bool hold) {
  CORRAL_ASSIGN_OR_RETURN(JobEntry * e, s_->jobs.Get(id));
  CORRAL_RETURN_IF_ERROR(
      internal::AuthorizeJob(who, api::Action::kRequeueJob, e->job,
                             s_->governance.Coordinates(who.user, e->job.spec.account)));
  // Both rights are checked before anything changes: a refused hold leaves the job as it was.
  if (hold)
    CORRAL_RETURN_IF_ERROR(
        internal::AuthorizeJob(who, api::Action::kHoldJob, e->job,
                               s_->governance.Coordinates(who.user, e->job.spec.account)));
  if (e->job.state == JobState::kPending) {
    return FailedPrecondition("job " + id.ToString() + ": already pending");
  }
  // A running job's old generation reports a stale exit, which is ignored.
  if (e->job.state == JobState::kRunning) s_->lifecycle.SendCancel(*e);
  s_->lifecycle.Requeue(*e, "requeued by " + who.user);
  if (hold) return Hold(who, id, true);
  return {};
}

Status Controller::Hold(const api::Identity& who, JobId id, bool hold) {
  CORRAL_ASSIGN_OR_RETURN(JobEntry * e, s_->jobs.Get(id));
  CORRAL_RETURN_IF_ERROR(
      internal::AuthorizeJob(who, hold ? api::Action::kHoldJob : api::Action::kReleaseJob, e->job,
                             s_->governance.Coordinates(who.user, e->job.spec.account)));
  if (e->job.state != JobState::kPending) {
    return FailedPrecondition("job " + id.ToString() + ": not pending");
  }
  // As in Slurm: an admin's hold on someone else's job (JobHeldAdmin) is one its user cannot
  // release. The reason is stored with the job, so the kind of hold survives a restart.
  bool admin = internal::IsPrivileged(who);
  bool admin_hold = e->job.spec.hold && e->job.reason == "JobHeldAdmin";
  if (!hold && admin_hold && !admin) {
    return MakeError(
        ErrorCode::kPermissionDenied,
        "job " + id.ToString() + ": held by an administrator; only one may release it");
  }
  e->job.spec.hold = hold;
  e->job.reason =
      !hold ? "None" : (admin && who.user != e->job.spec.user ? "JobHeldAdmin" : "JobHeldUser");
  s_->jobs.Put(*e);
  s_->out.MarkDirty();
  return {};
}

Status Controller::UpdateTimeLimit(const api::Identity& who, JobId id, Duration limit) {
  CORRAL_ASSIGN_OR_RETURN(JobEntry * e, s_->jobs.Get(id));
  CORRAL_RETURN_IF_ERROR(
      internal::AuthorizeJob(who, api::Action::kUpdateJob, e->job,
                             s_->governance.Coordinates(who.user, e->job.spec.account)));
  CORRAL_RETURN_IF_ERROR(s_->validator.ValidateTimeLimit(who, e->job, limit));
  e->job.time_limit = limit;
  e->job.spec.time_limit = limit;
  s_->jobs.Put(*e);
  s_->out.MarkDirty();
  if (e->job.state == JobState::kRunning) s_->lifecycle.SendTimeLimit(*e);
  return {};
}

// ---------------------------------------------------------------------------------------------
// Checkpoints

Result<api::JobInfo> Controller::AcknowledgeCheckpoint(const api::Identity& who, JobId id) {
  CORRAL_ASSIGN_OR_RETURN(JobEntry * e, s_->jobs.Get(id));
  CORRAL_RETURN_IF_ERROR(internal::AuthorizeJob(who, api::Action::kCheckpointDone, e->job));
  CORRAL_RETURN_IF_ERROR(internal::CheckRunning(e->job));
  e->job.last_checkpoint = s_->clock.Now();
  s_->jobs.Put(*e);
  api::JobInfo info = internal::JobTable::Info(*e);
  s_->lifecycle.CheckpointAcknowledged(*e);
  return info;
}

Status Controller::SignalCheckpointAndStop(JobId id, Duration grace, StopAction action,
                                           const std::string& reason, int fallback_signal) {
  CORRAL_ASSIGN_OR_RETURN(JobEntry * e, s_->jobs.Get(id));
  CORRAL_RETURN_IF_ERROR(internal::CheckRunning(e->job));
  s_->lifecycle.SignalCheckpointAndStop(*e, grace, action, reason, fallback_signal);
  return {};
}

// ---------------------------------------------------------------------------------------------
// Reports from agents and the transport

Status Controller::HandleEvents(const api::JobEventsRequest& request) {
  internal::ControllerState& s = *s_;
  std::string stale;
  auto reject = [&](const std::string& what) {
    if (!stale.empty()) stale += ", ";
    stale += what;
  };
  for (const api::JobEvent& ev : request.events) {
    if (internal::StepTracker::IsTaskEvent(ev)) {  // a step's task, from any node of the job
      if (!s.steps.ApplyTaskEvent(request.node, ev)) {
        reject("job " + ev.job.ToString() + " step " + std::to_string(ev.step) + " task " +
               std::to_string(ev.task) + " generation " + ev.generation.ToString());
      }
      continue;
    }
    JobEntry* e = s.jobs.Find(ev.job);
    bool current = e != nullptr && e->job.state == JobState::kRunning &&
                   e->job.allocation.generation == ev.generation &&
                   e->job.allocation.nodes.front().node_name == request.node;
    if (!current) {
      reject("job " + ev.job.ToString() + " generation " + ev.generation.ToString());
      continue;
    }
    switch (ev.type) {
      case api::JobEventType::kStarted:
        e->job.trace.Merge(ev.trace);  // recorded with the job's next write
        e->launch_accepted = true;
        if (ev.master_port != 0) e->master_port = ev.master_port;
        break;
      case api::JobEventType::kLaunchFailed:
        e->job.trace.Merge(ev.trace);
        e->job.trace.reported = s.clock.Now();
        e->job.exit_code = 1;
        s.lifecycle.Finish(*e, JobState::kFailed, "launch failed: " + ev.message);
        break;
      case api::JobEventType::kExited: {
        e->job.trace.Merge(ev.trace);
        e->job.trace.reported = s.clock.Now();
        e->job.exit_code = ev.exit_code;
        e->job.exit_signal = ev.signal;
        e->job.usage = ev.usage;
        if (s.lifecycle.HandleStoppedExit(*e, ev)) break;  // preempted, or its GPU failed
        if (s.lifecycle.HandleGpuFailedExit(*e, ev, request.node)) break;
        JobState state = JobState::kCompleted;
        std::string reason = "None";
        if (e->cancel_requested || ev.cancelled) {
          state = JobState::kCancelled;
          reason = "cancelled";
        } else if (ev.timed_out) {
          state = JobState::kTimeout;
          reason = "time limit reached";
        } else if (ev.out_of_memory) {
          state = JobState::kOutOfMemory;
          reason = "out of memory";
        } else if (ev.signal != 0) {
          state = JobState::kFailed;
          reason = "killed by signal " + std::to_string(ev.signal);
        } else if (ev.exit_code != 0) {
          state = JobState::kFailed;
          reason = "NonZeroExitCode";
        }
        s.lifecycle.Finish(*e, state, reason);
        break;
      }
      case api::JobEventType::kTaskExited:
      case api::JobEventType::kTaskLaunchFailed:
        break;  // handled above
    }
  }
  if (!stale.empty()) {
    return MakeError(ErrorCode::kAborted,
                     "stale report from node " + request.node + " rejected: " + stale);
  }
  return {};
}

void Controller::OnLaunchAccepted(JobId job, Generation generation) {
  JobEntry* e = s_->jobs.Find(job);
  if (e != nullptr && e->job.state == JobState::kRunning &&
      e->job.allocation.generation == generation) {
    e->launch_accepted = true;
  }
}

void Controller::OnLaunchFailed(JobId job, Generation generation, const Error& error) {
  JobEntry* e = s_->jobs.Find(job);
  if (e == nullptr || e->job.state != JobState::kRunning ||
      e->job.allocation.generation != generation) {
    return;
  }
  CORRAL_LOG(Warn) << "job " << job.ToString() << ": launch failed: " << error.message;
  if (error.code == ErrorCode::kUnavailable || error.code == ErrorCode::kDeadlineExceeded) {
    s_->lifecycle.FailLost(*e, "could not reach node " + e->job.allocation.nodes.front().node_name);
  } else {
    e->job.exit_code = 1;
    s_->lifecycle.Finish(*e, JobState::kFailed, "launch failed: " + error.message);
  }
}

}  // namespace corral::controller
