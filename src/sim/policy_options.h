// What the simulator knows about each policy of the factory, as `SimOptions`: whether it may
// preempt (and, for `las`, when a pass could preempt and when to wake up), whether it reads
// fair-share usage, its fixed priorities, and how its passes may be windowed (simulator.h).
//
// Thread-compatible.
#pragma once

#include <string_view>

#include "sched/config.h"
#include "sched/policy.h"
#include "sim/simulator.h"

namespace corral::sim {

// Options for `policy`, built by `sched::MakePolicy(name, config)` (or a `sched::LasPolicy`
// built directly). Policies it does not know get the safe defaults: may preempt, no window.
// `policy` must outlive the options (the LAS hooks call it). Only the fields above are set.
SimOptions OptionsForPolicy(std::string_view name, const sched::Policy& policy,
                            const sched::SchedulerConfig& config);

// Whether the engine-based `default` policy may preempt under `config` (QOS preempt lists, or
// guarantees with reclaim).
bool EngineMayPreempt(const sched::SchedulerConfig& config);

// Whether `config` has GPU-minute limits (which need the usage ledger whatever the policy).
bool UsesGpuMinuteLimits(const sched::SchedulerConfig& config);

}  // namespace corral::sim
