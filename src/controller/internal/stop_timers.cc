#include "controller/internal/stop_timers.h"

#include <algorithm>

namespace corral::controller::internal {

const PendingStop* StopTimers::Find(JobId job, Generation generation) const {
  auto it = stops_.find(job);
  if (it == stops_.end() || it->second.generation != generation) return nullptr;
  return &it->second;
}

void StopTimers::Start(JobId job, PendingStop stop) { stops_[job] = std::move(stop); }

std::optional<PendingStop> StopTimers::Take(JobId job, Generation generation) {
  auto it = stops_.find(job);
  if (it == stops_.end() || it->second.generation != generation) return std::nullopt;
  PendingStop p = std::move(it->second);
  stops_.erase(it);
  return p;
}

std::vector<std::pair<JobId, PendingStop>> StopTimers::TakeDue(MonoTime now) {
  std::vector<std::pair<JobId, PendingStop>> due;
  for (auto it = stops_.begin(); it != stops_.end();) {
    if (it->second.deadline <= now) {
      due.emplace_back(it->first, std::move(it->second));
      it = stops_.erase(it);
    } else {
      ++it;
    }
  }
  return due;
}

MonoTime StopTimers::NextDeadline() const {
  MonoTime next = MonoTime::max();
  for (const auto& [id, p] : stops_) next = std::min(next, p.deadline);
  return next;
}

std::optional<JobId> StopTimers::PreemptorOf(JobId victim) const {
  auto it = preempted_for_.find(victim);
  if (it == preempted_for_.end()) return std::nullopt;
  return it->second;
}

}  // namespace corral::controller::internal
