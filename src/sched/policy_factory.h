// The registry of named scheduling policies: what `[scheduler] policy` and `corral sim
// --policy` choose from.
//
//   fifo       strict priority order by submit time, no backfill: the first job that cannot
//              start blocks the later jobs of its partitions;
//   backfill   submit-time order with EASY backfill (one reservation, for the first blocked job);
//   default    the full engine configured from the file: multifactor priority with fair share,
//              limits, preemption, backfill with `[scheduler.backfill] reservations`, topology;
//   first_fit  the first placeholder policy (nice, then JobId; no limits), for comparison.
//
// fifo and backfill keep the file's partitions, accounts, QOS, limits, reservations and
// topology; they only replace the ordering, backfill and preemption settings.
//
// To add a policy: implement `Policy` in src/sched/<name>_policy.{h,cc} and add one line to
// `kPolicies` in policy_factory.cc. A policy that only orders jobs differently can reuse the
// engine through `SchedulerOptions::priority` (see scheduler.h).
//
// Thread-safe (the registry is constant).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sched/config.h"
#include "sched/policy.h"

namespace corral::sched {

struct PolicyInfo {
  std::string_view name;
  std::string_view description;
};

// The registered policies, in registry order.
std::vector<PolicyInfo> RegisteredPolicies();
bool IsRegisteredPolicy(std::string_view name);

// Builds the policy `name` from `config` (`config.policy` is ignored).
// Returns kNotFound naming the policy and listing the known ones for an unknown name, and
// kInvalidArgument when `config` does not validate.
Result<std::unique_ptr<Policy>> MakePolicy(std::string_view name, const SchedulerConfig& config);

}  // namespace corral::sched
