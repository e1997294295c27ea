// AgentCore: the node agent's state and every rule that changes it — fencing of launches by
// generation, the run journal, the job events the controller has not acknowledged yet, the
// bookkeeping of what runs here (batch steps and step tasks, per run), reconciliation with
// the runs the controller says it does not know, the content and timing of registrations
// and heartbeats, and the age of the agent's token.
//
// It performs no I/O beyond log lines: it starts no process, opens no socket and no file (the
// journal is the `RunJournal` interface), and reads only its `Clock`. Each input — a launch, a step
// launch, a signal, a cancel, a time-limit change, a process's exit, a reply of the controller, a
// turn of the heartbeat loop — returns what to do as data: the answer for the HTTP caller
// (an `Error` that `api::ErrorResponse` turns into 400/409/503), the request to send, or
// `Effects`: commands for the process supervisor and the node monitor, then events to queue.
// `Agent` (agent.cc) owns the threads, the HTTP server and client and the processes; it feeds
// the core and carries out what it returns.
//
// Events are queued (`QueueEvents`) only once the commands that came with them have been
// carried out, so that a report never precedes the clean-up it reports (a run's cgroup, its
// container), and they are kept until the controller has acknowledged them. A run is listed
// in registrations and heartbeats while its exit is unacknowledged, so that the controller
// can tell a lost job from one whose exit report is on its way.
//
// Not thread-safe: the caller serialises every call (`Agent` holds one mutex around it).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "agent/exec/job_run.h"
#include "agent/exec/process.h"
#include "agent/run_journal.h"
#include "api/messages.h"
#include "core/clock.h"
#include "core/job.h"
#include "core/node.h"
#include "core/result.h"
#include "core/step.h"

namespace corral::agent {

// A process the agent started: its pid and its start time as /proc shows it (the journal's
// `JournalEntry`). pid 0: it had already ended when the agent looked.
struct StartedProcess {
  int pid = 0;
  std::string start_time;
};

// What the caller carries out, in order (see `Effects`).
namespace command {
// Ends every process of the run (SIGCONT + SIGTERM, SIGKILL after the grace period).
// `reconcile`: because the controller does not know the run (the caller logs it).
struct CancelRun {
  JobRun run;
  bool reconcile = false;
  bool operator==(const CancelRun&) const = default;
};
// SIGKILL to every process of an older run of a job that is being launched again here.
struct KillRun {
  JobRun run;
  bool operator==(const KillRun&) const = default;
};
// The run's batch step has ended: the node monitor fills its exit event (`Effects::events`
// [event]: GPU usage, out of memory, GPU failure), then removes what is left of the run here.
struct FinishRun {
  JobRun run;
  size_t event = 0;
  bool operator==(const FinishRun&) const = default;
};
// A step task has ended; `killed`: by a signal (its container may be left running).
struct FinishTask {
  JobRun run;
  uint32_t step = 0;
  uint32_t task = 0;
  bool killed = false;
  bool operator==(const FinishTask&) const = default;
};
// The run has ended here and none of its processes is left: its cgroup goes.
struct ReleaseRun {
  JobRun run;
  bool operator==(const ReleaseRun&) const = default;
};
// The run's state directory (its batch script) goes.
struct RemoveRunDir {
  JobRun run;
  bool operator==(const RemoveRunDir&) const = default;
};
// A process a previous agent run left: killed with its process group when `pid` still has
// `start_time`.
struct KillOrphan {
  JournalEntry entry;
  bool operator==(const KillOrphan&) const = default;
};
// An operator resumed these GPUs: their latched problems go.
struct ClearGpus {
  std::vector<uint32_t> gpus;
  bool operator==(const ClearGpus&) const = default;
};
}  // namespace command

using Command = std::variant<command::CancelRun, command::KillRun, command::FinishRun,
                             command::FinishTask, command::ReleaseRun, command::RemoveRunDir,
                             command::KillOrphan, command::ClearGpus>;

// The result of an input: carry out `commands` in order, then queue `events` (QueueEvents).
struct Effects {
  std::vector<Command> commands;
  std::vector<api::JobEvent> events;
  void Append(Effects other);
  bool empty() const { return commands.empty() && events.empty(); }
};

// What a signal, cancel or step signal asks of the process supervisor.
struct SignalOrder {
  JobRun run;
  uint32_t step = kAllSteps;       // kAllSteps: every process of the run, its batch script included
  int signal = 0;                  // 0: cancel (SIGCONT + SIGTERM, SIGKILL after the grace)
  bool batch_script_only = false;  // the batch script's own process (`--signal=B:...`)
  bool missing_ok = false;         // nothing of the run here is no error
  bool suspend = false;            // SIGSTOP/SIGCONT of a suspend: freeze/thaw the run's cgroup
  bool operator==(const SignalOrder&) const = default;
};

// The answer to a launch or a step launch.
struct LaunchDecision {
  // Start the batch step / these tasks here (then report with OnBatchStarted / OnTaskStarted);
  // otherwise answer `answer` now: success for a repeated launch (nothing to do), else why not.
  bool start = false;
  std::vector<StepTask> tasks;  // a step launch: this node's tasks
  Status answer;
  Effects effects;  // for instance the older run to kill (answered 503)
};

// What the registration and heartbeat loop does next.
struct ControllerCall {
  enum class Kind { kWait, kRegister, kHeartbeat };
  Kind kind = Kind::kWait;
  MonoTime wait_until{};                  // kWait: until then, or until HealthChanged
  api::RegisterRequest register_request;  // kRegister
  api::HeartbeatRequest heartbeat;        // kHeartbeat: the node and its runs (not its health)
};

class AgentCore {
 public:
  struct Options {
    std::string node_name;
    std::string controller_url;  // for log lines only
    // Whether jobs and steps may run as uid 0 or with gid 0 (`[launch] allow_root_jobs`).
    bool allow_root_jobs = false;
  };
  // Mints a bearer token for the agent at `now`, valid `lifetime` (api::BearerHeader).
  using TokenMinter = std::function<std::string(Timestamp now, Duration lifetime)>;

