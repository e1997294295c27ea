#include "sched/internal/eligibility.h"

#include <algorithm>
#include <string>

#include "sched/internal/explain.h"

namespace corral::sched::internal {

Eligibility::Eligibility(const ConfigIndex& index, const ClusterSnapshot& snapshot,
                         const std::vector<const Reservation*>& windows, const UseLimits& limits,
                         Timestamp now)
    : index_(index), snap_(snapshot), windows_(windows), limits_(limits), now_(now) {
  finished_.reserve(snap_.finished.size());
  for (const FinishedJobView& f : snap_.finished) finished_.push_back(&f);
  std::sort(finished_.begin(), finished_.end(),
            [](const FinishedJobView* a, const FinishedJobView* b) { return a->id < b->id; });
}

void Eligibility::Check(const JobInfo& j, std::vector<Blocker>* out, Timestamp* estimate) {
  const PendingJobView& v = *j.view;
  if (v.held) out->push_back({.code = "JobHeldUser", .detail = "held by its user", .scope = "job"});
  if (v.held_by_admin)
    out->push_back({.code = "JobHeldAdmin", .detail = "held by an administrator", .scope = "job"});
  if (v.begin_time > now_) {
    out->push_back({.code = "BeginTime",
                    .detail = "not before " + FormatTimestamp(v.begin_time),
                    .scope = "job",
                    .resource = "time"});
    *estimate = std::max(*estimate, v.begin_time);
  }
  if (!v.dependencies.empty()) CheckDependencies(j, out);
  if (v.array_max_running > 0 && v.array_job_id.value != 0) {
    const uint32_t running = limits_.array_running(v.array_job_id);
    if (running >= v.array_max_running) {
      out->push_back({.code = "JobArrayTaskLimit",
                      .detail = "array " + v.array_job_id.ToString() + " runs " +
                                std::to_string(running) + " of at most " +
                                std::to_string(v.array_max_running) + " tasks at once",
                      .scope = "array",
                      .entity = v.array_job_id.ToString(),
                      .resource = "jobs",
                      .used = running,
                      .limit = v.array_max_running,
                      .requested = 1});
    }
  }
  if (!v.reservation.empty()) {
    Blocker b{.code = "Reservation", .scope = "reservation", .entity = v.reservation};
    if (j.reservation < 0) {
      b.detail = "no such reservation " + v.reservation;
      out->push_back(b);
    } else {
      const Reservation& r = *windows_[j.reservation];
      bool user_ok =
          r.users.empty() || std::find(r.users.begin(), r.users.end(), v.user) != r.users.end();
      bool acct_ok = r.accounts.empty() ||
                     std::find(r.accounts.begin(), r.accounts.end(), v.account) != r.accounts.end();
      if (!(r.users.empty() && r.accounts.empty()) &&
          !((!r.users.empty() && user_ok) || (!r.accounts.empty() && acct_ok))) {
        b.detail =
            "user " + v.user + " (account " + v.account + ") may not use reservation " + r.name;
        out->push_back(b);
      } else if (now_ >= r.end) {
        b.detail = "reservation " + r.name + " ended at " + FormatTimestamp(r.end);
        out->push_back(b);
      } else if (now_ < r.start) {
        b.detail = "reservation " + r.name + " starts at " + FormatTimestamp(r.start);
        *estimate = std::max(*estimate, r.start);
        out->push_back(b);
      }
    }
  }
  if (!j.account_known) {
    out->push_back({.code = "InvalidAccount",
                    .detail = "no such account " + v.account,
                    .scope = "account",
                    .entity = v.account});
  } else if (index_.Configured(j.account) && !index_.accounts[j.account].users.empty() &&
             !index_.accounts[j.account].users.count(v.user)) {
    out->push_back({.code = "InvalidAccount",
                    .detail = "user " + v.user + " is not a member of account " + v.account,
                    .scope = "account",
                    .entity = v.account});
  }
  if (j.qos < 0) {
    out->push_back(
        {.code = "InvalidQOS", .detail = "no such qos " + v.qos, .scope = "qos", .entity = v.qos});
  } else if (index_.Configured(j.account) && index_.accounts[j.account].allowed_qos != nullptr) {
    const auto& allowed = *index_.accounts[j.account].allowed_qos;
    const std::string& name = index_.qos[j.qos].config->name;
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      out->push_back({.code = "InvalidQOS",
                      .detail = "account " + v.account + " may not use qos " + name,
                      .scope = "qos",
                      .entity = name});
    }
  }
}

