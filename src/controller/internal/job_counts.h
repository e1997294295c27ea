// ActiveJobCounts: the pending and running jobs as /metrics counts them, kept up to date as jobs
// change: by (state, partition, account, user) with the GPUs they hold or ask for, and the
// pending ones by (partition, reason). A scrape copies these few hundred counts instead of a
// row per job, so it holds the state thread for microseconds at any queue length
// (bench/metrics_bench; issue 10: no pause over 5 ms with 10,000 jobs).
//
// Each job carries the handle of what it is counted under (`Handle`, in its JobEntry); `Update`
// moves it when the job's state, partition, GPUs or reason changed. JobTable calls it wherever
// a job is added, restored or recorded (`Put`), and the scheduler's pass after it sets reasons.
// A handle names entries of this object: a JobEntry is moved, never copied, into the table.
//
// Not thread-safe; state thread only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "controller/metrics/cluster_metrics.h"
#include "core/job.h"

namespace corral::controller::internal {

class ActiveJobCounts {
 public:
  using JobMap = std::map<metrics::JobKey, metrics::JobCounts>;
  using ReasonMap = std::map<std::pair<std::string, std::string>, uint64_t>;

  // What one job is counted under; empty while it is neither pending nor running.
  // Moves leave the source counted under nothing; copies would count a job twice.
  struct Handle {
    Handle() = default;
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    Handle(Handle&& other) noexcept { *this = std::move(other); }
    Handle& operator=(Handle&& other) noexcept {
      key = std::exchange(other.key, std::nullopt);
      reason = std::exchange(other.reason, std::nullopt);
      gpus = std::exchange(other.gpus, 0);
      return *this;
    }

    std::optional<JobMap::iterator> key;
    std::optional<ReasonMap::iterator> reason;  // pending jobs only
    uint64_t gpus = 0;
  };

  // Counts `job` as it is now, in place of what `handle` says it was counted as.
  void Update(const Job& job, Handle& handle);

  const JobMap& jobs() const { return jobs_; }
  const ReasonMap& pending_reasons() const { return reasons_; }

  // The GPUs a job is counted with: those it holds while running, those it asks for while
  // pending.
  static uint64_t GpusOf(const Job& job);

 private:
  void Remove(Handle& handle);

  JobMap jobs_;
  ReasonMap reasons_;
};

}  // namespace corral::controller::internal
