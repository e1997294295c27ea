#include "sim/trace.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <unordered_set>

namespace corral::sim {
namespace {

enum Column {
  kJobId,
  kSubmit,
  kDuration,
  kNumGpus,
  kUser,
  kQueue,
  kTimeLimit,
  kNumNodes,
  kGpuType,
  kAccount,
  kColumnCount,
};

constexpr std::array<std::string_view, kColumnCount> kColumnNames = {
    "job_id", "submit_time_s", "duration_s", "num_gpus", "user",
    "queue",  "time_limit_s",  "num_nodes",  "gpu_type", "account"};
constexpr int kRequired = kQueue + 1;  // the first six are required

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

void Split(std::string_view line, std::vector<std::string_view>* cells) {
  cells->clear();
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      cells->push_back(Trim(line.substr(start)));
      return;
    }
    cells->push_back(Trim(line.substr(start, comma - start)));
    start = comma + 1;
  }
}

Result<uint64_t> ParseUint(std::string_view text) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
    return InvalidArgument("not a non-negative integer \"" + std::string(text) + "\"");
  }
  return v;
}

// Seconds, integer or decimal, to microseconds (rounded to the nearest).
Result<Duration> ParseSecondsCell(std::string_view text) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty() || !std::isfinite(v)) {
    return InvalidArgument("not a number of seconds \"" + std::string(text) + "\"");
  }
  if (std::fabs(v) > 1e12) return InvalidArgument("out of range \"" + std::string(text) + "\"");
  return Duration(std::llround(v * 1e6));
}

}  // namespace

Result<Trace> ParseTraceCsv(std::string_view text, std::string_view source_name) {
  const std::string src(source_name);
  Trace trace;
  std::array<int, kColumnCount> col;
  col.fill(-1);
  size_t n_cols = 0;
  bool have_header = false;
  std::vector<std::string_view> cells;
  std::unordered_set<uint64_t> ids;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    std::string_view trimmed = Trim(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    const std::string where = src + ":" + std::to_string(line_no) + ": ";
    if (trimmed.find('"') != std::string_view::npos)
      return InvalidArgument(where + "quoted cells are not supported");
    Split(trimmed, &cells);
    if (!have_header) {
      have_header = true;
      n_cols = cells.size();
      for (size_t i = 0; i < cells.size(); ++i) {
        for (int c = 0; c < kColumnCount; ++c) {
          if (cells[i] != kColumnNames[c]) continue;
          if (col[c] >= 0)
            return InvalidArgument(where + "column " + std::string(cells[i]) + " given twice");
          col[c] = static_cast<int>(i);
        }
      }
      for (int c = 0; c < kRequired; ++c) {
        if (col[c] < 0) {
          return InvalidArgument(
              where + "missing column " + std::string(kColumnNames[c]) +
              " (required: job_id,submit_time_s,duration_s,num_gpus,user,queue)");
        }
      }
      continue;
    }
    if (cells.size() != n_cols) {
      return InvalidArgument(where + "expected " + std::to_string(n_cols) + " cells, found " +
                             std::to_string(cells.size()));
    }
    auto cell = [&](int c) { return col[c] < 0 ? std::string_view() : cells[col[c]]; };
    auto bad = [&](int c, const Error& e) {
      return InvalidArgument(where + std::string(kColumnNames[c]) + ": " + e.message);
    };
    TraceJob j;
    auto id = ParseUint(cell(kJobId));
    if (!id) return bad(kJobId, id.error());
    j.job_id = *id;
    if (!ids.insert(j.job_id).second)
      return InvalidArgument(where + "job_id " + std::to_string(j.job_id) + " given twice");
    auto submit = ParseSecondsCell(cell(kSubmit));
    if (!submit) return bad(kSubmit, submit.error());
    if (submit->count() < 0) return InvalidArgument(where + "submit_time_s: negative");
    j.submit = *submit;
    auto duration = ParseSecondsCell(cell(kDuration));
    if (!duration) return bad(kDuration, duration.error());
    if (duration->count() <= 0) return InvalidArgument(where + "duration_s: must be > 0");
    j.duration = *duration;
    auto gpus = ParseUint(cell(kNumGpus));
    if (!gpus) return bad(kNumGpus, gpus.error());
    if (*gpus < 1 || *gpus > 1'000'000)
      return InvalidArgument(where + "num_gpus: must be in [1, 1000000]");
    j.num_gpus = static_cast<uint32_t>(*gpus);
    j.user = std::string(cell(kUser));
    j.queue = std::string(cell(kQueue));
    if (j.user.empty()) return InvalidArgument(where + "user: empty");
    if (j.queue.empty()) return InvalidArgument(where + "queue: empty");
    if (!cell(kTimeLimit).empty()) {
      auto limit = ParseSecondsCell(cell(kTimeLimit));
      if (!limit) return bad(kTimeLimit, limit.error());
      if (limit->count() <= 0) return InvalidArgument(where + "time_limit_s: must be > 0");
      j.time_limit = *limit;
    }
    if (!cell(kNumNodes).empty()) {
      auto nodes = ParseUint(cell(kNumNodes));
      if (!nodes) return bad(kNumNodes, nodes.error());
      if (*nodes < 1 || *nodes > j.num_gpus || j.num_gpus % *nodes != 0) {
        return InvalidArgument(where + "num_nodes: must divide num_gpus " +
                               std::to_string(j.num_gpus));
      }
      j.num_nodes = static_cast<uint32_t>(*nodes);
    }
    j.gpu_type = std::string(cell(kGpuType));
    j.account = std::string(cell(kAccount));
    trace.jobs.push_back(std::move(j));
  }
  if (!have_header) return InvalidArgument(src + ": empty trace (no header row)");
  if (trace.jobs.empty()) return InvalidArgument(src + ": no jobs");
  std::stable_sort(trace.jobs.begin(), trace.jobs.end(), [](const TraceJob& a, const TraceJob& b) {
    if (a.submit != b.submit) return a.submit < b.submit;
    return a.job_id < b.job_id;
  });
  return trace;
}

std::string FormatSeconds(Duration d) {
  if (d.count() % 1'000'000 == 0) return std::to_string(d.count() / 1'000'000);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", ToSecondsF(d));
  return buf;
}

std::string FormatTraceCsv(const Trace& trace) {
  bool extra = std::any_of(trace.jobs.begin(), trace.jobs.end(), [](const TraceJob& j) {
    return j.time_limit || j.num_nodes > 0 || !j.gpu_type.empty() || !j.account.empty();
  });
  // Commas would split a cell: names never have them in practice, but keep the file readable.
  auto clean = [](std::string s) {
    std::replace(s.begin(), s.end(), ',', '_');
    std::replace(s.begin(), s.end(), '\n', '_');
    return s;
  };
  std::string out = "job_id,submit_time_s,duration_s,num_gpus,user,queue";
  if (extra) out += ",time_limit_s,num_nodes,gpu_type,account";
  out += '\n';
  for (const TraceJob& j : trace.jobs) {
    out += std::to_string(j.job_id) + ',' + FormatSeconds(j.submit) + ',' +
           FormatSeconds(j.duration) + ',' + std::to_string(j.num_gpus) + ',' + clean(j.user) +
           ',' + clean(j.queue);
    if (extra) {
      out += ',' + (j.time_limit ? FormatSeconds(*j.time_limit) : std::string()) + ',' +
             (j.num_nodes > 0 ? std::to_string(j.num_nodes) : std::string()) + ',' +
             clean(j.gpu_type) + ',' + clean(j.account);
    }
    out += '\n';
  }
  return out;
}

}  // namespace corral::sim
