// Controller: the authoritative cluster state — jobs, nodes, allocations — and every rule
// that changes it: submit validation, scheduling through `sched::Policy`, launches, job
// events, cancels, drains, node liveness and reconciliation, requeue and recovery.
//
// It performs no I/O itself. Every change is recorded in a pending `store::WriteBatch` and
// every command for an agent in an outbox; the caller (ControllerService's state thread, or a
// test) writes the batch durably, then answers the requests and hands the outbox to the
// `AgentTransport`. So a launch never leaves before its allocation is durable, and a request
// is never answered before its change is.
//
// The state lives in collaborators, each the one owner of its part (internal/controller_state.h
// lists them: job table, node table, step tracker, stop timers, GPU health, usage book, and
// the snapshot builder, validator and job lifecycle that work over them); this class answers
// requests with them.
//
// Not thread-safe: state thread only.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/auth.h"
#include "api/budget_codec.h"
#include "api/governance_codec.h"
#include "api/diag.h"
#include "api/messages.h"
#include "controller/agent_transport.h"
#include "controller/config.h"
#include "controller/metrics/cluster_metrics.h"
#include "core/clock.h"
#include "core/gpu_series.h"
#include "core/job.h"
#include "core/partition.h"
#include "core/result.h"
#include "sched/config.h"
#include "sched/fair_share.h"
#include "sched/policy.h"
#include "sched/scheduler.h"
#include "store/store.h"

namespace corral::controller {

namespace internal {
struct ControllerState;
}  // namespace internal

// Filters of ListJobs. Empty = any.
struct JobFilter {
  std::vector<std::string> users;
  std::vector<JobState> states;  // empty: active jobs plus recently finished ones
  std::vector<std::string> partitions;
  std::vector<std::string> accounts;
  std::vector<JobId> ids;
  bool expand_arrays = false;  // an array's job id in `ids` selects all its tasks
  bool all = false;            // every job ever, whatever its age
  // Jobs active at some time in [active_from, active_until] (sacct -S/-E): submitted by
  // `active_until` and not ended before `active_from`. The epoch = no bound. Either bound
  // implies `all`.
  Timestamp active_from{};
  Timestamp active_until{};
};

// The idempotency key of one submission (internal/submit_keys.h), as the route read it.
struct SubmitKey {
  std::string key;     // the Idempotency-Key header (internal::CheckSubmitKey)
  std::string digest;  // a digest of the request body (a repeat must send the same bytes)
};

// What `SignalCheckpointAndStop` does once the grace time is over (or the job acknowledges
// its checkpoint, or exits): put the job back in the queue with the same id, cancel it, or end
// it NODE_FAIL (the hardware failed, not the job: a GPU failure of a job that may not be
// requeued).
enum class StopAction { kRequeue, kCancel, kNodeFail };

class Controller {
 public:
  // `policy` decides placements; `sched_config` (the scheduling sections of corral.toml) gives
  // the partitions, accounts, QOS and limits that submissions are checked against, and the
  // fair-share settings of the usage ledger.
  Controller(ControllerConfig config, sched::SchedulerConfig sched_config,
             std::unique_ptr<sched::Policy> policy, const Clock& clock);
  // The default scheduling configuration with these partitions (tests).
  Controller(ControllerConfig config, std::vector<Partition> partitions,
             std::unique_ptr<sched::Policy> policy, const Clock& clock);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Rebuilds the state from the store's contents. Must be called once, before anything else.
  // Nodes are given one node timeout from now to heartbeat again.
  // Returns kInternal if the stored state is inconsistent (an allocation on an unknown node).
  Status Recover(store::StoredState state);

  // --- Requests from users (identities already authenticated) ---
  // Every request is decided by `api::Authorize` (api/access.h) with the action of its route
  // (routes.h) against the job (its user and current run) or the node: kPermissionDenied
  // naming the caller and the action otherwise, checked before anything else.

