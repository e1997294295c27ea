#include "controller/internal/usage_report.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

namespace corral::controller::internal {
namespace {

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

void Add(api::UsageRow& row, double cpu_s, double gpu_s, double energy) {
  row.cpu_seconds += cpu_s;
  row.gpu_seconds += gpu_s;
  row.energy_joules += energy;
}

template <typename Key>
std::vector<api::UsageRow> Values(std::map<Key, api::UsageRow>& rows) {
  std::vector<api::UsageRow> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  return out;
}

}  // namespace

std::optional<JobCharge> ChargeOf(const Job& job, UsageWindow window, Timestamp now) {
  // Rule 1: runs only.
  if (job.state == JobState::kPending || job.start_time == Timestamp{}) return std::nullopt;
  Timestamp run_end = job.state == JobState::kRunning || job.end_time == Timestamp{}
                          ? std::max(now, job.start_time)
                          : job.end_time;
  // Rule 2: the overlap with the window.
  Timestamp from = std::max(job.start_time, window.start);
  Timestamp to = std::min(run_end, window.end);
  if (to <= from) return std::nullopt;
  JobCharge c;
  c.overlap_seconds = Seconds(to - from);
  const double run = Seconds(run_end - job.start_time);
  // Rules 3 and 4.
  for (const NodeAllocation& na : job.allocation.nodes) {
    c.cpus += na.cpus;
    c.gpus += na.gpus.size();
  }
  c.cpu_seconds = c.cpus * c.overlap_seconds;
  c.gpu_seconds = c.gpus * c.overlap_seconds;
  c.energy_joules = run > 0 ? job.usage.energy_joules * (c.overlap_seconds / run) : 0;
  return c;
}

api::UsageReport BuildUsageReport(std::span<const Job> jobs,
                                  std::span<const NodeInventory> nodes, UsageWindow window,
                                  Timestamp now, bool with_jobs) {
  api::UsageReport r;
  r.start = window.start;
  r.end = window.end;
  const double window_s = std::max(0.0, Seconds(window.end - window.start));
  std::map<std::string, const NodeInventory*, std::less<>> by_name;
  for (const NodeInventory& n : nodes) {
    by_name[n.name] = &n;
    r.cluster_cpus += n.cpus;
    r.cluster_gpus += static_cast<uint32_t>(n.gpus.size());
  }
  r.reported_cpu_seconds = r.cluster_cpus * window_s;
  r.reported_gpu_seconds = r.cluster_gpus * window_s;

  std::map<std::string, api::UsageRow> accounts, partitions, models;
  std::map<std::pair<std::string, std::string>, api::UsageRow> users;
  std::map<uint64_t, api::UsageRow> per_job;
  for (const Job& job : jobs) {
    std::optional<JobCharge> charge = ChargeOf(job, window, now);
    if (!charge) continue;
    const uint32_t cpus = charge->cpus, gpus = charge->gpus;
    const double overlap = charge->overlap_seconds;
    const double cpu_s = charge->cpu_seconds, gpu_s = charge->gpu_seconds;
    const double energy = charge->energy_joules;

    api::UsageRow& a = accounts[job.spec.account];
    a.account = job.spec.account;
    api::UsageRow& u = users[{job.spec.account, job.spec.user}];
    u.account = job.spec.account;
    u.user = job.spec.user;
    api::UsageRow& p = partitions[job.partition];
    p.partition = job.partition;
    for (api::UsageRow* row : {&r.total, &a, &u, &p}) {
      Add(*row, cpu_s, gpu_s, energy);
      ++row->jobs;
    }
    if (with_jobs) {
      per_job[job.id.value] = api::UsageRow{.account = job.spec.account,
                                              .user = job.spec.user,
                                              .partition = job.partition,
                                              .job = job.id,
                                              .cpus = cpus,
                                              .gpus = gpus,
                                              .jobs = 1,
                                              .cpu_seconds = cpu_s,
                                              .gpu_seconds = gpu_s,
                                              .energy_joules = energy};
    }
    // Rule 5: GPU-seconds and energy by model, energy split by the job's GPUs.
    std::map<std::string, uint32_t> job_models;
    for (const NodeAllocation& na : job.allocation.nodes) {
      auto node = by_name.find(na.node_name);
      for (uint32_t i : na.gpus.ToVector()) {
        std::string model;
        if (node != by_name.end() && i < node->second->gpus.size()) {
          model = node->second->gpus[i].model;
        }
        if (model.empty()) model = job.spec.resources.gpu_type;
        if (model.empty()) model = "unknown";
        ++job_models[model];
      }
    }
    for (const auto& [model, n] : job_models) {
      api::UsageRow& m = models[model];
      m.gpu_model = model;
      ++m.jobs;
      Add(m, 0, n * overlap, gpus > 0 ? energy * n / gpus : 0);
    }
  }
  r.accounts = Values(accounts);
  r.users = Values(users);
  r.partitions = Values(partitions);
  r.gpu_models = Values(models);
  r.jobs = Values(per_job);
  return r;
}

}  // namespace corral::controller::internal
