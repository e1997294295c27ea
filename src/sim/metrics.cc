#include "sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace corral::sim {
namespace {

double Mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  double rank = std::ceil(q / 100.0 * static_cast<double>(values.size()));
  size_t i = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return values[std::min(i, values.size() - 1)];
}

PolicyMetrics ComputeMetrics(const std::string& policy, const Workload& workload,
                             const SimResult& result) {
  PolicyMetrics m;
  m.policy = policy;
  std::vector<double> jct, wait, bsld, gang_wait;
  std::set<std::string> users;
  for (const SimJob& j : workload.jobs) users.insert(j.user);
  const bool by_user = users.size() > 1;
  m.jain_over = by_user ? "user" : "queue";
  std::map<std::string, std::pair<double, uint64_t>> per_entity;  // sum of slowdowns, count
  double last_end = 0;
  for (size_t i = 0; i < result.outcomes.size(); ++i) {
    const JobOutcome& o = result.outcomes[i];
    const SimJob& j = workload.jobs[i];
    m.preemptions += o.preemptions;
    m.lost_gpu_hours += o.lost_gpu_seconds / 3600.0;
    switch (o.end_kind) {
      case JobEnd::kRefused:
        ++m.refused;
        continue;
      case JobEnd::kNeverStarted:
        ++m.never_started;
        break;
      case JobEnd::kCancelled:
        ++m.cancelled;
        break;
      case JobEnd::kTimeout:
        ++m.timeouts;
        break;
      case JobEnd::kCompleted:
        break;
    }
    if (o.first_start != Timestamp{}) {
      double w = ToSecondsF(o.first_start - o.submit);
      wait.push_back(w);
      if (j.gpus >= kGangGpus) gang_wait.push_back(w);
    }
    if (o.end_kind == JobEnd::kCompleted || o.end_kind == JobEnd::kTimeout) {
      ++m.jobs;
      double c = ToSecondsF(o.end - o.submit);
      jct.push_back(c);
      double s = std::max(1.0, c / std::max(ToSecondsF(j.duration), kSlowdownBoundSeconds));
      bsld.push_back(s);
      auto& e = per_entity[by_user ? j.user : j.queue];
      e.first += s;
      e.second += 1;
      last_end = std::max(last_end, ToSecondsF(o.end - result.start));
    }
  }
  m.mean_jct_s = Mean(jct);
  m.p50_jct_s = Percentile(jct, 50);
  m.p95_jct_s = Percentile(jct, 95);
  m.p99_jct_s = Percentile(jct, 99);
  m.mean_wait_s = Mean(wait);
  m.p50_wait_s = Percentile(wait, 50);
  m.p95_wait_s = Percentile(wait, 95);
  m.p99_wait_s = Percentile(wait, 99);
  m.mean_bsld = Mean(bsld);
  m.p99_bsld = Percentile(bsld, 99);
  m.makespan_s = last_end;
  if (result.capacity_gpus > 0 && last_end > 0) {
    m.util = result.allocated_gpu_seconds / (static_cast<double>(result.capacity_gpus) * last_end);
  }
  double sum = 0, sum_sq = 0;
  for (const auto& [name, e] : per_entity) {
    double x = e.first / static_cast<double>(e.second);
    sum += x;
    sum_sq += x * x;
  }
  if (!per_entity.empty() && sum_sq > 0)
    m.jain = sum * sum / (static_cast<double>(per_entity.size()) * sum_sq);
  m.gang_jobs = gang_wait.size();
  m.gang_mean_wait_s = Mean(gang_wait);
  m.gang_p95_wait_s = Percentile(gang_wait, 95);
  return m;
}

