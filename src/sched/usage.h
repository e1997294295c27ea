// Usage accounting for fair share and GPU-minute limits: a value the caller keeps between
// passes (the controller persists it; the simulator keeps it in memory) and advances with time.
//
// A job's charge rate is its TRES-weighted size, weight_gpu * GPUs + weight_cpu * CPUs +
// weight_mem_gb * memory in GB, times its QOS `usage_factor`. `decayed_usage` decays by half
// every `half_life`; `period_gpu_seconds` counts raw GPU-seconds since the start of the current
// usage period (aligned multiples of `usage_period` since the epoch) and restarts at zero in
// each new period.
//
// Pure: time is always passed in. Value type; not thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/time.h"
#include "sched/config.h"
#include "sched/snapshot.h"

namespace corral::sched {

class UsageLedger {
 public:
  UsageLedger() = default;
  // Restores persisted state (`Entries()` and `last_update()` of an earlier ledger).
  UsageLedger(const std::vector<AssociationUsage>& entries, Timestamp last_update);

  // Moves the ledger to `now`:
  //   1. Decays every `decayed_usage` by 2^-((now - last_update) / half_life).
  //   2. Restarts `period_gpu_seconds` at zero if `now` is in a later usage period.
  //   3. Charges each running job for its run time in (last_update, now], clipped to the
  //      current period for `period_gpu_seconds`.
  // The first call only sets `last_update`. A `now` before `last_update()` changes nothing.
  void Advance(Timestamp now, const std::vector<RunningJobView>& running,
               const SchedulerConfig& config);

  // Charges a job that ended at `end` (after `last_update()`) for its run time in
  // (last_update, end]. Call it when a job ends, before the next `Advance`.
  void ChargeEnded(const RunningJobView& job, Timestamp end, const SchedulerConfig& config);

  // Adds usage directly (an import of past accounting, or a test).
  void Add(const std::string& account, const std::string& user, double decayed_usage,
           double period_gpu_seconds);

  // The entries, sorted by (account, user): what `ClusterSnapshot::usage` takes.
  std::vector<AssociationUsage> Entries() const;
  // The same into `out`, assigning over the elements already there (their strings keep their
  // buffers): for a caller that refreshes one snapshot's usage before every pass.
  void EntriesInto(std::vector<AssociationUsage>* out) const;
  Timestamp last_update() const { return last_update_; }

  // The charge rate of `job` per second (see the file comment).
  static double ChargeRate(const RunningJobView& job, const SchedulerConfig& config);

 private:
  // (account, user) order, looked up without copying the names.
  struct KeyLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      const int c = std::string_view(a.first).compare(std::string_view(b.first));
      return c != 0 ? c < 0 : std::string_view(a.second) < std::string_view(b.second);
    }
  };

  AssociationUsage& Entry(const std::string& account, const std::string& user);
  // Charges `job` to `e`, its association's entry, for (from, to]; `period_start`: that of the
  // usage period holding `to`; `qos_factors`: some QOS has a usage factor other than 1.
  void Charge(const RunningJobView& job, AssociationUsage& e, Timestamp from, Timestamp to,
              Timestamp period_start, bool qos_factors, const SchedulerConfig& config);

  std::map<std::pair<std::string, std::string>, AssociationUsage, KeyLess> entries_;
  // `Advance`'s entry of each running job, by JobId, checked against the job's names before
  // use. Entries are never removed, so the pointers stay valid while this ledger lives; a copy
  // (or a ledger moved to) starts without them.
  struct JobEntries {
    JobEntries() = default;
    JobEntries(const JobEntries&) {}
    JobEntries& operator=(const JobEntries&) {
      by_job.clear();
      return *this;
    }
    std::unordered_map<uint64_t, AssociationUsage*> by_job;
  };
  JobEntries job_entries_;
  Timestamp last_update_{};
  bool started_ = false;
};

}  // namespace corral::sched
