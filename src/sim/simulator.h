// The discrete-event simulator: replays a workload through a `sched::Policy` on a virtual clock,
// driving it the way the controller does.
//
// Model (docs/simulator.md has the long form):
//   1. Jobs arrive at their submit time and are queued as the controller queues them; a refused
//      job is recorded as such and never queued.
//   2. Whenever something changed (arrivals, ends, preemption deadlines), once per timestamp
//      after every event at that timestamp, the simulator builds the snapshot and calls
//      `Decide(snapshot, now)`, as the controller's coalesced, event-driven pass does. It skips
//      a pass that provably cannot change anything: no pending job, or (for a policy that does
//      not preempt) no pending job's shape fits the free GPUs of its partitions. Optionally it
//      also runs the controller's periodic pass (`periodic_pass`).
//   3. Starts are applied in plan order. A started job runs for what is left of its duration, or
//      until its time limit (then it ends TIMEOUT).
//   4. A preemption order is applied as the controller applies it: the victim's
//      `preempt_deadline` (now + grace time) and `preempted_for` are set and it keeps its
//      resources until the deadline; then it is killed and requeued (same id, restart_count + 1,
//      `attained_service` grown by its GPU-time) or, in cancel mode, ends CANCELLED. It keeps the
//      work done up to its last checkpoint (every `checkpoint_interval` of run time; none by
//      default: it restarts from scratch); the rest is lost.
//   5. Fair-share usage (`sched::UsageLedger`) is charged when a job releases its resources and
//      advanced at every timestamp with events, before the pass, as the controller does.
//      Skipped for policies that do not read it (`track_usage`).
//
// The snapshot is kept up to date incrementally (never rebuilt from the job table): nodes,
// running jobs sorted by JobId, pending jobs sorted by JobId.
//
// Windowed passes (`PassWindow`). A pass over thousands of waiting jobs costs the policy time
// in proportion to all of them, although few can start. For policies whose order the simulator
// can reproduce, it hands `Decide` a window of the pending jobs and proves from the plan that the
// jobs left out would have changed nothing; when it cannot, it widens the window and asks again,
// ending with all of them. Jobs of one class (same account, user, QOS, partitions, nice and
// resources: `SimJob::klass`) are visited by the policy in a known order: by submit time for the
// multifactor priority (within a class only the age factor differs, and it grows with age), or
// by a static priority (sjf, las). The window holds the first K jobs of each class; a class whose
// later jobs were left out must satisfy, with Y its last job in the window:
//   1. Y did not start, preempted nothing, holds no reservation, has no victims on their way
//      (the policy does not search again for it, but would for the next of its class), and its
//      reason is `Resources` (it fits nowhere, reservations aside: a later job of its class,
//      visited with fewer free resources, fits nowhere either), or `Priority` in strict order (its
//      partition is blocked), or `Priority` with backfill and every left-out job of the class has
//      a time limit at least Y's (none could slip in before a reservation where Y could not);
//   2. with backfill, Y either found no reservation slot or tried for one and failed; a later
//      job of its class, of the same shape, finds no earlier start (the engine's earliest start
//      only grows during a pass and does not depend on the time limit), so it takes none either.
// In strict order with a static order (fifo) the window is instead a prefix of the policy's
// order (64 jobs, then x 4): a later job cannot start once every partition it may use holds a
// window job waiting for resources (reason `Resources`), whatever its class.
// More generally a left-out job is proven by any job of its class before it in the window that
// satisfies 1 (with the limit condition against that job's limit). Left-out jobs that no job
// proves are added to the window (at most three times the class's share at a time) and the
// pass is asked again, until every left-out job is proven or none is left out.
// `max_jobs_per_pass` (the engine examines only the first jobs in its order, and every job for
// which victims are being preempted): while no more jobs wait, it changes nothing; beyond, a
// policy with a static order (`PassWindow::static_order`) gets a window taken from the jobs it
// would examine (the first `max_jobs_per_pass` in that order, a prefix of every class, plus those
// victims are being preempted for), and any other policy a full pass. Windows are not used with
// reservation windows in the configuration, or with possible preemption by the engine (these
// look at every job). `verify_windows` checks each windowed plan against a full pass.
//
// Deterministic: the same workload, configuration and policy give the same result, bit for bit.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "core/time.h"
#include "sched/config.h"
#include "sched/policy.h"
#include "sched/snapshot.h"
#include "sim/workload.h"

