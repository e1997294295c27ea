// Metrics of one simulated (or recorded) run, and their terminal table and CSV forms.
//
// Definitions (docs/simulator.md):
//   - JCT (job completion time): end - submit, over jobs that ran to their end (completed or
//     timed out). Queueing delay ("wait"): first start - submit, over jobs that started.
//   - Bounded slowdown: max(1, JCT / max(run time, 10 s)), run time being the trace duration.
//   - Makespan: from trace time 0 to the last job's end.
//   - Utilisation: allocated GPU-time / (capacity x makespan); the time series is in the SVG.
//   - Fairness: Jain's index (sum x)^2 / (n sum x^2) of the mean bounded slowdown of each user,
//     or of each queue when the trace has a single user; 1 = every entity equally slowed down.
//   - Preemptions and the GPU-time they lost (work since the victim's last checkpoint).
//   - Gang jobs: jobs with 8 or more GPUs; their count and queueing delay.
// Percentiles are nearest-rank. Means of empty sets are 0.
//
// Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/simulator.h"
#include "sim/workload.h"

namespace corral::sim {

inline constexpr double kSlowdownBoundSeconds = 10.0;
inline constexpr uint32_t kGangGpus = 8;

struct PolicyMetrics {
  std::string policy;
  uint64_t jobs = 0;           // ran to their end (completed + timeout)
  uint64_t refused = 0;        // refused at submit
  uint64_t never_started = 0;  // still waiting when nothing else could happen
  uint64_t timeouts = 0;
  uint64_t cancelled = 0;  // preempted in cancel mode
  double mean_jct_s = 0, p50_jct_s = 0, p95_jct_s = 0, p99_jct_s = 0;
  double mean_wait_s = 0, p50_wait_s = 0, p95_wait_s = 0, p99_wait_s = 0;
  double mean_bsld = 0, p99_bsld = 0;
  double makespan_s = 0;
  double util = 0;
  double jain = 1;
  std::string jain_over;  // "user" or "queue"
  uint64_t preemptions = 0;
  double lost_gpu_hours = 0;
  uint64_t gang_jobs = 0;
  double gang_mean_wait_s = 0, gang_p95_wait_s = 0;
};

// Metrics of `result` (a run of `workload`).
PolicyMetrics ComputeMetrics(const std::string& policy, const Workload& workload,
                             const SimResult& result);

// The values of `q` (0..100) percentile by nearest rank over `values` (sorted or not); 0 if empty.
double Percentile(std::vector<double> values, double q);

// The CSV: a header row, then one row per policy. Numbers have fixed decimals, so equal runs
// give byte-identical files.
std::string FormatMetricsCsv(const std::vector<PolicyMetrics>& rows);

// An aligned table for the terminal (durations in s/m/h/d).
std::string FormatMetricsTable(const std::vector<PolicyMetrics>& rows);

// "45s", "12.5m", "3.2h", "4.1d".
std::string HumanDuration(double seconds);

}  // namespace corral::sim
