// Live usage of a running job's processes (`sstat`, GET /api/v1/jobs/{id}/stats) and the file
// copy to a job's nodes (`sbcast`, POST /api/v1/jobs/{id}/bcast), with their JSON codecs.
//
// Each agent reads its part of the run (GET /api/v1/stats at the agent, the controller's call
// for that node only): one `TaskUsage` per process it started (the batch script, each step
// task: the sums over the members of its process group, read from /proc), the run's cgroup
// totals (every process of the run there, those that left their process group too) and the
// use of the run's GPUs read now. The controller asks every node of the run and answers with
// one `NodeRunStats` per node (`error` set for a node that did not answer in time).
// Conventions as api/json_codec.h.
//
// Value types; thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/result.h"

namespace corral::api {

// One process the agent started (a task of a step, or the batch script: step
// `kBatchStepId`), summed over the live members of its process group.
struct TaskUsage {
  uint32_t step = 0;
  uint32_t task = 0;            // the task's rank in its step (0 for the batch script)
  std::vector<int64_t> pids;    // the group's members, the leader first
  double cpu_seconds = 0;       // user + system of the members (children they waited for too)
  uint64_t rss_kb = 0;          // resident now (VmRSS)
  uint64_t max_rss_kb = 0;      // the members' peaks (VmHWM), summed
  uint64_t vmsize_kb = 0;       // virtual size now (VmSize)
  uint64_t max_vmsize_kb = 0;   // the members' peaks (VmPeak), summed
  uint64_t pages = 0;           // major page faults
  uint64_t read_bytes = 0;      // rchar
  uint64_t write_bytes = 0;     // wchar
  // The mean current frequency of the CPUs the members last ran on (kHz; cpufreq's
  // scaling_cur_freq, else /proc/cpuinfo's "cpu MHz"); 0 = unknown. sstat's AveCPUFreq.
  uint64_t cpu_freq_khz = 0;
  bool operator==(const TaskUsage&) const = default;
};

// One GPU of the run on the node, read now.
struct GpuUse {
  uint32_t index = 0;
  double utilization = 0;  // percent
  uint64_t memory_used_mb = 0;
  bool operator==(const GpuUse&) const = default;
};

// What one node reports of a job's run.
struct NodeRunStats {
  std::string node;
  JobId job;
  Generation generation;
  std::vector<TaskUsage> tasks;  // in (step, task) order
  // The run's cgroup on the node (`cgroup` false: none, the totals are 0).
  bool cgroup = false;
  uint64_t cgroup_memory_kb = 0;       // memory.current (v1: usage_in_bytes)
  uint64_t cgroup_memory_peak_kb = 0;  // memory.peak (v1: max_usage_in_bytes); 0 when unknown
  double cgroup_cpu_seconds = 0;       // cpu.stat usage_usec (v2 only)
  uint64_t cgroup_pids = 0;            // pids.current
  std::vector<GpuUse> gpus;
  std::string error;  // set by the controller: why the node gave no answer
  bool operator==(const NodeRunStats&) const = default;
};

// GET /api/v1/jobs/{id}/stats: every node of the running job's allocation.
struct JobStatsInfo {
  JobId job;
  Generation generation;
  std::vector<NodeRunStats> nodes;  // in the allocation's order
  bool operator==(const JobStatsInfo&) const = default;
};

std::string EncodeNodeRunStats(const NodeRunStats& s);
Result<NodeRunStats> DecodeNodeRunStats(std::string_view json);
std::string EncodeJobStatsInfo(const JobStatsInfo& s);
Result<JobStatsInfo> DecodeJobStatsInfo(std::string_view json);

// `sbcast`: a file for each node of a job's allocation, written there as the job's user.
// At the controller (POST /api/v1/jobs/{id}/bcast) the body is the file's bytes and the query
// gives the rest; at the agent (POST /api/v1/bcast) the same query carries the run and the
// user the controller resolved, never the caller's word.
inline constexpr uint64_t kMaxBcastBytes = 32ull << 20;  // per file
struct BcastOptions {
  std::string path;     // absolute, no "." or ".." component
  uint32_t mode = 0;    // permission bits to set (0: 0600 | the source's read/exec bits)
  bool force = false;   // -f: replace an existing file
  int64_t atime = -1;   // -p: access and modification times to keep (Unix seconds)
  int64_t mtime = -1;
  bool operator==(const BcastOptions&) const = default;
};

// The options as URL query parameters ("path=...&mode=420&force=1&atime=..&mtime=..") and back.
// Returns kInvalidArgument naming the parameter (an unknown one too).
std::string EncodeBcastQuery(const BcastOptions& o);
Result<BcastOptions> DecodeBcastQuery(const std::map<std::string, std::string>& query,
                                      const std::vector<std::string>& also_allowed = {});

}  // namespace corral::api
