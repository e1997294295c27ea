// The `Fields()` tables of jobs: specs, records, submit answers, `why` and priorities.
//
// Part of the JSON codecs (api/json_codec.h): included through json_fields.h only.
#pragma once

#include "api/internal/json_base.h"

namespace corral::api::internal {

template <typename V, Is<ResourceRequest> S>
void Fields(V& v, S& s) {
  v("nodes", s.nodes);
  v("nodes_max", s.nodes_max);
  v("ntasks", s.ntasks);
  v("ntasks_per_node", s.ntasks_per_node);
  v("cpus_per_task", s.cpus_per_task);
  v("mem_per_node_mb", s.mem_per_node_mb);
  v("mem_per_cpu_mb", s.mem_per_cpu_mb);
  v("mem_per_gpu_mb", s.mem_per_gpu_mb);
  v("gpus", s.gpus);
  v("gpus_per_node", s.gpus_per_node);
  v("gpus_per_task", s.gpus_per_task);
  v("cpus_per_gpu", s.cpus_per_gpu);
  v("gpu_type", s.gpu_type);
  v("exclusive", s.exclusive);
  v("constraint", s.constraint);
  v("nodelist", s.nodelist);
  v("exclude", s.exclude);
}

template <typename V, Is<Dependency> S>
void Fields(V& v, S& s) {
  v("type", s.type);
  v("jobs", s.jobs);
  v("delay", s.delay);
}

template <typename V, Is<SignalSpec> S>
void Fields(V& v, S& s) {
  v("signal", s.signal);
  v("before", s.before);
  v("batch_only", s.batch_only);
}

template <typename V, Is<ContainerSpec> S>
void Fields(V& v, S& s) {
  v("image", s.image);
  v("mounts", s.mounts);
  v("workdir", s.workdir);
  v("name", s.name);
  v("env", s.env);
  v("mount_home", s.mount_home);
}

template <typename V, Is<JobSpec> S>
void Fields(V& v, S& s) {
  v("name", s.name);
  v("user", s.user);
  v("uid", s.uid);
  v("gid", s.gid);
  v("account", s.account);
  v("qos", s.qos);
  v("partitions", s.partitions);
  v("script", s.script);
  v("resources", s.resources);
  v("time_limit", SlurmTime(s.time_limit));
  v("working_dir", s.working_dir);
  v("environment", s.environment);
  v("stdout_path", s.stdout_path);
  v("stderr_path", s.stderr_path);
  v("append_output", s.append_output);
  v("requeue", s.requeue);
  v("nice", s.nice);
  v("hold", s.hold);
  v("begin_time", s.begin_time);
  v("dependencies", s.dependencies);
  v("dependency_any", s.dependency_any);
  v("signal", s.signal);
  v("container", s.container);
  v("comment", s.comment);
  v("reservation", s.reservation);
  v("mail_type", s.mail_type);
  v("mail_user", s.mail_user);
  v("submit_host", s.submit_host);
  v("submit_dir", s.submit_dir);
  v("array", s.array);
  v("command", s.command);
  v("script_args", s.script_args);
  v("stdin_path", s.stdin_path);
}

template <typename V, Is<NodeAllocation> S>
void Fields(V& v, S& s) {
  v("node", s.node);
  v("node_name", s.node_name);
  v("cpus", s.cpus);
  v("mem_mb", s.mem_mb);
  v("gpus", s.gpus);
}

template <typename V, Is<Allocation> S>
void Fields(V& v, S& s) {
  v("generation", s.generation);
  v("nodes", s.nodes);
  v("suspended", s.suspended);
  v("suspend_time", s.suspend_time);
  v("suspended_for", s.suspended_for);
  v("pre_suspend", s.pre_suspend);
}

template <typename V, Is<JobUsage> S>
void Fields(V& v, S& s) {
  v("gpu_seconds", s.gpu_seconds);
  v("gpu_util_mean", s.gpu_util_mean);
  v("gpu_util_max", s.gpu_util_max);
  v("gpu_mem_max_mb", s.gpu_mem_max_mb);
  v("energy_joules", s.energy_joules);
  v("cpu_seconds", s.cpu_seconds);
  v("max_rss_mb", s.max_rss_mb);
}

// Marks (core/job_trace.h): RFC 3339 with microseconds, null when not reached.
template <typename V, Is<AgentTrace> S>
void Fields(V& v, S& s) {
  v("launch_received", s.launch_received);
  v("cgroup_ready", s.cgroup_ready);
  v("spawned", s.spawned);
  v("exec", s.exec);
  v("exited", s.exited);
}

template <typename V, Is<JobTrace> S>
void Fields(V& v, S& s) {
  v("submitted", s.submitted);
  v("committed", s.committed);
  v("scheduled", s.scheduled);
  v("launch_sent", s.launch_sent);
  v("agent", s.agent);
  v("reported", s.reported);
  v("end_committed", s.end_committed);
}

template <typename V, Is<JobTimeline> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("run", s.run);
  v("restart_count", s.restart_count);
  v("state", s.state);
  v("trace", s.trace);
}

