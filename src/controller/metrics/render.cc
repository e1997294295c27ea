#include "controller/metrics/render.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "api/metrics_text.h"
#include "core/strings.h"

namespace corral::controller::metrics {
namespace {

using api::MetricLabel;
using api::MetricsWriter;
using api::MetricType;

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += ',';
    out += p;
  }
  return out;
}

void WriteJobs(const ClusterMetrics& m, const ClusterCounts& counts, MetricsWriter& w) {
  auto by_job_key = [&](uint64_t JobCounts::*field) {
    for (const auto& [k, c] : counts.jobs) {
      w.Sample({{"state", JobStateName(k.state)},
                {"partition", k.partition},
                {"account", k.account},
                {"user", k.user}},
               static_cast<double>(c.*field));
    }
  };
  w.Family("slurm_jobs", MetricType::kGauge,
           "Active jobs (pending and running) by state, partition, account and user");
  by_job_key(&JobCounts::jobs);
  w.Family("corral_job_gpus", MetricType::kGauge,
           "GPUs held by running jobs and asked for by pending ones, by state, partition, "
           "account and user");
  by_job_key(&JobCounts::gpus);
  w.Family("corral_jobs_pending", MetricType::kGauge, "Pending jobs by partition and reason");
  for (const auto& [k, n] : counts.pending_reasons) {
    w.Sample({{"partition", k.first}, {"reason", k.second}}, static_cast<double>(n));
  }
  w.Family("corral_jobs_submitted_total", MetricType::kCounter, "Jobs submitted (job ids issued)");
  w.Sample({}, static_cast<double>(m.jobs_submitted_total));
}

void WriteNodes(const ClusterMetrics& m, const ClusterCounts& counts, MetricsWriter& w) {
  std::map<std::string, uint64_t> by_state;
  std::map<std::pair<std::string, std::string>, uint64_t> by_partition;
  for (const NodeRow& n : m.nodes) {
    std::string state = Lower(NodeStateName(n.state));
    ++by_state[state];
    for (const std::string& p : n.partitions) ++by_partition[{p, state}];
  }
  w.Family("slurm_nodes", MetricType::kGauge, "Nodes by state");
  for (const auto& [state, n] : by_state) w.Sample({{"state", state}}, static_cast<double>(n));
  w.Family("slurm_partition_nodes", MetricType::kGauge, "Nodes by partition and state");
  for (const auto& [k, n] : by_partition) {
    w.Sample({{"partition", k.first}, {"state", k.second}}, static_cast<double>(n));
  }
  w.Family("corral_gpus", MetricType::kGauge,
           "GPUs by partition, model and state (allocated, idle, drained, down)");
  for (const auto& [k, c] : counts.gpus) {
    const std::pair<std::string_view, uint64_t> states[] = {
        {"allocated", c.allocated}, {"idle", c.idle}, {"drained", c.drained}, {"down", c.down}};
    for (const auto& [state, n] : states) {
      w.Sample({{"partition", k.first}, {"model", k.second}, {"state", state}},
               static_cast<double>(n));
    }
  }
  w.Family("corral_agents_connected", MetricType::kGauge,
           "Node agents registered and heartbeating");
  w.Sample({}, static_cast<double>(counts.agents_connected));
  w.Family("corral_node_info", MetricType::kGauge,
           "One per node: its partitions, GPU backend and software versions");
  for (const NodeRow& n : m.nodes) {
    std::string partitions = Join(n.partitions);
    w.Sample({{"node", n.name},
              {"partitions", partitions},
              {"gpu_backend", n.gpu_backend},
              {"driver_version", n.driver_version},
              {"cuda_version", n.cuda_version},
              {"nccl_version", ""},
              {"agent_version", n.agent_version}},
             1);
  }
  w.Family("corral_node_software_drift", MetricType::kGauge,
           "1 when the node's driver/CUDA/NCCL versions differ from the common ones of the "
           "partition, else 0");
  static const std::vector<std::string> kNone;
  for (const NodeRow& n : m.nodes) {
    auto it = counts.drift.find(n.name);
    const std::vector<std::string>& drift = it != counts.drift.end() ? it->second : kNone;
    for (const std::string& p : n.partitions) {
      bool differs = std::find(drift.begin(), drift.end(), p) != drift.end();
      w.Sample({{"node", n.name}, {"partition", p}}, differs ? 1 : 0);
    }
  }
}

