#include "controller/controller.h"

#include <algorithm>
#include <charconv>
#include <csignal>
#include <set>

#include "core/array_spec.h"
#include "core/check.h"
#include "core/duration.h"
#include "core/hostlist.h"
#include "core/log.h"

namespace corral::controller {
namespace {

constexpr std::string_view kCancelRequested = "cancel requested";
constexpr size_t kMaxScriptBytes = 4 * 1024 * 1024;  // Slurm's default max_script_size

bool ValidNodeName(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      return false;
  }
  return true;
}

bool ValidEnvName(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c == '=' || c == '\0') return false;
  }
  return true;
}

template <typename T>
bool Contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

Controller::Controller(ControllerConfig config, std::vector<Partition> partitions,
                       std::unique_ptr<sched::Policy> policy, const Clock& clock)
    : Controller(std::move(config), SchedulerConfigWith(std::move(partitions)), std::move(policy),
                 clock) {}

Controller::Controller(ControllerConfig config, sched::SchedulerConfig sched_config,
                       std::unique_ptr<sched::Policy> policy, const Clock& clock)
    : config_(std::move(config)),
      partitions_(sched_config.partitions),
      policy_(std::move(policy)),
      clock_(clock) {
  CORRAL_CHECK(policy_ != nullptr) << "a scheduling policy is required";
  if (partitions_.empty()) {
    partitions_.push_back(Partition{.name = "main", .is_default = true});
  }
  // Expand host-list patterns once; membership is checked by name afterwards.
  for (auto& p : partitions_) {
    std::vector<std::string> names;
    for (const auto& pattern : p.nodes) {
      auto expanded = ExpandHostList(pattern);
      if (expanded) names.insert(names.end(), expanded->begin(), expanded->end());
    }
    p.nodes = std::move(names);
  }
  sched_config.partitions = partitions_;
  InitScheduling(std::move(sched_config));
  last_pass_ = clock_.MonotonicNow();
}

Status Controller::Recover(store::StoredState state) {
  MonoTime now = clock_.MonotonicNow();
  for (const Node& node : state.nodes) {
    NodeEntry entry;
    entry.node = node;
    entry.last_heartbeat = now;  // one node timeout of grace to heartbeat again
    next_node_id_ = std::max(next_node_id_, node.id.value + 1);
    node_names_[node.id] = node.inventory.name;
    nodes_[node.inventory.name] = std::move(entry);
  }
  for (Job& job : state.jobs) {
    JobEntry entry;
    entry.job = std::move(job);  // 100,000 jobs recover in well under a second: no copies
    const Job& j = entry.job;
    next_job_id_ = std::max(next_job_id_, j.id.value + 1);
    next_generation_ = std::max(next_generation_, j.allocation.generation.value + 1);
    if (j.state == JobState::kPending) pending_.insert(j.id);
    if (j.state == JobState::kRunning) {
      // The launch may never have left before the crash: send it again. Agents treat a
      // launch of a job and generation they know as a no-op (and re-report its exit if that
      // report was never acknowledged), so a job never runs twice.
      entry.launch_accepted = false;
      entry.launch_sent = now;
      entry.cancel_requested = j.reason == kCancelRequested;
      running_.insert(j.id);
      if (j.allocation.nodes.empty()) {
        return Internal("job " + j.id.ToString() + ": running without an allocation");
      }
      for (const auto& na : j.allocation.nodes) {
        NodeEntry* n = FindNode(na.node_name);
        if (n == nullptr) {
          return Internal("job " + j.id.ToString() + ": allocated on unknown node \"" +
                          na.node_name + "\"");
        }
        n->usage.cpus += na.cpus;
        n->usage.mem_mb += na.mem_mb;
        n->usage.gpus = n->usage.gpus | na.gpus;
        n->usage.jobs += 1;
        if (j.spec.resources.exclusive) n->usage.exclusive = true;
        n->jobs.insert(j.id);
      }
    }
    JobId id = j.id;
    jobs_.emplace_hint(jobs_.end(), id, std::move(entry));  // the store gives them in id order
  }
  for (JobId id : running_) {
    const JobEntry& e = jobs_.at(id);
    const NodeEntry* batch = FindNode(e.job.allocation.nodes.front().node_name);
    outbox_.push_back({AddressOf(*batch), api::LaunchRequest{.job = e.job}});
    // A time limit changed while the job ran may have been stored but not delivered before
    // the restart; agents take the same limit again as a no-op.
    SendTimeLimit(e);
  }
  auto meta = [&](const char* key, uint64_t* out) {
    auto it = state.meta.find(key);
    if (it == state.meta.end()) return;
    uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec == std::errc()) *out = std::max(*out, v);
  };
  meta("next_job_id", &next_job_id_);
  meta("next_generation", &next_generation_);
  uint64_t nid = next_node_id_;
  meta("next_node_id", &nid);
  next_node_id_ = static_cast<uint32_t>(nid);
  RecoverUsage(state);
  RecoverSteps(state);
  for (auto& [id, e] : jobs_) {
    if (e.job.spec.array.empty() || IsTerminal(e.job.state)) continue;
    if (auto a = ParseArraySpec(e.job.spec.array)) e.array_max_running = a->max_running;
  }
  // Jobs still running on GPUs taken out of service (after the usage ledger is back: a job
  // stopped at once is charged).
  RemarkGpuFailures();
  CORRAL_LOG(Info) << "recovered " << jobs_.size() << " jobs (" << pending_.size() << " pending, "
                   << running_.size() << " running) and " << nodes_.size() << " nodes";
  sched_dirty_ = true;
  return {};
}

