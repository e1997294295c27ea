#include "sched/internal/admission.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/duration.h"
#include "sched/internal/constraint.h"
#include "sched/internal/flat_map.h"
#include "sched/internal/time_math.h"

namespace corral::sched::internal {

namespace {

// One submission's checks, in the order `ValidateSubmission` runs them; each returns the first
// failure it finds.
struct Admission {
  Admission(const SchedulerConfig& c, const ConfigIndex& i, const PendingJobView& j,
            const ClusterSnapshot& s)
      : config(c),
        index(i),
        job(j),
        snapshot(s),
        r(j.resources),
        who("job " + j.id.ToString()),
        gpus(TotalGpus(j.resources)),
        limit(EffectiveLimit(j.time_limit)),
        constraint(ParseConstraint(j.resources.constraint)) {}

  // Account, user, QOS, reservation. Sets `account_id` and `qos`.
  Status Identity();
  // Limits that no amount of waiting satisfies. Requires: `Identity` succeeded.
  Status NeverSatisfiedLimits();
  // Partitions: the job is accepted if one of them could ever run it.
  enum Verdict { kContinue, kAcceptNow };
  Result<Verdict> Partitions();
  // Why partition `pname` can never run the job; nullopt when it could, or when it cannot tell
  // (`accept_now`: none of its nodes is registered yet).
  std::optional<Error> WhyNot(const std::string& pname, bool* accept_now);
  // Submitted-job limits (counted only when one applies: they need a walk over all jobs).
  // Requires: `Identity` succeeded.
  Status SubmittedJobLimits();

  const NameMap<const NodeView*>& NodeMap() {
    if (nodes.size() == 0) {
      nodes.reserve(snapshot.nodes.size());
      for (const NodeView& n : snapshot.nodes) nodes.emplace(n.name, &n);
    }
    return nodes;
  }
  tl::unexpected<Error> err(ErrorCode code, const std::string& message) const {
    return MakeError(code, who + ": " + message);
  }

