#include "cli/internal/timeline_view.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace corral::cli::internal {
namespace {

// "2026-12-02T13:50:01.123456Z".
std::string MicrosTime(Timestamp t) {
  int64_t us = ToMicros(t);
  int64_t frac = ((us % 1'000'000) + 1'000'000) % 1'000'000;
  Timestamp whole = FromMicros(us - frac);
  char buf[16];
  std::snprintf(buf, sizeof buf, ".%06" PRId64 "Z", frac);
  return FormatTimestamp(whole) + buf;
}

// `line` without the spaces an empty last column leaves.
std::string Trimmed(const char* line) {
  std::string s(line);
  size_t end = s.find_last_not_of(" \n");
  return s.substr(0, end + 1) + "\n";
}

}  // namespace

std::string FormatTraceDuration(Duration d) {
  int64_t us = d.count();
  const char* sign = us < 0 ? "-" : "";
  uint64_t a = static_cast<uint64_t>(std::llabs(us));
  char buf[48];
  if (a < 1000) {
    std::snprintf(buf, sizeof buf, "%s%" PRIu64 " us", sign, a);
  } else if (a < 1'000'000) {
    std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%03" PRIu64 " ms", sign, a / 1000, a % 1000);
  } else {
    std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%03" PRIu64 " s", sign, a / 1'000'000,
                  (a % 1'000'000) / 1000);
  }
  return buf;
}

std::string RenderTimeline(const api::JobTimeline& t) {
  std::string out = "job " + t.job.ToString() + " (" + t.state + "), run " + t.run.ToString();
  if (t.restart_count > 0) out += ", restarted " + std::to_string(t.restart_count) + " times";
  out += "\n";
  char line[160];
  std::snprintf(line, sizeof line, "%-16s %-10s %-27s %14s %14s\n", "MARK", "CLOCK", "TIME",
                "SINCE SUBMIT", "STEP");
  out += line;
  // Reached marks in the order they happened (a job placed in the pass of its submission's
  // iteration is scheduled before it is committed), then the ones not reached.
  std::vector<const TraceMark*> marks;
  for (const TraceMark& m : kTraceMarks) marks.push_back(&m);
  std::stable_sort(marks.begin(), marks.end(), [&](const TraceMark* a, const TraceMark* b) {
    Timestamp ta = a->Of(t.trace), tb = b->Of(t.trace);
    if ((ta == Timestamp{}) != (tb == Timestamp{})) return tb == Timestamp{};
    return ta < tb;
  });
  const Timestamp submitted = t.trace.submitted;
  Timestamp previous{};
  for (const TraceMark* m : marks) {
    Timestamp at = m->Of(t.trace);
    const std::string name(m->name);
    const char* clock = m->agent_clock ? "agent" : "controller";
    if (at == Timestamp{}) {
      std::snprintf(line, sizeof line, "%-16s %-10s %-27s %14s %14s\n", name.c_str(), clock, "-",
                    "", "");
      out += Trimmed(line);
      continue;
    }
    std::string since = submitted != Timestamp{} ? FormatTraceDuration(at - submitted) : "";
    std::string step = previous != Timestamp{} ? "+" + FormatTraceDuration(at - previous) : "";
    std::snprintf(line, sizeof line, "%-16s %-10s %-27s %14s %14s\n", name.c_str(), clock,
                  MicrosTime(at).c_str(), since.c_str(), step.c_str());
    out += Trimmed(line);
    previous = at;
  }
  out +=
      "controller marks read the controller's clock, agent marks the batch host's; between "
      "hosts a step includes their clocks' offset\n";
  return out;
}

}  // namespace corral::cli::internal
