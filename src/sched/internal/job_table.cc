#include "sched/internal/job_table.h"

#include <algorithm>
#include <map>

namespace corral::sched::internal {

JobTable::JobTable(const SchedulerConfig& config, const ConfigIndex& index,
                   const ClusterSnapshot& snapshot, Timestamp now, NodeState& nodes,
                   ShapeMemo& shapes)
    : config_(config),
      index_(index),
      snap_(snapshot),
      now_(now),
      nodes_(nodes),
      shapes_(shapes),
      cache_(nodes.cache()) {
  cache_.account_ids.clear();
  cache_.user_ids.clear();
  cache_.qos_ids.clear();
  account_names_.resize(index_.accounts.size());
  account_parent_.resize(index_.accounts.size());
  for (size_t i = 0; i < index_.accounts.size(); ++i) {
    account_names_[i] = index_.accounts[i].config->name;
    account_parent_[i] = index_.accounts[i].parent;
    cache_.account_ids[account_names_[i]] = static_cast<int>(i);
  }
  part_allowed_.resize(snap_.partitions.size());
  part_denied_.resize(snap_.partitions.size());
  for (size_t p = 0; p < snap_.partitions.size(); ++p) {
    for (const std::string& a : snap_.partitions[p].allowed_accounts)
      part_allowed_[p].push_back(AccountId(a));
    std::sort(part_allowed_[p].begin(), part_allowed_[p].end());
    for (const std::string& a : snap_.partitions[p].deny_accounts)
      part_denied_[p].push_back(AccountId(a));
    std::sort(part_denied_[p].begin(), part_denied_[p].end());
  }
  IndexRunning();
  // Pending jobs.
  pending_.resize(snap_.pending.size());
  for (size_t i = 0; i < snap_.pending.size(); ++i) {
    pending_[i].view = &snap_.pending[i];
    Prepare(&pending_[i]);
  }
  // Jobs for which victims are already being preempted.
  inflight_for_.assign(pending_.size(), false);
  for (const RunJob& rj : nodes_.jobs()) {
    if (!rj.being_preempted || rj.view->preempted_for.value == 0) continue;
    auto pos = std::lower_bound(snap_.pending.begin(), snap_.pending.end(), rj.view->preempted_for,
                                [](const PendingJobView& p, JobId id) { return p.id < id; });
    if (pos != snap_.pending.end() && pos->id == rj.view->preempted_for) {
      inflight_for_[pos - snap_.pending.begin()] = true;
    }
  }
}

int JobTable::AccountId(const std::string& name) {
  // Consecutive jobs (in JobId order) are often one user's batch: try the last answer first.
  if (last_account_ >= 0 && account_names_[last_account_] == name) return last_account_;
  auto it = cache_.account_ids.find(name);
  if (it != cache_.account_ids.end()) return last_account_ = it->second;
  int id = static_cast<int>(account_names_.size());
  account_names_.push_back(name);
  account_parent_.push_back(-1);
  cache_.account_ids[name] = id;
  return last_account_ = id;
}

int JobTable::UserId(const std::string& name) {
  if (last_user_ >= 0 && user_names_[last_user_] == name) return last_user_;
  auto it = cache_.user_ids.find(name);
  if (it != cache_.user_ids.end()) return last_user_ = it->second;
  int id = static_cast<int>(user_names_.size());
  user_names_.push_back(name);
  cache_.user_ids[name] = id;
  auto cfg = index_.users.find(name);
  user_config_.push_back(cfg == index_.users.end() ? nullptr : cfg->second);
  return last_user_ = id;
}

void JobTable::IndexRunning() {
  // Running jobs: their ids, their use of nodes, whether they borrow.
  // The job table and node uses keep the capacity of earlier passes (NodeCache).
  nodes_.ReserveJobs(snap_.running.size() + snap_.pending.size() / 4);
  std::map<int, std::vector<uint32_t>> by_guarantee;  // holder -> its running jobs
  for (const RunningJobView& r : snap_.running) {
    if (snap_.nodes.empty()) break;
    RunJob rj;
    rj.view = &r;
    rj.end = r.expected_end;
    if (r.preempt_deadline != Timestamp{}) {
      rj.being_preempted = true;
      rj.end = std::min(rj.end, r.preempt_deadline);
    }
    for (const NodeAllocation& a : r.allocation.nodes) rj.gpus += a.gpus.size();
    rj.account = AccountId(r.account);
    rj.user = UserId(r.user);
    if (last_run_qos_ != nullptr && *last_run_qos_ == r.qos) {  // most jobs share one QOS
      rj.qos = last_run_qos_id_;
    } else {
      auto [q, fresh] = cache_.qos_ids.try_emplace(
          r.qos.empty() ? std::string_view(config_.default_qos) : r.qos, -1);
      if (fresh) {
        auto found = index_.qos_ids.find(q->first);
        q->second = found == index_.qos_ids.end() ? -1 : found->second;
      }
      rj.qos = q->second;
      last_run_qos_ = &r.qos;
      last_run_qos_id_ = rj.qos;
    }
    const uint32_t ref = nodes_.AddJob(rj);
    for (const NodeAllocation& a : r.allocation.nodes) {
      int64_t found = nodes_.NodeIndexOf(a);
      if (found < 0) continue;
      nodes_.AddRunningUse(static_cast<uint32_t>(found), {ref, a.cpus, a.mem_mb, a.gpus});
    }
    if (index_.any_guarantee) {
      by_guarantee[index_.Configured(rj.account) ? index_.accounts[rj.account].guarantee_holder
                                                 : -1]
          .push_back(ref);
    }
  }
  // Borrowed capacity: a guarantee holder's newest jobs beyond its guarantee; with any guarantee
  // configured, every job outside all guarantees borrows.
  if (index_.any_guarantee) {
    for (auto& [holder, refs] : by_guarantee) {
      if (holder < 0) {
        for (uint32_t r : refs) nodes_.job(r).borrowed = true;
        continue;
      }
      uint64_t used = 0;
      for (uint32_t r : refs) used += nodes_.job(r).gpus;
      uint64_t guaranteed = index_.accounts[holder].config->guaranteed_gpus;
      std::sort(refs.begin(), refs.end(), [&](uint32_t a, uint32_t b) {
        const RunningJobView& x = *nodes_.job(a).view;
        const RunningJobView& y = *nodes_.job(b).view;
        if (x.start_time != y.start_time) return x.start_time > y.start_time;
        return x.id > y.id;
      });
      for (uint32_t r : refs) {
        if (used <= guaranteed) break;
        nodes_.job(r).borrowed = true;
        used -= nodes_.job(r).gpus;
      }
    }
  }
}

void JobTable::Prepare(JobInfo* j) {
  const PendingJobView& v = *j->view;
  j->account = AccountId(v.account);
  j->account_known =
      config_.accounts.empty() || j->account < static_cast<int>(index_.accounts.size());
  j->user = UserId(v.user);
  if (v.qos.empty()) {
    auto q = index_.qos_ids.find(DefaultQos(config_, v.account));
    j->qos = q == index_.qos_ids.end() ? -1 : q->second;
  } else {
    if (last_qos_name_ != nullptr && *last_qos_name_ == v.qos) {
      j->qos = last_qos_;
    } else {
      auto [it, fresh] = cache_.qos_ids.try_emplace(v.qos, -1);
      if (fresh) {
        auto q = index_.qos_ids.find(v.qos);
        it->second = q == index_.qos_ids.end() ? -1 : q->second;
      }
      j->qos = it->second;
      last_qos_name_ = &v.qos;
      last_qos_ = j->qos;
    }
  }
  const ResourceRequest& r = v.resources;
  PerNodeDemand pn = ComputePerNodeDemand(r);
  j->base = Demand{.cpus = pn.cpus,
                   .mem = pn.mem_mb,
                   .gpus = pn.gpus,
                   .type = nodes_.TypeId(pn.gpu_type),
                   .exclusive = pn.exclusive};
  j->mem_default = r.mem_per_node_mb == 0 && r.mem_per_cpu_mb == 0 && r.mem_per_gpu_mb == 0;
  j->nodes = std::max<uint32_t>(1, r.nodes);
  j->gpus = pn.gpus * j->nodes;
  j->limit = EffectiveLimit(v.time_limit);
  j->end = AddSat(now_, j->limit);
  if (!v.reservation.empty()) {
    for (size_t k = 0; k < nodes_.windows().size(); ++k) {
      if (nodes_.windows()[k]->name == v.reservation) j->reservation = static_cast<int>(k);
    }
  }
  j->node_filter = !r.constraint.empty() || !r.exclude.empty() || j->reservation >= 0;
  if (r.nodelist.empty() && r.exclude.empty()) {
    ShapeKey key{
        0, j->base, j->nodes, r.constraint, j->limit.count(), j->reservation, j->mem_default};
    j->shape = static_cast<int32_t>(shapes_.Intern(key));
  }
  j->n_parts =
      v.partitions.size() <= j->parts.size() ? static_cast<uint8_t>(v.partitions.size()) : 0;
  if (last_parts_ != nullptr && j->n_parts > 0 && *last_parts_ == v.partitions) {
    j->parts = last_parts_ids_;
    j->tier = last_parts_tier_;
  } else {
    for (size_t k = 0; k < v.partitions.size(); ++k) {
      auto it = cache_.part_by_name.find(v.partitions[k]);
      if (it == cache_.part_by_name.end()) {
        if (k < j->parts.size()) j->parts[k] = -1;
        continue;
      }
      if (k < j->parts.size()) j->parts[k] = static_cast<int32_t>(it->second);
      j->tier = std::max(j->tier, snap_.partitions[it->second].priority_tier);
    }
    last_parts_ = &v.partitions;
    last_parts_ids_ = j->parts;
    last_parts_tier_ = j->tier;
  }
  // The (account, user) association: fair share and membership are per association.
  auto [assoc, fresh] = assoc_ids_.try_emplace(
      (static_cast<uint64_t>(j->account) << 32) | static_cast<uint32_t>(j->user),
      static_cast<int32_t>(assoc_member_.size()));
  j->assoc = assoc->second;
  if (fresh) {
    bool in = !index_.Configured(j->account) || index_.accounts[j->account].users.empty() ||
              index_.accounts[j->account].users.count(v.user) > 0;
    assoc_member_.push_back(in);
    assoc_names_.push_back({v.account, v.user});
  }
  // Whether `Eligibility::Check` has anything to look at.
  const bool member = assoc_member_[j->assoc];
  bool qos_allowed = true;
  if (j->qos >= 0 && index_.Configured(j->account) &&
      index_.accounts[j->account].allowed_qos != nullptr) {
    const auto& allowed = *index_.accounts[j->account].allowed_qos;
    qos_allowed =
        std::find(allowed.begin(), allowed.end(), index_.qos[j->qos].config->name) != allowed.end();
  }
  j->needs_check = v.held || v.held_by_admin || v.begin_time > now_ || !v.dependencies.empty() ||
                   (v.array_max_running > 0 && v.array_job_id.value != 0) ||
                   !v.reservation.empty() || !j->account_known || !member || j->qos < 0 ||
                   !qos_allowed;
}

int JobTable::FindAccount(std::string_view name) const {
  auto it = cache_.account_ids.find(name);
  return it == cache_.account_ids.end() ? -1 : it->second;
}

int JobTable::FindUser(std::string_view name) const {
  auto it = cache_.user_ids.find(name);
  return it == cache_.user_ids.end() ? -1 : it->second;
}

int32_t JobTable::FindAssoc(int account, int user) const {
  auto it = assoc_ids_.find((static_cast<uint64_t>(account) << 32) | static_cast<uint32_t>(user));
  return it == assoc_ids_.end() ? -1 : it->second;
}

}  // namespace corral::sched::internal
