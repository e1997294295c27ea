// StopTimers: the stops in progress (`Controller::SignalCheckpointAndStop`, for preemption and
// GPU failures): a run was sent its checkpoint signal and is stopped (`action`) when its grace
// time ends, it acknowledges a checkpoint, or it exits. And, for the scheduler's snapshot,
// which job a preempted run makes room for.
//
// Each stop belongs to one run (job and generation). Not durable: a restarted controller
// forgets them (it marks the jobs on failed GPUs again). Not thread-safe; state thread only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/controller.h"
#include "core/ids.h"
#include "core/time.h"

namespace corral::controller::internal {

struct PendingStop {
  Generation generation;
  MonoTime deadline{};
  StopAction action = StopAction::kRequeue;
  std::string reason;
};

class StopTimers {
 public:
  // The stop waiting on run `generation` of `job`, or null.
  const PendingStop* Find(JobId job, Generation generation) const;
  // Starts a stop of `job` (replacing one of an earlier run).
  void Start(JobId job, PendingStop stop);
  // Removes and returns the stop waiting on run `generation` of `job`, if any.
  std::optional<PendingStop> Take(JobId job, Generation generation);
  // Removes and returns every stop whose deadline is at or before `now` (of whichever run),
  // by job id.
  std::vector<std::pair<JobId, PendingStop>> TakeDue(MonoTime now);
  // Forgets the job's stop (it no longer runs).
  void Forget(JobId job) { stops_.erase(job); }
  // The earliest deadline, or MonoTime::max().
  MonoTime NextDeadline() const;

  // Preemption: `victim` is stopped to make room for `preemptor`.
  void SetPreemptor(JobId victim, JobId preemptor) { preempted_for_[victim] = preemptor; }
  std::optional<JobId> PreemptorOf(JobId victim) const;
  // Forgets the preemptors of victims for which `still_running` is false.
  template <typename Pred>
  void ForgetPreemptorsUnless(Pred still_running) {
    std::erase_if(preempted_for_, [&](const auto& kv) { return !still_running(kv.first); });
  }

 private:
  std::map<JobId, PendingStop> stops_;
  std::map<JobId, JobId> preempted_for_;  // victim -> the job it makes room for
};

}  // namespace corral::controller::internal