template <typename V, Is<Job> S>
void Fields(V& v, S& s) {
  v("id", s.id);
  v("spec", s.spec);
  v("state", s.state);
  v("reason", s.reason);
  v("submit_time", s.submit_time);
  v("eligible_time", s.eligible_time);
  v("start_time", s.start_time);
  v("end_time", s.end_time);
  v("time_limit", SlurmTime(s.time_limit));
  v("partition", s.partition);
  v("exit_code", s.exit_code);
  v("exit_signal", s.exit_signal);
  v("restart_count", s.restart_count);
  v("allocation", s.allocation);
  v("array_job_id", s.array_job_id);
  v("array_task_id", s.array_task_id);
  v("last_checkpoint", s.last_checkpoint);
  v("usage", s.usage);
}

template <typename V, Is<SubmitResponse> S>
void Fields(V& v, S& s) {
  v("job_id", s.job_id);
  v("task_ids", s.task_ids);
}

template <typename V, Is<JobInfo> S>
void Fields(V& v, S& s) {
  Fields(v, s.job);
  v("reason_detail", s.reason_detail);
  v("estimated_start", s.estimated_start);
  v("priority", s.priority);
  v("gpu_waste", s.gpu_waste);
}

template <typename V, Is<GpuStatsBucket> S>
void Fields(V& v, S& s) {
  v("start", s.start);
  v("samples", s.samples);
  v("util_mean", s.util_mean);
  v("util_max", s.util_max);
  v("mem_max_mb", s.mem_max_mb);
  v("energy_joules", s.energy_joules);
}

template <typename V, Is<GpuStatsGpu> S>
void Fields(V& v, S& s) {
  v("node", s.node);
  v("gpu", s.gpu);
  v("model", s.model);
  v("memory_mb", s.memory_mb);
  v("samples", s.samples);
  v("util_mean", s.util_mean);
  v("util_max", s.util_max);
  v("idle_fraction", s.idle_fraction);
  v("mem_max_mb", s.mem_max_mb);
  v("power_max_watts", s.power_max_watts);
  v("energy_joules", s.energy_joules);
  v("bucket_width", s.bucket_width);
  v("buckets", s.buckets);
}

template <typename V, Is<GpuStatsInfo> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("gpus", s.gpus);
  v("waste_flagged", s.waste_flagged);
  v("waste_note", s.waste_note);
}

template <typename V, Is<WasteReportRow> S>
void Fields(V& v, S& s) {
  v("name", s.name);
  v("jobs", s.jobs);
  v("flagged", s.flagged);
  v("gpu_hours", s.gpu_hours);
  v("wasted_gpu_hours", s.wasted_gpu_hours);
}

template <typename V, Is<WasteReport> S>
void Fields(V& v, S& s) {
  v("since", s.since);
  v("threshold", s.threshold);
  v("users", s.users);
  v("accounts", s.accounts);
}

template <typename V, Is<BlockerInfo> S>
void Fields(V& v, S& s) {
  v("code", s.code);
  v("detail", s.detail);
  v("scope", s.scope);
  v("entity", s.entity);
  v("resource", s.resource);
  v("used", s.used);
  v("limit", s.limit);
  v("requested", s.requested);
  v("jobs", s.jobs);
}

template <typename V, Is<WhyInfo> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("state", s.state);
  v("reason", s.reason);
  v("detail", s.detail);
  v("estimated_start", s.estimated_start);
  v("priority", s.priority);
  v("blockers", s.blockers);
}

template <typename V, Is<PriorityInfo> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("user", s.user);
  v("account", s.account);
  v("qos", s.qos);
  v("age", s.age);
  v("fairshare", s.fairshare);
  v("job_size", s.job_size);
  v("partition", s.partition);
  v("qos_factor", s.qos_factor);
  v("age_points", s.age_points);
  v("fairshare_points", s.fairshare_points);
  v("job_size_points", s.job_size_points);
  v("partition_points", s.partition_points);
  v("qos_points", s.qos_points);
  v("nice", s.nice);
  v("priority_tier", s.priority_tier);
  v("priority", s.priority);
  v("job_partition", s.job_partition);
}

}  // namespace corral::api::internal