  // `journal` and `clock` must outlive the core.
  AgentCore(Options options, RunJournal& journal, const Clock& clock, TokenMinter mint_token);
  AgentCore(const AgentCore&) = delete;
  AgentCore& operator=(const AgentCore&) = delete;

  // Once, before anything else: what a previous agent run left in the journal is to be killed
  // (`KillOrphan`); the journal is emptied.
  Effects Recover();
  // The node as it registers (its address included). Before the first ControllerCall.
  void SetInventory(NodeInventory inventory);
  const NodeInventory& inventory() const { return inventory_; }
  // The cluster's name, from the last registration ("" before).
  const std::string& cluster_name() const { return cluster_name_; }

  // --- From the controller (HTTP) ---

  // A batch step to run. Refused with kInvalidArgument when this node is not the job's batch
  // host, kPermissionDenied when it would run as uid 0 or gid 0 and the node does not allow
  // that, kUnavailable when an older run of the job still has processes here (which are to be
  // killed: the controller retries once they are gone, so that the two never overlap),
  // kAborted when a newer run of the job was launched here. A repeated launch is answered
  // success with nothing to start.
  LaunchDecision OnLaunch(const Job& job);
  // The batch step of `run` was started (`started`: its process and MASTER_PORT) or could not
  // be (why): journals it and reports kStarted, or reports kLaunchFailed and removes its
  // directory. The report carries the launch's trace marks (`received`: when the launch
  // reached the agent; core/job_trace.h).
  struct BatchStarted {
    StartedProcess process;
    uint32_t master_port = 0;
    AgentTrace trace;  // cgroup_ready, spawned, exec
  };
  Effects OnBatchStarted(JobRun run, const Result<BatchStarted>& started,
                         Timestamp received = {});

  // A step's tasks on this node. Refused with kInvalidArgument when none of its tasks is
  // here or it has no program, kPermissionDenied when it would run as root (as OnLaunch) or as
  // another user than the run's batch step or first step here did (a step always runs as its
  // job's user), kAborted when a newer run of the job was launched here. A repeated launch
  // (of a recent step) is answered success with nothing to start.
  LaunchDecision OnStepLaunch(const api::StepLaunchRequest& request);
  // Task `task` of step `step` of `run` was started, or could not be (why): journals it, or
  // reports kTaskLaunchFailed (exit code 127 for kNotFound, else 1).
  Effects OnTaskStarted(JobRun run, uint32_t step, uint32_t task,
                        const Result<StartedProcess>& started);

  // Returns kInvalidArgument for a limit that is not positive, kAborted when a newer run of
  // the job was launched here. Then the caller changes the run's processes' limits (nothing
  // of the run here is no error).
  Status OnTimeLimit(const api::TimeLimitRequest& request);
  // Signals and cancels: returns what to ask of the supervisor, or kInvalidArgument for a
  // signal number out of range (0 is a step signal's cancel).
  Result<SignalOrder> OnCancel(const api::CancelRequest& request) const;
  Result<SignalOrder> OnSignal(const api::SignalRequest& request) const;
  Result<SignalOrder> OnStepSignal(const api::StepSignalRequest& request) const;
  // `sbcast`: may a file of run `run` be written here as uid/gid (the controller's word)?
  // kPermissionDenied as OnLaunch for root, and for a user other than the one the run runs as
  // here; kAborted when a newer run of the job was launched here.
  Status OnBcast(JobRun run, uint32_t uid, uint32_t gid) const;

  // --- From the process supervisor ---

  // A process of a run ended. Its batch step: ends the run's tasks here, removes its
  // directory, has the node monitor finish it and reports kExited. A step task: finishes it
  // and reports kTaskExited. A run the controller does not know any more is released once its
  // last process here has ended.
  Effects OnProcessExit(const ProcessExit& exit);

  // --- The registration and heartbeat loop ---

