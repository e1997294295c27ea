// The `Fields()` tables of the usage and fair-share reports (api/report_messages.h).
//
// Part of the JSON codecs (api/json_codec.h): included through json_fields.h only.
#pragma once

#include "api/internal/json_base.h"
#include "api/report_messages.h"

namespace corral::api::internal {

template <typename V, Is<UsageRow> S>
void Fields(V& v, S& s) {
  v("account", s.account);
  v("user", s.user);
  v("partition", s.partition);
  v("gpu_model", s.gpu_model);
  v("job", s.job);
  v("cpus", s.cpus);
  v("gpus", s.gpus);
  v("jobs", s.jobs);
  v("cpu_seconds", s.cpu_seconds);
  v("gpu_seconds", s.gpu_seconds);
  v("energy_joules", s.energy_joules);
}

template <typename V, Is<UsageReport> S>
void Fields(V& v, S& s) {
  v("start", s.start);
  v("end", s.end);
  v("own_only", s.own_only);
  v("user", s.user);
  v("cluster_cpus", s.cluster_cpus);
  v("cluster_gpus", s.cluster_gpus);
  v("reported_cpu_seconds", s.reported_cpu_seconds);
  v("reported_gpu_seconds", s.reported_gpu_seconds);
  v("total", s.total);
  v("accounts", s.accounts);
  v("users", s.users);
  v("partitions", s.partitions);
  v("gpu_models", s.gpu_models);
  v("jobs", s.jobs);
}

template <typename V, Is<ShareRow> S>
void Fields(V& v, S& s) {
  v("account", s.account);
  v("user", s.user);
  v("depth", s.depth);
  v("raw_shares", s.raw_shares);
  v("norm_shares", s.norm_shares);
  v("raw_usage", s.raw_usage);
  v("effective_usage", s.effective_usage);
  v("level_fairshare", s.level_fairshare);
  v("fairshare", s.fairshare);
}

template <typename V, Is<ShareReport> S>
void Fields(V& v, S& s) {
  v("rows", s.rows);
}

template <typename V, Is<PriorityWeights> S>
void Fields(V& v, S& s) {
  v("age", s.age);
  v("fairshare", s.fairshare);
  v("job_size", s.job_size);
  v("partition", s.partition);
  v("qos", s.qos);
}

}  // namespace corral::api::internal
