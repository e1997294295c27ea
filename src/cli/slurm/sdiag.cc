#include "cli/slurm/sdiag.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <vector>

namespace corral::slurm {
namespace {

// "Wed Dec 02 10:32:40 2026 (1796207560)", as sdiag prints its times (local zone).
std::string When(Timestamp t, int64_t utc_offset_seconds) {
  const int64_t epoch =
      std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  std::time_t local = static_cast<std::time_t>(epoch + utc_offset_seconds);
  std::tm tm{};
  gmtime_r(&local, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%a %b %d %H:%M:%S %Y", &tm);
  return std::string(buf) + " (" + std::to_string(epoch) + ")";
}

uint64_t Micros(double seconds) { return static_cast<uint64_t>(std::llround(seconds * 1e6)); }

std::string Line(const char* format, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), format, args...);
  return buf;
}

template <typename T>
void SortRows(std::vector<T>& rows, SdiagSort sort, auto name) {
  auto average = [](const T& r) { return r.count == 0 ? 0.0 : r.total_seconds / r.count; };
  std::stable_sort(rows.begin(), rows.end(), [&](const T& a, const T& b) {
    switch (sort) {
      case SdiagSort::kId:
        return name(a) < name(b);
      case SdiagSort::kTotalTime:
        return a.total_seconds > b.total_seconds;
      case SdiagSort::kAverageTime:
        return average(a) > average(b);
      case SdiagSort::kCount:
        break;
    }
    return a.count > b.count;
  });
}

}  // namespace

std::string RenderSdiag(const api::DiagInfo& d, const SdiagOptions& o) {
  const std::string stars = "*******************************************************\n";
  std::string out = stars;
  out += "sdiag output at " + When(d.now, o.utc_offset_seconds) + "\n";
  out += "Data since      " + When(d.since, o.utc_offset_seconds) + "\n";
  out += stars;
  out += Line("Server thread count:  %u\n", d.server_threads);
  out += "\n";
  out += Line("Jobs submitted: %llu\n", static_cast<unsigned long long>(d.jobs_submitted));
  out += Line("Jobs started:   %llu\n", static_cast<unsigned long long>(d.jobs_started));
  out += Line("Jobs completed: %llu\n", static_cast<unsigned long long>(d.jobs_completed));
  out += Line("Jobs canceled:  %llu\n", static_cast<unsigned long long>(d.jobs_canceled));
  out += Line("Jobs failed:    %llu\n", static_cast<unsigned long long>(d.jobs_failed));
  out += "\n";
  out += "Job states ts:  " + When(d.now, o.utc_offset_seconds) + "\n";
  out += Line("Jobs pending:   %llu\n", static_cast<unsigned long long>(d.jobs_pending));
  out += Line("Jobs running:   %llu\n", static_cast<unsigned long long>(d.jobs_running));
  out += "\n";

  const unsigned long long cycles = d.cycles;
  const unsigned long long last = Micros(d.last_cycle_seconds), max = Micros(d.max_cycle_seconds);
  out += "Main schedule statistics (microseconds):\n";
  out += Line("\tLast cycle:   %llu\n", last);
  out += Line("\tMax cycle:    %llu\n", max);
  out += Line("\tTotal cycles: %llu\n", cycles);
  if (cycles > 0) {
    out += Line("\tMean cycle:   %llu\n", Micros(d.total_cycle_seconds) / cycles);
    out += Line("\tMean depth cycle:  %llu\n",
                static_cast<unsigned long long>(d.examined_total) / cycles);
  }
  const int64_t minutes =
      std::chrono::duration_cast<std::chrono::seconds>(d.now - d.since).count() / 60;
  if (std::chrono::duration_cast<std::chrono::seconds>(d.now - d.since).count() > 60) {
    out += Line("\tCycles per minute: %llu\n", cycles / static_cast<unsigned long long>(minutes));
  }
  out += Line("\tLast queue length: %llu\n", static_cast<unsigned long long>(d.last_queue_length));
  out += "\n";

  out += "Backfilling stats\n";
  out += Line("\tTotal backfilled jobs (since last slurm start): %llu\n",
              static_cast<unsigned long long>(d.backfilled_total));
  out += Line("\tTotal backfilled jobs (since last stats cycle start): %llu\n",
              static_cast<unsigned long long>(d.backfilled_total));
  out += "\tTotal backfilled heterogeneous job components: 0\n";
  out += Line("\tTotal cycles: %llu\n", cycles);
  out += "\tLast cycle when: " +
         (d.last_pass_time == Timestamp{} ? std::string("N/A")
                                          : When(d.last_pass_time, o.utc_offset_seconds)) +
         "\n";
  out += Line("\tLast cycle: %llu\n", last);
  out += Line("\tMax cycle:  %llu\n", max);
  if (cycles > 0) out += Line("\tMean cycle: %llu\n", Micros(d.total_cycle_seconds) / cycles);
  out += Line("\tLast depth cycle: %llu\n", static_cast<unsigned long long>(d.last_examined));
  out += Line("\tLast depth cycle (try sched): %llu\n",
              static_cast<unsigned long long>(d.last_examined));
  if (cycles > 0) {
    out += Line("\tDepth Mean: %llu\n", static_cast<unsigned long long>(d.examined_total) / cycles);
    out += Line("\tDepth Mean (try depth): %llu\n",
                static_cast<unsigned long long>(d.examined_total) / cycles);
  }
  out += Line("\tLast queue length: %llu\n", static_cast<unsigned long long>(d.last_queue_length));
  out += Line("\tLast table size: %llu\n", static_cast<unsigned long long>(d.last_reservations));
  out += "\n";

  std::vector<api::DiagRoute> routes = d.routes;
  SortRows(routes, o.sort, [](const api::DiagRoute& r) { return r.method + " " + r.route; });
  out += "Remote Procedure Call statistics by message type\n";
  for (const auto& r : routes) {
    const unsigned long long total = Micros(r.total_seconds);
    out += Line("\t%-47s count:%-6llu ave_time:%-6llu total_time:%llu\n",
                (r.method + " " + r.route).c_str(), static_cast<unsigned long long>(r.count),
                r.count == 0 ? 0ULL : total / r.count, total);
  }
  out += "\n";
  std::vector<api::DiagUser> users = d.users;
  SortRows(users, o.sort, [](const api::DiagUser& u) { return u.user; });
  out += "Remote Procedure Call statistics by user\n";
  for (const auto& u : users) {
    const unsigned long long total = Micros(u.total_seconds);
    out += Line("\t%-16s(%8u) count:%-6llu ave_time:%-6llu total_time:%llu\n", u.user.c_str(),
                u.uid, static_cast<unsigned long long>(u.count),
                u.count == 0 ? 0ULL : total / u.count, total);
  }
  return out;
}

}  // namespace corral::slurm