  // Validates and queues a job (an array as one job per task, with consecutive ids from the
  // array's job id on). The checks and their order: internal/job_validator.h. Returns
  // kInvalidArgument naming the field and the reason (no script, no shebang, bad resources,
  // more GPUs than any node of the partition has, unknown partition, time limit over the
  // partition's maximum, ...), kPermissionDenied when a user (not an operator or admin) submits for
  // another user or the policy engine refuses the account or QOS. Nothing is recorded on error.
  // `received`: when the request reached the API (the trace's `submitted`; epoch = now).
  Result<api::SubmitResponse> Submit(const api::Identity& who, JobSpec spec,
                                     Timestamp received = {});
  // As above, idempotent under `key` (internal/submit_keys.h): a key `who` used before is
  // answered with the jobs it made (kAlreadyExists when the body differed), and nothing is
  // submitted again; a new key is stored with the new jobs in the same batch.
  Result<api::SubmitResponse> Submit(const api::Identity& who, JobSpec spec, const SubmitKey& key,
                                     Timestamp received = {});

  // Cancels a pending job at once; a running one is signalled and ends CANCELLED when its
  // agent reports the exit (or at once if its node is down). Returns kNotFound, kPermissionDenied
  // (not the owner nor an admin), kFailedPrecondition if it has already ended.
  Status Cancel(const api::Identity& who, JobId id);

  // Sends `signal` to a running job's processes. Returns kNotFound, kPermissionDenied,
  // kFailedPrecondition when it is not running, kInvalidArgument for a bad signal number.
  Status SignalJob(const api::Identity& who, JobId id, int signal);

  // Suspends (`suspend` true) or resumes a running job (`scontrol suspend|resume`): every
  // process of its run on every node gets SIGSTOP (SIGCONT), and its time limit's clock stops
  // while it is suspended: on suspend its agents drop the run's deadline, on resume they get
  // the limit plus the time spent suspended. It keeps its resources (GPUs included) and stays
  // kRunning; Slurm's commands show it SUSPENDED (core/job.h). Suspending a suspended job does
  // nothing (as Slurm). Operators and admins only. Returns kNotFound, kPermissionDenied,
  // kFailedPrecondition ("pending", "not running", "not suspended", "being cancelled"),
  // kUnavailable when its batch node is unknown. Nothing changes on error.
  Status Suspend(const api::Identity& who, JobId id, bool suspend);

  // Moves pending job `id` ahead of the other pending jobs of the same user, partitions,
  // account and QOS (`scontrol top`), as Slurm does: by nice values. The set's priorities from
  // the last pass are handed out again, highest first, to `id` and then to the others in their
  // order; each job's nice moves by its change of priority, so their sum stays the same (one
  // more for the job when it would tie with an earlier-submitted one, which goes first).
  // Operators and admins only (Slurm's default). Returns kNotFound, kPermissionDenied,
  // kFailedPrecondition ("not pending"). Nothing changes on error.
  Status Top(const api::Identity& who, JobId id);

  // Requeues a running or finished job: it becomes PENDING again with the same id and
  // restart_count + 1 (a running one is killed first). Returns kNotFound, kPermissionDenied,
  // kFailedPrecondition for a pending job. With `hold` it comes back held, as by Hold()
  // (`scontrol requeuehold`), in the same state change: no pass can start it in between.
  Status Requeue(const api::Identity& who, JobId id, bool hold = false);

  // Holds / releases a pending job. Returns kNotFound, kPermissionDenied, kFailedPrecondition.
  Status Hold(const api::Identity& who, JobId id, bool hold);

  // Sets a pending or running job's time limit (`scontrol update JobId=.. TimeLimit=..`). As in
  // Slurm, only an admin may raise it (or go beyond the partition's maximum). For a running
  // job the new limit is stored and sent to the agent of every node of its allocation (for that
  // run, by generation), which moves the deadlines (and the `--signal` warning) of the job's
  // processes there; a limit shorter than the time the job has run ends it TIMEOUT at once.
  // Returns kNotFound, kPermissionDenied (not the owner nor an admin, or a user raising the
  // limit), kFailedPrecondition when the job has ended,
  // kInvalidArgument for a limit that is not positive or over the partition's maximum.
  // Nothing changes on error.
  Status UpdateTimeLimit(const api::Identity& who, JobId id, Duration limit);

  Result<api::JobInfo> GetJob(JobId id) const;
  // The job's path so far (core/job_trace.h). Returns kNotFound for an unknown job.
  Result<api::JobTimeline> Timeline(JobId id) const;
  std::vector<api::JobInfo> ListJobs(const JobFilter& filter) const;
  // Every running job and its current run (generation): what job credentials are valid for.
  std::map<JobId, Generation> RunningRuns() const;

  Result<api::NodeInfo> GetNode(const std::string& name) const;
  std::vector<api::NodeInfo> ListNodes() const;
  std::vector<api::PartitionInfo> ListPartitions() const;

