#include "controller/internal/job_table.h"

#include <algorithm>
#include <charconv>

#include "core/array_spec.h"

namespace corral::controller::internal {
namespace {

template <typename T>
bool Contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

Status CheckRunning(const Job& job) {
  if (job.state == JobState::kRunning) return {};
  return FailedPrecondition("job " + job.id.ToString() + ": not running (" +
                            std::string(JobStateName(job.state)) + ")");
}

JobEntry& JobTable::Restore(Job job, MonoTime now) {
  JobEntry entry;
  entry.job = std::move(job);  // 100,000 jobs recover in well under a second: no copies
  const Job& j = entry.job;
  next_job_id_ = std::max(next_job_id_, j.id.value + 1);
  next_generation_ = std::max(next_generation_, j.allocation.generation.value + 1);
  if (j.state == JobState::kPending) pending_.insert(j.id);
  if (j.state == JobState::kRunning) {
    // The launch may never have left before the crash: the controller sends it again.
    entry.launch_accepted = false;
    entry.launch_sent = now;
    entry.cancel_requested = j.reason == kCancelRequested;
    running_.insert(j.id);
  }
  if (!IsTerminal(j.state)) ++active_by_user_[j.spec.user];
  if (!j.spec.array.empty() && !IsTerminal(j.state)) {
    if (auto a = ParseArraySpec(j.spec.array)) entry.array_max_running = a->max_running;
  }
  JobId id = j.id;
  JobEntry& added = jobs_.emplace_hint(jobs_.end(), id, std::move(entry))->second;  // in id order
  counts_.Update(added.job, added.counted);
  return added;
}

void JobTable::RestoreCounters(const std::map<std::string, std::string>& meta) {
  auto restore = [&](const char* key, uint64_t* out) {
    auto it = meta.find(key);
    if (it == meta.end()) return;
    uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec == std::errc()) *out = std::max(*out, v);
  };
  restore("next_job_id", &next_job_id_);
  restore("next_generation", &next_generation_);
}

JobEntry* JobTable::Find(JobId id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

const JobEntry* JobTable::Find(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

Result<JobEntry*> JobTable::Get(JobId id) {
  JobEntry* e = Find(id);
  if (e == nullptr) return NotFound("job " + id.ToString() + ": no such job");
  return e;
}

Result<const JobEntry*> JobTable::Get(JobId id) const {
  const JobEntry* e = Find(id);
  if (e == nullptr) return NotFound("job " + id.ToString() + ": no such job");
  return e;
}

std::optional<JobId> JobTable::ArrayTask(JobId job, uint32_t task) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return std::nullopt;
  JobId array = it->second.job.array_job_id.value != 0 ? it->second.job.array_job_id : job;
  for (auto t = jobs_.lower_bound(array); t != jobs_.end() && t->second.job.array_job_id == array;
       ++t) {
    if (t->second.job.array_task_id == task) return t->first;
  }
  return std::nullopt;
}

api::JobInfo JobTable::Info(const JobEntry& e) {
  api::JobInfo info;
  info.job = e.job;
  info.reason_detail = e.reason_detail;
  info.estimated_start = e.estimated_start;
  info.priority = e.job.state == JobState::kPending ? e.priority : 0;
  return info;
}

std::vector<api::JobInfo> JobTable::List(const JobFilter& f, Timestamp recent) const {
  std::vector<api::JobInfo> out;
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
    out.push_back(Info(e));
  };
  if (!f.ids.empty()) {
    std::set<JobId> seen;
    for (JobId id : f.ids) {
      auto it = jobs_.find(id);
      if (it == jobs_.end()) continue;
      if (seen.insert(id).second) visit(it->second);
      // An array's tasks have consecutive ids from the array's job id on.
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

JobId JobTable::AllocateId() {
  JobId id(next_job_id_++);
  out_.writes.PutMeta("next_job_id", std::to_string(next_job_id_));
  return id;
}

Generation JobTable::AllocateGeneration() {
  Generation g(next_generation_++);
  out_.writes.PutMeta("next_generation", std::to_string(next_generation_));
  return g;
}

void JobTable::Add(JobEntry e) {
  ++transitions_.submitted;
  Put(e);
  JobId id = e.job.id;
  added_uncommitted_.push_back(id);
  if (e.job.state == JobState::kPending) pending_.insert(id);
  if (!IsTerminal(e.job.state)) ++active_by_user_[e.job.spec.user];
  jobs_[id] = std::move(e);
}

void JobTable::SetState(JobEntry& e, JobState state) {
  JobId id = e.job.id;
  if (IsTerminal(e.job.state) && !IsTerminal(state)) {
    finished_.erase(std::remove(finished_.begin(), finished_.end(), id), finished_.end());
  }
  if (e.job.state == JobState::kRunning && state != JobState::kRunning) {
    stopped_runs_.emplace_back(id, e.job.allocation.generation);
  }
  if (state != JobState::kPending) pending_.erase(id);
  if (state != JobState::kRunning) running_.erase(id);
  if (state == JobState::kPending) pending_.insert(id);
  if (state == JobState::kRunning) running_.insert(id);
  if (IsTerminal(state) && !IsTerminal(e.job.state)) {
    finished_.push_back(id);
    ended_uncommitted_.push_back(id);
    auto it = active_by_user_.find(e.job.spec.user);
    if (it != active_by_user_.end() && --it->second == 0) active_by_user_.erase(it);
  }
  if (!IsTerminal(state) && IsTerminal(e.job.state)) ++active_by_user_[e.job.spec.user];
  if (state != e.job.state) {
    if (state == JobState::kRunning) ++transitions_.started;
    if (state == JobState::kCompleted) ++transitions_.completed;
    if (state == JobState::kCancelled) ++transitions_.cancelled;
    if (IsTerminal(state) && state != JobState::kCompleted && state != JobState::kCancelled) {
      ++transitions_.failed;
    }
  }
  e.job.state = state;
}

uint32_t JobTable::ActiveJobsOf(const std::string& user) const {
  auto it = active_by_user_.find(user);
  return it == active_by_user_.end() ? 0 : it->second;
}

std::vector<JobId> JobTable::TakeFinished() {
  std::vector<JobId> out = std::move(finished_);
  finished_.clear();
  return out;
}

std::pair<std::vector<JobId>, std::vector<JobId>> JobTable::TakeUncommitted() {
  std::pair<std::vector<JobId>, std::vector<JobId>> out{std::move(added_uncommitted_),
                                                        std::move(ended_uncommitted_)};
  added_uncommitted_.clear();
  ended_uncommitted_.clear();
  return out;
}

std::vector<std::pair<JobId, Generation>> JobTable::TakeStoppedRuns() {
  std::vector<std::pair<JobId, Generation>> out = std::move(stopped_runs_);
  stopped_runs_.clear();
  return out;
}

}  // namespace corral::controller::internal
