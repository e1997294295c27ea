#include "controller/internal/job_validator.h"

#include <algorithm>

#include "controller/internal/access.h"
#include "controller/internal/request_limits.h"
#include "core/array_spec.h"
#include "core/container_spec.h"
#include "core/credential_env.h"
#include "core/duration.h"
#include "core/partition_access.h"  // issue 16 item 2
#include "core/strings.h"

namespace corral::controller::internal {
namespace {

constexpr size_t kMaxScriptBytes = 4 * 1024 * 1024;  // Slurm's default max_script_size

bool ValidEnvName(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c == '=' || c == '\0') return false;
  }
  return true;
}

bool HasSubmitLimits(const sched::SchedulerConfig& config) {
  auto has = [](const sched::Limits& l) { return l.max_submitted_jobs.has_value(); };
  bool any = false;
  for (const auto& a : config.accounts) any |= has(a.limits);
  for (const auto& u : config.users) {
    any |= has(u.limits);
    for (const AssociationLimits& al : u.association_limits) any |= has(al.limits);
  }
  for (const auto& q : config.qos) any |= has(q.limits) || has(q.per_user);
  return any;
}

}  // namespace

std::optional<std::string> OverPartitionMaxTime(Duration limit, const Partition& p) {
  if (p.max_time == kUnlimited || limit <= p.max_time) return std::nullopt;
  return FormatSlurmDuration(limit) + " exceeds the maximum " + FormatSlurmDuration(p.max_time) +
         " of partition \"" + p.name + "\"";
}

JobValidator::JobValidator(const ControllerConfig& config, const Partitions& partitions,
                           const JobTable& jobs, const NodeTable& nodes,
                           const SnapshotBuilder& snapshots, const sched::Scheduler& engine,
                           const sched::SchedulerConfig& sched_config, const Clock& clock)
    : config_(config),
      partitions_(partitions),
      jobs_(jobs),
      nodes_(nodes),
      snapshots_(snapshots),
      engine_(engine),
      sched_config_(sched_config),
      clock_(clock),
      submit_limits_(HasSubmitLimits(sched_config)) {}

void JobValidator::Reconfigured() { submit_limits_ = HasSubmitLimits(sched_config_); }

