#include "cli/slurm/internal/text.h"

#include <chrono>
#include <cstdio>

#include "core/hostlist.h"

namespace corral::slurm::internal {

std::string Pad(std::string_view value, int width, bool right, bool cut) {
  if (width <= 0) return std::string(value);
  std::string s(value);
  size_t w = static_cast<size_t>(width);
  if (right) {
    if (s.size() < w) s.insert(0, w - s.size(), ' ');
    if (cut && s.size() > w) s.resize(w);
  } else {
    if (s.size() > w) s.resize(w);
    if (s.size() < w) s.append(w - s.size(), ' ');
  }
  return s;
}

std::string LocalTime(Timestamp t, int64_t utc_offset_seconds) {
  auto local =
      std::chrono::floor<std::chrono::seconds>(t) + std::chrono::seconds(utc_offset_seconds);
  auto day = std::chrono::floor<std::chrono::days>(local);
  std::chrono::year_month_day ymd{day};
  std::chrono::hh_mm_ss hms{local - day};
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02ld:%02ld:%02ld", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<long>(hms.hours().count()), static_cast<long>(hms.minutes().count()),
                static_cast<long>(hms.seconds().count()));
  return buf;
}

std::string ShortDuration(int64_t t) {
  if (t < 0) return "INVALID";
  long days = static_cast<long>(t / 86400), h = static_cast<long>((t / 3600) % 24),
       m = static_cast<long>((t / 60) % 60), s = static_cast<long>(t % 60);
  char buf[48];
  if (days > 0) {
    std::snprintf(buf, sizeof buf, "%ld-%02ld:%02ld:%02ld", days, h, m, s);
  } else if (h > 0) {
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", h, m, s);
  } else {
    std::snprintf(buf, sizeof buf, "%ld:%02ld", m, s);
  }
  return buf;
}

std::string LongDuration(int64_t t) {
  if (t < 0) t = 0;
  long days = static_cast<long>(t / 86400), h = static_cast<long>((t / 3600) % 24),
       m = static_cast<long>((t / 60) % 60), s = static_cast<long>(t % 60);
  char buf[48];
  if (days > 0) {
    std::snprintf(buf, sizeof buf, "%ld-%02ld:%02ld:%02ld", days, h, m, s);
  } else {
    std::snprintf(buf, sizeof buf, "%02ld:%02ld:%02ld", h, m, s);
  }
  return buf;
}

std::string ExactMemory(uint64_t mb) {
  if (mb == 0) return "0";
  const char units[] = {'M', 'G', 'T', 'P'};
  int u = 0;
  while (u < 3 && mb % 1024 == 0) {
    mb /= 1024;
    ++u;
  }
  return std::to_string(mb) + units[u];
}

std::string RoundedMemory(uint64_t mb) {
  if (mb == 0) return "0";
  const char units[] = {'M', 'G', 'T', 'P'};
  double v = static_cast<double>(mb);
  int u = 0;
  while (u < 3 && v >= 1024) {
    v /= 1024;
    ++u;
  }
  char buf[40];
  if (v == static_cast<double>(static_cast<uint64_t>(v))) {
    std::snprintf(buf, sizeof buf, "%llu%c", static_cast<unsigned long long>(v), units[u]);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f%c", v, units[u]);
  }
  return buf;
}

int64_t Seconds(Duration d) { return std::chrono::duration_cast<std::chrono::seconds>(d).count(); }

Duration TimeLimitOf(const Job& job) {
  if (job.time_limit.count() != 0) return job.time_limit;
  return job.spec.time_limit.value_or(kUnlimited);
}

int64_t TimeUsed(const Job& job, Timestamp now) {
  if (job.state == JobState::kPending || job.start_time == Timestamp{}) return 0;
  Timestamp end =
      job.state == JobState::kRunning || job.end_time == Timestamp{} ? now : job.end_time;
  // Time suspended does not count (`scontrol suspend`), as in Slurm.
  const Allocation& a = job.allocation;
  Duration suspended = a.suspended_for;
  if (a.suspended && end > a.suspend_time) suspended += end - a.suspend_time;
  return std::max<int64_t>(0, Seconds(end - job.start_time - suspended));
}

uint32_t CpusOf(const Job& job) {
  if (!job.allocation.nodes.empty()) {
    uint32_t n = 0;
    for (const auto& a : job.allocation.nodes) n += a.cpus;
    return n;
  }
  const ResourceRequest& r = job.spec.resources;
  return std::max<uint32_t>(r.ntasks, 1) * std::max<uint32_t>(r.cpus_per_task, 1);
}

uint32_t NodesOf(const Job& job) {
  if (!job.allocation.nodes.empty()) return static_cast<uint32_t>(job.allocation.nodes.size());
  return std::max<uint32_t>(job.spec.resources.nodes, 1);
}

std::string GpuTres(uint32_t count, const std::string& type) {
  if (count == 0) return "";
  return "gres:gpu:" + (type.empty() ? "" : type + ":") + std::to_string(count);
}

std::string PartitionOf(const Job& job) {
  if (!job.partition.empty()) return job.partition;
  std::string out;
  for (const auto& p : job.spec.partitions) {
    if (!out.empty()) out += ',';
    out += p;
  }
  return out;
}

std::string JobIdText(const Job& job, const std::string& pending_tasks) {
  if (!pending_tasks.empty()) return job.array_job_id.ToString() + "_[" + pending_tasks + "]";
  if (job.array_task_id.has_value()) {
    return job.array_job_id.ToString() + "_" + std::to_string(*job.array_task_id);
  }
  return job.id.ToString();
}

}  // namespace corral::slurm::internal
