#include "agent/agent_core.h"

#include <signal.h>

#include <algorithm>
#include <utility>

#include "core/log.h"

namespace corral::agent {
namespace {

constexpr size_t kEventBatch = 512;
constexpr size_t kRecentSteps = 4096;  // step launches remembered to answer repeats
constexpr Duration kTokenRefresh = Seconds(60);
constexpr Duration kTokenLifetime = Seconds(300);
constexpr Duration kRegisterBackoff = Millis(100);
constexpr Duration kEventsBackoff = Millis(50);
constexpr Duration kMaxBackoff = Seconds(2);

// The batch step's key among a run's processes.
constexpr std::pair<uint32_t, uint32_t> kBatch{kBatchStepId, 0};

api::JobEvent ExitEvent(api::JobEventType type, const ProcessExit& exit) {
  api::JobEvent ev;
  ev.type = type;
  ev.job = exit.job;
  ev.generation = exit.generation;
  ev.time = exit.end_time;
  ev.exit_code = exit.exit_code;
  ev.signal = exit.signal;
  ev.timed_out = exit.timed_out;
  ev.cancelled = exit.cancelled;
  ev.usage.cpu_seconds = exit.cpu_seconds;
  ev.usage.max_rss_mb = exit.max_rss_mb;
  if (type == api::JobEventType::kExited) ev.trace.exited = exit.end_time;
  return ev;
}

tl::unexpected<Error> Stale(const std::string& what, const std::string& thing, Generation gen,
                            Generation newest) {
  return MakeError(ErrorCode::kAborted, what + ": stale " + thing + " generation " +
                                            gen.ToString() + " (generation " + newest.ToString() +
                                            " was launched)");
}

tl::unexpected<Error> NotASignal(int signal) {
  return InvalidArgument("signal: " + std::to_string(signal) + " is not a signal");
}

}  // namespace

void Effects::Append(Effects other) {
  const size_t offset = events.size();
  for (Command& c : other.commands) {
    if (auto* finish = std::get_if<command::FinishRun>(&c)) finish->event += offset;
    commands.push_back(std::move(c));
  }
  for (api::JobEvent& ev : other.events) events.push_back(std::move(ev));
}

AgentCore::AgentCore(Options options, RunJournal& journal, const Clock& clock,
                     TokenMinter mint_token)
    : options_(std::move(options)),
      journal_(journal),
      clock_(clock),
      mint_token_(std::move(mint_token)) {}

std::string AgentCore::JournalName(JobRun run, uint32_t step, uint32_t task) {
  if (step == kBatchStepId) return run.ToString();
  return run.ToString() + "." + std::to_string(step) + "." + std::to_string(task);
}

Effects AgentCore::Recover() {
  Effects fx;
  for (const JournalEntry& entry : journal_.List()) {
    // An entry that cannot be read (no pid or start time) names nothing to kill.
    if (entry.pid > 1 && !entry.start_time.empty()) {
      fx.commands.push_back(command::KillOrphan{entry});
    }
    journal_.Remove(entry.name);
  }
  return fx;
}

void AgentCore::SetInventory(NodeInventory inventory) { inventory_ = std::move(inventory); }

// --- Launches ---

Generation AgentCore::Newest(JobId job, Generation gen) const {
  Generation newest = gen;
  if (auto it = seen_.find(job); it != seen_.end()) newest = std::max(newest, it->second);
  if (auto it = step_generation_.find(job); it != step_generation_.end()) {
    newest = std::max(newest, it->second);
  }
  return newest;
}

void AgentCore::BeginStart(JobRun run, ProcessKey key) { runs_[run].starting.insert(key); }

bool AgentCore::EndStart(JobRun run, ProcessKey key, bool ok) {
  auto it = runs_.find(run);
  if (it == runs_.end()) return false;
  RunProcesses& p = it->second;
  p.starting.erase(key);
  const bool exited = p.exited_early.erase(key) > 0;
  const bool running = ok && !exited;
  if (running) p.running.insert(key);
  if (p.empty()) runs_.erase(it);
  return running;
}

bool AgentCore::HasRunning(JobRun run) const {
  auto it = runs_.find(run);
  return it != runs_.end() && !it->second.running.empty();
}

Status AgentCore::CheckUser(const Job& job, const std::string& what) const {
  const uint32_t uid = job.spec.uid, gid = job.spec.gid;
  if ((uid == 0 || gid == 0) && !options_.allow_root_jobs) {
    return MakeError(ErrorCode::kPermissionDenied,
                     what + ": would run as uid " + std::to_string(uid) + " gid " +
                         std::to_string(gid) + "; node " + options_.node_name +
                         " runs no job as root ([launch] allow_root_jobs)");
  }
  auto it = users_.find(job.id);
  if (it != users_.end() && it->second.generation == job.allocation.generation &&
      (it->second.uid != uid || it->second.gid != gid)) {
    return MakeError(ErrorCode::kPermissionDenied,
                     what + ": would run as uid " + std::to_string(uid) + " gid " +
                         std::to_string(gid) + ", but the job runs as uid " +
                         std::to_string(it->second.uid) + " gid " + std::to_string(it->second.gid) +
                         " on node " + options_.node_name);
  }
  return {};
}

void AgentCore::RecordUser(const Job& job) {
  auto it = users_.find(job.id);
  if (it != users_.end() && job.allocation.generation < it->second.generation) return;
  users_[job.id] = {job.allocation.generation, job.spec.uid, job.spec.gid};
}

LaunchDecision AgentCore::OnLaunch(const Job& job) {
  LaunchDecision d;
  const std::string what = "job " + job.id.ToString();
  if (job.allocation.nodes.empty() ||
      job.allocation.nodes.front().node_name != options_.node_name) {
    d.answer = InvalidArgument(what + ": node " + options_.node_name + " is not its batch host");
    return d;
  }
  if (Status user = CheckUser(job, what); !user) {
    d.answer = user;
    return d;
  }
  const Generation gen = job.allocation.generation;
  // A requeued job may come back to this node while its previous run is still being killed
  // (the controller moved on when it requeued it). That run is stale: kill it now and have
  // the controller retry the launch (503) once it is gone, so the two never overlap.
  for (auto it = runs_.lower_bound(JobRun{job.id, Generation()});
       it != runs_.end() && it->first.job == job.id && it->first.generation < gen; ++it) {
    if (it->second.running.empty()) continue;
    d.effects.commands.push_back(command::KillRun{it->first});
    d.answer = Unavailable(what + ": generation " + it->first.generation.ToString() +
                           " is still exiting; retry the launch");
    return d;
  }
  auto seen = seen_.find(job.id);
  if (seen != seen_.end() && gen < seen->second) {
    d.answer = Stale(what, "launch of", gen, seen->second);
    return d;
  }
  if (seen != seen_.end() && gen == seen->second) return d;  // a repeated launch
  seen_[job.id] = gen;
  known_[job.id] = gen;
  RecordUser(job);
  BeginStart({job.id, gen}, kBatch);
  d.start = true;
  return d;
}

Effects AgentCore::OnBatchStarted(JobRun run, const Result<BatchStarted>& started,
                                  Timestamp received) {
  Effects fx;
  const bool running = EndStart(run, kBatch, started.has_value());
  api::JobEvent ev;
  ev.job = run.job;
  ev.generation = run.generation;
  ev.time = clock_.Now();
  if (started) ev.trace = started->trace;
  ev.trace.launch_received = received;
  if (started) {
    if (running && started->process.pid > 0) {
      Status put = journal_.Put(
          {JournalName(run, kBatchStepId, 0), started->process.pid, started->process.start_time});
      if (!put) CORRAL_LOG(Warn) << put.error().message;
    }
    ev.type = api::JobEventType::kStarted;
    ev.master_port = started->master_port;
  } else {
    ev.type = api::JobEventType::kLaunchFailed;
    ev.message = started.error().message;
    CORRAL_LOG(Warn) << "job " << run.job.ToString() << ": launch failed: " << ev.message;
    fx.commands.push_back(command::RemoveRunDir{run});
  }
  fx.events.push_back(std::move(ev));
  return fx;
}

LaunchDecision AgentCore::OnStepLaunch(const api::StepLaunchRequest& request) {
  LaunchDecision d;
  const Job& job = request.job;
  const Generation gen = job.allocation.generation;
  const std::string what = "job " + job.id.ToString() + " step " + std::to_string(request.step);
  std::vector<StepTask> mine;
  for (const auto& t : request.layout.tasks) {
    if (t.node == options_.node_name) mine.push_back(t);
  }
  if (mine.empty() || request.spec.argv.empty()) {
    d.answer = InvalidArgument(what + ": no task to run on node " + options_.node_name);
    return d;
  }
  if (Status user = CheckUser(job, what); !user) {
    d.answer = user;
    return d;
  }
  // Fencing: refused when a newer run of the job was launched here.
  const Generation newest = Newest(job.id, gen);
  if (gen < newest) {
    d.answer = Stale(what, "launch of", gen, newest);
    return d;
  }
  step_generation_[job.id] = gen;
  RecordUser(job);
  auto launched = std::make_tuple(job.id, gen, request.step);
  if (!launched_steps_.insert(launched).second) return d;  // a repeated launch
  launched_order_.push_back(launched);
  if (launched_order_.size() > kRecentSteps) {
    launched_steps_.erase(launched_order_.front());
    launched_order_.pop_front();
  }
  for (const StepTask& t : mine) BeginStart({job.id, gen}, {request.step, t.rank});
  d.start = true;
  d.tasks = std::move(mine);
  return d;
}

Effects AgentCore::OnTaskStarted(JobRun run, uint32_t step, uint32_t task,
                                 const Result<StartedProcess>& started) {
  Effects fx;
  const bool running = EndStart(run, {step, task}, started.has_value());
  if (started) {
    if (running && started->pid > 0) {
      Status put = journal_.Put({JournalName(run, step, task), started->pid, started->start_time});
      if (!put) CORRAL_LOG(Warn) << put.error().message;
    }
    return fx;
  }
  CORRAL_LOG(Warn) << "job " << run.job.ToString() << " step " << step << " task " << task << ": "
                   << started.error().message;
  api::JobEvent ev;
  ev.type = api::JobEventType::kTaskLaunchFailed;
  ev.job = run.job;
  ev.generation = run.generation;
  ev.step = step;
  ev.task = task;
  ev.time = clock_.Now();
  ev.exit_code = started.error().code == ErrorCode::kNotFound ? 127 : 1;
  ev.message = started.error().message;
  fx.events.push_back(std::move(ev));
  return fx;
}

// --- Time limits and signals ---

Status AgentCore::OnTimeLimit(const api::TimeLimitRequest& request) {
  const std::string what = "job " + request.job.ToString();
  if (request.time_limit.count() <= 0) {
    return InvalidArgument(what + ": time limit must be positive");
  }
  const Generation newest = Newest(request.job, request.generation);
  if (request.generation < newest) {
    return Stale(what, "time limit for", request.generation, newest);
  }
  return {};
}

Result<SignalOrder> AgentCore::OnCancel(const api::CancelRequest& request) const {
  return SignalOrder{.run = {request.job, request.generation}};
}

Result<SignalOrder> AgentCore::OnSignal(const api::SignalRequest& request) const {
  if (request.signal <= 0 || request.signal >= NSIG) return NotASignal(request.signal);
  return SignalOrder{.run = {request.job, request.generation},
                     .signal = request.signal,
                     .batch_script_only = request.batch_only,
                     .suspend = request.suspend && !request.batch_only};
}

Status AgentCore::OnBcast(JobRun run, uint32_t uid, uint32_t gid) const {
  const std::string what = "job " + run.job.ToString() + " sbcast";
  if (Newest(run.job, run.generation) != run.generation) {
    return MakeError(ErrorCode::kAborted, what + ": a newer run of the job was launched here");
  }
  Job job;
  job.id = run.job;
  job.allocation.generation = run.generation;
  job.spec.uid = uid;
  job.spec.gid = gid;
  return CheckUser(job, what);
}

Result<SignalOrder> AgentCore::OnStepSignal(const api::StepSignalRequest& request) const {
  if (request.signal < 0 || request.signal >= NSIG) return NotASignal(request.signal);
  return SignalOrder{.run = {request.job, request.generation},
                     .step = request.step,
                     .signal = request.signal,
                     .missing_ok = true,
                     .suspend = request.suspend && request.step == kAllSteps};
}

// --- Exits and reconciliation ---

Effects AgentCore::OnProcessExit(const ProcessExit& exit) {
  const JobRun run{exit.job, exit.generation};
  const ProcessKey key{exit.step, exit.task};
  journal_.Remove(JournalName(run, exit.step, exit.task));
  if (auto it = runs_.find(run); it != runs_.end()) {
    RunProcesses& p = it->second;
    if (p.running.erase(key) == 0 && p.starting.contains(key)) p.exited_early.insert(key);
    if (p.empty()) runs_.erase(it);
  }
  Effects fx;
  if (exit.step == kBatchStepId) {
    // The job has ended: so have its steps' tasks on this node.
    fx.commands.push_back(command::CancelRun{run});
    fx.commands.push_back(command::RemoveRunDir{run});
    fx.events.push_back(ExitEvent(api::JobEventType::kExited, exit));
    // GPU usage, OOM, GPU failure; kills the run's cgroup here (its tasks on this node too).
    fx.commands.push_back(command::FinishRun{run, 0});
  } else {
    fx.commands.push_back(command::FinishTask{
        run, exit.step, exit.task, exit.signal != 0 || exit.cancelled || exit.timed_out});
    api::JobEvent ev = ExitEvent(api::JobEventType::kTaskExited, exit);
    ev.step = exit.step;
    ev.task = exit.task;
    fx.events.push_back(std::move(ev));
  }
  ReleaseIfEnded(run, &fx);  // forgets it once its processes here are gone
  return fx;
}

void AgentCore::ReleaseIfEnded(JobRun run, Effects* fx) {
  if (!ending_runs_.contains(run) || HasRunning(run)) return;  // its last exit calls again
  ending_runs_.erase(run);
  fx->commands.push_back(command::ReleaseRun{run});
}

void AgentCore::Reconcile(const std::vector<api::RunningJobRef>& refs, Effects* fx) {
  for (const auto& ref : refs) {
    const JobRun run{ref.job, ref.generation};
    fx->commands.push_back(command::CancelRun{run, /*reconcile=*/true});
    auto it = known_.find(ref.job);
    if (it != known_.end() && it->second == ref.generation) {
      // Still report its exit (the controller rejects it as stale), but stop listing it now
      // that the controller has said it does not know it.
      known_.erase(it);
    }
    // A node that ran only its step tasks holds its cgroup until the job has ended, which is
    // how it learns that.
    ending_runs_.insert(run);
    ReleaseIfEnded(run, fx);
  }
}

std::vector<api::RunningJobRef> AgentCore::RunningRefs(const std::vector<JobRun>& isolated) const {
  std::vector<api::RunningJobRef> refs;
  std::set<JobRun> listed;
  for (const auto& [job, gen] : known_) {
    refs.push_back({job, gen});
    listed.insert({job, gen});
  }
  // Step tasks (on any node of an allocation) are reported under their job too, so that the
  // controller has those of jobs it no longer runs killed. So are the runs holding a cgroup
  // here (a node that runs only a job's step tasks keeps the job's cgroup between its
  // steps), so that the controller names them once the job has ended and they are released.
  for (const auto& [run, p] : runs_) {
    bool tasks = std::any_of(p.running.begin(), p.running.end(),
                             [](const ProcessKey& k) { return k.first != kBatchStepId; });
    if (tasks && listed.insert(run).second) refs.push_back({run.job, run.generation});
  }
  for (const JobRun& run : isolated) {
    if (listed.insert(run).second) refs.push_back({run.job, run.generation});
  }
  return refs;
}

// --- Registration and heartbeats ---

ControllerCall AgentCore::NextControllerCall(const std::vector<JobRun>& isolated) {
  ControllerCall call;
  const MonoTime now = clock_.MonotonicNow();
  if (!registered_) {
    if (now < next_call_) {
      call.wait_until = next_call_;
      return call;
    }
    call.kind = ControllerCall::Kind::kRegister;
    call.register_request.inventory = inventory_;
    call.register_request.running = RunningRefs(isolated);
    return call;
  }
  if (!heartbeat_now_ && now < next_call_) {
    call.wait_until = next_call_;
    return call;
  }
  heartbeat_now_ = false;
  call.kind = ControllerCall::Kind::kHeartbeat;
  call.heartbeat.node = inventory_.name;
  call.heartbeat.running = RunningRefs(isolated);
  return call;
}

Effects AgentCore::OnRegisterReply(const Result<api::RegisterResponse>& reply) {
  const MonoTime now = clock_.MonotonicNow();
  Effects fx;
  if (!reply) {
    if (!warned_) {
      CORRAL_LOG(Warn) << "cannot register with " << options_.controller_url << " ("
                       << reply.error().message << "); retrying";
    }
    warned_ = true;
    next_call_ = now + register_backoff_;
    register_backoff_ = std::min<Duration>(register_backoff_ * 2, kMaxBackoff);
    return fx;
  }
  if (reply->heartbeat_interval > Duration(0)) heartbeat_interval_ = reply->heartbeat_interval;
  cluster_name_ = reply->cluster_name;
  CORRAL_LOG(Info) << "registered as node " << inventory_.name << " (id "
                   << reply->node_id.ToString() << ") with " << options_.controller_url;
  registered_ = true;
  warned_ = false;
  register_backoff_ = kRegisterBackoff;
  next_call_ = now + heartbeat_interval_;
  Reconcile(reply->kill, &fx);
  return fx;
}

Effects AgentCore::OnHeartbeatReply(const Result<api::HeartbeatResponse>& reply) {
  const MonoTime now = clock_.MonotonicNow();
  Effects fx;
  next_call_ = now + heartbeat_interval_;
  if (!reply) {
    if (!warned_) CORRAL_LOG(Warn) << "heartbeat failed: " << reply.error().message;
    warned_ = true;
    return fx;
  }
  warned_ = false;
  Reconcile(reply->kill, &fx);
  if (!reply->clear_gpus.empty()) fx.commands.push_back(command::ClearGpus{reply->clear_gpus});
  if (reply->reregister) {
    registered_ = false;
    next_call_ = now;
  }
  return fx;
}

// --- Events ---

void AgentCore::QueueEvents(std::vector<api::JobEvent> events) {
  for (api::JobEvent& ev : events) events_.push_back(std::move(ev));
}

std::optional<api::JobEventsRequest> AgentCore::TakeEventBatch() {
  if (in_flight_ > 0 || events_.empty() || clock_.MonotonicNow() < events_retry_) {
    return std::nullopt;
  }
  api::JobEventsRequest req;
  req.node = inventory_.name;
  in_flight_ = std::min(events_.size(), kEventBatch);
  req.events.assign(events_.begin(), events_.begin() + static_cast<long>(in_flight_));
  return req;
}

MonoTime AgentCore::NextEventBatchTime() const {
  if (in_flight_ > 0 || events_.empty()) return MonoTime::max();
  return events_retry_;
}

bool AgentCore::OnEventBatchReply(std::optional<int> status) {
  const size_t n = std::exchange(in_flight_, 0);
  const bool consumed =
      status.has_value() && (*status / 100 == 2 || *status == 409 || *status == 400);
  if (!consumed) {
    events_retry_ = clock_.MonotonicNow() + events_backoff_;
    events_backoff_ = std::min<Duration>(events_backoff_ * 2, kMaxBackoff);
    return false;
  }
  for (size_t i = 0; i < n && !events_.empty(); ++i) {
    const api::JobEvent& ev = events_.front();
    if (ev.type == api::JobEventType::kExited || ev.type == api::JobEventType::kLaunchFailed) {
      auto it = known_.find(ev.job);
      if (it != known_.end() && it->second == ev.generation) known_.erase(it);
    }
    events_.pop_front();
  }
  events_backoff_ = kEventsBackoff;
  events_retry_ = MonoTime::min();
  return true;
}

// --- Identity ---

std::string AgentCore::Authorization() {
  const Timestamp now = clock_.Now();
  if (token_.empty() || now - token_time_ > kTokenRefresh) {
    token_ = mint_token_(now, kTokenLifetime);
    token_time_ = now;
  }
  return token_;
}

}  // namespace corral::agent
