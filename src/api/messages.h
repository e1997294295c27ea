// The messages of Corral's HTTP/JSON API (v1), as plain value types. Their JSON form is in
// json_codec.h; the routes that carry them are listed in docs/api.md.
//
// Users and tools:          POST /api/v1/jobs (JobSpec) -> SubmitResponse
//                           GET  /api/v1/jobs[?user=&state=&partition=] -> [JobInfo]
//                           GET  /api/v1/jobs/{id} -> JobInfo; POST /api/v1/jobs/{id}/cancel
//                           GET  /api/v1/nodes -> [NodeInfo]; GET /api/v1/nodes/{name}
//                           POST /api/v1/nodes/{name}/drain (DrainRequest) | /resume
//                           POST /api/v1/nodes/{name}/gpus/{index}/resume
//                           POST /api/v1/nodes/{name}/inject (InjectRequest; admins)
//                           GET  /api/v1/partitions -> [PartitionInfo]
//                           POST /api/v1/jobs/{id}/steps (StepSpec) -> StepInfo; GET .../steps
//                           GET  /api/v1/jobs/{id}/steps/{step}[/wait] -> StepInfo
//                           POST /api/v1/jobs/{id}/steps/{step}/cancel; POST .../checkpoint
// Agents -> controller:     POST /api/v1/agents/register | /heartbeat | /events
// Controller -> agent:      POST /api/v1/inject (InjectRequest)
// Controller -> agent:      POST /api/v1/launch | /signal | /cancel | /steps/launch | /steps/signal
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/job.h"
#include "core/node.h"
#include "core/partition.h"
#include "core/step.h"
#include "core/time.h"

