#include "controller/internal/gpu_stats_book.h"

#include <algorithm>

#include "core/log.h"

namespace corral::controller::internal {
namespace {

// The job's allocation on `node`, or null.
const NodeAllocation* On(const Job& job, const std::string& node) {
  for (const auto& na : job.allocation.nodes) {
    if (na.node_name == node) return &na;
  }
  return nullptr;
}

}  // namespace

void GpuStatsBook::Recover(const std::map<JobId, std::string>& stored) {
  for (const auto& [id, body] : stored) {
    auto series = DecodeGpuSeries(body);
    const JobEntry* e = jobs_.Find(id);
    if (!series) {
      CORRAL_LOG(Warn) << "job " << id.ToString()
                       << ": stored GPU series dropped: " << series.error().message;
      continue;
    }
    if (e == nullptr || e->job.state != JobState::kRunning ||
        e->job.allocation.generation != series->generation) {
      continue;
    }
    live_[id] = Entry{std::move(*series), false};
  }
}

size_t GpuStatsBook::Observe(const std::string& node, const std::vector<api::GpuSample>& samples) {
  size_t kept = 0;
  for (const api::GpuSample& s : samples) {
    if (s.job.value == 0) continue;
    const JobEntry* e = jobs_.Find(s.job);
    if (e == nullptr || e->job.state != JobState::kRunning) continue;
    const NodeAllocation* here = On(e->job, node);
    if (here == nullptr || !here->gpus.contains(s.gpu)) continue;
    Entry& entry = live_[s.job];
    if (entry.series.job != s.job || entry.series.generation != e->job.allocation.generation) {
      if (entry.dirty) Write(entry);  // the previous run's last readings
      entry = Entry{};
      entry.series.job = s.job;
      entry.series.generation = e->job.allocation.generation;
    }
    GpuReading r{.gpu = s.gpu,
                 .time = s.time,
                 .utilization = s.utilization,
                 .memory_used_mb = s.memory_used_mb,
                 .power_watts = s.power_watts,
                 .energy_mj = s.energy_mj};
    if (AddGpuReading(&entry.series, node, r)) {
      entry.dirty = true;
      ++kept;
    }
  }
  return kept;
}

void GpuStatsBook::Write(Entry& e) {
  out_.writes.PutGpuSeries(e.series.job, EncodeGpuSeries(e.series));
  e.dirty = false;
}

void GpuStatsBook::Persist(MonoTime now) {
  const bool due = now - persisted_ >= kPersistInterval;
  for (auto it = live_.begin(); it != live_.end();) {
    const JobEntry* e = jobs_.Find(it->first);
    const bool running = e != nullptr && e->job.state == JobState::kRunning &&
                         e->job.allocation.generation == it->second.series.generation;
    if (running) {
      if (due && it->second.dirty) Write(it->second);
      ++it;
      continue;
    }
    if (it->second.dirty) Write(it->second);
    if (it->second.series.waste_flagged != Timestamp{}) {
      ended_notes_[it->first] = it->second.series.waste_note;
    }
    it = live_.erase(it);
  }
  if (due) persisted_ = now;
}

JobGpuSeries* GpuStatsBook::Find(JobId id) {
  auto it = live_.find(id);
  return it == live_.end() ? nullptr : &it->second.series;
}

const JobGpuSeries* GpuStatsBook::Find(JobId id) const {
  auto it = live_.find(id);
  return it == live_.end() ? nullptr : &it->second.series;
}

void GpuStatsBook::FlagChanged(JobId id) {
  if (auto it = live_.find(id); it != live_.end()) Write(it->second);
}

std::vector<JobId> GpuStatsBook::jobs() const {
  std::vector<JobId> out;
  out.reserve(live_.size());
  for (const auto& [id, e] : live_) out.push_back(id);
  return out;
}

std::string GpuStatsBook::WasteNote(JobId id) const {
  if (auto it = live_.find(id); it != live_.end()) {
    return it->second.series.waste_flagged != Timestamp{} ? it->second.series.waste_note : "";
  }
  auto it = ended_notes_.find(id);
  return it == ended_notes_.end() ? "" : it->second;
}

std::vector<std::pair<JobId, std::string>> GpuStatsBook::Flagged() const {
  std::vector<std::pair<JobId, std::string>> out;
  for (const auto& [id, e] : live_) {
    if (e.series.waste_flagged != Timestamp{}) out.emplace_back(id, e.series.waste_note);
  }
  return out;
}

}  // namespace corral::controller::internal