namespace corral::sim {

// How the simulator may window the pending jobs of a pass (see the file comment).
struct PassWindow {
  bool enabled = false;
  bool strict = false;        // the policy stops at a partition's first blocked job (fifo)
  uint32_t reservations = 0;  // backfill reservations the policy makes per pass; 0 = none
  // The policy's order is fixed while jobs wait: (partition tier, `static_priority` or else
  // -nice, submit time, JobId), as for fifo, backfill, sjf and las. Then windows also work when
  // more jobs wait than `max_jobs_per_pass`: the window is taken from the jobs the policy would
  // examine. Without it, such passes are run in full.
  bool static_order = false;
  uint32_t initial = 4;  // K: the first window holds the first K jobs of each class
};

struct SimOptions {
  Timestamp start = Timestamp(Seconds(1'704'067'200));  // trace time 0: 2024-01-01T00:00:00Z
  Duration checkpoint_interval{0};  // 0 = no checkpoints: a preempted job restarts from scratch
  Duration periodic_pass{0};        // also pass every this long while jobs wait; 0 = events only
  bool skip_idle_passes = true;     // skip passes that provably change nothing (see model, 2)
  PassWindow window;
  // The priority of a pending job that stays fixed while it waits, for custom-priority policies
  // (higher first): it orders the jobs of a class for windows and for the hooks below. Unset =
  // the multifactor priority, by submit time within a class.
  std::function<double(const sched::PendingJobView&)> static_priority;
  bool verify_windows = false;  // also run every windowed pass in full and compare (tests)
  // Keep fair-share usage (model, 5) and put it in the snapshot. `OptionsForPolicy` turns it off
  // for policies whose decisions do not depend on it (no fair-share weight, no GPU-minute limit).
  bool track_usage = true;
  bool policy_may_preempt = true;  // false lets idle passes be skipped when nothing fits
  // For a policy that may preempt: whether a pass at `now` could preempt anything (when it
  // says no and nothing fits, the pass is skipped). Unset = it always could.
  // This hook and `wakeup` see a snapshot whose pending jobs are, per class (see "windowed
  // passes"), the first ones in class order up to the first that no victim is being preempted
  // for: enough for questions about the best-placed waiting job of each class, and O(classes).
  std::function<bool(const sched::ClusterSnapshot&, Timestamp now)> may_preempt;
  // Called after each pass with the time of the next pass the policy needs although no event
  // happens (e.g. `las`: when a running job moves to a lower queue), or nullopt.
  std::function<std::optional<Timestamp>(const sched::ClusterSnapshot&, Timestamp now)> wakeup;
  // Called after each `Decide` with its input and output (tests compare them with the
  // controller's).
  std::function<void(const sched::ClusterSnapshot&, Timestamp now, const sched::Plan&)> on_pass;
  // Called with the fraction of jobs done, at most about 200 times.
  std::function<void(double)> progress;
  // When set, the time spent in `Decide` is measured with its monotonic clock.
  const Clock* profile_clock = nullptr;
};

// How a job's simulation ended. kNeverStarted: still waiting when nothing else could happen.
enum class JobEnd { kCompleted, kTimeout, kCancelled, kRefused, kNeverStarted };
std::string_view JobEndName(JobEnd e);  // "completed", "timeout", "cancelled", ...

struct JobOutcome {
  JobId id;
  JobEnd end_kind = JobEnd::kNeverStarted;
  Timestamp submit{};
  Timestamp first_start{};  // epoch = never started
  Timestamp end{};          // epoch = never ended
  uint32_t preemptions = 0;
  double gpu_seconds = 0;       // allocated GPU-time over all runs
  double lost_gpu_seconds = 0;  // GPU-time lost to preemptions (work after the last checkpoint)
};

// The cluster after the events of one timestamp. A step function: it holds until the next.
struct TimelineSample {
  Timestamp t{};
  uint32_t allocated_gpus = 0;
  uint32_t pending_jobs = 0;
  uint32_t running_jobs = 0;
  bool operator==(const TimelineSample&) const = default;
};

struct SimStats {
  uint64_t events = 0;          // arrivals, ends, kills, wake-ups
  uint64_t passes = 0;          // calls to `Decide`
  uint64_t skipped_passes = 0;  // passes skipped as idle
  uint64_t starts = 0;
  uint64_t preemption_orders = 0;  // applied; some victims end before their deadline
  uint64_t preemptions = 0;        // victims killed at their deadline
  uint64_t pending_seen = 0;       // sum over passes of the pending jobs handed to `Decide`
  uint64_t window_retries = 0;     // windowed passes asked again with a wider window
  double decide_seconds = 0;       // with `profile_clock`
};

struct SimResult {
  uint32_t capacity_gpus = 0;
  Timestamp start{};                 // trace time 0
  Timestamp end{};                   // the last event
  std::vector<JobOutcome> outcomes;  // by job id (outcomes[i].id == i + 1)
  std::vector<TimelineSample> timeline;
  double allocated_gpu_seconds = 0;  // integral of allocated GPUs over time
  SimStats stats;
};

// Runs `workload` on `nodes` under `policy`. `config` is the configuration the policy was built
// from (partitions, preemption grace time, fair-share settings).
// Returns kInternal naming the time and job when the policy's plan cannot be applied (a start of
// a job that is not pending, on GPUs that are not free or on an unknown node; a preemption of a
// job that is not running): the policy broke its contract; and, with `verify_windows`, when a
// windowed plan differs from the full one.
Result<SimResult> Simulate(const Workload& workload, const std::vector<sched::NodeView>& nodes,
                           const sched::SchedulerConfig& config, sched::Policy& policy,
                           const SimOptions& options);

}  // namespace corral::sim