void Eligibility::CheckDependencies(const JobInfo& j, std::vector<Blocker>* out) {
  const PendingJobView& v = *j.view;
  enum class Dep { kMet, kWait, kImpossible };
  std::vector<JobId> waiting, never;
  size_t met = 0, total = 0;
  auto find_running = [&](JobId id) -> const RunningJobView* {
    auto it = std::lower_bound(snap_.running.begin(), snap_.running.end(), id,
                               [](const RunningJobView& r, JobId x) { return r.id < x; });
    return it != snap_.running.end() && it->id == id ? &*it : nullptr;
  };
  auto is_pending = [&](JobId id) {
    auto it = std::lower_bound(snap_.pending.begin(), snap_.pending.end(), id,
                               [](const PendingJobView& p, JobId x) { return p.id < x; });
    return it != snap_.pending.end() && it->id == id;
  };
  auto find_finished = [&](JobId id) -> const FinishedJobView* {
    auto it = std::lower_bound(finished_.begin(), finished_.end(), id,
                               [](const FinishedJobView* f, JobId x) { return f->id < x; });
    return it != finished_.end() && (*it)->id == id ? *it : nullptr;
  };
  for (const Dependency& dep : v.dependencies) {
    if (dep.type == DependencyType::kSingleton) {
      ++total;
      if (!singletons_indexed_) {
        singletons_indexed_ = true;
        for (const RunningJobView& r : snap_.running) singleton_running_.insert({r.user, r.name});
        for (const PendingJobView& p : snap_.pending)
          singleton_first_.emplace(
              std::make_pair(std::string_view(p.user), std::string_view(p.name)), p.id);
      }
      auto first = singleton_first_.find({v.user, v.name});
      bool blocked = singleton_running_.count({v.user, v.name}) > 0 ||
                     (first != singleton_first_.end() && first->second < v.id);
      if (blocked) {
        waiting.push_back(v.id);
      } else {
        ++met;
      }
      continue;
    }
    for (JobId id : dep.jobs) {
      ++total;
      Dep state = Dep::kWait;
      if (const RunningJobView* r = find_running(id)) {
        if (dep.type == DependencyType::kAfter) {
          state = now_ >= AddSat(r->start_time, dep.delay) ? Dep::kMet : Dep::kWait;
        }
      } else if (is_pending(id)) {
        state = Dep::kWait;
      } else if (const FinishedJobView* f = find_finished(id)) {
        bool ok = f->state == JobState::kCompleted && f->exit_code == 0;
        switch (dep.type) {
          case DependencyType::kAfter:
            state = f->start_time == Timestamp{} || now_ >= AddSat(f->start_time, dep.delay)
                        ? Dep::kMet
                        : Dep::kWait;
            break;
          case DependencyType::kAfterAny:
            state = now_ >= AddSat(f->end_time, dep.delay) ? Dep::kMet : Dep::kWait;
            break;
          case DependencyType::kAfterOk:
          case DependencyType::kAfterCorr:
            state = ok ? Dep::kMet : Dep::kImpossible;
            break;
          case DependencyType::kAfterNotOk:
            state = ok ? Dep::kImpossible : Dep::kMet;
            break;
          case DependencyType::kSingleton:
            break;
        }
      } else {
        state = Dep::kImpossible;  // unknown job: nothing can ever satisfy it
      }
      if (state == Dep::kMet) ++met;
      if (state == Dep::kWait) waiting.push_back(id);
      if (state == Dep::kImpossible) never.push_back(id);
    }
  }
  bool satisfied = v.dependency_any ? met > 0 : met == total;
  if (satisfied) return;
  bool impossible = v.dependency_any ? never.size() == total : !never.empty();
  if (impossible) {
    out->push_back({.code = "DependencyNeverSatisfied",
                    .detail = "dependency on job " + JoinJobIds(never) + " can never be satisfied",
                    .scope = "job",
                    .entity = never.empty() ? "" : never.front().ToString(),
                    .jobs = never});
  } else {
    bool singleton_only = !waiting.empty() && waiting.front() == v.id;
    out->push_back({.code = "Dependency",
                    .detail = singleton_only ? "singleton: another job named " + v.name + " of " +
                                                   v.user + " runs or is older"
                                             : "dependency on job " + JoinJobIds(waiting),
                    .scope = "job",
                    .entity = waiting.empty() ? "" : waiting.front().ToString(),
                    .jobs = waiting});
  }
}

}  // namespace corral::sched::internal