// ---------------------------------------------------------------------------------------------
// Lookups and helpers

AgentAddress Controller::AddressOf(const NodeEntry& n) {
  return {n.node.inventory.name, n.node.inventory.address};
}

Controller::NodeEntry* Controller::FindNode(const std::string& name) {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

const Controller::NodeEntry* Controller::FindNode(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

const Partition* Controller::FindPartition(const std::string& name) const {
  for (const auto& p : partitions_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const Partition* Controller::DefaultPartition() const {
  for (const auto& p : partitions_) {
    if (p.is_default) return &p;
  }
  return &partitions_.front();
}

bool Controller::NodeInPartition(const Partition& p, const std::string& node) const {
  return p.nodes.empty() || Contains(p.nodes, node);
}

std::vector<std::string> Controller::PartitionsOfNode(const std::string& node) const {
  std::vector<std::string> out;
  for (const auto& p : partitions_) {
    if (NodeInPartition(p, node)) out.push_back(p.name);
  }
  return out;
}

bool Controller::IsAdmin(const api::Identity& who) const {
  return who.role == api::Role::kAdmin || who.role == api::Role::kController || who.uid == 0 ||
         Contains(config_.admins, who.user);
}

Status Controller::CheckOwner(const api::Identity& who, const Job& job) const {
  if (IsAdmin(who) || who.user == job.spec.user) return {};
  return MakeError(ErrorCode::kPermissionDenied, "job " + job.id.ToString() + ": owned by " +
                                                     job.spec.user + ", not " + who.user);
}

JobId Controller::AllocateJobId() {
  JobId id(next_job_id_++);
  batch_.PutMeta("next_job_id", std::to_string(next_job_id_));
  return id;
}

void Controller::PutJob(const JobEntry& e) { batch_.PutJob(e.job); }
void Controller::PutNode(const NodeEntry& n) { batch_.PutNode(n.node); }

// ---------------------------------------------------------------------------------------------
// Submit

Status Controller::ValidateSpec(const api::Identity& who, JobSpec& spec,
                                std::vector<const Partition*>* parts) const {
  // Identity: users submit as themselves; admins and the controller may submit for others.
  if (spec.user.empty() || spec.user == who.user) {
    spec.user = who.user;
    spec.uid = who.uid;
    spec.gid = who.gid;
  } else if (!IsAdmin(who)) {
    return MakeError(ErrorCode::kPermissionDenied,
                     "user: " + who.user + " may not submit jobs as " + spec.user);
  }
  if (spec.script.empty()) return InvalidArgument("script: empty; a batch script is required");
  if (spec.script.size() > kMaxScriptBytes) {
    return InvalidArgument("script: " + std::to_string(spec.script.size()) +
                           " bytes is over the limit of " + std::to_string(kMaxScriptBytes));
  }
  if (spec.script.rfind("#!", 0) != 0) {
    return InvalidArgument(
        "script: the first line must start with #! followed by the path to an interpreter");
  }
  if (spec.script.find('\0') != std::string::npos)
    return InvalidArgument("script: contains a NUL byte");
  if (spec.name.empty()) spec.name = "job";
  if (spec.name.size() > 256) return InvalidArgument("name: longer than 256 characters");
  if (spec.working_dir.empty()) spec.working_dir = "/";
  if (spec.working_dir.front() != '/') {
    return InvalidArgument("working_dir: \"" + spec.working_dir + "\" is not an absolute path");
  }
  for (const auto& [k, v] : spec.environment) {
    if (!ValidEnvName(k))
      return InvalidArgument("environment: invalid variable name \"" + k + "\"");
    if (v.find('\0') != std::string::npos) {
      return InvalidArgument("environment: value of " + k + " contains a NUL byte");
    }
  }
  if (!spec.array.empty()) {
    auto parsed = ParseArraySpec(spec.array);
    if (!parsed) return InvalidArgument("array: " + parsed.error().message);
  }
  if (auto s = ValidateResourceRequest(spec.resources); !s) {
    return InvalidArgument("resources." + s.error().message);
  }
  for (const auto& dep : spec.dependencies) {
    for (JobId d : dep.jobs) {
      if (!jobs_.contains(d)) {
        return InvalidArgument("dependency: no such job " + d.ToString());
      }
    }
  }
  if (spec.time_limit && spec.time_limit->count() <= 0) {
    return InvalidArgument("time_limit: must be positive");
  }

  // Partitions: the named ones in order, or the default.
  parts->clear();
  if (spec.partitions.empty()) {
    parts->push_back(DefaultPartition());
    spec.partitions.push_back(parts->front()->name);
  } else {
    for (const auto& name : spec.partitions) {
      const Partition* p = FindPartition(name);
      if (p == nullptr) return InvalidArgument("partition: no such partition \"" + name + "\"");
      parts->push_back(p);
    }
  }

  // The job must fit at least one of its partitions: limits, and the biggest node there.
  PerNodeDemand demand = ComputePerNodeDemand(spec.resources);
  uint32_t total_gpus = demand.gpus * spec.resources.nodes;
  std::string why;
  for (const Partition* p : *parts) {
    if (spec.time_limit && p->max_time != kUnlimited && *spec.time_limit > p->max_time) {
      why = "time_limit: " + FormatSlurmDuration(*spec.time_limit) + " exceeds the maximum " +
            FormatSlurmDuration(p->max_time) + " of partition \"" + p->name + "\"";
      continue;
    }
    if (p->max_gpus_per_job > 0 && total_gpus > p->max_gpus_per_job) {
      why = "resources.gpus: " + std::to_string(total_gpus) + " GPUs exceed the limit of " +
            std::to_string(p->max_gpus_per_job) + " per job in partition \"" + p->name + "\"";
      continue;
    }
    if (p->max_nodes_per_job > 0 && spec.resources.nodes > p->max_nodes_per_job) {
      why = "resources.nodes: " + std::to_string(spec.resources.nodes) +
            " nodes exceed the limit of " + std::to_string(p->max_nodes_per_job) +
            " in partition \"" + p->name + "\"";
      continue;
    }
    if (!p->allowed_accounts.empty() && !Contains(p->allowed_accounts, spec.account)) {
      why = "account: \"" + spec.account + "\" may not use partition \"" + p->name + "\"";
      continue;
    }
    // Against the registered nodes of the partition (when there are any).
    uint32_t nodes_in = 0, nodes_fit = 0, max_gpus = 0, max_cpus = 0;
    uint64_t max_mem = 0;
    for (const auto& [name, n] : nodes_) {
      if (!n.node.registered || !NodeInPartition(*p, name)) continue;
      ++nodes_in;
      uint32_t gpus = 0;
      for (const auto& g : n.node.inventory.gpus) {
        if (demand.gpu_type.empty() || g.model == demand.gpu_type) ++gpus;
      }
      max_gpus = std::max(max_gpus, gpus);
      max_cpus = std::max(max_cpus, n.node.inventory.cpus);
      max_mem = std::max(max_mem, n.node.inventory.memory_mb);
      if (gpus >= demand.gpus && n.node.inventory.cpus >= demand.cpus &&
          n.node.inventory.memory_mb >= MemoryOnNode(demand, n.node.inventory.memory_mb)) {
        ++nodes_fit;
      }
    }
    if (nodes_in > 0 && nodes_fit < spec.resources.nodes) {
      std::string type = demand.gpu_type.empty() ? "" : " of type " + demand.gpu_type;
      if (max_gpus < demand.gpus) {
        why = "resources.gpus: " + std::to_string(demand.gpus) + " GPUs" + type +
              " per node requested, but no node of partition \"" + p->name + "\" has more than " +
              std::to_string(max_gpus);
      } else if (max_cpus < demand.cpus) {
        why = "resources.cpus: " + std::to_string(demand.cpus) +
              " CPUs per node requested, but no node of partition \"" + p->name +
              "\" has more than " + std::to_string(max_cpus);
      } else if (max_mem < MemoryOnNode(demand, max_mem)) {
        why = "resources.mem: " + std::to_string(demand.mem_mb) +
              " MB per node requested, but no node of partition \"" + p->name +
              "\" has more than " + std::to_string(max_mem) + " MB";
      } else {
        why = "resources.nodes: " + std::to_string(spec.resources.nodes) +
              " nodes requested, but partition \"" + p->name + "\" has only " +
              std::to_string(nodes_fit) + " that can hold one share of the job";
      }
      continue;
    }
    return {};  // fits this partition
  }
  return InvalidArgument(why);
}

Result<api::SubmitResponse> Controller::Submit(const api::Identity& who, JobSpec spec) {
  std::vector<const Partition*> parts;
  CORRAL_RETURN_IF_ERROR(ValidateSpec(who, spec, &parts));
  // An array becomes one job per index, with consecutive ids; the first is the array job id.
  std::vector<std::optional<uint32_t>> tasks = {std::nullopt};
  uint32_t array_max_running = 0;
  if (!spec.array.empty()) {
    tasks.clear();
    ArraySpec array = *ParseArraySpec(spec.array);  // validated above
    for (uint32_t index : array.indices) tasks.push_back(index);
    array_max_running = array.max_running;
  }
  Timestamp now = clock_.Now();
  auto make = [&](JobId id) {
    Job job;
    job.id = id;
    job.state = JobState::kPending;
    job.reason = "None";
    job.submit_time = now;
    job.eligible_time = std::max(now, spec.begin_time);
    job.partition = parts.front()->name;
    // As in Slurm: no --time gives the partition's DefaultTime, or its MaxTime when unset.
    const Partition* p = parts.front();
    job.time_limit = spec.time_limit                 ? *spec.time_limit
                     : p->default_time != kUnlimited ? p->default_time
                                                     : p->max_time;
    job.spec = spec;
    return job;
  };
  // The policy engine's rules: accounts, QOS, limits, partitions, whether any node could ever
  // hold it. Checked before anything is recorded.
  CORRAL_RETURN_IF_ERROR(ValidateWithScheduler(make(JobId(next_job_id_))));
  api::SubmitResponse response;
  for (const auto& task : tasks) {
    JobEntry e;
    e.job = make(AllocateJobId());
    e.array_max_running = array_max_running;
    if (task) {
      e.job.array_task_id = task;
      e.job.array_job_id = response.task_ids.empty() ? e.job.id : response.task_ids.front();
      response.task_ids.push_back(e.job.id);
    }
    JobId id = e.job.id;
    if (response.job_id.value == 0) response.job_id = id;
    PutJob(e);
    pending_.insert(id);
    jobs_[id] = std::move(e);
  }
  MarkDirty();
  return response;
}

// ---------------------------------------------------------------------------------------------
// Job control

Status Controller::Cancel(const api::Identity& who, JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return NotFound("job " + id.ToString() + ": no such job");
  JobEntry& e = it->second;
  CORRAL_RETURN_IF_ERROR(CheckOwner(who, e.job));
  if (IsTerminal(e.job.state)) {
    return FailedPrecondition("job " + id.ToString() + ": already " +
                              std::string(JobStateName(e.job.state)));
  }
  if (e.job.state == JobState::kPending) {
    pending_.erase(id);
    e.job.state = JobState::kCancelled;
    e.job.end_time = clock_.Now();
    e.job.reason = "cancelled by " + who.user;
    PutJob(e);
    finished_.push_back(id);
    MarkDirty();
    return {};
  }
  // Running: the agent kills the process group and reports the exit.
  if (!e.cancel_requested) {
    e.cancel_requested = true;
    e.job.reason = std::string(kCancelRequested);
    PutJob(e);
  }
  const NodeEntry* batch = FindNode(e.job.allocation.nodes.front().node_name);
  if (batch == nullptr || !batch->node.responding) {
    FinishJob(e, JobState::kCancelled, "cancelled by " + who.user);
    return {};
  }
  SendCancel(e);
  return {};
}

void Controller::SendCancel(const JobEntry& e) {
  const NodeEntry* batch = FindNode(e.job.allocation.nodes.front().node_name);
  if (batch == nullptr) return;
  outbox_.push_back({AddressOf(*batch), api::CancelRequest{e.job.id, e.job.allocation.generation}});
}

Status Controller::SignalJob(const api::Identity& who, JobId id, int signal) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return NotFound("job " + id.ToString() + ": no such job");
  JobEntry& e = it->second;
  CORRAL_RETURN_IF_ERROR(CheckOwner(who, e.job));
  if (signal <= 0 || signal >= NSIG) {
    return InvalidArgument("signal: " + std::to_string(signal) + " is not a signal number");
  }
  if (e.job.state != JobState::kRunning) {
    return FailedPrecondition("job " + id.ToString() + ": not running");
  }
  const NodeEntry* batch = FindNode(e.job.allocation.nodes.front().node_name);
  if (batch == nullptr) return Unavailable("job " + id.ToString() + ": its node is unknown");
  SignalJobEverywhere(e, signal, /*batch_only=*/false);
  return {};
}

Status Controller::Requeue(const api::Identity& who, JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return NotFound("job " + id.ToString() + ": no such job");
  JobEntry& e = it->second;
  CORRAL_RETURN_IF_ERROR(CheckOwner(who, e.job));
  if (e.job.state == JobState::kPending) {
    return FailedPrecondition("job " + id.ToString() + ": already pending");
  }
  if (e.job.state == JobState::kRunning) {
    SendCancel(e);  // the old generation's exit report will be stale and ignored
  } else {
    finished_.erase(std::remove(finished_.begin(), finished_.end(), id), finished_.end());
  }
  RequeueJob(e, "requeued by " + who.user);
  return {};
}

Status Controller::Hold(const api::Identity& who, JobId id, bool hold) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return NotFound("job " + id.ToString() + ": no such job");
  JobEntry& e = it->second;
  CORRAL_RETURN_IF_ERROR(CheckOwner(who, e.job));
  if (e.job.state != JobState::kPending) {
    return FailedPrecondition("job " + id.ToString() + ": not pending");
  }
  // As in Slurm: an admin's hold on someone else's job (JobHeldAdmin) is one its user cannot
  // release. The reason is stored with the job, so the kind of hold survives a restart.
  bool admin_hold = e.job.spec.hold && e.job.reason == "JobHeldAdmin";
  if (!hold && admin_hold && !IsAdmin(who)) {
    return MakeError(
        ErrorCode::kPermissionDenied,
        "job " + id.ToString() + ": held by an administrator; only one may release it");
  }
  e.job.spec.hold = hold;
  e.job.reason =
      !hold ? "None"
            : (IsAdmin(who) && who.user != e.job.spec.user ? "JobHeldAdmin" : "JobHeldUser");
  PutJob(e);
  MarkDirty();
  return {};
}

Status Controller::UpdateTimeLimit(const api::Identity& who, JobId id, Duration limit) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return NotFound("job " + id.ToString() + ": no such job");
  JobEntry& e = it->second;
  CORRAL_RETURN_IF_ERROR(CheckOwner(who, e.job));
  if (limit.count() <= 0)
    return InvalidArgument("job " + id.ToString() + ": time limit must be positive");
  if (e.job.state != JobState::kPending && e.job.state != JobState::kRunning) {
    return FailedPrecondition(
        "job " + id.ToString() + ": " + std::string(JobStateName(e.job.state)) +
        ": a time limit can only be changed while the job is pending or running");
  }
  if (!IsAdmin(who)) {
    if (limit > e.job.time_limit) {
      return MakeError(
          ErrorCode::kPermissionDenied,
          "job " + id.ToString() + ": only an administrator may raise a time limit (from " +
              FormatSlurmDuration(e.job.time_limit) + " to " + FormatSlurmDuration(limit) + ")");
    }
    const Partition* p = FindPartition(e.job.partition);
    if (p != nullptr && p->max_time != kUnlimited && limit > p->max_time) {
      return InvalidArgument("job " + id.ToString() + ": time limit " + FormatSlurmDuration(limit) +
                             " exceeds the maximum " + FormatSlurmDuration(p->max_time) +
                             " of partition \"" + p->name + "\"");
    }
  }
  e.job.time_limit = limit;
  e.job.spec.time_limit = limit;
  PutJob(e);
  MarkDirty();
  if (e.job.state == JobState::kRunning) SendTimeLimit(e);
  return {};
}

void Controller::SendTimeLimit(const JobEntry& e) {
  // Every node of the allocation: the batch host runs the script, any node may run step
  // tasks (now or later: a later step's launch carries the new limit, and the per-node order
  // of commands keeps an earlier launch before this update).
  if (e.job.time_limit.count() <= 0) return;  // none recorded: nothing to enforce
  for (const auto& na : e.job.allocation.nodes) {
    const NodeEntry* n = FindNode(na.node_name);
    if (n == nullptr) continue;
    outbox_.push_back({AddressOf(*n), api::TimeLimitRequest{e.job.id, e.job.allocation.generation,
                                                            e.job.time_limit}});
  }
}

// ---------------------------------------------------------------------------------------------
// State changes of running jobs

void Controller::StartJob(JobEntry& e, const sched::Placement& placement) {
  pending_.erase(e.job.id);
  running_.insert(e.job.id);
  e.job.state = JobState::kRunning;
  e.job.reason = "None";
  e.job.partition = placement.partition;
  e.job.start_time = clock_.Now();
  e.job.end_time = {};
  e.job.exit_code = 0;
  e.job.exit_signal = 0;
  e.job.allocation.generation = Generation(next_generation_++);
  batch_.PutMeta("next_generation", std::to_string(next_generation_));
  // Nodes in host-list order (as Slurm keeps them): the first is the batch host.
  std::vector<std::string> names;
  for (const auto& na : placement.nodes) names.push_back(na.node_name);
  names = SortHostNames(std::move(names));
  e.job.allocation.nodes.clear();
  for (const auto& name : names) {
    for (const auto& na : placement.nodes) {
      if (na.node_name == name) e.job.allocation.nodes.push_back(na);
    }
  }
  e.cancel_requested = false;
  e.launch_accepted = false;
  e.launch_sent = clock_.MonotonicNow();
  e.reason_detail.clear();
  for (const auto& na : placement.nodes) {
    NodeEntry* n = FindNode(na.node_name);
    CORRAL_CHECK(n != nullptr) << "placement on unknown node " << na.node_name;
    n->usage.cpus += na.cpus;
    n->usage.mem_mb += na.mem_mb;
    n->usage.gpus = n->usage.gpus | na.gpus;
    n->usage.jobs += 1;
    if (e.job.spec.resources.exclusive) n->usage.exclusive = true;
    n->jobs.insert(e.job.id);
  }
  PutJob(e);
  // The batch host: the first node in host-list order (the placement may list them otherwise).
  const NodeEntry* batch = FindNode(e.job.allocation.nodes.front().node_name);
  outbox_.push_back({AddressOf(*batch), api::LaunchRequest{.job = e.job}});
}

void Controller::ReleaseAllocation(JobEntry& e) {
  ChargeUsage(e);
  EndStepsOfJob(e, "job " + e.job.id.ToString() + " ended");
  for (const auto& na : e.job.allocation.nodes) {
    NodeEntry* n = FindNode(na.node_name);
    if (n == nullptr || !n->jobs.contains(e.job.id)) continue;
    n->jobs.erase(e.job.id);
    n->usage.cpus -= std::min(n->usage.cpus, na.cpus);
    n->usage.mem_mb -= std::min(n->usage.mem_mb, na.mem_mb);
    n->usage.gpus = n->usage.gpus - na.gpus;
    n->usage.jobs -= std::min<uint32_t>(n->usage.jobs, 1);
    if (e.job.spec.resources.exclusive) n->usage.exclusive = false;
  }
  running_.erase(e.job.id);
  MarkDirty();
}

void Controller::FinishJob(JobEntry& e, JobState state, const std::string& reason) {
  CORRAL_CHECK(CheckTransition(e.job.state, state).has_value())
      << "job " << e.job.id.ToString() << ": " << JobStateName(e.job.state) << " -> "
      << JobStateName(state);
  ReleaseAllocation(e);
  e.job.state = state;
  e.job.reason = reason;
  e.job.end_time = clock_.Now();
  e.cancel_requested = false;
  PutJob(e);
  finished_.push_back(e.job.id);
}

void Controller::RequeueJob(JobEntry& e, const std::string& reason) {
  if (e.job.state == JobState::kRunning) ReleaseAllocation(e);
  e.job.state = JobState::kPending;
  e.job.reason = reason;
  e.job.restart_count += 1;
  e.job.start_time = {};
  e.job.end_time = {};
  e.job.allocation.nodes.clear();  // the generation stays: the next start takes a new one
  e.cancel_requested = false;
  e.launch_accepted = false;
  pending_.insert(e.job.id);
  PutJob(e);
  MarkDirty();
}

void Controller::FailLostJob(JobEntry& e, const std::string& reason) {
  if (e.cancel_requested) {
    FinishJob(e, JobState::kCancelled, "cancelled; " + reason);
  } else if (e.job.spec.requeue) {
    RequeueJob(e, "NodeFail requeued: " + reason);
  } else {
    FinishJob(e, JobState::kNodeFail, reason);
  }
}

void Controller::FailJobsOnNode(NodeEntry& n, const std::string& reason) {
  std::vector<JobId> ids(n.jobs.begin(), n.jobs.end());
  for (JobId id : ids) {
    JobEntry& e = jobs_.at(id);
    if (e.job.state != JobState::kRunning) continue;
    // The batch step may run on another, healthy node: stop it there.
    const std::string& batch_host = e.job.allocation.nodes.front().node_name;
    if (batch_host != n.node.inventory.name) SendCancel(e);
    FailLostJob(e, "node " + n.node.inventory.name + " " + reason);
  }
}

// ---------------------------------------------------------------------------------------------
// Agents

Result<api::RegisterResponse> Controller::Register(const api::RegisterRequest& request) {
  const NodeInventory& inv = request.inventory;
  if (!ValidNodeName(inv.name)) {
    return InvalidArgument("inventory.name: \"" + inv.name + "\" is not a valid node name");
  }
  if (inv.address.rfind("http://", 0) != 0) {
    return InvalidArgument("inventory.address: \"" + inv.address + "\" is not an http:// URL");
  }
  if (inv.cpus == 0) return InvalidArgument("inventory.cpus: must be at least 1");
  GpuSet seen;
  for (const auto& g : inv.gpus) {
    if (g.index >= kMaxGpusPerNode || seen.contains(g.index)) {
      return InvalidArgument("inventory.gpus: index " + std::to_string(g.index) +
                             " is duplicated or out of range");
    }
    seen.insert(g.index);
  }
  NodeEntry* n = FindNode(inv.name);
  bool is_new = n == nullptr;
  if (is_new) {
    NodeEntry entry;
    entry.node.id = NodeId(next_node_id_++);
    batch_.PutMeta("next_node_id", std::to_string(next_node_id_));
    node_names_[entry.node.id] = inv.name;
    n = &(nodes_[inv.name] = std::move(entry));
    CORRAL_LOG(Info) << "node " << inv.name << " registered: " << inv.cpus << " CPUs, "
                     << inv.gpus.size() << " GPUs, at " << inv.address;
  } else {
    CORRAL_LOG(Info) << "node " << inv.name << " re-registered at " << inv.address;
  }
  n->node.inventory = inv;
  n->node.registered = true;
  n->node.responding = true;
  if (n->node.reason == "Not responding") n->node.reason.clear();
  n->node.last_heartbeat = clock_.Now();
  n->last_heartbeat = clock_.MonotonicNow();

  // Reconcile: what the agent runs versus what we believe runs there.
  api::RegisterResponse response;
  response.node_id = n->node.id;
  response.heartbeat_interval = config_.heartbeat_interval;
  response.cluster_name = config_.cluster_name;
  std::set<std::pair<uint64_t, uint64_t>> reported;
  for (const auto& ref : request.running) {
    reported.insert({ref.job.value, ref.generation.value});
    auto it = jobs_.find(ref.job);
    // The batch host runs the batch script; any node of the allocation may run step tasks.
    bool known = it != jobs_.end() && it->second.job.state == JobState::kRunning &&
                 it->second.job.allocation.generation == ref.generation &&
                 Contains(it->second.job.allocation.NodeNames(), inv.name);
    if (!known) response.kill.push_back(ref);
  }
  std::vector<JobId> ids(n->jobs.begin(), n->jobs.end());
  for (JobId id : ids) {
    JobEntry& e = jobs_.at(id);
    if (e.job.state != JobState::kRunning) continue;
    if (e.job.allocation.nodes.front().node_name != inv.name) continue;  // batch step elsewhere
    if (!reported.contains({id.value, e.job.allocation.generation.value})) {
      FailLostJob(e, "lost when node " + inv.name + "'s agent restarted");
    }
  }
  PutNode(*n);
  MarkDirty();
  return response;
}

Result<api::HeartbeatResponse> Controller::Heartbeat(const api::HeartbeatRequest& request) {
  NodeEntry* n = FindNode(request.node);
  api::HeartbeatResponse response;
  if (n == nullptr || !n->node.registered) {
    response.reregister = true;
    return response;
  }
  MonoTime now = clock_.MonotonicNow();
  n->last_heartbeat = now;
  n->node.last_heartbeat = clock_.Now();
  if (!n->node.responding) {
    // Back from DOWN without a restart (a network partition healed). Its jobs were failed or
    // requeued when it went down; the kill list below stops whatever still runs there.
    n->node.responding = true;
    if (n->node.reason == "Not responding") n->node.reason.clear();
    PutNode(*n);
    MarkDirty();
    CORRAL_LOG(Info) << "node " << request.node << " is responding again";
  }
  std::set<std::pair<uint64_t, uint64_t>> reported;
  for (const auto& ref : request.running) {
    reported.insert({ref.job.value, ref.generation.value});
    auto it = jobs_.find(ref.job);
    bool known = it != jobs_.end() && it->second.job.state == JobState::kRunning &&
                 it->second.job.allocation.generation == ref.generation;
    if (!known) response.kill.push_back(ref);
  }
  // A job whose launch the agent accepted a while ago but that it no longer reports is lost.
  // (Agents keep reporting a job until its exit event is acknowledged, so this is no race
  // with the exit report.)
  Duration grace = 2 * config_.heartbeat_interval;
  std::vector<JobId> ids(n->jobs.begin(), n->jobs.end());
  for (JobId id : ids) {
    JobEntry& e = jobs_.at(id);
    if (e.job.state != JobState::kRunning || !e.launch_accepted) continue;
    if (e.job.allocation.nodes.front().node_name != request.node) continue;
    if (now - e.launch_sent < grace) continue;
    if (!reported.contains({id.value, e.job.allocation.generation.value})) {
      FailLostJob(e, "no longer reported by node " + request.node);
    }
  }
  ApplyHealth(*n, request, &response);
  return response;
}

Status Controller::HandleEvents(const api::JobEventsRequest& request) {
  std::string stale;
  for (const api::JobEvent& ev : request.events) {
    if (IsTaskEvent(ev)) {  // a step's task, from any node of the allocation
      if (!ApplyTaskEvent(request.node, ev)) {
        if (!stale.empty()) stale += ", ";
        stale += "job " + ev.job.ToString() + " step " + std::to_string(ev.step) + " task " +
                 std::to_string(ev.task) + " generation " + ev.generation.ToString();
      }
      continue;
    }
    auto it = jobs_.find(ev.job);
    bool current = it != jobs_.end() && it->second.job.state == JobState::kRunning &&
                   it->second.job.allocation.generation == ev.generation &&
                   it->second.job.allocation.nodes.front().node_name == request.node;
    if (!current) {
      if (!stale.empty()) stale += ", ";
      stale += "job " + ev.job.ToString() + " generation " + ev.generation.ToString();
      continue;
    }
    JobEntry& e = it->second;
    switch (ev.type) {
      case api::JobEventType::kStarted:
        e.launch_accepted = true;
        if (ev.master_port != 0) e.master_port = ev.master_port;
        break;
      case api::JobEventType::kLaunchFailed:
        e.job.exit_code = 1;
        FinishJob(e, JobState::kFailed, "launch failed: " + ev.message);
        break;
      case api::JobEventType::kExited: {
        e.job.exit_code = ev.exit_code;
        e.job.exit_signal = ev.signal;
        e.job.usage = ev.usage;
        if (HandleStoppedExit(e, ev)) break;  // preempted, or its GPU failed
        if (HandleGpuFailedExit(e, ev, request.node)) break;
        JobState state = JobState::kCompleted;
        std::string reason = "None";
        if (e.cancel_requested || ev.cancelled) {
          state = JobState::kCancelled;
          reason = "cancelled";
        } else if (ev.timed_out) {
          state = JobState::kTimeout;
          reason = "time limit reached";
        } else if (ev.out_of_memory) {
          state = JobState::kOutOfMemory;
          reason = "out of memory";
        } else if (ev.signal != 0) {
          state = JobState::kFailed;
          reason = "killed by signal " + std::to_string(ev.signal);
        } else if (ev.exit_code != 0) {
          state = JobState::kFailed;
          reason = "NonZeroExitCode";
        }
        FinishJob(e, state, reason);
        break;
      }
      case api::JobEventType::kTaskExited:
      case api::JobEventType::kTaskLaunchFailed:
        break;  // handled above
    }
  }
  if (!stale.empty()) {
    return MakeError(ErrorCode::kAborted,
                     "stale report from node " + request.node + " rejected: " + stale);
  }
  return {};
}

void Controller::OnLaunchAccepted(JobId job, Generation generation) {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return;
  JobEntry& e = it->second;
  if (e.job.state == JobState::kRunning && e.job.allocation.generation == generation) {
    e.launch_accepted = true;
  }
}

void Controller::OnLaunchFailed(JobId job, Generation generation, const Error& error) {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return;
  JobEntry& e = it->second;
  if (e.job.state != JobState::kRunning || e.job.allocation.generation != generation) return;
  CORRAL_LOG(Warn) << "job " << job.ToString() << ": launch failed: " << error.message;
  if (error.code == ErrorCode::kUnavailable || error.code == ErrorCode::kDeadlineExceeded) {
    FailLostJob(e, "could not reach node " + e.job.allocation.nodes.front().node_name);
  } else {
    e.job.exit_code = 1;
    FinishJob(e, JobState::kFailed, "launch failed: " + error.message);
  }
}

// ---------------------------------------------------------------------------------------------
// Nodes

Status Controller::Drain(const api::Identity& who, const std::string& node,
                         const std::string& reason) {
  if (!IsAdmin(who)) {
    return MakeError(ErrorCode::kPermissionDenied,
                     "drain: " + who.user + " is not an administrator");
  }
  if (reason.empty()) return InvalidArgument("reason: a reason is required to drain a node");
  NodeEntry* n = FindNode(node);
  if (n == nullptr) return NotFound("node \"" + node + "\": no such node");
  n->node.drain = true;
  n->node.reason = reason;
  n->node.reason_time = clock_.Now();
  PutNode(*n);
  MarkDirty();
  return {};
}

Status Controller::Resume(const api::Identity& who, const std::string& node) {
  if (!IsAdmin(who)) {
    return MakeError(ErrorCode::kPermissionDenied,
                     "resume: " + who.user + " is not an administrator");
  }
  NodeEntry* n = FindNode(node);
  if (n == nullptr) return NotFound("node \"" + node + "\": no such node");
  n->node.drain = false;
  n->node.reason.clear();
  n->node.reason_time = {};
  ResumeGpus(*n);
  PutNode(*n);
  MarkDirty();
  return {};
}

// ---------------------------------------------------------------------------------------------
// Reads

api::JobInfo Controller::MakeJobInfo(const JobEntry& e) const {
  api::JobInfo info;
  info.job = e.job;
  info.reason_detail = e.reason_detail;
  info.estimated_start = e.estimated_start;
  info.priority = e.job.state == JobState::kPending ? e.priority : 0;
  return info;
}

Result<api::JobInfo> Controller::GetJob(JobId id) const {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return NotFound("job " + id.ToString() + ": no such job");
  return MakeJobInfo(it->second);
}

std::vector<api::JobInfo> Controller::ListJobs(const JobFilter& f) const {
  std::vector<api::JobInfo> out;
  Timestamp recent = clock_.Now() - config_.list_completed_for;
  auto visit = [&](const JobEntry& e) {
    const Job& j = e.job;
    if (!f.users.empty() && !Contains(f.users, j.spec.user)) return;
    if (!f.accounts.empty() && !Contains(f.accounts, j.spec.account)) return;
    if (!f.partitions.empty() && !Contains(f.partitions, j.partition) &&
        std::none_of(j.spec.partitions.begin(), j.spec.partitions.end(),
                     [&](const std::string& p) { return Contains(f.partitions, p); })) {
      return;
    }
    if (f.active_until != Timestamp{} && j.submit_time > f.active_until) return;
    if (f.active_from != Timestamp{} && IsTerminal(j.state) && j.end_time < f.active_from) return;
    bool windowed = f.active_from != Timestamp{} || f.active_until != Timestamp{};
    if (!f.states.empty()) {
      if (!Contains(f.states, j.state)) return;
    } else if (!f.all && !windowed && IsTerminal(j.state) && j.end_time < recent && f.ids.empty()) {
      return;
    }
    out.push_back(MakeJobInfo(e));
  };
  if (!f.ids.empty()) {
    std::set<JobId> seen;
    for (JobId id : f.ids) {
      auto it = jobs_.find(id);
      if (it == jobs_.end()) continue;
      if (seen.insert(id).second) visit(it->second);
      // An array's tasks have consecutive ids from the array's job id on (Submit).
      if (!f.expand_arrays || it->second.job.array_job_id != id) continue;
      for (++it; it != jobs_.end() && it->second.job.array_job_id == id; ++it) {
        if (seen.insert(it->first).second) visit(it->second);
      }
    }
  } else if (!f.all && f.states.size() == 1 && f.states[0] == JobState::kPending) {
    for (JobId id : pending_) visit(jobs_.at(id));
  } else {
    for (const auto& [id, e] : jobs_) visit(e);
  }
  return out;
}

api::NodeInfo Controller::MakeNodeInfo(const NodeEntry& n) const {
  api::NodeInfo info;
  info.node = n.node;
  info.state = DeriveNodeState(n.node, n.usage);
  info.alloc_cpus = n.usage.cpus;
  info.alloc_mem_mb = n.usage.mem_mb;
  info.alloc_gpus = n.usage.gpus;
  info.jobs.assign(n.jobs.begin(), n.jobs.end());
  info.partitions = PartitionsOfNode(n.node.inventory.name);
  info.gpu_problems = n.gpu_problems;
  info.node_problem = n.node_problem;
  return info;
}

Result<api::NodeInfo> Controller::GetNode(const std::string& name) const {
  const NodeEntry* n = FindNode(name);
  if (n == nullptr) return NotFound("node \"" + name + "\": no such node");
  return MakeNodeInfo(*n);
}

std::vector<api::NodeInfo> Controller::ListNodes() const {
  std::vector<std::string> names;
  for (const auto& [name, n] : nodes_) names.push_back(name);
  std::vector<api::NodeInfo> out;
  for (const auto& name : SortHostNames(std::move(names)))
    out.push_back(MakeNodeInfo(nodes_.at(name)));
  return out;
}

std::vector<api::PartitionInfo> Controller::ListPartitions() const {
  std::vector<api::PartitionInfo> out;
  for (const auto& p : partitions_) {
    api::PartitionInfo info;
    info.partition = p;
    info.partition.nodes.clear();
    for (const auto& [id, name] : node_names_) {
      if (!NodeInPartition(p, name)) continue;
      const NodeEntry& n = nodes_.at(name);
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

// Scheduling: BuildSnapshot and Schedule are in controller_sched.cc.

void Controller::Tick() {
  RunPendingStops();
  PersistUsage(/*force=*/false);
  MonoTime now = clock_.MonotonicNow();
  for (auto& [name, n] : nodes_) {
    if (!n.node.registered || !n.node.responding) continue;
    if (now - n.last_heartbeat <= config_.node_timeout) continue;
    CORRAL_LOG(Warn) << "node " << name << ": no heartbeat for "
                     << ToSecondsF(now - n.last_heartbeat) << " s; marking it DOWN";
    n.node.responding = false;
    n.node.reason = "Not responding";
    n.node.reason_time = clock_.Now();
    PutNode(n);
    FailJobsOnNode(n, "stopped responding");
    MarkDirty();
  }
  // Spacing counts from the end of the last pass.
  bool due = sched_dirty_ && now - (last_pass_ + last_pass_cost_) >= PassSpacing();
  if (due || now - last_pass_ >= config_.sched_periodic_interval) Schedule();
}

MonoTime Controller::NextTickDeadline() const {
  MonoTime next = last_pass_ + config_.sched_periodic_interval;
  if (sched_dirty_) next = std::min(next, last_pass_ + last_pass_cost_ + PassSpacing());
  next = std::min(next, NextStopDeadline());
  for (const auto& [name, n] : nodes_) {
    if (n.node.registered && n.node.responding) {
      next = std::min(next, n.last_heartbeat + config_.node_timeout + Millis(1));
    }
  }
  return next;
}

store::WriteBatch Controller::TakeWrites() {
  PutDirtySteps();
  store::WriteBatch out = std::move(batch_);
  batch_.Clear();
  return out;
}

std::vector<OutgoingCommand> Controller::TakeOutbox() {
  std::vector<OutgoingCommand> out = std::move(outbox_);
  outbox_.clear();
  return out;
}

std::vector<JobId> Controller::TakeFinished() {
  std::vector<JobId> out = std::move(finished_);
  finished_.clear();
  return out;
}

}  // namespace corral::controller
