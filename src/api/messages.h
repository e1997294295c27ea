// The messages of Corral's HTTP/JSON API (v1), as plain value types. Their JSON form is in
// json_codec.h; the routes that carry them are listed in docs/api.md.
//
// Users and tools:          POST /api/v1/jobs (JobSpec) -> SubmitResponse
//                           GET  /api/v1/jobs[?user=&state=&partition=] -> [JobInfo]
//                           GET  /api/v1/jobs/{id} -> JobInfo; POST /api/v1/jobs/{id}/cancel
//                           GET  /api/v1/nodes -> [NodeInfo]; GET /api/v1/nodes/{name}
//                           POST /api/v1/nodes/{name}/drain (DrainRequest) | /resume
//                           GET  /api/v1/partitions -> [PartitionInfo]
// Agents -> controller:     POST /api/v1/agents/register | /heartbeat | /events
// Controller -> agent:      POST /api/v1/launch | /signal | /cancel
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/job.h"
#include "core/node.h"
#include "core/partition.h"
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
  bool operator==(const JobInfo&) const = default;
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
  bool operator==(const RegisterResponse&) const = default;
};

struct HeartbeatRequest {
  std::string node;
  std::vector<RunningJobRef> running;
  bool operator==(const HeartbeatRequest&) const = default;
};

struct HeartbeatResponse {
  bool reregister = false;             // the controller does not know this agent: register again
  std::vector<RunningJobRef> kill;
  bool operator==(const HeartbeatResponse&) const = default;
};

enum class JobEventType { kStarted, kExited, kLaunchFailed };

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
  std::string message;                 // kLaunchFailed: why
  JobUsage usage;
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
  bool operator==(const LaunchRequest&) const = default;
};

struct SignalRequest {
  JobId job;
  Generation generation;
  int32_t signal = 0;
  bool operator==(const SignalRequest&) const = default;
};

struct CancelRequest {
  JobId job;
  Generation generation;
  bool operator==(const CancelRequest&) const = default;
};

}  // namespace corral::api