std::string FormatMetricsCsv(const std::vector<PolicyMetrics>& rows) {
  std::string out =
      "policy,jobs,refused,never_started,timeouts,cancelled,mean_jct_s,p50_jct_s,p95_jct_s,p99_jct_"
      "s,"
      "mean_wait_s,p50_wait_s,p95_wait_s,p99_wait_s,mean_bsld,p99_bsld,makespan_s,util,jain,jain_"
      "over,"
      "preemptions,lost_gpu_h,gang_jobs,gang_mean_wait_s,gang_p95_wait_s\n";
  for (const PolicyMetrics& m : rows) {
    out += m.policy + ',' + std::to_string(m.jobs) + ',' + std::to_string(m.refused) + ',' +
           std::to_string(m.never_started) + ',' + std::to_string(m.timeouts) + ',' +
           std::to_string(m.cancelled) + ',' + Fixed(m.mean_jct_s, 1) + ',' +
           Fixed(m.p50_jct_s, 1) + ',' + Fixed(m.p95_jct_s, 1) + ',' + Fixed(m.p99_jct_s, 1) + ',' +
           Fixed(m.mean_wait_s, 1) + ',' + Fixed(m.p50_wait_s, 1) + ',' + Fixed(m.p95_wait_s, 1) +
           ',' + Fixed(m.p99_wait_s, 1) + ',' + Fixed(m.mean_bsld, 3) + ',' + Fixed(m.p99_bsld, 3) +
           ',' + Fixed(m.makespan_s, 1) + ',' + Fixed(m.util, 4) + ',' + Fixed(m.jain, 4) + ',' +
           m.jain_over + ',' + std::to_string(m.preemptions) + ',' + Fixed(m.lost_gpu_hours, 2) +
           ',' + std::to_string(m.gang_jobs) + ',' + Fixed(m.gang_mean_wait_s, 1) + ',' +
           Fixed(m.gang_p95_wait_s, 1) + '\n';
  }
  return out;
}

std::string HumanDuration(double s) {
  char buf[32];
  if (s < 120) {
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  } else if (s < 2 * 3600) {
    std::snprintf(buf, sizeof buf, "%.1fm", s / 60);
  } else if (s < 2 * 86400) {
    std::snprintf(buf, sizeof buf, "%.1fh", s / 3600);
  } else {
    std::snprintf(buf, sizeof buf, "%.1fd", s / 86400);
  }
  return buf;
}

std::string FormatMetricsTable(const std::vector<PolicyMetrics>& rows) {
  std::vector<std::string> header = {"policy",     "jobs",      "JCT mean", "p50",  "p95",
                                     "p99",        "wait mean", "p50",      "p95",  "p99",
                                     "bsld",       "makespan",  "util",     "jain", "preempt",
                                     "lost GPU-h", "gang wait", "gang p95"};
  std::vector<std::vector<std::string>> cells;
  for (const PolicyMetrics& m : rows) {
    cells.push_back(
        {m.policy, std::to_string(m.jobs), HumanDuration(m.mean_jct_s), HumanDuration(m.p50_jct_s),
         HumanDuration(m.p95_jct_s), HumanDuration(m.p99_jct_s), HumanDuration(m.mean_wait_s),
         HumanDuration(m.p50_wait_s), HumanDuration(m.p95_wait_s), HumanDuration(m.p99_wait_s),
         Fixed(m.mean_bsld, 2), HumanDuration(m.makespan_s), Fixed(m.util * 100, 1) + "%",
         Fixed(m.jain, 3) + "/" + m.jain_over.substr(0, 1), std::to_string(m.preemptions),
         Fixed(m.lost_gpu_hours, 0), HumanDuration(m.gang_mean_wait_s),
         HumanDuration(m.gang_p95_wait_s)});
  }
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& row : cells) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) out += "  ";
      std::string pad(width[c] - row[c].size(), ' ');
      out += c == 0 ? row[c] + pad : pad + row[c];  // names left, numbers right
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + '\n';
  };
  std::string out = line(header);
  for (const auto& row : cells) out += line(row);
  bool extra = false;
  for (const PolicyMetrics& m : rows)
    extra |= m.refused + m.never_started + m.timeouts + m.cancelled > 0;
  if (extra) {
    for (const PolicyMetrics& m : rows) {
      out += "  " + m.policy + ": " + std::to_string(m.refused) + " refused, " +
             std::to_string(m.never_started) + " never started, " + std::to_string(m.timeouts) +
             " timed out, " + std::to_string(m.cancelled) + " cancelled\n";
    }
  }
  return out;
}

}  // namespace corral::sim
