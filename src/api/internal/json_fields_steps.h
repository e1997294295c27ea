// The `Fields()` tables of job steps (`corral run`).
//
// Part of the JSON codecs (api/json_codec.h): included through json_fields.h only.
#pragma once

#include "api/internal/json_base.h"

namespace corral::api::internal {

template <typename V, Is<StepSpec> S>
void Fields(V& v, S& s) {
  v("argv", s.argv);
  v("working_dir", s.working_dir);
  v("environment", s.environment);
  v("nodes", s.nodes);
  v("ntasks", s.ntasks);
  v("ntasks_per_node", s.ntasks_per_node);
  v("cpus_per_task", s.cpus_per_task);
  v("gpus_per_task", s.gpus_per_task);
  v("overcommit", s.overcommit);
  v("kill_on_bad_exit", s.kill_on_bad_exit);
  v("stdout_path", s.stdout_path);
  v("stderr_path", s.stderr_path);
  v("io_node", s.io_node);
  v("io_port", s.io_port);
  v("io_token", s.io_token);
  v("master_port", s.master_port);
  v("container", s.container);
  v("nodelist", s.nodelist);
  v("exclude", s.exclude);
  v("relative", s.relative);
  v("slurm", s.slurm);
  v("pty", s.pty);
}

template <typename V, Is<StepTask> S>
void Fields(V& v, S& s) {
  v("rank", s.rank);
  v("node_rank", s.node_rank);
  v("local_rank", s.local_rank);
  v("node", s.node);
  v("gpus", s.gpus);
}

template <typename V, Is<StepLayout> S>
void Fields(V& v, S& s) {
  v("nodes", s.nodes);
  v("tasks_per_node", s.tasks_per_node);
  v("tasks", s.tasks);
  v("cpus_per_task", s.cpus_per_task);
}

template <typename V, Is<StepTaskInfo> S>
void Fields(V& v, S& s) {
  Fields(v, s.task);
  v("ended", s.ended);
  v("exit_code", s.exit_code);
  v("signal", s.signal);
  v("message", s.message);
}

template <typename V, Is<StepInfo> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("step", s.step);
  v("generation", s.generation);
  v("state", s.state);
  v("reason", s.reason);
  v("argv", s.argv);
  v("master_addr", s.master_addr);
  v("master_port", s.master_port);
  v("nodes", s.nodes);
  v("tasks_per_node", s.tasks_per_node);
  v("cpus_per_task", s.cpus_per_task);
  v("kill_on_bad_exit", s.kill_on_bad_exit);
  v("container", s.container);
  v("start_time", s.start_time);
  v("end_time", s.end_time);
  v("exit_code", s.exit_code);
  v("tasks", s.tasks);
}

template <typename V, Is<StepLaunchRequest> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("step", s.step);
  v("spec", s.spec);
  v("layout", s.layout);
  v("master_addr", s.master_addr);
  v("master_port", s.master_port);
  v("io_url", s.io_url);
  v("controller_url", s.controller_url);
  v("job_credential", s.job_credential);
}

template <typename V, Is<StepSignalRequest> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("generation", s.generation);
  v("step", s.step);
  v("signal", s.signal);
  v("suspend", s.suspend);
}

}  // namespace corral::api::internal
