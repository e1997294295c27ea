// GpuSeries: a job's GPU readings kept compact — per GPU of its run, a bounded series of
// time buckets (sample count, mean and peak utilisation, peak memory and power, the energy
// drawn), so that a week-long job costs the same few kilobytes as a minute-long one.
//
// Downsampling: a track (one GPU) starts with buckets `kInitialBucketWidth` wide, counted from
// its first sample. A sample that would fall past the last of `kMaxBuckets` buckets makes the
// track merge its buckets 2:1 (the width doubles: counts and sums add, maxima take the max)
// until it fits. A track thus covers any length of run with at most `kMaxBuckets` buckets and
// at least half of them in use. Energy comes from the GPU's energy counter: each sample adds
// the counter's growth since the previous one (a counter that went back, a reset, adds 0).
//
// `EncodeGpuSeries`/`DecodeGpuSeries` give the stored form (a version byte, then varints,
// little-endian doubles and length-prefixed strings in a fixed order; a new field means a new
// version, and the decoder keeps reading the old ones). Used by the controller (which keeps and
// persists the series), the store (an opaque blob) and the API (summaries).
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/result.h"
#include "core/time.h"

namespace corral {

// A GPU below this utilisation (percent) counts as idle in `GpuBucket::idle_samples`.
inline constexpr double kGpuIdleUtilization = 1.0;

// One time bucket of one GPU.
struct GpuBucket {
  Timestamp start{};  // the bucket covers [start, start + track width)
  uint32_t samples = 0;
  uint32_t idle_samples = 0;  // samples under kGpuIdleUtilization
  double util_sum = 0;        // percent, summed over samples
  double util_max = 0;
  uint64_t mem_max_mb = 0;
  double power_max_watts = 0;
  double energy_joules = 0;  // drawn during the bucket
  double util_mean() const { return samples == 0 ? 0 : util_sum / samples; }
  bool operator==(const GpuBucket&) const = default;
};

// One GPU of a job's run.
struct GpuTrack {
  std::string node;
  uint32_t gpu = 0;                // node-local index
  Duration width{};                // each bucket's span
  Timestamp origin{};              // where bucket 0 starts (the first sample's time)
  std::vector<GpuBucket> buckets;  // by start; only buckets with samples
  Timestamp last_time{};           // the last sample's time
  uint64_t last_energy_mj = 0;     // the energy counter then
  bool operator==(const GpuTrack&) const = default;
};

// The whole series of one run of a job, plus its GPU-waste flag.
struct JobGpuSeries {
  JobId job;
  Generation generation;         // the run it belongs to
  std::vector<GpuTrack> tracks;  // by (node, gpu)
  Timestamp waste_flagged{};     // when it was flagged as wasting its GPUs; epoch = not
  std::string waste_note;        // why ("GPUs 0,1 under 5% for 30m0s")
  bool operator==(const JobGpuSeries&) const = default;
};

// One reading of one GPU (the controller's copy of the agents' `api::GpuSample`).
struct GpuReading {
  uint32_t gpu = 0;
  Timestamp time{};
  double utilization = 0;
  uint64_t memory_used_mb = 0;
  double power_watts = 0;
  uint64_t energy_mj = 0;
};

inline constexpr size_t kMaxBuckets = 120;
inline constexpr Duration kInitialBucketWidth = Seconds(10);

// Adds `reading` of GPU `reading.gpu` of `node` to `series` (a new track when it has none).
// A reading older than its track's last one is dropped (a replayed heartbeat); returns whether
// it was added.
bool AddGpuReading(JobGpuSeries* series, const std::string& node, const GpuReading& reading);

// What a track adds up to.
struct GpuTrackSummary {
  uint32_t samples = 0;
  double util_mean = 0;
  double util_max = 0;
  double idle_fraction = 0;  // of the samples, under kGpuIdleUtilization
  uint64_t mem_max_mb = 0;
  double power_max_watts = 0;
  double energy_joules = 0;
  bool operator==(const GpuTrackSummary&) const = default;
};
GpuTrackSummary Summarize(const GpuTrack& track);

// The part of the track's samples that lie in buckets whose mean utilisation is under
// `threshold` (percent): 0 for a track with no samples.
double WastedFraction(const GpuTrack& track, double threshold);

// The stored form.
std::string EncodeGpuSeries(const JobGpuSeries& series);
// Returns kInternal saying what is wrong when `data` is not a valid encoding.
Result<JobGpuSeries> DecodeGpuSeries(std::string_view data);

}  // namespace corral
