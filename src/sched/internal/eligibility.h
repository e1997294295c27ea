// Eligibility: whether a pending job may be considered at all, apart from limits and
// resources. `Check` reports every reason it may not, in this order: holds (JobHeldUser,
// JobHeldAdmin), its begin time (BeginTime), its dependencies (Dependency,
// DependencyNeverSatisfied), its array's throttle (JobArrayTaskLimit), its reservation
// (Reservation: unknown, not its user's or account's, ended, not started yet), its account
// (InvalidAccount: unknown, or the user is not a member) and its QOS (InvalidQOS: unknown, or
// not allowed for the account).
//
// Dependencies: a running target satisfies `after` once it has run `delay`; a pending one
// nothing yet; a finished one `after` (once started + delay, or never started), `afterany`
// (after its end + delay), `afterok`/`aftercorr` (completed with exit 0; else never) and
// `afternotok` (the opposite); an unknown id never. `singleton` waits while another job of the
// same user and name runs or is older (a lower JobId). With `?` (any) one satisfied target
// suffices and the dependency can never be satisfied only when every target never can.
// Blockers name the targets in dependency order; the estimate is moved to the begin time or
// the reservation's start when those are what it waits for.
//
// Not thread-safe; one pass's (it indexes singletons on first use).
#pragma once

#include <map>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/internal/config_index.h"
#include "sched/internal/job_info.h"
#include "sched/internal/limits.h"
#include "sched/policy.h"
#include "sched/snapshot.h"

namespace corral::sched::internal {

class Eligibility {
 public:
  // `windows`: the pass's reservations (`NodeState::windows`); `limits` gives array counts.
  Eligibility(const ConfigIndex& index, const ClusterSnapshot& snapshot,
              const std::vector<const Reservation*>& windows, const UseLimits& limits,
              Timestamp now);

  // Appends a blocker to `out` for every reason above that applies to `j`, and raises
  // `*estimate` to when a begin time or a reservation's start lets it go.
  void Check(const JobInfo& j, std::vector<Blocker>* out, Timestamp* estimate);

 private:
  void CheckDependencies(const JobInfo& j, std::vector<Blocker>* out);

  const ConfigIndex& index_;
  const ClusterSnapshot& snap_;
  const std::vector<const Reservation*>& windows_;
  const UseLimits& limits_;
  const Timestamp now_;
  std::vector<const FinishedJobView*> finished_;                                    // sorted by id
  std::map<std::pair<std::string_view, std::string_view>, JobId> singleton_first_;  // (user, name)
  std::set<std::pair<std::string_view, std::string_view>> singleton_running_;
  bool singletons_indexed_ = false;
};

}  // namespace corral::sched::internal
