// Cgroups for jobs: each job runs in its own cgroup, which holds it to its CPUs and memory,
// denies it the device files of GPUs it was not given, tells an out-of-memory kill, and is
// killed whole when the job ends (so processes that left the job's process group go too).
//
// Hierarchies: cgroup v2 (unified), v1 (one mount per controller), or both (a "hybrid" host:
// v1 controllers plus an empty v2 tree). Each function takes what the host has, per
// controller, v2 first: memory (v2 memory.max / v1 memory.limit_in_bytes), CPUs (cpuset
// cpus+mems; cpu.max / cfs quota when there is no cpuset), tasks (pids.max), devices (v1
// devices.deny; on v2 a BPF_PROG_TYPE_CGROUP_DEVICE program attached to the job's cgroup that
// refuses the denied character devices), kill (v2 cgroup.kill; v1: freeze, SIGKILL each member,
// thaw). A job's cgroups live under the agent's own cgroup:
// OWN/<parent>/<node>/job_<id>_<generation>, one per run of the job (a requeued job may start again
// on the node while its previous run is being torn down), in every hierarchy used (the agent names
// <node> after the node and a hash of its state directory). docs/agent.md describes what each host
// type gets.
//
// Thread-safety: CgroupManager is thread-safe (it holds no mutable state after Open);
// a JobCgroup is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/ids.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::agent {

struct CgroupConfig {
  std::string mode = "auto";      // auto | v2 | v1 | off
  std::string parent = "corral";  // directory under the agent's own cgroup
  bool constrain_cpus = true;
  bool constrain_memory = true;
  bool constrain_devices = true;
  // The most tasks (processes and threads) a job's run may have on the node (pids.max), so
  // that a fork bomb stays in its job; 0 = no limit.
  uint64_t pids_max = 16384;
  // The memory limit of a run that was given none (no --mem and no partition default):
  // this, or when 0 the node's memory times the larger of the run's shares of the node's CPUs
  // and GPUs (`JobMemoryLimitMb`).
  uint64_t default_memory_per_job_mb = 0;
  // Where mounts and the agent's membership are read (tests may point them elsewhere).
  std::string mountinfo = "/proc/self/mountinfo";
  std::string self_cgroup = "/proc/self/cgroup";
};

// A character or block device number.
struct DeviceNumber {
  char type = 'c';  // 'c' or 'b'
  uint32_t major = 0;
  uint32_t minor = 0;
  bool operator==(const DeviceNumber&) const = default;
};
// The device number of the device file `path`. Returns kNotFound if it does not exist,
// kInvalidArgument if it is not a device file.
Result<DeviceNumber> DeviceNumberOf(const std::string& path);

struct JobCgroupSpec {
  JobId job;
  Generation generation;           // the run: the cgroup is job_<job>_<generation>
  std::vector<uint32_t> cpus;      // CPU ids; empty = not constrained
  std::vector<uint32_t> mems;      // NUMA nodes of `cpus`; empty = all
  uint32_t cpu_count = 0;          // for a CPU quota where there is no cpuset; 0 = none
  uint64_t memory_mb = 0;          // 0 = not constrained
  uint64_t pids_max = 0;           // 0 = not constrained
  std::vector<DeviceNumber> deny;  // devices the job may not open
};

// The size of a job's run on a node, and the node's.
struct NodeShare {
  uint64_t given_memory_mb = 0;  // the allocation's (0: none given)
  uint32_t cpus = 0;
  uint32_t gpus = 0;
  uint64_t node_memory_mb = 0;
  uint32_t node_cpus = 0;
  uint32_t node_gpus = 0;
};
// The memory limit of a run: what it was given; else `config.default_memory_per_job_mb`;
// else the node's memory times max(cpus / node_cpus, gpus / node_gpus) (the whole node when
// neither share is known); 0 (none) when the node's memory is unknown too.
uint64_t JobMemoryLimitMb(const CgroupConfig& config, const NodeShare& share);

// What a run's cgroup holds now (`sstat`).
struct CgroupUsage {
  uint64_t memory_kb = 0;       // memory.current (v1 memory.usage_in_bytes); 0 without memory
  uint64_t memory_peak_kb = 0;  // memory.peak (v1 memory.max_usage_in_bytes); 0 when unknown
  double cpu_seconds = 0;       // cpu.stat usage_usec (v2); 0 on v1
  uint64_t processes = 0;       // the processes in the cgroup (cgroup.procs)
};

class JobCgroup {
 public:
  virtual ~JobCgroup() = default;
  // The job's cgroup.procs files, one per hierarchy: its first process joins them all before
  // it executes anything.
  virtual std::vector<std::string> procs_files() const = 0;
  // Whether the kernel's OOM killer killed a process of the job.
  virtual bool OutOfMemory() const = 0;
  // The peak memory use, MB (0 when unknown).
  virtual uint64_t PeakMemoryMb() const = 0;
  // What the cgroup holds now.
  virtual CgroupUsage Usage() const = 0;
  // Freezes (`frozen`) or thaws every process in the cgroup: v2 cgroup.freeze, v1
  // freezer.state (`scontrol suspend|resume`; a process that left its process group stops
  // too). Returns kUnimplemented when the cgroup has no freezer, kInternal naming the file
  // that could not be written.
  virtual Status Freeze(bool frozen) = 0;
  // Kills every process in the cgroup, waits until it is empty (at most `timeout`) and
  // removes the directories. Returns kDeadlineExceeded if processes remain (they are left
  // for the next attempt, such as the agent's next start).
  virtual Status Destroy(Duration timeout, const Clock& clock) = 0;
};

class CgroupManager {
 public:
  virtual ~CgroupManager() = default;

  // Finds the hierarchies and prepares OWN/<parent>/<node> in each. Returns kUnavailable with
  // the reason when cgroups cannot be used (mode "off", not root, no hierarchy, read-only,
  // the needed controllers missing); the agent logs it once and runs jobs without them.
  // `clock` times the waits of Create and Destroy; it must outlive the manager.
  static Result<std::unique_ptr<CgroupManager>> Open(const CgroupConfig& config,
                                                     const std::string& node, const Clock& clock);

  // "cgroup v1 (memory, cpuset, devices) + v2 (kill)": what jobs get.
  virtual std::string Describe() const = 0;
  // Creates the run's cgroup with its limits. Returns kInternal naming the file that could
  // not be written. A cgroup of the same run left by a previous agent is killed first; other
  // runs of the job are left alone.
  virtual Result<std::unique_ptr<JobCgroup>> Create(const JobCgroupSpec& spec) = 0;
  // Kills and removes every job cgroup of this node (left by a previous agent run).
  virtual void KillStale() = 0;
};

}  // namespace corral::agent