void WriteScheduler(const SchedStats& s, MetricsWriter& w) {
  w.Family("slurm_sched_cycle_seconds", MetricType::kHistogram,
           "Duration of scheduling passes that ran the policy");
  w.Histogram({}, s.cycle.bounds(), s.cycle.counts, s.cycle.sum);
  auto gauge = [&](std::string_view name, std::string_view help, double v,
                   MetricType type = MetricType::kGauge) {
    w.Family(name, type, help);
    w.Sample({}, v);
  };
  gauge("slurm_sched_cycle_last_seconds", "Duration of the last scheduling pass",
        s.last_cycle_seconds);
  gauge("slurm_sched_cycle_max_seconds", "Longest scheduling pass since start",
        s.max_cycle_seconds);
  gauge("slurm_sched_last_queue_length", "Pending jobs when the last pass began",
        static_cast<double>(s.last.queue_length));
  gauge("slurm_sched_last_jobs_examined", "Pending jobs the last pass examined",
        static_cast<double>(s.last.examined));
  gauge("slurm_sched_last_jobs_started", "Jobs the last pass started",
        static_cast<double>(s.last.started));
  gauge("slurm_sched_jobs_examined_total", "Pending jobs examined, over every pass",
        static_cast<double>(s.examined_total), MetricType::kCounter);
  gauge("slurm_sched_jobs_started_total", "Jobs started by scheduling passes",
        static_cast<double>(s.started_total), MetricType::kCounter);
  gauge("slurm_bf_backfilled_jobs_total",
        "Jobs started ahead of a higher-priority job's reservation (backfill)",
        static_cast<double>(s.backfilled_total), MetricType::kCounter);
  gauge("slurm_bf_last_backfilled_jobs", "Jobs the last pass backfilled",
        static_cast<double>(s.last.backfilled));
  gauge("slurm_bf_reservations", "Start times the last pass holds for blocked jobs",
        static_cast<double>(s.last.reservations));
  gauge("slurm_sched_last_cycle_timestamp_seconds", "When the last pass ran (Unix time)",
        s.last_pass_time == Timestamp{} ? 0 : ToSecondsF(s.last_pass_time.time_since_epoch()));
}

void WriteService(const ServiceFigures& f, MetricsWriter& w) {
  w.Family("corral_store_commit_seconds", MetricType::kHistogram,
           "Durable store writes of the state thread's batches");
  w.Histogram({}, f.commit.bounds(), f.commit.counts, f.commit.sum);
  w.Family("corral_store_committed_changes_total", MetricType::kCounter,
           "Changes written to the store");
  w.Sample({}, static_cast<double>(f.committed_changes));
  w.Family("corral_api_requests_total", MetricType::kCounter,
           "API requests by method, route pattern and HTTP status");
  for (const auto& [k, r] : f.routes) {
    for (const auto& [status, n] : r.by_status) {
      std::string code = std::to_string(status);
      w.Sample({{"method", k.first}, {"route", k.second}, {"code", code}}, static_cast<double>(n));
    }
  }
  w.Family("corral_api_request_seconds", MetricType::kHistogram,
           "API request handling time by method and route pattern");
  for (const auto& [k, r] : f.routes) {
    MetricLabel labels[] = {{"method", k.first}, {"route", k.second}};
    w.Histogram(labels, r.latency.bounds(), r.latency.counts, r.latency.sum);
  }
}

void WriteAccounts(const ClusterCounts& counts, MetricsWriter& w) {
  w.Family("corral_fairshare_usage", MetricType::kGauge,
           "Fair-share usage per account: TRES-weighted GPU-seconds, decayed by the half-life");
  for (const auto& [account, u] : counts.accounts) {
    w.Sample({{"account", account}}, u.decayed_usage);
  }
  w.Family("corral_account_period_gpu_seconds", MetricType::kGauge,
           "GPU-seconds per account in the current usage period");
  for (const auto& [account, u] : counts.accounts) {
    w.Sample({{"account", account}}, u.period_gpu_seconds);
  }
}

constexpr std::string_view kWasteActionNames[] = {"notify", "cancel", "requeue"};