Status JobValidator::ValidateSpec(const api::Identity& who, JobSpec& spec,
                                  std::vector<const Partition*>* parts) const {
  // 1. Identity: users submit as themselves; operators and admins may submit for others. The
  // uid and gid are never the request's.
  CORRAL_RETURN_IF_ERROR(api::Authorize(who, api::Action::kSubmitJob, {}));
  if (spec.user.empty() || spec.user == who.user) {
    spec.user = who.user;
    spec.uid = who.uid;
    spec.gid = who.gid;
  } else if (!IsPrivileged(who)) {
    return MakeError(ErrorCode::kPermissionDenied,
                     "user: " + who.user + " may not submit jobs as " + spec.user);
  } else {
    if (spec.user.size() > kMaxShortField) return InvalidArgument("user: longer than 256 bytes");
    Result<UnixIds> ids = config_.user_ids ? config_.user_ids(spec.user) : SystemUserIds(spec.user);
    if (!ids) return InvalidArgument("user: " + ids.error().message);
    spec.uid = ids->uid;
    spec.gid = ids->gid;
  }
  // 1a. The user's default account.
  if (spec.account.empty()) {
    for (const sched::UserConfig& u : sched_config_.users) {
      if (u.name == spec.user) {
        spec.account = u.default_account;
        break;
      }
    }
  }
  CORRAL_ASSIGN_OR_RETURN(JobSizes sizes, CheckJobSizes(spec));
  // 2-5. The script, the name, the working directory, the environment.
  if (spec.script.empty()) return InvalidArgument("script: empty; a batch script is required");
  if (spec.script.size() > kMaxScriptBytes) {
    return InvalidArgument("script: " + std::to_string(spec.script.size()) +
                           " bytes is over the limit of " + std::to_string(kMaxScriptBytes));
  }
  if (spec.script->rfind("#!", 0) != 0) {
    return InvalidArgument(
        "script: the first line must start with #! followed by the path to an interpreter");
  }
  if (spec.script->find('\0') != std::string::npos)
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
  // A caller's credential never reaches the job, whatever client submitted it (the CLI leaves
  // them out; a raw API call may not): dropped silently, as the CLI does.
  const auto& env = spec.environment.get();
  if (std::any_of(env.begin(), env.end(),
                  [](const auto& kv) { return IsCredentialVariable(kv.first); })) {
    EraseCredentialVariables(spec.environment.Mutable());  // a copy only when one is there
  }
  // The container: image, mounts, name (the grammar the agent enforces, core/container_spec.h).
  CORRAL_RETURN_IF_ERROR(ValidateContainerSpec(spec.container));
  // 6-9. The array, the resources, the dependencies, the time limit.
  size_t tasks = 1;
  if (!spec.array.empty()) {
    auto parsed = ParseArraySpec(spec.array);
    if (!parsed) return InvalidArgument("array: " + parsed.error().message);
    tasks = parsed->indices.size();
    CORRAL_RETURN_IF_ERROR(CheckArraySize(tasks, sizes));
  }
  if (config_.max_submitted_jobs > 0 &&
      jobs_.ActiveJobsOf(spec.user) + tasks > config_.max_submitted_jobs) {
    return MakeError(ErrorCode::kResourceExhausted,
                     "max_submitted_jobs: " + spec.user + " has " +
                         std::to_string(jobs_.ActiveJobsOf(spec.user)) +
                         " jobs pending or running; " + std::to_string(tasks) +
                         " more would be over the limit of " +
                         std::to_string(config_.max_submitted_jobs));
  }
  if (auto s = ValidateResourceRequest(spec.resources); !s) {
    return InvalidArgument("resources." + s.error().message);
  }
  for (const auto& dep : spec.dependencies) {
    for (JobId d : dep.jobs) {
      if (!jobs_.contains(d)) return InvalidArgument("dependency: no such job " + d.ToString());
    }
  }
  if (spec.time_limit && spec.time_limit->count() <= 0) {
    return InvalidArgument("time_limit: must be positive");
  }
  // 10. Partitions: the named ones in order, or the default.
  parts->clear();
  if (spec.partitions.empty()) {
    parts->push_back(&partitions_.Default());
    spec.partitions.push_back(parts->front()->name);
  } else {
    for (const auto& name : spec.partitions) {
      const Partition* p = partitions_.Find(name);
      if (p == nullptr) return InvalidArgument("partition: no such partition \"" + name + "\"");
      parts->push_back(p);
    }
  }
  // 10a. Access (issue 16 item 2): every partition named lets the job's account, QOS and
  // user in (Slurm with EnforcePartLimits=ALL), the groups from the passwd/group databases.
  CORRAL_RETURN_IF_ERROR(CheckPartitionAccess(spec, *parts));
  // 11. The job must fit at least one of its partitions.
  std::string why;
  for (const Partition* p : *parts) {
    why = WhyNotIn(*p, spec);
    if (why.empty()) return {};
  }
  return InvalidArgument(why);
}

// Partition access (issue 16 item 2): core/partition_access.h, in Slurm's words.
Status JobValidator::CheckPartitionAccess(const JobSpec& spec,
                                          const std::vector<const Partition*>& parts) const {
  std::optional<std::vector<std::string>> groups;  // looked up once, when a partition needs it
  const std::string qos =
      spec.qos.empty() ? sched::DefaultQos(sched_config_, spec.account) : spec.qos;
  for (const Partition* p : parts) {
    if (std::string why = PartitionAccountDenial(*p, spec.account); !why.empty()) {
      return MakeError(ErrorCode::kPermissionDenied,
                       "Invalid account or account/partition combination specified: " + why);
    }
    if (std::string why = PartitionQosDenial(*p, qos); !why.empty()) {
      return MakeError(ErrorCode::kPermissionDenied, "Invalid qos specification: " + why);
    }
    if (p->allowed_groups.empty()) continue;
    if (!groups) {
      groups = config_.user_groups ? config_.user_groups(spec.user, spec.gid)
                                   : api::SystemUserDirectory().GroupNames(spec.user, spec.gid);
    }
    if (!PartitionGroupsAllow(*p, *groups)) {
      return MakeError(ErrorCode::kPermissionDenied,
                       "User's group not permitted to use this partition (" + p->name +
                           " allows groups " + Join(p->allowed_groups, ",") + "; user \"" +
                           spec.user + "\" is in none of them)");
    }
  }
  return {};
}

