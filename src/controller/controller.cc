// Controller: construction, recovery, reads, the periodic Tick and the outputs. Requests about
// jobs are in controller_jobs.cc, about nodes in controller_nodes.cc, steps in
// controller_steps.cc, scheduling passes in controller_sched.cc; see controller.h.
#include "controller/controller.h"

#include "controller/internal/controller_state.h"
#include "core/hostlist.h"
#include "core/log.h"

namespace corral::controller {
namespace {

sched::SchedulerConfig SchedulerConfigWith(std::vector<Partition> partitions) {
  sched::SchedulerConfig c = sched::DefaultSchedulerConfig();
  if (!partitions.empty()) c.partitions = std::move(partitions);
  return c;
}

api::NodeInfo MakeNodeInfo(const internal::ControllerState& s, const internal::NodeEntry& n) {
  const std::string& name = n.node.inventory.name;
  api::NodeInfo info;
  info.node = n.node;
  info.state = DeriveNodeState(n.node, n.usage);
  info.alloc_cpus = n.usage.cpus;
  info.alloc_mem_mb = n.usage.mem_mb;
  info.alloc_gpus = n.usage.gpus;
  info.jobs.assign(n.jobs.begin(), n.jobs.end());
  info.partitions = s.partitions.Of(name);
  info.gpu_problems = s.health.problems(name);
  info.node_problem = s.health.node_problem(name);
  return info;
}

}  // namespace

Controller::Controller(ControllerConfig config, std::vector<Partition> partitions,
                       std::unique_ptr<sched::Policy> policy, const Clock& clock)
    : Controller(std::move(config), SchedulerConfigWith(std::move(partitions)), std::move(policy),
                 clock) {}

Controller::Controller(ControllerConfig config, sched::SchedulerConfig sched_config,
                       std::unique_ptr<sched::Policy> policy, const Clock& clock)
    : s_(std::make_unique<internal::ControllerState>(std::move(config), std::move(sched_config),
                                                     std::move(policy), clock)) {}

Controller::~Controller() = default;

const ControllerConfig& Controller::config() const { return s_->config; }
const sched::SchedulerConfig& Controller::sched_config() const { return s_->sched_config; }
size_t Controller::job_count() const { return s_->jobs.size(); }

Status Controller::Recover(store::StoredState state) {
  internal::ControllerState& s = *s_;
  MonoTime now = s.clock.MonotonicNow();
  // Accounts, users and QOS: the store's once it has held them (internal/governance.h).
  CORRAL_ASSIGN_OR_RETURN(internal::Governance::Recovered gov,
                          s.governance.Recover(s.sched_config, state.governance, state.meta));
  if (gov.seeded) {
    CORRAL_LOG(Info) << "accounts, users and qos: " << s.sched_config.accounts.size()
                     << " accounts, " << s.sched_config.users.size() << " users and "
                     << s.sched_config.qos.size()
                     << " qos from the configuration file written to the store, which holds "
                        "them from now on (docs/governance.md)";
  } else if (!gov.differs.empty()) {
    CORRAL_LOG(Warn) << "accounts, users and qos come from the store; the configuration file's "
                        "[[account]], [[user]] and [[qos]] sections differ from it ("
                     << gov.differs
                     << ") and are not used: change them with corral account|user|qos or "
                        "sacctmgr (docs/governance.md)";
  }
  if (!gov.seeded && gov.config != s.sched_config) s.Reconfigure(std::move(gov.config));
  s.metrics.since = s.clock.Now();
  for (const Node& node : state.nodes) s.nodes.Restore(node, now);
  for (Job& job : state.jobs) {
    internal::JobEntry& e = s.jobs.Restore(std::move(job), now);
    const Job& j = e.job;
    if (j.state != JobState::kRunning) continue;
    if (j.allocation.nodes.empty()) {
      return Internal("job " + j.id.ToString() + ": running without an allocation");
    }
    for (const auto& na : j.allocation.nodes) {
      internal::NodeEntry* n = s.nodes.Find(na.node_name);
      if (n == nullptr) {
        return Internal("job " + j.id.ToString() + ": allocated on unknown node \"" + na.node_name +
                        "\"");
      }
      internal::NodeTable::AddJob(*n, j.id, na, j.spec.resources.exclusive);
    }
  }
  for (JobId id : s.jobs.running()) {
    const internal::JobEntry& e = *s.jobs.Find(id);
    // The launch may never have left before the crash: send it again. Agents treat a launch
    // of a job and generation they know as a no-op (and re-report its exit if that report
    // was never acknowledged), so a job never runs twice.
    s.lifecycle.SendLaunch(e);
    // A time limit changed while the job ran may have been stored but not delivered before
    // the restart; agents take the same limit again as a no-op.
    s.lifecycle.SendTimeLimit(e);
  }
  s.jobs.RestoreCounters(state.meta);
  s.nodes.RestoreCounter(state.meta);
  s.usage.Recover(state.meta);
  s.budgets.Recover(state.meta);
  s.submit_keys.Recover(state.meta);
  s.steps.Recover(state.meta);
  s.gpu_stats.Recover(state.gpu_series);
  // Jobs still running on GPUs taken out of service (after the usage ledger is back: a job
  // stopped at once is charged).
  for (const auto& [name, n] : s.nodes.all()) {
    if (!n.node.failed_gpus.empty()) s.lifecycle.FailJobsOnGpus(n, n.node.failed_gpus, {});
  }
  CORRAL_LOG(Info) << "recovered " << s.jobs.size() << " jobs (" << s.jobs.pending().size()
                   << " pending, " << s.jobs.running().size() << " running) and " << s.nodes.size()
                   << " nodes";
  s.out.MarkDirty();
  return {};
}

// ---------------------------------------------------------------------------------------------
// Reads

Result<api::JobInfo> Controller::GetJob(JobId id) const {
  CORRAL_ASSIGN_OR_RETURN(const internal::JobEntry* e, s_->jobs.Get(id));
  api::JobInfo info = internal::JobTable::Info(*e);
  info.gpu_waste = s_->gpu_stats.WasteNote(id);
  return info;
}

Result<api::JobTimeline> Controller::Timeline(JobId id) const {
  CORRAL_ASSIGN_OR_RETURN(const internal::JobEntry* e, s_->jobs.Get(id));
  return api::JobTimeline{.job = id,
                          .run = e->job.allocation.generation,
                          .restart_count = e->job.restart_count,
                          .state = std::string(JobStateName(e->job.state)),
                          .trace = e->job.trace};
}

std::map<JobId, Generation> Controller::RunningRuns() const {
  std::map<JobId, Generation> out;
  for (JobId id : s_->jobs.running()) {
    if (const internal::JobEntry* e = s_->jobs.Find(id)) out[id] = e->job.allocation.generation;
  }
  return out;
}

std::vector<api::JobInfo> Controller::ListJobs(const JobFilter& filter) const {
  std::vector<api::JobInfo> jobs =
      s_->jobs.List(filter, s_->clock.Now() - s_->config.list_completed_for);
  for (api::JobInfo& info : jobs) info.gpu_waste = s_->gpu_stats.WasteNote(info.job.id);
  return jobs;
}

Result<api::NodeInfo> Controller::GetNode(const std::string& name) const {
  CORRAL_ASSIGN_OR_RETURN(const internal::NodeEntry* n, s_->nodes.Get(name));
  return MakeNodeInfo(*s_, *n);
}

std::vector<api::NodeInfo> Controller::ListNodes() const {
  std::vector<std::string> names;
  for (const auto& [name, n] : s_->nodes.all()) names.push_back(name);
  std::vector<api::NodeInfo> out;
  for (const auto& name : SortHostNames(std::move(names))) {
    out.push_back(MakeNodeInfo(*s_, *s_->nodes.Find(name)));
  }
  return out;
}

std::vector<api::PartitionInfo> Controller::ListPartitions() const {
  std::vector<api::PartitionInfo> out;
  for (const auto& p : s_->partitions.all()) {
    api::PartitionInfo info;
    info.partition = p;
    info.partition.nodes.clear();
    for (const auto& [id, name] : s_->nodes.names_by_id()) {
      if (!internal::Partitions::Holds(p, name)) continue;
      const internal::NodeEntry& n = *s_->nodes.Find(name);
      info.partition.nodes.push_back(name);
      info.total_cpus += n.node.inventory.cpus;
      info.total_gpus += static_cast<uint32_t>(n.node.inventory.gpus.size());
      info.alloc_gpus += n.usage.gpus.size();
    }
    info.partition.nodes = SortHostNames(std::move(info.partition.nodes));
    out.push_back(std::move(info));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Periodic work and outputs

void Controller::Tick() {
  internal::ControllerState& s = *s_;
  s.lifecycle.RunDueStops();
  MonoTime now = s.clock.MonotonicNow();
  s.usage.PersistIfDue(now);
  s.submit_keys.PruneIfDue(s.clock.Now(), now, s.config.submit_key_retention);
  for (const std::string& name : s.nodes.Expired(now, s.config.node_timeout)) {
    internal::NodeEntry& n = *s.nodes.Find(name);
    CORRAL_LOG(Warn) << "node " << name << ": no heartbeat for "
                     << ToSecondsF(now - n.last_heartbeat) << " s; marking it DOWN";
    s.nodes.MarkNotResponding(n, s.clock.Now());
    s.lifecycle.FailJobsOn(n, "stopped responding");
    s.out.MarkDirty();
  }
  internal::TickGpuStats(s);
  // Spacing counts from the end of the last pass.
  bool due = s.out.sched_dirty && now - (s.last_pass + s.last_pass_cost) >= PassSpacing();
  if (due || now - s.last_pass >= s.config.sched_periodic_interval) Schedule();
}

MonoTime Controller::NextTickDeadline() const {
  const internal::ControllerState& s = *s_;
  MonoTime next = s.last_pass + s.config.sched_periodic_interval;
  if (s.out.sched_dirty) next = std::min(next, s.last_pass + s.last_pass_cost + PassSpacing());
  next = std::min(next, s.stops.NextDeadline());
  next = std::min(next, s.nodes.NextExpiry(s.config.node_timeout));
  return next;
}

bool Controller::HasPendingWrites() const { return !s_->out.writes.empty(); }

store::WriteBatch Controller::TakeWrites() {
  s_->steps.PutDirty();
  store::WriteBatch out = std::move(s_->out.writes);
  s_->out.writes.Clear();
  return out;
}

std::vector<OutgoingCommand> Controller::TakeOutbox() {
  std::vector<OutgoingCommand> out = std::move(s_->out.outbox);
  s_->out.outbox.clear();
  Timestamp now{};
  for (const OutgoingCommand& c : out) {
    const auto* launch = std::get_if<api::LaunchRequest>(&c.request);
    if (launch == nullptr) continue;
    internal::JobEntry* e = s_->jobs.Find(launch->job.id);
    if (e == nullptr || e->job.allocation.generation != launch->job.allocation.generation) continue;
    if (now == Timestamp{}) now = s_->clock.Now();
    e->job.trace.launch_sent = now;
  }
  return out;
}

void Controller::OnCommitted() {
  auto [submitted, ended] = s_->jobs.TakeUncommitted();
  if (submitted.empty() && ended.empty()) return;
  const Timestamp now = s_->clock.Now();
  for (JobId id : submitted) {
    if (internal::JobEntry* e = s_->jobs.Find(id)) e->job.trace.committed = now;
  }
  for (JobId id : ended) {
    internal::JobEntry* e = s_->jobs.Find(id);
    if (e != nullptr && IsTerminal(e->job.state)) e->job.trace.end_committed = now;
  }
}

std::vector<JobId> Controller::TakeFinished() { return s_->jobs.TakeFinished(); }

std::vector<std::pair<JobId, Generation>> Controller::TakeStoppedRuns() {
  return s_->jobs.TakeStoppedRuns();
}

}  // namespace corral::controller
