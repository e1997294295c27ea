// The job model: what a user submits (`JobSpec`), where it runs (`Allocation`), and the
// controller's record of it (`Job`), with the job state machine.
//
// Value types; copyable and comparable (golden tests compare them).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/gpu.h"
#include "core/ids.h"
#include "core/job_trace.h"
#include "core/resources.h"
#include "core/result.h"
#include "core/shared_value.h"
#include "core/time.h"

namespace corral {

// PENDING -> RUNNING -> one of the terminal states; a requeue takes a job back to PENDING
// with the same id and `restart_count + 1`.
enum class JobState {
  kPending,
  kRunning,
  kCompleted,
  kFailed,
  kCancelled,
  kTimeout,
  kNodeFail,
  kOutOfMemory,
  kPreempted,
};

// "PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
// "OUT_OF_MEMORY", "PREEMPTED" (Slurm's names).
std::string_view JobStateName(JobState s);
// Slurm's two-letter codes: PD, R, CD, F, CA, TO, NF, OOM, PR.
std::string_view JobStateShortName(JobState s);
// The state as Slurm's commands show it: "SUSPENDED" / "S" for a running job whose run is
// suspended (see `Allocation`), else `JobStateName` / `JobStateShortName`.
struct Job;
std::string_view ShownStateName(const Job& job);
std::string_view ShownStateShortName(const Job& job);
bool IsSuspended(const Job& job);  // running, and its run suspended
// Time the job has run by `now` (or by its end): suspended time does not count, as in Slurm.
// Zero before it starts.
Duration RunTime(const Job& job, Timestamp now);
// The time limit from the start of the run that its processes get: the limit plus the time
// suspended so far; `kUnlimited` while suspended or when the job has no limit.
Duration RunDeadlineLimit(const Job& job);
// Parses a full name or a short code, any case. Returns kInvalidArgument naming the text.
Result<JobState> ParseJobState(std::string_view text);
bool IsTerminal(JobState s);

// Returns kFailedPrecondition naming both states when `from -> to` is not a transition of
// the state machine. Requeue (`kRunning`/terminal -> `kPending`) is allowed.
Status CheckTransition(JobState from, JobState to);

enum class DependencyType { kAfter, kAfterAny, kAfterOk, kAfterNotOk, kAfterCorr, kSingleton };
std::string_view DependencyTypeName(DependencyType t);

struct Dependency {
  DependencyType type = DependencyType::kAfterOk;
  std::vector<JobId> jobs;        // empty for singleton
  Duration delay{0};              // after:id+time
  bool operator==(const Dependency&) const = default;
};

// How a job wants to be warned before a time limit or a preemption (`--signal=[B:]SIG@SECS`).
struct SignalSpec {
  int signal = 0;                 // 0 = none
  Duration before{0};
  bool batch_only = false;        // B: only the batch shell, not its steps
  bool operator==(const SignalSpec&) const = default;
};

// pyxis-style container options.
struct ContainerSpec {
  std::string image;              // empty = no container
  std::vector<std::string> mounts;  // "src:dst[:flags]"
  std::string workdir;
  std::string name;
  std::vector<std::string> env;   // variable names to pass into the container
  bool mount_home = true;
  bool operator==(const ContainerSpec&) const = default;
};

// What a user submits. The client resolves everything that depends on the submitting
// environment (exported variables, working directory) before sending it. The script, the
// environment and the script's arguments are `Shared`: the tasks of an array (copies of one
// submitted spec) hold them once in memory.
struct JobSpec {
  std::string name;
  std::string user;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string account;
  std::string qos;
  std::vector<std::string> partitions;  // in preference order; empty = default partition
  Shared<std::string> script;           // the batch script's full text, shebang included
  ResourceRequest resources;
  std::optional<Duration> time_limit;   // unset = the partition's default
  std::string working_dir;
  Shared<std::map<std::string, std::string>> environment;
  std::string stdout_path;              // patterns: %j %x %u %N ... (expanded on the node)
  std::string stderr_path;              // empty = same as stdout
  bool append_output = false;           // --open-mode=append
  bool requeue = false;
  int32_t nice = 0;
  bool hold = false;
  Timestamp begin_time{};               // not eligible before; epoch = now
  std::vector<Dependency> dependencies;
  bool dependency_any = false;          // deps joined with '?' instead of ','
  SignalSpec signal;
  ContainerSpec container;
  std::string comment;
  std::string reservation;
  std::string mail_type;
  std::string mail_user;
  std::string submit_host;
  std::string submit_dir;
  // Array jobs: the submitted spec carries `array`; each task's own record carries its index.
  std::string array;                    // "0-99%10"; empty = not an array
  // The batch script's path as submitted (absolute; scontrol's Command=); "" for a script read
  // from stdin or made by --wrap.
  std::string command;
  Shared<std::vector<std::string>> script_args;  // after the script (`sbatch job.sh a b`)
  std::string stdin_path;               // the batch step's stdin; "" = /dev/null
  bool operator==(const JobSpec&) const = default;
};

// One node's share of an allocation.
struct NodeAllocation {
  NodeId node;
  std::string node_name;
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  GpuSet gpus;
  bool operator==(const NodeAllocation&) const = default;
};

// Where a running job runs. The first node runs the batch step.
// A run can be suspended (`scontrol suspend`): its processes are stopped, it keeps its
// resources and stays kRunning in the state machine (it can be cancelled, requeued or lost with
// its node as a running job can); Slurm's commands show it SUSPENDED. The time limit's clock
// stops while it is suspended, as in Slurm. A requeue's new run starts unsuspended.
struct Allocation {
  Generation generation;
  std::vector<NodeAllocation> nodes;
  bool suspended = false;
  Timestamp suspend_time{};       // the last suspend or resume (Slurm's SuspendTime); 0 = never
  Duration suspended_for{0};      // time spent suspended before `suspend_time`
  Duration pre_suspend{0};        // run time at the last suspension (Slurm's SecsPreSuspend)
  bool empty() const { return nodes.empty(); }
  std::vector<std::string> NodeNames() const;
  bool operator==(const Allocation&) const = default;
};

// Resource usage measured by the agent while the job ran (zero when unknown).
struct JobUsage {
  double gpu_seconds = 0;
  double gpu_util_mean = 0;     // percent
  double gpu_util_max = 0;      // percent
  uint64_t gpu_mem_max_mb = 0;
  double energy_joules = 0;
  double cpu_seconds = 0;
  uint64_t max_rss_mb = 0;
  bool operator==(const JobUsage&) const = default;
};

// The controller's record of a job.
struct Job {
  JobId id;
  JobSpec spec;
  JobState state = JobState::kPending;
  std::string reason;                   // why pending / why it ended ("None" when nothing)
  Timestamp submit_time{};
  Timestamp eligible_time{};
  Timestamp start_time{};
  Timestamp end_time{};
  Duration time_limit{0};               // resolved limit (partition default applied)
  std::string partition;                // the partition it was placed in (or the first asked)
  int32_t exit_code = 0;                // 0..255
  int32_t exit_signal = 0;              // signal that ended it, 0 if none
  uint32_t restart_count = 0;
  Allocation allocation;                // empty unless RUNNING (kept after end for accounting)
  JobId array_job_id;                   // 0 = not part of an array
  std::optional<uint32_t> array_task_id;
  Timestamp last_checkpoint{};          // the job's last "checkpoint written" acknowledgement
  JobUsage usage;
  // When its submission, start and end happened (core/job_trace.h). Stored with the record;
  // not in the job's JSON (GET /api/v1/jobs/{id}/timeline serves it).
  JobTrace trace;
  bool operator==(const Job&) const = default;
};

}  // namespace corral
