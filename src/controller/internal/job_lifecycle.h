// JobLifecycle: the changes of a job's state that reach across the controller's tables —
// a start (allocation, launch), an end (release, usage charge, steps ended), a requeue, a
// cancel, the loss of a job's node, and the stops in progress (checkpoint signal, grace
// time, then requeue, cancel or NODE_FAIL) that preemption and GPU failures use.
//
// It owns no state: it changes the job table, the node table's usage, the step tracker, the
// stop timers and the usage book, and sends the agents' commands, always in the same order,
// so that every caller (requests, agent events, Tick, a scheduling pass) gets the same
// rules. Not thread-safe; state thread only.
#pragma once

#include <string>
#include <vector>

#include "api/messages.h"
#include "controller/controller.h"
#include "controller/internal/budget_book.h"
#include "controller/internal/gpu_health_tracker.h"
#include "controller/internal/job_table.h"
#include "controller/internal/node_table.h"
#include "controller/internal/outputs.h"
#include "controller/internal/snapshot_builder.h"
#include "controller/internal/step_tracker.h"
#include "controller/internal/stop_timers.h"
#include "controller/internal/usage_book.h"
#include "core/clock.h"
#include "core/gpu.h"
#include "sched/policy.h"

namespace corral::controller::internal {

class JobLifecycle {
 public:
  JobLifecycle(JobTable& jobs, NodeTable& nodes, StepTracker& steps, StopTimers& stops,
               UsageBook& usage, BudgetBook& budgets, const SnapshotBuilder& snapshots,
               const Clock& clock, Outputs& out)
      : jobs_(jobs),
        nodes_(nodes),
        steps_(steps),
        stops_(stops),
        usage_(usage),
        budgets_(budgets),
        snapshots_(snapshots),
        clock_(clock),
        out_(out) {}
  JobLifecycle(const JobLifecycle&) = delete;
  JobLifecycle& operator=(const JobLifecycle&) = delete;

  // Starts pending job `e` where `placement` puts it: a new generation, the nodes in
  // host-list order (the first is the batch host), their usage, and the launch to the batch
  // host. Requires: `e` is pending; every node of `placement` is known.
  void Start(JobEntry& e, const sched::Placement& placement);
  // Ends running job `e` in terminal `state`: its nodes are released (its usage charged, its
  // steps ended) and the record is stored.
  void Finish(JobEntry& e, JobState state, const std::string& reason);
  // Takes job `e` back to PENDING with restart_count + 1 (releasing a running one's nodes).
  void Requeue(JobEntry& e, const std::string& reason);
  // Cancels job `e` for `by` (a user name): a pending one at once; a running one is asked to
  // stop (it ends when its agent reports the exit, or at once when its batch host is down).
  // Requires: `e` has not ended.
  void Cancel(JobEntry& e, const std::string& by);

  // A running job's node was lost: a job being cancelled ends CANCELLED, a requeueable one
  // is requeued, the others end NODE_FAIL.
  void FailLost(JobEntry& e, const std::string& reason);
  // Node `n` stopped responding (or lost its jobs): `FailLost` for each job on it, stopping
  // the batch step where it runs on another node.
  void FailJobsOn(const NodeEntry& n, const std::string& reason);

  // Stops the current run of job `e` after its checkpoint signal and `grace` (see
  // `Controller::SignalCheckpointAndStop`). Requires: `e` is running.
  void SignalCheckpointAndStop(JobEntry& e, Duration grace, StopAction action,
                               const std::string& reason, int fallback_signal);
  // Applies `action` to running job `e` now.
  void StopNow(JobEntry& e, StopAction action, const std::string& reason);
  // The checkpoint of running job `e` was acknowledged: a stop waiting on it acts now.
  void CheckpointAcknowledged(JobEntry& e);
  // Stops whose grace time has ended act now.
  void RunDueStops();
  // An exit of a run being stopped: applies the stop's action instead of what the exit says;
  // returns false when no stop of that run is in progress.
  bool HandleStoppedExit(JobEntry& e, const api::JobEvent& ev);

  // GPUs `gpus` of node `n` failed: the running jobs on them are stopped (their checkpoint
  // signal or SIGTERM, then a requeue when requeueable, else NODE_FAIL). `problems` name the
  // failures.
  void FailJobsOnGpus(const NodeEntry& n, GpuSet gpus, const std::vector<api::GpuHealth>& problems);
  // An exit that names a failing GPU of the job (it crashed with it): requeues it or ends it
  // NODE_FAIL; returns false when the exit is not about a GPU failure.
  bool HandleGpuFailedExit(JobEntry& e, const api::JobEvent& ev, const std::string& node);

  // Sends `signal` to every process of running job `e` (the batch script only when
  // `batch_only`). `suspend`: SIGSTOP/SIGCONT of a suspend or resume (the agents freeze or
  // thaw the run's cgroup where they can: api::SignalRequest::suspend).
  void SignalEverywhere(const JobEntry& e, int signal, bool batch_only, bool suspend = false);
  // Asks the batch host to stop the run (its exit report will then be stale when the run is
  // no longer current).
  void SendCancel(const JobEntry& e);
  // Sends the job's time limit to the agent of every node of its allocation.
  void SendTimeLimit(const JobEntry& e);
  // The launch of running job `e` to its batch host (again, after a restart).
  void SendLaunch(const JobEntry& e);

 private:
  // Releases the nodes of running job `e`; charges its usage and ends its steps.
  void Release(JobEntry& e);

  JobTable& jobs_;
  NodeTable& nodes_;
  StepTracker& steps_;
  StopTimers& stops_;
  UsageBook& usage_;
  BudgetBook& budgets_;
  const SnapshotBuilder& snapshots_;
  const Clock& clock_;
  Outputs& out_;
};

}  // namespace corral::controller::internal