  const SchedulerConfig& config;
  const ConfigIndex& index;
  const PendingJobView& job;
  const ClusterSnapshot& snapshot;
  const ResourceRequest& r;
  const std::string who;
  const uint32_t gpus;
  const Duration limit;
  const Constraint constraint;
  NameMap<const NodeView*> nodes;  // by name; built on first use (`NodeMap`)
  int account_id = -1;
  const QosConfig* qos = nullptr;
};

Status Admission::Identity() {
  auto acct = index.account_ids.find(job.account);
  account_id = acct == index.account_ids.end() ? -1 : acct->second;
  const ConfigIndex::Account* account = account_id < 0 ? nullptr : &index.accounts[account_id];
  // Slurm's words for both (sbatch: "Invalid account or account/partition combination
  // specified"), then which it is.
  constexpr std::string_view kInvalidAccount =
      "Invalid account or account/partition combination specified: ";
  if (!config.accounts.empty() && account == nullptr) {
    return err(ErrorCode::kPermissionDenied,
               std::string(kInvalidAccount) +
                   (job.account.empty()
                        ? "user \"" + job.user + "\" named no account and has no default account"
                        : "no such account \"" + job.account + "\""));
  }
  if (account != nullptr && !account->users.empty() && !account->users.count(job.user)) {
    return err(ErrorCode::kPermissionDenied,
               std::string(kInvalidAccount) + "user \"" + job.user +
                   "\" is not a member of account \"" + job.account + "\"");
  }
  const std::string qos_name = job.qos.empty() ? DefaultQos(config, job.account) : job.qos;
  auto q = index.qos_ids.find(qos_name);
  if (q == index.qos_ids.end())
    return err(ErrorCode::kInvalidArgument, "no such qos \"" + qos_name + "\"");
  qos = index.qos[q->second].config;
  if (account != nullptr && account->allowed_qos != nullptr &&
      std::find(account->allowed_qos->begin(), account->allowed_qos->end(), qos_name) ==
          account->allowed_qos->end()) {
    return err(ErrorCode::kPermissionDenied,
               "account \"" + job.account + "\" may not use qos \"" + qos_name + "\"");
  }
  if (!job.reservation.empty()) {
    const Reservation* res = nullptr;
    for (const Reservation& x : config.reservations) {
      if (x.name == job.reservation) res = &x;
    }
    for (const Reservation& x : snapshot.reservations) {
      if (x.name == job.reservation) res = &x;
    }
    if (res == nullptr)
      return err(ErrorCode::kInvalidArgument, "no such reservation \"" + job.reservation + "\"");
    bool listed = res->users.empty() && res->accounts.empty();
    listed |= std::find(res->users.begin(), res->users.end(), job.user) != res->users.end();
    listed |=
        std::find(res->accounts.begin(), res->accounts.end(), job.account) != res->accounts.end();
    if (!listed) {
      return err(ErrorCode::kPermissionDenied,
                 "user \"" + job.user + "\" may not use reservation \"" + res->name + "\"");
    }
  }
  return {};
}

Status Admission::NeverSatisfiedLimits() {
  auto never = [&](const Limits& l, const std::string& entity) -> Status {
    if (l.max_gpus_per_job && gpus > *l.max_gpus_per_job) {
      return err(ErrorCode::kInvalidArgument,
                 entity + " allows at most " + std::to_string(*l.max_gpus_per_job) +
                     " GPUs per job, job asks " + std::to_string(gpus));
    }
    if (l.max_gpus && gpus > *l.max_gpus) {
      return err(ErrorCode::kInvalidArgument, entity + " may hold at most " +
                                                  std::to_string(*l.max_gpus) + " GPUs, job asks " +
                                                  std::to_string(gpus));
    }
    return {};
  };
  for (int a = account_id; a >= 0; a = index.accounts[a].parent) {
    CORRAL_RETURN_IF_ERROR(never(index.accounts[a].config->limits,
                                 "account \"" + index.accounts[a].config->name + "\""));
  }
  if (auto u = index.users.find(job.user); u != index.users.end()) {
    CORRAL_RETURN_IF_ERROR(never(u->second->limits, "user \"" + job.user + "\""));
    if (const Limits* al = FindAssociationLimits(*u->second, job.account)) {
      CORRAL_RETURN_IF_ERROR(
          never(*al, "user \"" + job.user + "\" in account \"" + job.account + "\""));
    }
  }
  CORRAL_RETURN_IF_ERROR(never(qos->limits, "qos \"" + qos->name + "\""));
  CORRAL_RETURN_IF_ERROR(never(qos->per_user, "qos \"" + qos->name + "\" per user"));
  if (qos->max_time && limit > *qos->max_time) {
    return err(ErrorCode::kInvalidArgument, "time limit " + FormatSlurmDuration(limit) +
                                                " exceeds qos \"" + qos->name + "\" max_time " +
                                                FormatSlurmDuration(*qos->max_time));
  }
  return {};
}

Result<Admission::Verdict> Admission::Partitions() {
  if (job.partitions.empty()) return err(ErrorCode::kInvalidArgument, "no partition");
  std::optional<Error> first;
  for (const std::string& pname : job.partitions) {
    bool accept_now = false;
    std::optional<Error> why = WhyNot(pname, &accept_now);
    if (accept_now) return kAcceptNow;
    if (!why) return kContinue;
    if (!first) first = std::move(why);
  }
  return tl::unexpected<Error>(*first);
}

std::optional<Error> Admission::WhyNot(const std::string& pname, bool* accept_now) {
  auto pit = std::find_if(snapshot.partitions.begin(), snapshot.partitions.end(),
                          [&](const Partition& x) { return x.name == pname; });
  const Partition* part = pit != snapshot.partitions.end() ? &*pit : nullptr;
  if (part == nullptr) {
    for (const Partition& x : config.partitions) {
      if (x.name == pname) part = &x;
    }
  }
  auto reject = [&](ErrorCode code, const std::string& message) {
    return Error{code, who + ": partition \"" + pname + "\": " + message};
  };
  if (part == nullptr) {
    return Error{ErrorCode::kInvalidArgument, who + ": no such partition \"" + pname + "\""};
  }
  if (!part->allowed_accounts.empty() &&
      std::find(part->allowed_accounts.begin(), part->allowed_accounts.end(), job.account) ==
          part->allowed_accounts.end()) {
    return reject(ErrorCode::kPermissionDenied, "account \"" + job.account + "\" may not use it");
  }
  if (limit > part->max_time) {
    return reject(ErrorCode::kInvalidArgument, "time limit " + FormatSlurmDuration(limit) +
                                                   " exceeds max_time " +
                                                   FormatSlurmDuration(part->max_time));
  }
  if (part->max_nodes_per_job > 0 && r.nodes > part->max_nodes_per_job) {
    return reject(ErrorCode::kInvalidArgument,
                  "job asks " + std::to_string(r.nodes) + " nodes, at most " +
                      std::to_string(part->max_nodes_per_job) + " per job");
  }
  if (part->max_gpus_per_job > 0 && gpus > part->max_gpus_per_job) {
    return reject(ErrorCode::kInvalidArgument,
                  "job asks " + std::to_string(gpus) + " GPUs, at most " +
                      std::to_string(part->max_gpus_per_job) + " per job");
  }
  // Could any set of its (registered) nodes ever hold the job?
  std::vector<const NodeView*> members;
  if (part->nodes.empty()) {
    for (const NodeView& n : snapshot.nodes) members.push_back(&n);
  } else {
    for (const std::string& name : part->nodes) {
      if (auto it = NodeMap().find(name); it != nodes.end()) members.push_back(it->second);
    }
  }
  for (const std::string& name : r.nodelist) {
    auto it = NodeMap().find(name);
    if (it == nodes.end() ||
        std::find(members.begin(), members.end(), it->second) == members.end()) {
      return reject(ErrorCode::kInvalidArgument, "requested node \"" + name + "\" is not in it");
    }
  }
  if (members.empty()) {  // nodes not registered yet: cannot tell
    *accept_now = true;
    return std::nullopt;
  }
  PerNodeDemand d = ComputePerNodeDemand(r, part->def_mem_per_cpu_mb);
  const uint32_t need = std::max<uint32_t>(1, r.nodes);
  uint32_t capable = 0;
  for (const NodeView* n : members) {
    if (capable >= need) break;  // enough: no need to look further
    if (!constraint.Matches(n->features)) continue;
    if (std::find(r.exclude.begin(), r.exclude.end(), n->name) != r.exclude.end()) continue;
    uint32_t typed = 0;
    for (const GpuInfo& g : n->gpus) typed += d.gpu_type.empty() || g.model == d.gpu_type;
    if (typed >= d.gpus && n->cpus >= d.cpus && n->mem_mb >= MemoryOnNode(d, n->mem_mb)) ++capable;
  }
  if (capable >= need) return std::nullopt;
  std::string unit = d.gpus > 0 ? std::to_string(d.gpus) + " GPUs" +
                                      (d.gpu_type.empty() ? "" : " of type " + d.gpu_type)
                                : std::to_string(d.cpus) + " CPUs";
  unit += ", " + std::to_string(d.cpus) + " CPUs and " +
          (d.mem_mb == kWholeNodeMemory ? std::string("all the memory of a node")
                                        : FormatMemoryMb(d.mem_mb) + " of memory");
  if (!r.constraint.empty()) unit += " with features " + r.constraint;
  return reject(ErrorCode::kInvalidArgument,
                r.nodes <= 1 ? "no node can ever hold " + unit
                             : "only " + std::to_string(capable) + " nodes can ever hold " + unit +
                                   ", job needs " + std::to_string(r.nodes));
}

Status Admission::SubmittedJobLimits() {
  std::vector<int> chain;
  for (int a = account_id; a >= 0; a = index.accounts[a].parent) chain.push_back(a);
  bool any = false;
  for (int a : chain) any |= index.accounts[a].config->limits.max_submitted_jobs.has_value();
  const UserConfig* ucfg = nullptr;
  if (auto u = index.users.find(job.user); u != index.users.end()) ucfg = u->second;
  any |= ucfg != nullptr && ucfg->limits.max_submitted_jobs.has_value();
  const Limits* assoc = ucfg != nullptr ? FindAssociationLimits(*ucfg, job.account) : nullptr;
  if (assoc != nullptr && !assoc->max_submitted_jobs) assoc = nullptr;
  any |= assoc != nullptr;
  any |= qos->limits.max_submitted_jobs.has_value() || qos->per_user.max_submitted_jobs.has_value();
  if (!any) return {};
  std::map<std::string_view, int> acct_ids;
  for (int a : chain) acct_ids[index.accounts[a].config->name] = a;
  std::vector<uint32_t> per_account(index.accounts.size(), 0);
  uint32_t per_user = 0, per_assoc = 0, per_qos = 0, per_qos_user = 0;
  auto count = [&](const std::string& job_account, const std::string& user, const std::string& jq) {
    // Walk the job's account chain: the jobs of sub-accounts count for their ancestors.
    auto it = index.account_ids.find(job_account);
    for (int a = it == index.account_ids.end() ? -1 : it->second; a >= 0;
         a = index.accounts[a].parent) {
      if (acct_ids.count(index.accounts[a].config->name)) ++per_account[a];
    }
    const std::string effective = jq.empty() ? DefaultQos(config, job_account) : jq;
    per_user += user == job.user;
    per_assoc += user == job.user && job_account == job.account;
    per_qos += effective == qos->name;
    per_qos_user += effective == qos->name && user == job.user;
  };
  for (const RunningJobView& x : snapshot.running) count(x.account, x.user, x.qos);
  for (const PendingJobView& x : snapshot.pending) {
    if (x.id != job.id) count(x.account, x.user, x.qos);
  }
  auto full = [&](const std::optional<uint32_t>& max, uint32_t n,
                  const std::string& entity) -> Status {
    if (max && n + 1 > *max) {
      return err(ErrorCode::kResourceExhausted, entity + " has " + std::to_string(n) +
                                                    " of at most " + std::to_string(*max) +
                                                    " submitted jobs");
    }
    return {};
  };
  for (int a : chain) {
    CORRAL_RETURN_IF_ERROR(full(index.accounts[a].config->limits.max_submitted_jobs, per_account[a],
                                "account \"" + index.accounts[a].config->name + "\""));
  }
  if (ucfg != nullptr)
    CORRAL_RETURN_IF_ERROR(
        full(ucfg->limits.max_submitted_jobs, per_user, "user \"" + job.user + "\""));
  if (assoc != nullptr && per_assoc + 1 > *assoc->max_submitted_jobs) {
    // Slurm's words (sbatch prints them after "AssocMaxSubmitJobLimit"), then which it is.
    return err(ErrorCode::kResourceExhausted,
               "Job violates accounting/QOS policy (job submit limit, user's size and/or time "
               "limits): AssocMaxSubmitJobLimit: user \"" +
                   job.user + "\" in account \"" + job.account + "\" has " +
                   std::to_string(per_assoc) + " of at most " +
                   std::to_string(*assoc->max_submitted_jobs) + " submitted jobs");
  }
  CORRAL_RETURN_IF_ERROR(
      full(qos->limits.max_submitted_jobs, per_qos, "qos \"" + qos->name + "\""));
  CORRAL_RETURN_IF_ERROR(full(qos->per_user.max_submitted_jobs, per_qos_user,
                              "qos \"" + qos->name + "\" for user \"" + job.user + "\""));
  return {};
}

}  // namespace

Status ValidateSubmission(const SchedulerConfig& config, const ConfigIndex& index,
                          const PendingJobView& job, const ClusterSnapshot& snapshot) {
  Admission check(config, index, job, snapshot);
  CORRAL_RETURN_IF_ERROR(check.Identity());
  CORRAL_RETURN_IF_ERROR(check.NeverSatisfiedLimits());
  CORRAL_ASSIGN_OR_RETURN(Admission::Verdict verdict, check.Partitions());
  if (verdict == Admission::kAcceptNow) return {};
  return check.SubmittedJobLimits();
}

}  // namespace corral::sched::internal
