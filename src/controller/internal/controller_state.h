// ControllerState: the controller's collaborators, built and wired in one place. Each owns
// its part of the state (see its header); `Controller` (controller.h) holds one of these and
// answers requests with it.
//
//   partitions   the configured partitions            (immutable)
//   out          the write batch, the outbox, "a pass is due"
//   jobs         jobs, arrays, state indexes, ended jobs; job records and counters
//   nodes        nodes, agent addresses, liveness, drain, usage; node records
//   steps        steps of running jobs; their records
//   stops        checkpoint-and-stop grace timers, preemptors
//   health       GPU and node health reports
//   usage        the fair-share usage ledger; its record
//   budgets      the accounts' budgets: their spend this period, their warnings' markers
//   gpu_stats    per-job GPU series and GPU-waste flags; their records
//   snapshots    what the scheduler sees (reads the above)
//   validator    submission and time-limit checks (reads the above)
//   lifecycle    the job state changes that reach across the tables
//   governance   accounts, users and QOS as data; their records (changed live: `Reconfigure`)
//   submit_keys  idempotency keys of submissions; their records
//
// Not thread-safe; state thread only.
#pragma once

#include <memory>

#include "controller/config.h"
#include "controller/internal/access.h"  // IWYU pragma: export
#include "controller/internal/budget_book.h"
#include "controller/internal/gpu_health_tracker.h"
#include "controller/internal/gpu_stats_book.h"
#include "controller/internal/governance.h"
#include "controller/internal/job_lifecycle.h"
#include "controller/internal/job_table.h"
#include "controller/internal/job_validator.h"
#include "controller/internal/node_table.h"
#include "controller/internal/outputs.h"
#include "controller/internal/partitions.h"
#include "controller/internal/snapshot_builder.h"
#include "controller/internal/step_tracker.h"
#include "controller/internal/submit_keys.h"
#include "controller/internal/stop_timers.h"
#include "controller/internal/usage_book.h"
#include "controller/metrics/state_metrics.h"
#include "core/clock.h"
#include "sched/config.h"
#include "sched/policy.h"
#include "sched/scheduler.h"

namespace corral::controller::internal {

struct ControllerState {
  // Requires: `policy` is not null and `sched_config` is valid (CHECKed).
  ControllerState(ControllerConfig config, sched::SchedulerConfig sched_config,
                  std::unique_ptr<sched::Policy> policy, const Clock& clock);
  ControllerState(const ControllerState&) = delete;
  ControllerState& operator=(const ControllerState&) = delete;

  // Installs a new scheduling configuration (accounts, users, QOS and limits changed live by
  // `governance`; the partitions stay): the engine, the policy (rebuilt from the registry by
  // `[scheduler] policy`, replacing the one given at construction), the validator and the
  // usage ledger use it from now on, and a pass is due. Everything holding
  // `sched_config` by reference sees the new one.
  // Requires: `ValidateSchedulerConfig(config)` succeeds.
  void Reconfigure(sched::SchedulerConfig config);

  const ControllerConfig config;
  const Clock& clock;
  const Partitions partitions;
  // The scheduling sections of corral.toml, with the partitions' host lists expanded; the
  // accounts, users and QOS from the store once recovered (`governance`). Changed only by
  // `Reconfigure`.
  sched::SchedulerConfig sched_config;
  std::unique_ptr<sched::Policy> policy;           // decides placements
  const std::unique_ptr<sched::Scheduler> engine;  // submission checks and priorities

  Outputs out;
  JobTable jobs{out};
  NodeTable nodes{out};
  StepTracker steps{jobs, nodes, clock, out};
  StopTimers stops;
  GpuHealthTracker health;
  UsageBook usage{sched_config, out};
  BudgetBook budgets{jobs, sched_config, out};  // issue 16 item 5
  SnapshotBuilder snapshots{jobs, nodes, partitions, stops, usage, budgets, sched_config, clock};
  JobValidator validator{config, partitions, jobs, nodes, snapshots, *engine, sched_config, clock};
  JobLifecycle lifecycle{jobs, nodes, steps, stops, usage, budgets, snapshots, clock, out};
  GpuStatsBook gpu_stats{jobs, out};
  Governance governance{out};
  SubmitKeys submit_keys{out};
  MonoTime last_waste_check{};

  // Budget warnings not yet taken by the service (controller_budgets.cc).
  std::vector<AuditRecord> budget_events;

  // Scheduling passes (controller_sched.cc).
  MonoTime last_pass{};
  // How long the last pass took: the next event-triggered pass waits at least as long after
  // it ended (and at least sched_min_interval), so that with a long queue passes never take
  // more than about half of the state thread and submissions keep being answered.
  Duration last_pass_cost{};
  // The scheduler's figures and the node -> partitions cache of /metrics
  // (controller_metrics.cc).
  metrics::StateMetrics metrics;
};

// Budgets, from each scheduling pass (controller_budgets.cc): brings the spend to `now` and
// turns the warnings into log lines and audit events (`budget_events`).
void TickBudgets(ControllerState& s, Timestamp now);

// Per-job GPU series and the GPU-waste policy, from Tick (controller_gpu.cc): decides at most
// every few seconds, applies the verdicts, persists what changed.
void TickGpuStats(ControllerState& s);

}  // namespace corral::controller::internal
