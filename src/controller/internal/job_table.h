// JobTable: every job the controller knows (pending, running, and ended ones, which stay for
// listings and accounting), indexed by state, with the job id and generation counters.
//
// It owns the job map, the state indexes (`pending`, `running`), the list of jobs that ended
// since the caller last took it, and the records of jobs and counters in the write batch: it
// alone inserts jobs and changes their state (`SetState`). Callers change the other fields of
// an entry and record it with `Put`. An array is one job per task, with consecutive ids from
// the array's job id on.
//
// Not thread-safe; state thread only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/messages.h"
#include "controller/controller.h"
#include "controller/internal/job_counts.h"
#include "controller/internal/outputs.h"
#include "core/job.h"
#include "core/result.h"
#include "sched/policy.h"

namespace corral::controller::internal {

// The reason a running job carries once a cancel was asked (stored, so that a restarted
// controller knows it).
inline constexpr std::string_view kCancelRequested = "cancel requested";

// A job as the controller keeps it: the stored record and what lives in memory only.
struct JobEntry {
  Job job;
  std::string reason_detail;
  Timestamp estimated_start{};
  int64_t priority = 0;  // from the last scheduling pass, while pending
  bool cancel_requested = false;
  bool launch_accepted = false;
  MonoTime launch_sent{};
  uint32_t master_port = 0;  // reported by the batch host when the job started
  // The array's "%N" throttle, and the last pass's blockers of a pending job.
  uint32_t array_max_running = 0;
  std::vector<sched::Blocker> blockers;
  // What /metrics counts it under (JobTable keeps it; never copy it to another entry).
  ActiveJobCounts::Handle counted;
};

// Returns kFailedPrecondition ("job N: not running (STATE)") unless `job` is running.
Status CheckRunning(const Job& job);

class JobTable {
 public:
  explicit JobTable(Outputs& out) : out_(out) {}
  JobTable(const JobTable&) = delete;
  JobTable& operator=(const JobTable&) = delete;

  // --- Recovery (Controller::Recover) ---

  // Adds stored job `job` (the store gives them in id order) and moves the counters past its
  // id and generation. A running job's launch counts as sent at `now`, not yet accepted, and
  // cancel-requested when its stored reason says so.
  JobEntry& Restore(Job job, MonoTime now);
  // Moves the counters to the stored "next_job_id" and "next_generation" when they are ahead.
  void RestoreCounters(const std::map<std::string, std::string>& meta);

  // --- Lookups ---

  JobEntry* Find(JobId id);
  const JobEntry* Find(JobId id) const;
  // Returns kNotFound ("job N: no such job") for an unknown job.
  Result<JobEntry*> Get(JobId id);
  Result<const JobEntry*> Get(JobId id) const;
  bool contains(JobId id) const { return jobs_.contains(id); }
  size_t size() const { return jobs_.size(); }
  const std::map<JobId, JobEntry>& all() const { return jobs_; }
  const std::set<JobId>& pending() const { return pending_; }
  const std::set<JobId>& running() const { return running_; }
  // How many jobs of `user` (array tasks counted) are pending or running.
  uint32_t ActiveJobsOf(const std::string& user) const;

  // The task with index `task` of the array that `job` is or belongs to (aftercorr), or
  // nullopt when there is none (or `job` is unknown).
  std::optional<JobId> ArrayTask(JobId job, uint32_t task) const;

  // The jobs `filter` selects, by id. Ended jobs are listed while they ended at or after
  // `recent` (unless the filter asks for states, ids, a time window or every job).
  std::vector<api::JobInfo> List(const JobFilter& filter, Timestamp recent) const;
  static api::JobInfo Info(const JobEntry& e);

  // --- Changes ---

  // The id the next `AllocateId` returns.
  JobId next_id() const { return JobId(next_job_id_); }
  // A new job id; records the counter.
  JobId AllocateId();
  // A new run's generation; records the counter.
  Generation AllocateGeneration();
  // Adds a new pending job and records it. Requires: its id is from `AllocateId`.
  void Add(JobEntry e);
  // Records the job's current record (and counts it as it is now for /metrics).
  void Put(JobEntry& e) {
    out_.writes.PutJob(e.job);
    counts_.Update(e.job, e.counted);
  }
  // Counts a change that is not recorded (the scheduler's pending reasons).
  void Recount(JobEntry& e) { counts_.Update(e.job, e.counted); }
  // Pending and running jobs by state, partition, account and user, and pending ones by reason.
  const ActiveJobCounts& counts() const { return counts_; }
  // Moves the job to `state`, keeping the indexes: a job is in `pending` or `running` while
  // in that state; one that reaches a terminal state joins the finished list (and leaves it
  // when it is requeued).
  void SetState(JobEntry& e, JobState state);
  // Jobs that reached a terminal state since the last call.
  std::vector<JobId> TakeFinished();
  // The jobs added, and those that reached a terminal state, since the last call (whose
  // writes the caller has just made durable: Controller::OnCommitted).
  std::pair<std::vector<JobId>, std::vector<JobId>> TakeUncommitted();
  // The runs that stopped since the last call: each job that left RUNNING (it ended or was
  // requeued), with the generation it ran under.
  std::vector<std::pair<JobId, Generation>> TakeStoppedRuns();

  // What jobs did since the controller started (`sdiag`): jobs added, runs started, and ends
  // by kind. Recovered jobs do not count.
  struct Transitions {
    uint64_t submitted = 0;
    uint64_t started = 0;
    uint64_t completed = 0;
    uint64_t cancelled = 0;
    uint64_t failed = 0;  // any other terminal state
  };
  const Transitions& transitions() const { return transitions_; }

 private:
  Outputs& out_;
  std::map<JobId, JobEntry> jobs_;
  std::set<JobId> pending_;
  std::set<JobId> running_;
  std::vector<JobId> finished_;
  std::vector<JobId> added_uncommitted_;
  std::vector<JobId> ended_uncommitted_;
  std::vector<std::pair<JobId, Generation>> stopped_runs_;
  std::map<std::string, uint32_t> active_by_user_;  // pending or running jobs, by user
  ActiveJobCounts counts_;
  uint64_t next_job_id_ = 1;
  uint64_t next_generation_ = 1;
  Transitions transitions_;
};

}  // namespace corral::controller::internal
