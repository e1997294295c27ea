// Controller: per-job GPU statistics and the GPU-waste policy (docs/metrics-jobs.md). The
// series are kept by internal/gpu_stats_book.h; the decisions are internal/gpu_waste.h's.
#include "controller/controller.h"
#include "controller/internal/controller_state.h"
#include "controller/internal/gpu_waste.h"
#include "core/log.h"

namespace corral::controller {
namespace {

// How often the GPU-waste policy is evaluated (it works at the series' bucket resolution).
constexpr Duration kWasteCheckInterval = Seconds(5);

api::GpuStatsInfo MakeStats(const internal::ControllerState& s, const JobGpuSeries& series) {
  api::GpuStatsInfo info;
  info.job = series.job;
  info.waste_flagged = series.waste_flagged;
  info.waste_note = series.waste_note;
  for (const GpuTrack& t : series.tracks) {
    api::GpuStatsGpu g;
    g.node = t.node;
    g.gpu = t.gpu;
    if (const internal::NodeEntry* n = s.nodes.Find(t.node)) {
      for (const GpuInfo& inv : n->node.inventory.gpus) {
        if (inv.index != t.gpu) continue;
        g.model = inv.model;
        g.memory_mb = inv.memory_mb;
      }
    }
    GpuTrackSummary sum = Summarize(t);
    g.samples = sum.samples;
    g.util_mean = sum.util_mean;
    g.util_max = sum.util_max;
    g.idle_fraction = sum.idle_fraction;
    g.mem_max_mb = sum.mem_max_mb;
    g.power_max_watts = sum.power_max_watts;
    g.energy_joules = sum.energy_joules;
    g.bucket_width = t.width;
    for (const GpuBucket& b : t.buckets) {
      g.buckets.push_back({.start = b.start,
                           .samples = b.samples,
                           .util_mean = b.util_mean(),
                           .util_max = b.util_max,
                           .mem_max_mb = b.mem_max_mb,
                           .energy_joules = b.energy_joules});
    }
    info.gpus.push_back(std::move(g));
  }
  return info;
}

// Applies the policy's verdict for running job `e`.
void ApplyWaste(internal::ControllerState& s, internal::JobEntry& e, JobGpuSeries& series,
                const GpuWastePolicy& policy, Timestamp now) {
  using Kind = internal::WasteVerdict::Kind;
  internal::WasteVerdict v = internal::DecideWaste(series, policy, now);
  const std::string job = "job " + e.job.id.ToString();
  switch (v.kind) {
    case Kind::kNone:
      return;
    case Kind::kFlag:
      series.waste_flagged = now;
      series.waste_note = v.note;
      s.gpu_stats.FlagChanged(e.job.id);
      ++s.metrics.waste_actions[static_cast<size_t>(GpuWasteAction::kNotify)];
      CORRAL_LOG(Warn) << job << " (user " << e.job.spec.user << "): wasting its GPUs: " << v.note;
      return;
    case Kind::kClear:
      CORRAL_LOG(Info) << job << ": uses its GPUs again (was: " << series.waste_note << ")";
      series.waste_flagged = Timestamp{};
      series.waste_note.clear();
      s.gpu_stats.FlagChanged(e.job.id);
      return;
    case Kind::kAct: {
      const bool requeue = policy.action == GpuWasteAction::kRequeue;
      ++s.metrics.waste_actions[static_cast<size_t>(requeue ? GpuWasteAction::kRequeue
                                                            : GpuWasteAction::kCancel)];
      CORRAL_LOG(Warn) << job << ": " << (requeue ? "requeued" : "cancelled")
                       << " by the GPU-waste policy: " << v.note;
      s.lifecycle.StopNow(e, requeue ? StopAction::kRequeue : StopAction::kCancel,
                          "GPU waste: " + v.note);
      s.out.MarkDirty();
      return;
    }
  }
}

}  // namespace

namespace internal {

void TickGpuStats(ControllerState& s) {
  const MonoTime mono = s.clock.MonotonicNow();
  if (mono - s.last_waste_check >= kWasteCheckInterval) {
    s.last_waste_check = mono;
    const Timestamp now = s.clock.Now();
    for (JobId id : s.gpu_stats.jobs()) {
      JobEntry* e = s.jobs.Find(id);
      JobGpuSeries* series = s.gpu_stats.Find(id);
      if (e == nullptr || series == nullptr || e->job.state != JobState::kRunning ||
          e->job.allocation.generation != series->generation || e->cancel_requested) {
        continue;
      }
      ApplyWaste(s, *e, *series, s.config.gpu_waste.For(e->job.partition, e->job.spec.qos), now);
    }
  }
  s.gpu_stats.Persist(mono);
}

}  // namespace internal

Result<api::GpuStatsInfo> Controller::GpuStats(JobId id,
                                               const std::optional<std::string>& stored) const {
  const internal::ControllerState& s = *s_;
  CORRAL_ASSIGN_OR_RETURN(const internal::JobEntry* e, s.jobs.Get(id));
  if (const JobGpuSeries* live = s.gpu_stats.Find(id);
      live != nullptr && live->generation == e->job.allocation.generation) {
    return MakeStats(s, *live);
  }
  if (!stored) return api::GpuStatsInfo{.job = id};
  auto series = DecodeGpuSeries(*stored);
  if (!series) return Internal("job " + id.ToString() + ": " + series.error().message);
  return MakeStats(s, *series);
}

std::map<JobId, JobGpuSeries> Controller::LiveGpuSeries(const std::vector<JobId>& ids) const {
  std::map<JobId, JobGpuSeries> out;
  for (JobId id : ids) {
    if (const JobGpuSeries* live = s_->gpu_stats.Find(id)) out.emplace(id, *live);
  }
  return out;
}

std::vector<std::pair<JobId, std::string>> Controller::GpuWasteFlags() const {
  return s_->gpu_stats.Flagged();
}

}  // namespace corral::controller
