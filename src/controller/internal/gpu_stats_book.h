// GpuStatsBook: the per-job GPU series (core/gpu_series.h) of the running jobs, fed by the
// agents' heartbeats, persisted in the store with the job (`WriteBatch::PutGpuSeries`), and
// the GPU-waste flags (internal/gpu_waste.h decides; controller_gpu.cc applies).
//
// A reading is kept when its job is RUNNING with that GPU of that node in its allocation;
// others (a job that ended, a GPU it does not hold) are dropped. A new run of a job (a new
// generation) starts a new series. Series are written at most once per `kPersistInterval`
// while they change, and once more when their job stops running, after which the book
// forgets them (the store keeps them: `Store::GetGpuSeries`). A controller that restarts
// loses at most the readings of the last interval.
//
// Not thread-safe; state thread only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/messages.h"
#include "controller/internal/job_table.h"
#include "controller/internal/outputs.h"
#include "core/gpu_series.h"

namespace corral::controller::internal {

inline constexpr Duration kPersistInterval = Seconds(60);

class GpuStatsBook {
 public:
  GpuStatsBook(const JobTable& jobs, Outputs& out) : jobs_(jobs), out_(out) {}
  GpuStatsBook(const GpuStatsBook&) = delete;
  GpuStatsBook& operator=(const GpuStatsBook&) = delete;

  // The stored series of running jobs (`StoredState::gpu_series`). One that cannot be decoded,
  // or of another run, is dropped with a log line.
  void Recover(const std::map<JobId, std::string>& stored);
  // The readings `node`'s agent sent; returns how many were kept.
  size_t Observe(const std::string& node, const std::vector<api::GpuSample>& samples);
  // Writes what changed (at most once per kPersistInterval, `now` monotonic), and the final
  // series of jobs that no longer run, which it then forgets.
  void Persist(MonoTime now);

  // The series of running job `id`, or null.
  JobGpuSeries* Find(JobId id);
  const JobGpuSeries* Find(JobId id) const;
  // The waste flag of `id`'s series changed: it is written now (flags are rare and should
  // survive a restart).
  void FlagChanged(JobId id);
  // The jobs with a series, in id order.
  std::vector<JobId> jobs() const;
  // Why job `id` is flagged as wasting its GPUs ("" when it is not), also after it ended (until
  // a restart).
  std::string WasteNote(JobId id) const;
  // Every flagged running job and why (for the metrics: a gauge per job).
  std::vector<std::pair<JobId, std::string>> Flagged() const;

 private:
  struct Entry {
    JobGpuSeries series;
    bool dirty = false;
  };
  void Write(Entry& e);

  const JobTable& jobs_;
  Outputs& out_;
  std::map<JobId, Entry> live_;
  std::map<JobId, std::string> ended_notes_;  // flagged jobs that stopped running
  MonoTime persisted_{};
};

}  // namespace corral::controller::internal
