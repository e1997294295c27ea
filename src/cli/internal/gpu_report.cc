#include "cli/internal/gpu_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cli/slurm/sreport.h"
#include "cli/table.h"
#include "core/duration.h"

namespace corral::cli::internal {
namespace {

// A GPU of 20 GB or more whose peak use stays under a quarter of it could be a MIG slice.
constexpr uint64_t kMigWorthyMb = 20 * 1024;

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string Gb(uint64_t mb) { return Fmt("%.0f", std::ceil(static_cast<double>(mb) / 1024)); }

std::string GpuName(const api::GpuStatsInfo& stats, const api::GpuStatsGpu& g) {
  bool one_node = std::all_of(stats.gpus.begin(), stats.gpus.end(),
                              [&](const api::GpuStatsGpu& o) { return o.node == g.node; });
  return "GPU " + std::to_string(g.gpu) + (one_node ? "" : " on " + g.node);
}

Duration WallTime(const Job& j, Timestamp now) {
  if (j.start_time == Timestamp{}) return Duration(0);
  Timestamp end = j.end_time != Timestamp{} && j.state != JobState::kRunning ? j.end_time : now;
  return end > j.start_time ? end - j.start_time : Duration(0);
}

// Slurm seff's time form: "00:05:07", "1-02:00:00".
std::string SeffTime(double seconds) {
  int64_t s = static_cast<int64_t>(seconds);
  char buf[48];
  if (s >= 86400) {
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(s / 86400),
                  static_cast<long long>(s / 3600 % 24), static_cast<long long>(s / 60 % 60),
                  static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  }
  return buf;
}

// Slurm seff's memory form: "1.50 GB", "512.00 MB".
std::string SeffMemory(double mb) {
  if (mb >= 1024) return Fmt("%.2f GB", mb / 1024);
  return Fmt("%.2f MB", mb);
}

}  // namespace

std::vector<std::string> JobstatsNotes(const api::JobInfo& job, const api::GpuStatsInfo& stats) {
  std::vector<std::string> notes;
  uint64_t samples = 0;
  for (const auto& g : stats.gpus) samples += g.samples;
  if (samples == 0) {
    notes.push_back(
        "no GPU readings were recorded for this job (it had no GPUs, or ended before the "
        "first sample)");
    return notes;
  }
  if (!job.gpu_waste.empty() || !stats.waste_note.empty()) {
    notes.push_back("flagged as wasting its GPUs: " +
                    (stats.waste_note.empty() ? job.gpu_waste : stats.waste_note));
  }
  for (const auto& g : stats.gpus) {
    if (g.samples == 0) continue;
    if (g.idle_fraction >= 0.5) {
      notes.push_back(GpuName(stats, g) + " was idle " + Fmt("%.0f", g.idle_fraction * 100) +
                      "% of the time: release GPUs the job does not use, or ask for fewer");
    } else if (g.util_mean < 25) {
      notes.push_back(GpuName(stats, g) + " averaged " + Fmt("%.0f", g.util_mean) +
                      "% utilisation: check that the work keeps it busy (data loading, CPU "
                      "bottlenecks)");
    }
  }
  bool all_small = true;
  uint64_t peak = 0, size = 0;
  for (const auto& g : stats.gpus) {
    if (g.samples == 0) continue;
    if (g.memory_mb < kMigWorthyMb || g.mem_max_mb * 4 >= g.memory_mb) all_small = false;
    peak = std::max(peak, g.mem_max_mb);
    size = std::max(size, g.memory_mb);
  }
  if (all_small && size > 0) {
    notes.push_back("peak memory " + Gb(peak) + " of " + Gb(size) + " GB" +
                    (stats.gpus.size() > 1 ? " per GPU" : "") + ": a MIG slice would do");
  }
  return notes;
}

std::string FormatJobstats(const api::JobInfo& info, const api::GpuStatsInfo& stats) {
  const Job& j = info.job;
  std::string out;
  Table head({"Job ID:", j.id.ToString()});
  head.Add({"User/Account:", j.spec.user + "/" + (j.spec.account.empty() ? "-" : j.spec.account)});
  head.Add({"Job Name:", j.spec.name});
  head.Add({"State:", std::string(JobStateName(j.state))});
  head.Add({"Partition:", j.partition});
  uint32_t gpus = 0;
  for (const auto& na : j.allocation.nodes) gpus += na.gpus.size();
  head.Add({"Nodes:", std::to_string(j.allocation.nodes.size())});
  head.Add({"GPUs:", std::to_string(gpus)});
  out += head.Render();
  out += "\nGPU use (from readings every few seconds):\n";
  Table t({"NODE", "GPU", "MODEL", "SAMPLES", "UTIL_MEAN", "UTIL_PEAK", "IDLE", "MEM_PEAK",
           "POWER_PEAK", "ENERGY"});
  for (const auto& g : stats.gpus) {
    t.Add({g.node, std::to_string(g.gpu), g.model.empty() ? "-" : g.model,
           std::to_string(g.samples), Fmt("%.1f%%", g.util_mean), Fmt("%.1f%%", g.util_max),
           Fmt("%.0f%%", g.idle_fraction * 100),
           Fmt("%.1f GB", static_cast<double>(g.mem_max_mb) / 1024) +
               (g.memory_mb > 0 ? Fmt(" of %.0f", static_cast<double>(g.memory_mb) / 1024) : ""),
           Fmt("%.0f W", g.power_max_watts), Fmt("%.3f kWh", g.energy_joules / 3.6e6)});
  }
  out += t.Render();
  std::vector<std::string> notes = JobstatsNotes(info, stats);
  if (!notes.empty()) {
    out += "\nNotes:\n";
    for (const auto& n : notes) out += "  * " + n + "\n";
  }
  return out;
}

std::string FormatSeff(const api::JobInfo& info, const api::GpuStatsInfo& stats,
                       const std::string& cluster, const std::string& group, Timestamp now) {
  const Job& j = info.job;
  std::string out;
  auto line = [&](const std::string& k, const std::string& v) { out += k + ": " + v + "\n"; };
  line("Job ID", j.id.ToString());
  line("Cluster", cluster);
  line("User/Group", j.spec.user + "/" + (group.empty() ? std::to_string(j.spec.gid) : group));
  std::string state(JobStateName(j.state));
  if (IsTerminal(j.state)) state += " (exit code " + std::to_string(j.exit_code) + ")";
  line("State", state);
  uint32_t cores = 0;
  uint64_t mem_mb = 0;
  for (const auto& na : j.allocation.nodes) {
    cores += na.cpus;
    mem_mb += na.mem_mb;
  }
  const size_t nodes = j.allocation.nodes.size();
  if (nodes > 1) {
    line("Nodes", std::to_string(nodes));
    line("Cores per node", std::to_string(cores / nodes));
  } else {
    line("Cores", std::to_string(cores));
  }
  const Duration wall = WallTime(j, now);
  const double core_seconds = ToSecondsF(wall) * cores;
  const double cpu = j.usage.cpu_seconds;
  line("CPU Utilized", SeffTime(cpu));
  line("CPU Efficiency", Fmt("%.2f%%", core_seconds > 0 ? 100 * cpu / core_seconds : 0) + " of " +
                             SeffTime(core_seconds) + " core-walltime");
  line("Job Wall-clock time", SeffTime(ToSecondsF(wall)));
  const double rss = static_cast<double>(j.usage.max_rss_mb);
  line("Memory Utilized", SeffMemory(rss));
  if (mem_mb > 0) {
    line("Memory Efficiency", Fmt("%.2f%%", 100 * rss / static_cast<double>(mem_mb)) + " of " +
                                  SeffMemory(static_cast<double>(mem_mb)));
  } else {
    line("Memory Efficiency", "0.00% of 0.00 MB (no memory limit)");
  }
  uint32_t gpus = 0;
  for (const auto& na : j.allocation.nodes) gpus += na.gpus.size();
  if (gpus > 0) {
    std::string model = stats.gpus.empty() ? "" : stats.gpus[0].model;
    line("GPUs", std::to_string(gpus) + (model.empty() ? "" : " (" + model + ")"));
    double util_sum = 0, util_peak = 0, energy = 0;
    uint64_t mem_peak = 0, mem_size = 0, samples = 0;
    for (const auto& g : stats.gpus) {
      util_sum += g.util_mean * g.samples;
      samples += g.samples;
      util_peak = std::max(util_peak, g.util_max);
      mem_peak = std::max(mem_peak, g.mem_max_mb);
      mem_size = std::max(mem_size, g.memory_mb);
      energy += g.energy_joules;
    }
    if (samples == 0) {
      line("GPU Utilization", "no readings");
    } else {
      line("GPU Utilization", Fmt("%.2f%%", util_sum / static_cast<double>(samples)) + " mean, " +
                                  Fmt("%.2f%%", util_peak) + " peak");
      line("GPU Memory Utilized",
           SeffMemory(static_cast<double>(mem_peak)) + " peak" +
               (mem_size > 0 ? " of " + SeffMemory(static_cast<double>(mem_size)) + " per GPU"
                             : ""));
      line("GPU Energy", Fmt("%.3f kWh", energy / 3.6e6));
    }
    if (!info.gpu_waste.empty()) line("GPU Waste", info.gpu_waste);
  }
  if (j.state == JobState::kRunning) {
    out += "WARNING: Efficiency statistics may be misleading for RUNNING jobs.\n";
  }
  return out;
}

std::string FormatWasteReport(const api::WasteReport& r) {
  std::string out = "GPU waste since " + FormatTimestamp(r.since) + " (GPU-hours under " +
                    Fmt("%g", r.threshold) + "% utilisation)\n";
  for (const auto* rows : {&r.users, &r.accounts}) {
    out += "\n";
    Table t({rows == &r.users ? "USER" : "ACCOUNT", "JOBS", "FLAGGED", "GPU_HOURS",
             "WASTED_GPU_HOURS", "WASTED"});
    for (const auto& row : *rows) {
      t.Add({row.name.empty() ? "-" : row.name, std::to_string(row.jobs),
             std::to_string(row.flagged), Fmt("%.2f", row.gpu_hours),
             Fmt("%.2f", row.wasted_gpu_hours),
             Fmt("%.0f%%", row.gpu_hours > 0 ? 100 * row.wasted_gpu_hours / row.gpu_hours : 0)});
    }
    out += t.Render();
  }
  return out;
}

std::string FormatUsageReport(const api::UsageReport& r,
                              const std::map<std::string, std::string>& parents) {
  auto hours = [](double s) { return Fmt("%.2f", s / 3600); };
  auto kwh = [](double j) { return Fmt("%.3f", j / 3.6e6); };
  std::string out = "Usage " + FormatTimestamp(r.start) + " - " + FormatTimestamp(r.end);
  if (r.own_only) out += " (" + r.user + "'s jobs only: [privacy] hides other users')";
  out += "\n";
  auto share = [](double used, double capacity) {
    return capacity > 0 ? Fmt("%.1f%%", 100 * used / capacity) : std::string("-");
  };
  out += "Cluster: " + std::to_string(r.cluster_cpus) + " CPUs, " +
         std::to_string(r.cluster_gpus) + " GPUs; " + std::to_string(r.total.jobs) + " jobs; " +
         hours(r.total.gpu_seconds) + " of " + hours(r.reported_gpu_seconds) + " GPU-hours (" +
         share(r.total.gpu_seconds, r.reported_gpu_seconds) + "), " + hours(r.total.cpu_seconds) +
         " of " + hours(r.reported_cpu_seconds) + " CPU-hours (" +
         share(r.total.cpu_seconds, r.reported_cpu_seconds) + "), " + kwh(r.total.energy_joules) +
         " kWh\n";
  auto section = [&](const char* title, std::vector<std::string> keys,
                     const std::vector<api::UsageRow>& rows,
                     std::vector<std::string> (*key_of)(const api::UsageRow&)) {
    if (rows.empty()) return;
    out += std::string("\n") + title + "\n";
    for (const char* h : {"JOBS", "CPU_HOURS", "GPU_HOURS", "ENERGY_KWH"}) keys.push_back(h);
    Table t(keys);
    for (const api::UsageRow& row : rows) {
      std::vector<std::string> cells = key_of(row);
      for (std::string& c : cells) {
        if (c.empty()) c = "-";
      }
      cells.insert(cells.end(), {std::to_string(row.jobs), hours(row.cpu_seconds),
                                 hours(row.gpu_seconds), kwh(row.energy_joules)});
      t.Add(std::move(cells));
    }
    out += t.Render();
  };
  if (parents.empty()) {
    section("By account:", {"ACCOUNT"}, r.accounts,
            [](const api::UsageRow& x) { return std::vector<std::string>{x.account}; });
  } else {  // rolled up over the tree, as sreport does
    std::vector<api::UsageRow> tree;
    for (const slurm::AccountLine& a : slurm::RollUpAccounts(r, parents)) {
      tree.push_back(a.row);
      tree.back().account = std::string(2 * (a.depth - 1), ' ') + a.row.account;
    }
    section("By account (with its sub-accounts):", {"ACCOUNT"}, tree,
            [](const api::UsageRow& x) { return std::vector<std::string>{x.account}; });
  }
  section("By user:", {"ACCOUNT", "USER"}, r.users,
          [](const api::UsageRow& x) { return std::vector<std::string>{x.account, x.user}; });
  section("By partition:", {"PARTITION"}, r.partitions,
          [](const api::UsageRow& x) { return std::vector<std::string>{x.partition}; });
  section("By GPU model:", {"MODEL"}, r.gpu_models,
          [](const api::UsageRow& x) { return std::vector<std::string>{x.gpu_model}; });
  section("By job:", {"JOBID", "ACCOUNT", "USER", "PARTITION"}, r.jobs,
          [](const api::UsageRow& x) {
            return std::vector<std::string>{x.job.ToString(), x.account, x.user, x.partition};
          });
  return out;
}

}  // namespace corral::cli::internal
