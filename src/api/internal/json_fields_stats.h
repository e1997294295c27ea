// The `Fields()` tables of a running job's live usage (api/job_stats.h).
//
// Part of the JSON codecs (api/json_codec.h): included through json_fields.h only.
#pragma once

#include "api/internal/json_base.h"
#include "api/job_stats.h"

namespace corral::api::internal {

template <typename V, Is<TaskUsage> S>
void Fields(V& v, S& s) {
  v("step", s.step);
  v("task", s.task);
  v("pids", s.pids);
  v("cpu_seconds", s.cpu_seconds);
  v("rss_kb", s.rss_kb);
  v("max_rss_kb", s.max_rss_kb);
  v("vmsize_kb", s.vmsize_kb);
  v("max_vmsize_kb", s.max_vmsize_kb);
  v("pages", s.pages);
  v("read_bytes", s.read_bytes);
  v("write_bytes", s.write_bytes);
  v("cpu_freq_khz", s.cpu_freq_khz);
}

template <typename V, Is<GpuUse> S>
void Fields(V& v, S& s) {
  v("index", s.index);
  v("utilization", s.utilization);
  v("memory_used_mb", s.memory_used_mb);
}

template <typename V, Is<NodeRunStats> S>
void Fields(V& v, S& s) {
  v("node", s.node);
  v("job", s.job);
  v("generation", s.generation);
  v("tasks", s.tasks);
  v("cgroup", s.cgroup);
  v("cgroup_memory_kb", s.cgroup_memory_kb);
  v("cgroup_memory_peak_kb", s.cgroup_memory_peak_kb);
  v("cgroup_cpu_seconds", s.cgroup_cpu_seconds);
  v("cgroup_pids", s.cgroup_pids);
  v("gpus", s.gpus);
  v("error", s.error);
}

template <typename V, Is<JobStatsInfo> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("generation", s.generation);
  v("nodes", s.nodes);
}

}  // namespace corral::api::internal