  // What to do now. `isolated`: the runs holding a cgroup here (NodeMonitor::Runs), listed
  // with the runs.
  ControllerCall NextControllerCall(const std::vector<JobRun>& isolated);
  // The registration's answer, or why there is none (then retried with a backoff from 100 ms
  // doubling to 2 s; the first failure of a series is logged). Its kill list is reconciled.
  Effects OnRegisterReply(const Result<api::RegisterResponse>& reply);
  // The heartbeat's answer, or why there is none (logged once until a heartbeat succeeds).
  // Its kill list is reconciled, its GPUs cleared; `reregister` has the agent register again.
  Effects OnHeartbeatReply(const Result<api::HeartbeatResponse>& reply);
  // The node's health report changed: heartbeat now.
  void HealthChanged() { heartbeat_now_ = true; }

  // --- Job events to the controller ---

  void QueueEvents(std::vector<api::JobEvent> events);
  // The next batch to send (the oldest 512 at most), or nothing while none is queued, one is
  // in flight, or the backoff after a failed send has not passed.
  std::optional<api::JobEventsRequest> TakeEventBatch();
  // When TakeEventBatch may next give a batch: a time, or MonoTime::max() until QueueEvents.
  MonoTime NextEventBatchTime() const;
  // The controller's HTTP status for the batch in flight, or nullopt when it could not be
  // reached. 2xx, 409 (stale events, rejected for good) and 400 consume the batch (and end
  // the listing of the runs whose exit it reports; returns true); anything else has it sent
  // again after a backoff from 50 ms doubling to 2 s.
  bool OnEventBatchReply(std::optional<int> status);
  size_t queued_events() const { return events_.size(); }

  // --- Identity ---

  // The "Bearer ..." header for calls to the controller: a new token when there is none or
  // the one held is over 60 s old (each is valid 300 s).
  std::string Authorization();

  // The runs listed to the controller: unacknowledged ones, those with step tasks here, and
  // `isolated`, each once.
  std::vector<api::RunningJobRef> RunningRefs(const std::vector<JobRun>& isolated) const;

 private:
  using ProcessKey = std::pair<uint32_t, uint32_t>;  // (step, task)
  struct RunProcesses {
    std::set<ProcessKey> running;
    std::set<ProcessKey> starting;      // started by the caller, not yet reported back
    std::set<ProcessKey> exited_early;  // ended before their start was reported back
    bool empty() const { return running.empty() && starting.empty() && exited_early.empty(); }
  };

  static std::string JournalName(JobRun run, uint32_t step, uint32_t task);
  // Refuses root unless allowed, and a user other than the one the run started with here.
  Status CheckUser(const Job& job, const std::string& what) const;
  void RecordUser(const Job& job);
  // The newest generation launched here for `job` (batch or step), at least `gen`.
  Generation Newest(JobId job, Generation gen) const;
  void BeginStart(JobRun run, ProcessKey key);
  // Records the start's outcome; returns whether the process is to be journaled as running.
  bool EndStart(JobRun run, ProcessKey key, bool ok);
  bool HasRunning(JobRun run) const;
  // The controller does not know these runs: cancel them, stop listing them.
  void Reconcile(const std::vector<api::RunningJobRef>& refs, Effects* fx);
  // Releases `run` when the controller has disowned it and none of its processes runs here.
  void ReleaseIfEnded(JobRun run, Effects* fx);

  const Options options_;
  RunJournal& journal_;
  const Clock& clock_;
  const TokenMinter mint_token_;
  NodeInventory inventory_;
  std::string cluster_name_;

  // Who each job's newest run here runs as (its first launch or step here says).
  struct RunUser {
    Generation generation;
    uint32_t uid = 0;
    uint32_t gid = 0;
  };
  std::map<JobId, RunUser> users_;
  // Fencing.
  std::map<JobId, Generation> seen_;             // highest generation launched per job
  std::map<JobId, Generation> step_generation_;  // highest generation a step ran under
  std::set<std::tuple<JobId, Generation, uint32_t>> launched_steps_;  // recent step launches
  std::deque<std::tuple<JobId, Generation, uint32_t>> launched_order_;
  // What runs here, per run.
  std::map<JobRun, RunProcesses> runs_;
  std::map<JobId, Generation> known_;  // batch step running, or its exit not acknowledged
  // Runs the controller does not know whose cgroup here goes once their last process is gone.
  std::set<JobRun> ending_runs_;

  // Registration and heartbeats.
  bool registered_ = false;
  bool heartbeat_now_ = false;
  bool warned_ = false;  // a failure of the current series was logged
  Duration heartbeat_interval_ = Seconds(2);
  Duration register_backoff_ = Millis(100);
  MonoTime next_call_ = MonoTime::min();

  // Events.
  std::deque<api::JobEvent> events_;
  size_t in_flight_ = 0;  // the first `in_flight_` events are being sent
  Duration events_backoff_ = Millis(50);
  MonoTime events_retry_ = MonoTime::min();

  std::string token_;
  Timestamp token_time_{};
};

}  // namespace corral::agent
