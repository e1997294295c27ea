// The `Fields()` tables of nodes, partitions and the agents' messages (register, heartbeat,
// events, launch, signal, cancel, time limit, fault injection).
//
// Part of the JSON codecs (api/json_codec.h): included through json_fields.h only.
#pragma once

#include "api/internal/json_base.h"

namespace corral::api::internal {

template <typename V, Is<GpuInfo> S>
void Fields(V& v, S& s) {
  v("index", GpuIndex(s.index));
  v("uuid", s.uuid);
  v("model", s.model);
  v("memory_mb", s.memory_mb);
  v("nvlink_peers", GpuIndex(s.nvlink_peers));
  v("numa_node", s.numa_node);
}

template <typename V, Is<NodeInventory> S>
void Fields(V& v, S& s) {
  v("name", s.name);
  v("address", s.address);
  v("cpus", s.cpus);
  v("memory_mb", s.memory_mb);
  v("gpus", s.gpus);
  v("features", s.features);
  v("numa_nodes", s.numa_nodes);
  v("gpu_backend", s.gpu_backend);
  v("driver_version", s.driver_version);
  v("cuda_version", s.cuda_version);
  v("agent_version", s.agent_version);
}

template <typename V, Is<Node> S>
void Fields(V& v, S& s) {
  v("id", s.id);
  v("inventory", s.inventory);
  v("registered", s.registered);
  v("responding", s.responding);
  v("drain", s.drain);
  v("powered_down", s.powered_down);
  v("reason", s.reason);
  v("reason_time", s.reason_time);
  v("last_heartbeat", s.last_heartbeat);
  v("failed_gpus", s.failed_gpus);
}

template <typename V, Is<Partition> S>
void Fields(V& v, S& s) {
  v("name", s.name);
  v("nodes", s.nodes);
  v("is_default", s.is_default);
  v("up", s.up);
  v("default_time", SlurmTime(s.default_time));
  v("max_time", SlurmTime(s.max_time));
  v("max_gpus_per_job", s.max_gpus_per_job);
  v("max_nodes_per_job", s.max_nodes_per_job);
  v("priority_tier", s.priority_tier);
  v("def_mem_per_cpu_mb", s.def_mem_per_cpu_mb);
  v("allowed_accounts", s.allowed_accounts);
  v("deny_accounts", s.deny_accounts);    // issue 16 item 2
  v("allowed_groups", s.allowed_groups);  // issue 16 item 2
  v("allowed_qos", s.allowed_qos);        // issue 16 item 2
}

template <typename V, Is<NodeInfo> S>
void Fields(V& v, S& s) {
  Fields(v, s.node);
  v("state", s.state);
  v("alloc_cpus", s.alloc_cpus);
  v("alloc_mem_mb", s.alloc_mem_mb);
  v("alloc_gpus", s.alloc_gpus);
  v("jobs", s.jobs);
  v("partitions", s.partitions);
  v("gpu_problems", s.gpu_problems);
  v("node_problem", s.node_problem);
}

template <typename V, Is<GpuHealth> S>
void Fields(V& v, S& s) {
  v("gpu", GpuIndex(s.gpu));
  v("reason", s.reason);
  v("latched", s.latched);
}

template <typename V, Is<InjectRequest> S>
void Fields(V& v, S& s) {
  v("gpu", GpuIndex(s.gpu));
  v("xid", s.xid);
  v("ecc_uncorrectable", s.ecc_uncorrectable);
  v("temperature_c", s.temperature_c);
  v("power_watts", s.power_watts);
  v("utilization", s.utilization);
  v("memory_used_mb", s.memory_used_mb);
  v("row_remap_failure", s.row_remap_failure);
  v("vanished", s.vanished);
  v("clear", s.clear);
}

template <typename V, Is<PartitionInfo> S>
void Fields(V& v, S& s) {
  Fields(v, s.partition);
  v("total_cpus", s.total_cpus);
  v("total_gpus", s.total_gpus);
  v("alloc_gpus", s.alloc_gpus);
}

template <typename V, Is<DrainRequest> S>
void Fields(V& v, S& s) {
  v("reason", s.reason);
}

template <typename V, Is<RunningJobRef> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("generation", s.generation);
}

template <typename V, Is<RegisterRequest> S>
void Fields(V& v, S& s) {
  v("inventory", s.inventory);
  v("running", s.running);
}

template <typename V, Is<RegisterResponse> S>
void Fields(V& v, S& s) {
  v("node_id", s.node_id);
  v("heartbeat_interval", s.heartbeat_interval);
  v("kill", s.kill);
  v("cluster_name", s.cluster_name);
}

template <typename V, Is<GpuSample> S>
void Fields(V& v, S& s) {
  v("gpu", GpuIndex(s.gpu));
  v("job", s.job);
  v("time", s.time);
  v("utilization", s.utilization);
  v("memory_used_mb", s.memory_used_mb);
  v("power_watts", s.power_watts);
  v("energy_mj", s.energy_mj);
}

template <typename V, Is<HeartbeatRequest> S>
void Fields(V& v, S& s) {
  v("node", s.node);
  v("running", s.running);
  v("gpu_samples", s.gpu_samples);
  v("gpu_problems", s.gpu_problems);
  v("node_problem", s.node_problem);
  v("auto_resume", s.auto_resume);
}

template <typename V, Is<HeartbeatResponse> S>
void Fields(V& v, S& s) {
  v("reregister", s.reregister);
  v("kill", s.kill);
  v("clear_gpus", GpuIndex(s.clear_gpus));
}

template <typename V, Is<JobEvent> S>
void Fields(V& v, S& s) {
  v("type", s.type);
  v("job", s.job);
  v("generation", s.generation);
  v("time", s.time);
  v("exit_code", s.exit_code);
  v("signal", s.signal);
  v("timed_out", s.timed_out);
  v("cancelled", s.cancelled);
  v("out_of_memory", s.out_of_memory);
  v("message", s.message);
  v("usage", s.usage);
  v("gpu_failure", s.gpu_failure);
  v("step", s.step);
  v("task", s.task);
  v("master_port", s.master_port);
  v("trace", s.trace);
}

template <typename V, Is<JobEventsRequest> S>
void Fields(V& v, S& s) {
  v("node", s.node);
  v("events", s.events);
}

template <typename V, Is<LaunchRequest> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("controller_url", s.controller_url);
  v("job_credential", s.job_credential);
}

template <typename V, Is<SignalRequest> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("generation", s.generation);
  v("signal", s.signal);
  v("batch_only", s.batch_only);
  v("suspend", s.suspend);
}

template <typename V, Is<CancelRequest> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("generation", s.generation);
}

template <typename V, Is<TimeLimitRequest> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("generation", s.generation);
  v("time_limit", s.time_limit);
}

}  // namespace corral::api::internal
