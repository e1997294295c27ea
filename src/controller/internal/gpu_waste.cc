#include "controller/internal/gpu_waste.h"

#include <algorithm>
#include <cstdio>

#include "core/duration.h"

namespace corral::controller::internal {
namespace {

// "gpu01:0,1 gpu02:3"
std::string NameTracks(const std::vector<GpuTrack>& tracks) {
  std::string out;
  std::string node;
  for (const GpuTrack& t : tracks) {
    if (t.node != node) {
      if (!out.empty()) out += ' ';
      out += t.node + ":";
      node = t.node;
    } else {
      out += ',';
    }
    out += std::to_string(t.gpu);
  }
  return out;
}

std::string Percent(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g%%", p);
  return buf;
}

}  // namespace

WasteVerdict DecideWaste(const JobGpuSeries& series, const GpuWastePolicy& policy, Timestamp now) {
  using Kind = WasteVerdict::Kind;
  const bool flagged = series.waste_flagged != Timestamp{};
  if (!policy.enabled) return {flagged ? Kind::kClear : Kind::kNone, ""};
  if (series.tracks.empty()) return {};
  Duration idle_for = Duration::max();
  for (const GpuTrack& t : series.tracks) {
    if (now - t.last_time > policy.window) return {};  // not reporting: not judged
    Timestamp idle_since = t.origin;
    for (const GpuBucket& b : t.buckets) {
      if (b.samples > 0 && b.util_mean() >= policy.threshold) idle_since = b.start + t.width;
    }
    idle_for = std::min(idle_for, t.last_time - idle_since);
  }
  const bool wasting = idle_for >= policy.window;
  if (!wasting) return {flagged ? Kind::kClear : Kind::kNone, ""};
  std::string note = std::string(series.tracks.size() == 1 ? "GPU " : "GPUs ") +
                     NameTracks(series.tracks) + " under " + Percent(policy.threshold) +
                     " utilisation for " + FormatSlurmDuration(idle_for);
  if (!flagged) return {Kind::kFlag, note};
  if (policy.action != GpuWasteAction::kNotify && now - series.waste_flagged >= policy.grace) {
    return {Kind::kAct, note};
  }
  return {};
}

api::WasteReport BuildWasteReport(const std::vector<Job>& jobs,
                                  const std::map<JobId, JobGpuSeries>& series, double threshold,
                                  Timestamp since, Timestamp now) {
  std::map<std::string, api::WasteReportRow> users, accounts;
  for (const Job& j : jobs) {
    uint32_t gpus = 0;
    for (const auto& na : j.allocation.nodes) gpus += na.gpus.size();
    if (gpus == 0 || j.start_time == Timestamp{}) continue;
    Timestamp end = j.end_time != Timestamp{} ? j.end_time : now;
    if (end < j.start_time) continue;
    double hours = ToSecondsF(end - j.start_time) / 3600;
    double wasted = 0;
    bool flagged = false;
    if (auto it = series.find(j.id); it != series.end()) {
      for (const GpuTrack& t : it->second.tracks) wasted += hours * WastedFraction(t, threshold);
      flagged = it->second.waste_flagged != Timestamp{};
    }
    for (auto* rows : {&users, &accounts}) {
      const std::string& name = rows == &users ? j.spec.user : j.spec.account;
      api::WasteReportRow& r = (*rows)[name];
      r.name = name;
      r.jobs += 1;
      r.flagged += flagged ? 1 : 0;
      r.gpu_hours += hours * gpus;
      r.wasted_gpu_hours += wasted;
    }
  }
  auto sorted = [](const std::map<std::string, api::WasteReportRow>& rows) {
    std::vector<api::WasteReportRow> out;
    for (const auto& [name, r] : rows) out.push_back(r);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return a.wasted_gpu_hours > b.wasted_gpu_hours;
    });
    return out;
  };
  return {
      .since = since, .threshold = threshold, .users = sorted(users), .accounts = sorted(accounts)};
}

}  // namespace corral::controller::internal
