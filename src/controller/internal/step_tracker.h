// StepTracker: the steps of running jobs (`corral run` inside an allocation): their launch on
// the job's nodes, their tasks' exits, how they end, and their durable form.
//
// It owns every step, the next step id of each running job, the list of steps that ended
// since the caller last took it, and the "steps/<job id>" meta records. While a job runs its
// steps are stored with it, so that a restarted controller still takes their tasks' exits.
// The meta value holds "next N" (the job's next step id) and one line per step that runs or
// ended within the last ten minutes: "<cancel_requested 0|1> <bad_exit 0|1> <StepInfo JSON>";
// it is deleted once the job no longer runs.
//
// Not yet: a step stored but whose launch was not sent before a crash is not launched again,
// and the batch host's MASTER_PORT is not stored (after a restart, steps get the default
// candidate port).
//
// Not thread-safe; state thread only.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/messages.h"
#include "controller/internal/job_table.h"
#include "controller/internal/node_table.h"
#include "controller/internal/outputs.h"
#include "core/clock.h"
#include "core/result.h"
#include "core/step.h"

namespace corral::controller::internal {

struct StepEntry {
  api::StepInfo info;
  std::set<std::string> live_nodes;  // nodes with tasks not yet reported
  size_t ended_tasks = 0;
  bool cancel_requested = false;
  bool bad_exit = false;  // --kill-on-bad-exit fired
};

class StepTracker {
 public:
  StepTracker(const JobTable& jobs, const NodeTable& nodes, const Clock& clock, Outputs& out)
      : jobs_(jobs), nodes_(nodes), clock_(clock), out_(out) {}
  StepTracker(const StepTracker&) = delete;
  StepTracker& operator=(const StepTracker&) = delete;

  // Creates the next step of running job `e` and sends its launch to each of its nodes. The
  // checks, in order: the layout (`PlanStep`), the container (`--container-name` without an
  // image takes the image of the latest step of this run that named it with one), `io_port`
  // and `io_node` (a node of the job), then every node of the layout responding. The step's
  // MASTER_PORT is `spec.master_port`, else the one the batch host reported, else the
  // default candidate. Steps that ended more than ten minutes ago in jobs that no longer run
  // are forgotten. Requires: `e` is running. Returns kInvalidArgument naming the field, or
  // kUnavailable for a node that does not respond.
  Result<api::StepInfo> Create(const JobEntry& e, StepSpec spec);

  // Null for an unknown step.
  const StepEntry* Find(JobId job, uint32_t step) const;
  // The job's known steps, by id.
  std::vector<api::StepInfo> List(JobId job) const;
  // Ends a running step's tasks on every node (it ends CANCELLED once they have reported).
  // Returns kNotFound, kFailedPrecondition when it has already ended.
  Status Cancel(JobId job, uint32_t step);

  // Whether `ev` is about a step's task (rather than the batch script).
  static bool IsTaskEvent(const api::JobEvent& ev);
  // Applies a task's exit or launch failure reported by `node`; returns false for a stale one
  // (unknown step, another run, another node, a task already ended).
  bool ApplyTaskEvent(const std::string& node, const api::JobEvent& ev);
  // A step's launch on `node` failed: its tasks there fail.
  void OnLaunchFailed(JobId job, Generation generation, uint32_t step, const std::string& node,
                      const Error& error);
  // Job `job` stops running: its running steps end (CANCELLED, or FAILED after a
  // --kill-on-bad-exit) with `reason`, and what still runs of them is stopped.
  void EndStepsOfJob(JobId job, const std::string& reason);
  // The nodes where steps of run `generation` of `job` still have tasks.
  std::set<std::string> LiveNodes(JobId job, Generation generation) const;

  // Steps that ended since the last call.
  std::vector<std::pair<JobId, uint32_t>> TakeFinished();
  // Records the steps of the jobs whose steps changed since the last call.
  void PutDirty();
  // Rebuilds the steps of running jobs from the stored meta (after the jobs are restored);
  // deletes records it cannot use.
  void Recover(const std::map<std::string, std::string>& meta);

 private:
  void EndTask(StepEntry& s, api::StepTaskInfo& t);
  void FinishStep(StepEntry& s);
  // Sends `signal` (0: end them) to the step's tasks on every node that still runs some.
  void SignalStepNodes(const StepEntry& s, int signal);
  Status ResolveContainer(const Job& job, ContainerSpec* c) const;

  const JobTable& jobs_;
  const NodeTable& nodes_;
  const Clock& clock_;
  Outputs& out_;
  std::map<std::pair<JobId, uint32_t>, StepEntry> steps_;
  std::map<JobId, uint32_t> next_step_;
  std::set<JobId> dirty_;  // jobs whose steps changed since the last PutDirty
  std::vector<std::pair<JobId, uint32_t>> finished_;
};

}  // namespace corral::controller::internal
