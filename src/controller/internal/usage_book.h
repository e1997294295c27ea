// UsageBook: the fair-share usage ledger (`sched::UsageLedger`) of the controller: advanced
// every scheduling pass, charged when a job releases its resources, persisted in the store
// (meta "sched.usage", one "<account>\t<user>\t<decayed usage>\t<period GPU-seconds>" line per
// association, and "sched.usage_time", the ledger's time in microseconds) at most once a
// minute, and recovered after a restart.
//
// Not thread-safe; state thread only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "controller/internal/outputs.h"
#include "sched/config.h"
#include "sched/snapshot.h"
#include "sched/usage.h"

namespace corral::controller::internal {

class UsageBook {
 public:
  UsageBook(const sched::SchedulerConfig& config, Outputs& out) : config_(config), out_(out) {}
  UsageBook(const UsageBook&) = delete;
  UsageBook& operator=(const UsageBook&) = delete;

  // Restores the ledger from the stored meta (nothing when it holds none).
  void Recover(const std::map<std::string, std::string>& meta);
  // Moves the ledger to `now`, charging the running jobs.
  void Advance(Timestamp now, const std::vector<sched::RunningJobView>& running) {
    ledger_.Advance(now, running, config_);
  }
  // Charges a job that releases its resources at `end`.
  void ChargeEnded(const sched::RunningJobView& job, Timestamp end) {
    ledger_.ChargeEnded(job, end, config_);
  }
  // Records the ledger when a minute has passed since it was last recorded.
  void PersistIfDue(MonoTime now);
  const sched::UsageLedger& ledger() const { return ledger_; }

 private:
  const sched::SchedulerConfig& config_;
  Outputs& out_;
  sched::UsageLedger ledger_;
  MonoTime persisted_{};
};

}  // namespace corral::controller::internal