  // Operators and admins (kPermissionDenied otherwise). Drain: no new jobs; running ones finish.
  // Returns kNotFound for an unknown node, kInvalidArgument for an empty reason.
  Status Drain(const api::Identity& who, const std::string& node, const std::string& reason);
  // Resume also returns the node's failed GPUs to service, except those whose checks still
  // fail (they stay out; `corral nodes` shows why).
  Status Resume(const api::Identity& who, const std::string& node);

  // --- GPU health (docs/agent.md, "Health checks"; controller_nodes.cc) ---

  // Operators and admins: returns failed GPU `gpu` of `node` to service (its latched problems, such
  // as an XID, are dropped by the agent). Returns kPermissionDenied, kNotFound for an unknown node
  // or GPU, kFailedPrecondition when the GPU is in service or still fails a check.
  Status ResumeGpu(const api::Identity& who, const std::string& node, uint32_t gpu);
  // Admin only: where to forward a fault injection for `node`. Returns kPermissionDenied,
  // kNotFound, kUnavailable when the node does not respond.
  Result<AgentAddress> InjectTarget(const api::Identity& who, const std::string& node) const;

  // --- `sstat` and `sbcast`: the agents of a running job's nodes ---
  struct RunNodes {
    Generation generation;
    uint32_t uid = 0;  // the job's user, as the controller resolved it at submission
    uint32_t gid = 0;
    std::vector<AgentAddress> agents;      // the allocation's nodes that respond, in order
    std::vector<std::string> unreachable;  // the others
  };
  // The nodes of running job `id` for `action` (kReadJobPrivate: sstat; kCreateStep: sbcast),
  // authorized against the job. Returns kNotFound, kPermissionDenied, kFailedPrecondition
  // when the job is not running.
  Result<RunNodes> JobRunNodes(const api::Identity& who, JobId id, api::Action action) const;

  // --- Requests from agents ---

  // Registers (or re-registers) a node and reconciles its running jobs: jobs it runs that the
  // controller does not know under that generation are to be killed (returned); jobs the
  // controller believes run there but the agent does not report end as NODE_FAIL (or are
  // requeued). Returns kInvalidArgument for an invalid inventory.
  Result<api::RegisterResponse> Register(const api::RegisterRequest& request);
  // Returns kNotFound for an unknown node (the agent must register).
  Result<api::HeartbeatResponse> Heartbeat(const api::HeartbeatRequest& request);
  // Applies job events. Each stale event (old generation, job not running there) is
  // rejected and named in the returned kAborted error; the others are applied.
  Status HandleEvents(const api::JobEventsRequest& request);

  // --- From the agent transport ---
  void OnLaunchAccepted(JobId job, Generation generation);
  void OnLaunchFailed(JobId job, Generation generation, const Error& error);
  // A step's launch on `node` was refused or could not be delivered: its tasks there fail.
  void OnStepLaunchFailed(JobId job, Generation generation, uint32_t step, const std::string& node,
                          const Error& error);

  // --- Steps: `corral run` inside an allocation (controller_steps.cc) ---
  // A running job's steps are stored with it and recovered after a restart
  // (internal/step_tracker.h says how, and what is not yet kept).

  // Creates the next step of running job `id`, laid out by `PlanStep`, and sends its launch to
  // each of its nodes. The step's MASTER_PORT is `spec.master_port`, else the one the batch
  // host reported, else the default candidate. Returns kNotFound, kPermissionDenied (not the
  // owner nor an admin), kFailedPrecondition when the job is not running, kInvalidArgument for
  // a layout that does not fit (PlanStep's messages) or an `io_node` outside the allocation.
  Result<api::StepInfo> CreateStep(const api::Identity& who, JobId id, StepSpec spec);
  // Returns kNotFound for an unknown job or step.
  Result<api::StepInfo> GetStep(JobId id, uint32_t step) const;
  // The job's known steps, by id. Returns kNotFound for an unknown job.
  Result<std::vector<api::StepInfo>> ListSteps(JobId id) const;
  // Ends a running step's tasks on every node; it ends CANCELLED when they have all reported.
  // Returns kNotFound, kPermissionDenied, kFailedPrecondition when it has already ended.
  Status CancelStep(const api::Identity& who, JobId id, uint32_t step);
  // Steps that ended since the last call.
  std::vector<std::pair<JobId, uint32_t>> TakeFinishedSteps();