std::string JobValidator::WhyNotIn(const Partition& p, const JobSpec& spec) const {
  PerNodeDemand demand = ComputePerNodeDemand(spec.resources);
  uint32_t total_gpus = demand.gpus * spec.resources.nodes;
  if (spec.time_limit) {
    if (auto over = OverPartitionMaxTime(*spec.time_limit, p)) return "time_limit: " + *over;
  }
  if (p.max_gpus_per_job > 0 && total_gpus > p.max_gpus_per_job) {
    return "resources.gpus: " + std::to_string(total_gpus) + " GPUs exceed the limit of " +
           std::to_string(p.max_gpus_per_job) + " per job in partition \"" + p.name + "\"";
  }
  if (p.max_nodes_per_job > 0 && spec.resources.nodes > p.max_nodes_per_job) {
    return "resources.nodes: " + std::to_string(spec.resources.nodes) +
           " nodes exceed the limit of " + std::to_string(p.max_nodes_per_job) +
           " in partition \"" + p.name + "\"";
  }
  // Against the registered nodes of the partition (when there are any).
  uint32_t nodes_in = 0, nodes_fit = 0, max_gpus = 0, max_cpus = 0;
  uint64_t max_mem = 0;
  for (const auto& [name, n] : nodes_.all()) {
    if (!n.node.registered || !Partitions::Holds(p, name)) continue;
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
      // Enough nodes can hold it: the usual answer, found without reading every node (a
      // submission to 10,000 nodes read all of them).
      if (++nodes_fit >= spec.resources.nodes) return "";
    }
  }
  if (nodes_in == 0 || nodes_fit >= spec.resources.nodes) return "";
  std::string type = demand.gpu_type.empty() ? "" : " of type " + demand.gpu_type;
  if (max_gpus < demand.gpus) {
    return "resources.gpus: " + std::to_string(demand.gpus) + " GPUs" + type +
           " per node requested, but no node of partition \"" + p.name + "\" has more than " +
           std::to_string(max_gpus);
  }
  if (max_cpus < demand.cpus) {
    return "resources.cpus: " + std::to_string(demand.cpus) +
           " CPUs per node requested, but no node of partition \"" + p.name + "\" has more than " +
           std::to_string(max_cpus);
  }
  if (max_mem < MemoryOnNode(demand, max_mem)) {
    return "resources.mem: " + std::to_string(demand.mem_mb) +
           " MB per node requested, but no node of partition \"" + p.name + "\" has more than " +
           std::to_string(max_mem) + " MB";
  }
  return "resources.nodes: " + std::to_string(spec.resources.nodes) +
         " nodes requested, but partition \"" + p.name + "\" has only " +
         std::to_string(nodes_fit) + " that can hold one share of the job";
}

Result<Job> JobValidator::ValidateSubmission(const api::Identity& who, JobSpec spec) const {
  std::vector<const Partition*> parts;
  CORRAL_RETURN_IF_ERROR(ValidateSpec(who, spec, &parts));
  Timestamp now = clock_.Now();
  JobEntry e;
  Job& job = e.job;
  job.id = jobs_.next_id();
  job.state = JobState::kPending;
  job.reason = "None";
  job.submit_time = now;
  job.eligible_time = std::max(now, spec.begin_time);
  const Partition* p = parts.front();
  job.partition = p->name;
  // As in Slurm: no --time gives the partition's DefaultTime, or its MaxTime when unset.
  job.time_limit = spec.time_limit                 ? *spec.time_limit
                   : p->default_time != kUnlimited ? p->default_time
                                                   : p->max_time;
  job.spec = std::move(spec);
  // 12. The policy engine's rules, checked before anything is recorded.
  CORRAL_RETURN_IF_ERROR(engine_.ValidateSubmission(snapshots_.PendingView(e),
                                                    snapshots_.ForSubmission(submit_limits_)));
  return std::move(e.job);
}

Status JobValidator::ValidateTimeLimit(const api::Identity& who, const Job& job,
                                       Duration limit) const {
  const std::string what = "job " + job.id.ToString();
  if (limit.count() <= 0) return InvalidArgument(what + ": time limit must be positive");
  if (job.state != JobState::kPending && job.state != JobState::kRunning) {
    return FailedPrecondition(what + ": " + std::string(JobStateName(job.state)) +
                              ": a time limit can only be changed while the job is pending or "
                              "running");
  }
  if (IsAdministrator(who)) return {};
  if (limit > job.time_limit) {
    return MakeError(ErrorCode::kPermissionDenied,
                     what + ": only an administrator may raise a time limit (from " +
                         FormatSlurmDuration(job.time_limit) + " to " + FormatSlurmDuration(limit) +
                         ")");
  }
  const Partition* p = partitions_.Find(job.partition);
  if (p != nullptr) {
    if (auto over = OverPartitionMaxTime(limit, *p)) {
      return InvalidArgument(what + ": time limit " + *over);
    }
  }
  return {};
}

}  // namespace corral::controller::internal