void WriteWaste(const ClusterMetrics& m, MetricsWriter& w) {
  w.Family("corral_job_gpu_waste", MetricType::kGauge,
           "1 for each running job flagged as wasting its GPUs, with what its GPU-waste policy "
           "does (notify, cancel, requeue)");
  for (const WasteRow& r : m.waste) {
    std::string job = r.job.ToString();
    w.Sample({{"hpc_job", job},
              {"user", r.user},
              {"account", r.account},
              {"partition", r.partition},
              {"action", kWasteActionNames[static_cast<size_t>(r.action)]}},
             1);
  }
  w.Family("corral_gpu_waste_actions_total", MetricType::kCounter,
           "Jobs the GPU-waste policy acted on since the controller started: notify counts "
           "every job flagged, cancel and requeue the jobs it stopped");
  for (size_t a = 0; a < m.waste_actions.size(); ++a) {
    w.Sample({{"action", kWasteActionNames[a]}}, static_cast<double>(m.waste_actions[a]));
  }
}

// Account budgets (docs/governance.md, "Budgets"): each budget's amount and spend this period.
void WriteBudgets(const ClusterMetrics& m, MetricsWriter& w) {
  w.Family("corral_account_budget_gpu_hours", MetricType::kGauge,
           "GPU-hours an account (with its sub-accounts) may spend per budget period");
  for (const api::BudgetStatus& b : m.budgets) {
    if (b.budget.gpu_hours) {
      w.Sample({{"account", b.account}, {"period", std::string(BudgetPeriodName(b.budget.period))}},
               *b.budget.gpu_hours);
    }
  }
  w.Family("corral_account_budget_spent_gpu_hours", MetricType::kGauge,
           "GPU-hours an account with a GPU budget has spent in its current budget period, "
           "running jobs up to now");
  for (const api::BudgetStatus& b : m.budgets) {
    if (b.budget.gpu_hours) w.Sample({{"account", b.account}}, b.spent_gpu_hours);
  }
  w.Family("corral_account_budget_energy_kwh", MetricType::kGauge,
           "Energy (kWh) an account may spend per budget period");
  for (const api::BudgetStatus& b : m.budgets) {
    if (b.budget.energy_kwh) {
      w.Sample({{"account", b.account}, {"period", std::string(BudgetPeriodName(b.budget.period))}},
               *b.budget.energy_kwh);
    }
  }
  w.Family("corral_account_budget_spent_energy_kwh", MetricType::kGauge,
           "Energy (kWh) an account with an energy budget has spent in its current period");
  for (const api::BudgetStatus& b : m.budgets) {
    if (b.budget.energy_kwh) w.Sample({{"account", b.account}}, b.spent_energy_kwh);
  }
  w.Family("corral_account_budget_warning", MetricType::kGauge,
           "1 when an account's spend crossed its budget's warning threshold in this period");
  for (const api::BudgetStatus& b : m.budgets) {
    w.Sample({{"account", b.account}}, b.warned ? 1 : 0);
  }
  w.Family("corral_account_budget_warnings_total", MetricType::kCounter,
           "Budget warnings raised since the controller started");
  w.Sample({}, static_cast<double>(m.budget_warnings));
}

}  // namespace

std::string RenderControllerMetrics(const ClusterMetrics& cluster, const ServiceFigures& service) {
  ClusterCounts counts = CountClusterMetrics(cluster);
  MetricsWriter w;
  w.Reserve(4096 + counts.jobs.size() * 200 + cluster.nodes.size() * 400);
  WriteJobs(cluster, counts, w);
  WriteNodes(cluster, counts, w);
  WriteScheduler(cluster.sched, w);
  WriteService(service, w);
  WriteAccounts(counts, w);
  WriteWaste(cluster, w);
  WriteBudgets(cluster, w);
  return w.Take();
}

std::string RenderTargets(const ClusterMetrics& cluster) {
  nlohmann::json out = nlohmann::json::array();
  for (const NodeRow& n : cluster.nodes) {
    std::string_view address = n.address;
    std::string scheme = "http";
    if (address.starts_with("https://")) {
      scheme = "https";
      address.remove_prefix(8);
    } else if (address.starts_with("http://")) {
      address.remove_prefix(7);
    } else {
      continue;  // never registered
    }
    if (size_t slash = address.find('/'); slash != std::string_view::npos) {
      address = address.substr(0, slash);
    }
    if (address.empty()) continue;
    out.push_back({{"targets", nlohmann::json::array({std::string(address)})},
                   {"labels",
                    {{"__scheme__", scheme},
                     {"__metrics_path__", "/metrics"},
                     {"node", n.name},
                     {"partitions", Join(n.partitions)}}}});
  }
  // Replacement for invalid UTF-8 (a node name is checked; this is belt and braces).
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace corral::controller::metrics