namespace corral::api {

struct SubmitResponse {
  JobId job_id;                       // for an array: the array job id (its first task)
  std::vector<JobId> task_ids;        // for an array: every task's id, in index order
  bool operator==(const SubmitResponse&) const = default;
};

// A job as the API shows it: the record plus what the scheduler says about it.
struct JobInfo {
  Job job;
  std::string reason_detail;          // for people, when pending
  Timestamp estimated_start{};        // epoch when unknown
  int64_t priority = 0;               // a pending job's priority in the last scheduling pass
  std::string gpu_waste;              // why it is flagged as wasting its GPUs; "" = it is not
  bool operator==(const JobInfo&) const = default;
};

// One failing health check of one GPU (agent/health.h).
struct GpuHealth {
  uint32_t gpu = 0;
  std::string reason;                 // "XID 79 (GPU has fallen off the bus)"
  bool latched = false;               // an event (XID, new ECC errors) that stays until resumed
  bool operator==(const GpuHealth&) const = default;
};

// A node as the API shows it.
struct NodeInfo {
  Node node;
  NodeState state = NodeState::kUnknown;
  uint32_t alloc_cpus = 0;
  uint64_t alloc_mem_mb = 0;
  GpuSet alloc_gpus;
  std::vector<JobId> jobs;            // running on it
  std::vector<std::string> partitions;
  // Health as its agent last reported it (not stored): failing checks per GPU, and a
  // node-level problem ("" = none). `node.failed_gpus` is what is out of service.
  std::vector<GpuHealth> gpu_problems;
  std::string node_problem;
  bool operator==(const NodeInfo&) const = default;
};

struct PartitionInfo {
  Partition partition;                // `nodes` expanded to names
  uint32_t total_cpus = 0;
  uint32_t total_gpus = 0;
  uint32_t alloc_gpus = 0;
  bool operator==(const PartitionInfo&) const = default;
};

struct DrainRequest {
  std::string reason;
  bool operator==(const DrainRequest&) const = default;
};

// A fault or reading injected into a node's simulated GPU backend (`corral node inject`).
// Unset fields leave the GPU as it is; `clear` first returns it to healthy readings.
struct InjectRequest {
  uint32_t gpu = 0;
  std::optional<uint32_t> xid;
  std::optional<uint64_t> ecc_uncorrectable;
  std::optional<double> temperature_c;
  std::optional<double> power_watts;
  std::optional<double> utilization;
  std::optional<uint64_t> memory_used_mb;
  std::optional<bool> row_remap_failure;
  std::optional<bool> vanished;
  bool clear = false;
  bool operator==(const InjectRequest&) const = default;
};

// A job the agent runs (or the controller believes it runs), fenced by its generation.
struct RunningJobRef {
  JobId job;
  Generation generation;
  bool operator==(const RunningJobRef&) const = default;
};

struct RegisterRequest {
  NodeInventory inventory;
  std::vector<RunningJobRef> running;  // what the agent is running now
  bool operator==(const RegisterRequest&) const = default;
};

struct RegisterResponse {
  NodeId node_id;
  Duration heartbeat_interval{0};
  std::vector<RunningJobRef> kill;     // processes the controller no longer knows: kill them
  std::string cluster_name;            // the cluster's name (jobs' SLURM_CLUSTER_NAME)
  bool operator==(const RegisterResponse&) const = default;
};

// One reading of one GPU of the node, taken by the agent's sampler (per-job GPU statistics,
// GPU waste). Units as dcgm-exporter's: utilisation in percent, memory in MiB, power in W,
// energy in mJ since the driver loaded (a counter).
struct GpuSample {
  uint32_t gpu = 0;            // node-local index
  JobId job;                   // the job that holds the GPU (0 = none)
  Timestamp time{};            // the agent's clock
  double utilization = 0;      // DCGM_FI_DEV_GPU_UTIL
  uint64_t memory_used_mb = 0; // DCGM_FI_DEV_FB_USED
  double power_watts = 0;      // DCGM_FI_DEV_POWER_USAGE
  uint64_t energy_mj = 0;      // DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION
  bool operator==(const GpuSample&) const = default;
};

struct HeartbeatRequest {
  std::string node;
  std::vector<RunningJobRef> running;
  // The readings of the GPUs held by jobs since the last heartbeat (oldest first; the agent
  // keeps at most a bounded number between heartbeats).
  std::vector<GpuSample> gpu_samples;
  // Health: every failing check now (none = healthy), and a node-level problem ("" = none).
  // A GPU with a problem is taken out of service; a node problem drains the node.
  std::vector<GpuHealth> gpu_problems;
  std::string node_problem;
  bool auto_resume = false;            // return GPUs (and a health drain) once checks pass
  bool operator==(const HeartbeatRequest&) const = default;
};

struct HeartbeatResponse {
  bool reregister = false;             // the controller does not know this agent: register again
  std::vector<RunningJobRef> kill;
  std::vector<uint32_t> clear_gpus;    // an operator resumed these GPUs: drop latched problems
  bool operator==(const HeartbeatResponse&) const = default;
};

// kTaskExited / kTaskLaunchFailed are about task `task` of step `step` (`corral run`), from any
// node of the allocation; the others are about the batch script, from the batch host.
enum class JobEventType { kStarted, kExited, kLaunchFailed, kTaskExited, kTaskLaunchFailed };

struct JobEvent {
  JobEventType type = JobEventType::kExited;
  JobId job;
  Generation generation;
  Timestamp time{};
  int32_t exit_code = 0;               // kExited: 0..255
  int32_t signal = 0;                  // kExited: the signal that ended it, 0 if none
  bool timed_out = false;              // kExited: ended by its time limit
  bool cancelled = false;              // kExited: ended by a cancel
  bool out_of_memory = false;
  std::string message;                 // kLaunchFailed, kTaskLaunchFailed: why
  JobUsage usage;
  uint32_t step = 0;                   // kTask*: the step
  uint32_t task = 0;                   // kTask*: the task's rank
  uint32_t master_port = 0;            // kStarted: the job's MASTER_PORT (0 = none)
  // kExited: one of the job's GPUs on the node was failing its health checks when it ended
  // ("gpu 3: XID 79 (...)"); the controller requeues it or ends it NODE_FAIL.
  std::string gpu_failure;
  // kStarted: the launch's marks (launch_received .. exec); kExited: `exited`. The batch
  // host's clock (core/job_trace.h).
  AgentTrace trace;
  bool operator==(const JobEvent&) const = default;
};

struct JobEventsRequest {
  std::string node;
  std::vector<JobEvent> events;
  bool operator==(const JobEventsRequest&) const = default;
};

// Controller -> agent: run this job's batch step (the agent runs it when it holds the
// allocation's first node) under `job.allocation.generation`.
struct LaunchRequest {
  Job job;
  std::string controller_url;
  // The job's credential for this run (api/credentials.h; a secret: the agent gives it to the
  // job's processes as CORRAL_JOB_CREDENTIAL and keeps it nowhere else).
  std::string job_credential;
  bool operator==(const LaunchRequest&) const = default;
};

struct SignalRequest {
  JobId job;
  Generation generation;
  int32_t signal = 0;
  bool batch_only = false;             // only the batch script's own process (--signal=B:...)
  // SIGSTOP/SIGCONT of `scontrol suspend|resume`: the agent freezes (thaws) the run's cgroup
  // where it has one, so that a process that left its process group stops too, and signals
  // the process groups where it has none.
  bool suspend = false;
  bool operator==(const SignalRequest&) const = default;
};

struct CancelRequest {
  JobId job;
  Generation generation;
  bool operator==(const CancelRequest&) const = default;
};

// A running job's new time limit (scontrol update TimeLimit=), for every process of that run
// on the node: counted from the job's start, like the limit it was launched with.
struct TimeLimitRequest {
  JobId job;
  Generation generation;
  Duration time_limit{};
  bool operator==(const TimeLimitRequest&) const = default;
};

// --- Steps: `corral run` inside an allocation (see core/step.h and docs/api.md) ---

// A task of a step as the API shows it.
struct StepTaskInfo {
  StepTask task;                       // written inline: rank, node_rank, local_rank, node, gpus
  bool ended = false;
  int32_t exit_code = 0;               // 0..255 once ended
  int32_t signal = 0;                  // the signal that ended it, 0 if none
  std::string message;                 // why it could not start
  bool operator==(const StepTaskInfo&) const = default;
};

struct StepInfo {
  JobId job;
  uint32_t step = 0;
  Generation generation;               // the job's allocation it runs in
  JobState state = JobState::kRunning; // RUNNING, then COMPLETED, FAILED or CANCELLED
  std::string reason;                  // why it ended, when not COMPLETED
  std::vector<std::string> argv;
  std::string master_addr;
  uint32_t master_port = 0;
  std::vector<std::string> nodes;
  std::vector<uint32_t> tasks_per_node;
  uint32_t cpus_per_task = 0;
  bool kill_on_bad_exit = false;
  ContainerSpec container;             // the tasks' container (image filled in for a name)
  Timestamp start_time{};
  Timestamp end_time{};
  // srun's rule: the highest exit code of any task; 128 + signal for a task killed by one.
  int32_t exit_code = 0;
  std::vector<StepTaskInfo> tasks;     // by rank
  bool operator==(const StepInfo&) const = default;
};

// Controller -> agent: run the tasks of `layout` placed on this node, fenced by
// `job.allocation.generation` (refused when the agent has seen a newer generation of the job).
struct StepLaunchRequest {
  Job job;
  uint32_t step = 0;
  StepSpec spec;
  StepLayout layout;
  std::string master_addr;
  uint32_t master_port = 0;
  std::string io_url;                  // the caller's output server; "" = no forwarding
  std::string controller_url;
  std::string job_credential;          // as LaunchRequest's
  bool operator==(const StepLaunchRequest&) const = default;
};

// Controller -> agent: send `signal` to a step's tasks on this node (every step's with
// `kAllSteps`); signal 0 ends them (SIGCONT + SIGTERM, SIGKILL after the agent's grace period).
// Nothing running is no error.
struct StepSignalRequest {
  JobId job;
  Generation generation;
  uint32_t step = 0;
  int32_t signal = 0;
  bool suspend = false;  // as `SignalRequest::suspend` (with `step` kAllSteps)
  bool operator==(const StepSignalRequest&) const = default;
};

// One thing that holds a pending job back, as data (GET /api/v1/jobs/{id}/why). The fields
// are sched::Blocker's: `code` is Slurm's reason name; `scope`/`entity` say which account,
// user, QOS, partition, ... ; `resource`, `used`, `limit` and `requested` give the numbers.
struct BlockerInfo {
  std::string code;
  std::string detail;
  std::string scope;
  std::string entity;
  std::string resource;
  int64_t used = 0;
  int64_t limit = 0;
  int64_t requested = 0;
  std::vector<JobId> jobs;            // dependencies not met, reservation holders, victims
  bool operator==(const BlockerInfo&) const = default;
};

// One time bucket of one GPU of a job (GET /api/v1/jobs/{id}/gpustats; core/gpu_series.h).
struct GpuStatsBucket {
  Timestamp start{};
  uint32_t samples = 0;
  double util_mean = 0;               // percent
  double util_max = 0;
  uint64_t mem_max_mb = 0;
  double energy_joules = 0;
  bool operator==(const GpuStatsBucket&) const = default;
};

// One GPU of a job: its totals and its downsampled series.
struct GpuStatsGpu {
  std::string node;
  uint32_t gpu = 0;                   // node-local index
  std::string model;                  // the node's inventory ("" when unknown)
  uint64_t memory_mb = 0;             // the GPU's memory (0 = unknown)
  uint32_t samples = 0;
  double util_mean = 0;               // percent
  double util_max = 0;
  double idle_fraction = 0;           // of the samples, under 1%
  uint64_t mem_max_mb = 0;
  double power_max_watts = 0;
  double energy_joules = 0;
  Duration bucket_width{};
  std::vector<GpuStatsBucket> buckets;
  bool operator==(const GpuStatsGpu&) const = default;
};

// A job's GPU statistics (`corral jobstats`, `seff`), and its GPU-waste flag.
struct GpuStatsInfo {
  JobId job;
  std::vector<GpuStatsGpu> gpus;      // by node, then GPU; empty when nothing was sampled
  Timestamp waste_flagged{};          // epoch = not flagged
  std::string waste_note;
  bool operator==(const GpuStatsInfo&) const = default;
};

// A job's path (GET /api/v1/jobs/{id}/timeline, `corral show --timeline`; core/job_trace.h).
struct JobTimeline {
  JobId job;
  Generation run;              // the run the marks after `committed` are about
  uint32_t restart_count = 0;
  std::string state;           // the job's state now ("RUNNING")
  JobTrace trace;
  bool operator==(const JobTimeline&) const = default;
};

// GPU waste by user or account (GET /api/v1/reports/waste, `corral report waste`).
struct WasteReportRow {
  std::string name;                   // the user or the account
  uint32_t jobs = 0;                  // jobs with GPUs in the period
  uint32_t flagged = 0;               // of them, flagged as wasting their GPUs
  double gpu_hours = 0;
  double wasted_gpu_hours = 0;        // GPU-hours under the threshold
  bool operator==(const WasteReportRow&) const = default;
};

struct WasteReport {
  Timestamp since{};
  double threshold = 0;               // percent
  std::vector<WasteReportRow> users;     // most wasted first
  std::vector<WasteReportRow> accounts;
  bool operator==(const WasteReport&) const = default;
};

// Why a job waits (`corral why JOB`): every blocker from the last scheduling pass.
struct WhyInfo {
  JobId job;
  JobState state = JobState::kPending;
  std::string reason;                 // the first blocker's code (or the job's state reason)
  std::string detail;
  Timestamp estimated_start{};        // epoch when unknown
  int64_t priority = 0;
  std::vector<BlockerInfo> blockers;
  bool operator==(const WhyInfo&) const = default;
};

// A pending job's priority and its factors (GET /api/v1/priorities, `corral priority`):
// each factor in [0, 1] and its points (weight x factor); `priority` = the sum - nice.
struct PriorityInfo {
  JobId job;
  std::string user;
  std::string account;
  std::string qos;
  double age = 0;
  double fairshare = 0;
  double job_size = 0;
  double partition = 0;
  double qos_factor = 0;
  int64_t age_points = 0;
  int64_t fairshare_points = 0;
  int64_t job_size_points = 0;
  int64_t partition_points = 0;
  int64_t qos_points = 0;
  int32_t nice = 0;
  uint32_t priority_tier = 0;
  int64_t priority = 0;
  std::string job_partition;          // the partition it waits for (sprio's PARTITION)
  bool operator==(const PriorityInfo&) const = default;
};

}  // namespace corral::api