  // --- Checkpoints (controller_jobs.cc) ---

  // Records that running job `id` has written a checkpoint (`Job::last_checkpoint` = now,
  // durably). When a `SignalCheckpointAndStop` waits on the job, it acts now. Returns the
  // updated record; kNotFound, kPermissionDenied, kFailedPrecondition when it is not running.
  Result<api::JobInfo> AcknowledgeCheckpoint(const api::Identity& who, JobId id);

  // For preemption and GPU failures: sends the job's checkpoint signal (`--signal`, to the
  // batch script only with `B:`, else to every process of the job on every node) now, then,
  // `grace` later or as soon as the job acknowledges a checkpoint, stops it (`action`; the
  // caller picks kRequeue when the job may be requeued): a requeue or NODE_FAIL takes effect at
  // once (the run is cancelled on its nodes; its exit report is then stale), a cancel when the
  // job has exited. A job that exits by itself meanwhile gets the same outcome (with `reason`),
  // not the one its exit code says. A job with no checkpoint signal gets `fallback_signal` the
  // same way (to every process), or, when that is 0 or `grace` is zero, is stopped at once. A
  // second call for the same run keeps the earlier deadline. The wait is not durable: a
  // restarted controller forgets it. Returns kNotFound, kFailedPrecondition when the job is not
  // running.
  Status SignalCheckpointAndStop(JobId id, Duration grace, StopAction action,
                                 const std::string& reason, int fallback_signal = 0);

  // --- Scheduling (controller_sched.cc) ---

  // Every pending job's priority and its factors as the policy engine computes them now
  // (`corral priority`), in JobId order; only `job`'s when given. Returns kNotFound for an
  // unknown job, kFailedPrecondition for a job that is not pending.
  Result<std::vector<sched::PriorityFactors>> Priorities(std::optional<JobId> job) const;
  // Everything that holds pending job `id` back, from the last scheduling pass (`corral why`).
  // Returns kNotFound for an unknown job.
  Result<std::vector<sched::Blocker>> Blockers(JobId id) const;
  const sched::SchedulerConfig& sched_config() const;
  // The fair-share tree (`sshare`) of the scheduler's configuration with the usage ledger's
  // usage as of the last scheduling pass (sched/fair_share.h).
  std::vector<sched::ShareTreeNode> ShareTree() const;
  // The partition job `id` runs in or waits for ("" for an unknown job; `sprio`'s PARTITION).
  std::string PartitionOf(JobId id) const;

  // --- Accounts, users and QOS as data (controller_governance.cc; docs/governance.md) ---
  // Kept in the store (internal/governance.h says where they come from at start) and changed
  // live: a change is checked as a whole, stored with its audit record in one batch, and the
  // scheduler uses it from its next pass. Changes are for admins (`kManageAccounts` for
  // accounts and users, `kConfigure` for QOS) and, on their own accounts, account
  // coordinators (below): kPermissionDenied otherwise. Every change
  // returns kInvalidArgument naming the field (a bad name or value, an unknown parent,
  // account, user or QOS, a loop in the account tree), kAlreadyExists when creating what
  // exists, kNotFound when changing or deleting what does not, kFailedPrecondition when
  // deleting what is still in use (sub-accounts, users, pending or running jobs). Nothing
  // changes on error.

  std::vector<AccountConfig> ListAccounts() const;
  Result<AccountConfig> GetAccount(const std::string& name) const;
  // Creates (`create`) or replaces account `a` (its `users` are kept on replace: they change
  // with the users' associations). Returns the stored record.
  Result<AccountConfig> PutAccount(const api::Identity& who, AccountConfig a, bool create);
  Status DeleteAccount(const api::Identity& who, const std::string& name);

  std::vector<api::UserInfo> ListUsers() const;
  Result<api::UserInfo> GetUser(const std::string& name) const;
  // Creates or replaces user `u`; `u.accounts` are its associations (the accounts whose
  // `users` list it). Returns the stored record.
  Result<api::UserInfo> PutUser(const api::Identity& who, api::UserInfo u, bool create);
  Status DeleteUser(const api::Identity& who, const std::string& name);

  std::vector<QosConfig> ListQos() const;
  Result<QosConfig> GetQos(const std::string& name) const;
  Result<QosConfig> PutQos(const api::Identity& who, QosConfig q, bool create);
  Status DeleteQos(const api::Identity& who, const std::string& name);

  // --- Budgets (controller_budgets.cc; docs/governance.md, "Budgets") ---

  // Every account budget with its spend in the current period, by account.
  std::vector<api::BudgetStatus> Budgets();
  // The audit records of the budget warnings raised since the last call (a budget's spend
  // crossed its `warn_percent`, once per period): principal "controller", method "EVENT",
  // route "budget.warning", target "account:NAME". The caller appends them to the audit log
  // in the batch that holds their markers (`TakeWrites`).
  std::vector<AuditRecord> TakeBudgetEvents();
  // --- Account coordinators (controller_governance.cc; issue 16 item 2) ---
  // Admins, and users who coordinate the account (Slurm's coordinators, docs/governance.md):
  // add `users` (existing user records) to account `account`'s coordinators, or remove one.
  // A coordinator may also change the users and sub-accounts of her accounts (PutAccount,
  // PutUser, DeleteUser: internal/governance.h says exactly what) and hold, release, cancel,
  // requeue and update their jobs. Returns the account as stored.
  Result<AccountConfig> AddCoordinators(const api::Identity& who, const std::string& account,
                                        const std::vector<std::string>& users);
  Result<AccountConfig> RemoveCoordinator(const api::Identity& who, const std::string& account,
                                          const std::string& user);
  // Whether `user` coordinates `account` (directly or through an ancestor).
  bool Coordinates(const std::string& user, const std::string& account) const;

  // --- Per-job GPU statistics and GPU waste (controller_gpu.cc; docs/metrics-jobs.md) ---

  // Job `id`'s GPU statistics: from the series kept while it runs, else from `stored` (the
  // store's copy, `Store::GetGpuSeries`, which the caller reads off the state thread).
  // Returns kNotFound for an unknown job, kInternal for a stored series that cannot be
  // decoded.
  Result<api::GpuStatsInfo> GpuStats(JobId id, const std::optional<std::string>& stored) const;
  // The series kept for the running jobs among `ids` (fresher than the store's).
  std::map<JobId, JobGpuSeries> LiveGpuSeries(const std::vector<JobId>& ids) const;
  // Every running job flagged as wasting its GPUs, and why (for the metrics).
  std::vector<std::pair<JobId, std::string>> GpuWasteFlags() const;

  // --- Periodic work ---

  // Marks nodes without heartbeats DOWN (failing or requeueing their jobs), applies the
  // GPU-waste policy, and runs a scheduling pass when something changed (or the periodic
  // interval passed).
  void Tick();
  // Forces a scheduling pass now (tests and the service after recovery).
  void Schedule();
  // The least time between two event-triggered passes: the last pass's cost, and at least
  // `sched_min_interval` (so that passes take at most about half of the state thread).
  Duration PassSpacing() const;

  // --- Outputs for the caller (see the class comment) ---
  bool HasPendingWrites() const;
  store::WriteBatch TakeWrites();
  // Also marks each launch in it as sent now (the caller sends them at once).
  std::vector<OutgoingCommand> TakeOutbox();
  // Jobs that reached a terminal state since the last call.
  std::vector<JobId> TakeFinished();
  // After the writes taken last are durable: marks the jobs submitted and ended since the
  // last call as committed now (their traces; the marks are written with the job's next
  // record, so an ended job's `end_committed` lives in memory only).
  void OnCommitted();
  // Runs that stopped since the last call (their job ended or was requeued), with their
  // generation: their job credentials are refused from then on.
  std::vector<std::pair<JobId, Generation>> TakeStoppedRuns();
  // When Tick should next run, at the latest.
  MonoTime NextTickDeadline() const;

  const ControllerConfig& config() const;
  size_t job_count() const;

  // --- Metrics (controller_metrics.cc; docs/metrics.md) ---

  // The counts /metrics and /metrics/targets render: active jobs by state, partition, account
  // and user; pending reasons; nodes and their GPUs; fair-share usage; the scheduler's
  // figures. Counts only, so that the state thread is held briefly.
  metrics::ClusterMetrics CollectMetrics();
  // `sdiag`'s figures of the state: jobs since the start, the scheduling passes' (the
  // request figures and server threads are the service's: metrics/routes.h `ServeDiag`).
  api::DiagInfo CollectDiag();

 private:
  std::unique_ptr<internal::ControllerState> s_;
};

}  // namespace corral::controller
