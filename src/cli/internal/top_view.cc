#include "cli/internal/top_view.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/duration.h"
#include "core/strings.h"

namespace corral::cli::internal {
namespace {

// ANSI SGR colours.
constexpr const char* kReset = "\x1b[0m";
constexpr const char* kBold = "\x1b[1m";
constexpr const char* kDim = "\x1b[2m";
constexpr const char* kRed = "\x1b[31m";
constexpr const char* kGreen = "\x1b[32m";
constexpr const char* kYellow = "\x1b[33m";
constexpr const char* kCyan = "\x1b[36m";

// `s` with its control characters (C0, DEL, and the C1 range as UTF-8) as '?'.
std::string Printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      out += '?';
    } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) < 0xa0) {
      out += '?';
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// Columns a string takes (UTF-8 continuation bytes take none).
size_t Columns(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return n;
}

std::string Percent(std::optional<double> v) {
  if (!v) return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", *v);
  return buf;
}

std::string Megabytes(std::optional<uint64_t> v) { return v ? std::to_string(*v) : "-"; }

// The colour of a utilisation: red when idle, yellow when low, green when busy.
const char* UtilColor(std::optional<double> v) {
  if (!v) return kDim;
  return *v < 5 ? kRed : *v < 50 ? kYellow : kGreen;
}

// `line` cut to `width` columns.
std::string Cut(const std::string& line, size_t width) {
  if (Columns(line) <= width) return line;
  std::string out;
  size_t cols = 0;
  for (char c : line) {
    bool starts = (static_cast<unsigned char>(c) & 0xc0) != 0x80;
    if (starts && ++cols > width) break;
    out += c;
  }
  return out;
}

// A cell: its text, and the colour it is shown in (null: none).
struct Cell {
  std::string text;
  const char* color = nullptr;
};

// Lines of cells, columns padded to their widest cell; colours do not count in the width.
// Cells after the last column that fits in `width` are cut.
class Grid {
 public:
  void Add(std::vector<Cell> row) { rows_.push_back(std::move(row)); }
  void Render(bool color, uint32_t width, std::string* out) const {
    std::vector<size_t> widths;
    for (const auto& row : rows_) {
      for (size_t i = 0; i < row.size(); ++i) {
        if (widths.size() <= i) widths.push_back(0);
        widths[i] = std::max(widths[i], Columns(row[i].text));
      }
    }
    for (const auto& row : rows_) {
      std::string line;
      size_t used = 0;
      for (size_t i = 0; i < row.size(); ++i) {
        const Cell& c = row[i];
        std::string text = used + Columns(c.text) > width ? Cut(c.text, width - used) : c.text;
        size_t cols = Columns(text);
        size_t pad = i + 1 < row.size() ? widths[i] - cols + 2 : 0;
        if (color && c.color != nullptr && !text.empty()) {
          line += c.color;
          line += text;
          line += kReset;
        } else {
          line += text;
        }
        used += cols;
        if (used >= width) break;
        size_t room = std::min<size_t>(pad, width - used);
        line.append(room, ' ');
        used += room;
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      *out += line;
      *out += '\n';
    }
  }

 private:
  std::vector<std::vector<Cell>> rows_;
};

const char* NodeStateColor(const std::string& state) {
  if (state == "idle") return kGreen;
  if (state == "mixed" || state == "allocated") return kCyan;
  if (state == "down" || state == "unknown" || state == "drained" || state == "draining") {
    return kRed;
  }
  return nullptr;
}

std::string GpuCell(const TopGpu& g) {
  std::string cell = std::to_string(g.index) + ":";
  if (g.state == "allocated") {
    cell += Percent(g.util);
    if (g.job) cell += " j" + g.job->ToString() + (g.waste ? "!" : "");
  } else {
    cell += g.state == "free" ? "-" : g.state;
  }
  return cell;
}

const char* GpuColor(const TopGpu& g) {
  if (g.state == "failed" || g.state == "down" || g.waste) return kRed;
  if (g.state == "allocated") return UtilColor(g.util);
  return kDim;
}

// A line per node, then its GPUs' cells on the next lines, indented, wrapped at `width`.
void FormatNodes(const TopFrame& f, const TopStyle& style, std::string* out) {
  Grid t;
  t.Add({{"NODE", kBold}, {"STATE", kBold}, {"GPUS", kBold}, {"UTIL", kBold},
         {"PARTITIONS", kBold}});
  std::vector<std::string> gpu_lines;
  for (const TopNode& n : f.nodes) {
    uint32_t allocated = 0;
    double util_sum = 0;
    uint32_t util_n = 0;
    std::string line = "  ";
    size_t cols = 2;
    for (const TopGpu& g : n.gpus) {
      if (g.state == "allocated") ++allocated;
      if (g.util) util_sum += *g.util, ++util_n;
      std::string cell = GpuCell(g);
      if (cols > 2 && cols + 2 + Columns(cell) > style.width) {
        line += "\n  ";
        cols = 2;
      } else if (cols > 2) {
        line += "  ";
        cols += 2;
      }
      line += style.color ? GpuColor(g) + cell + kReset : cell;
      cols += Columns(cell);
    }
    std::optional<double> util;
    if (util_n > 0) util = util_sum / util_n;
    t.Add({{Printable(n.name), nullptr},
           {n.state, NodeStateColor(n.state)},
           {std::to_string(allocated) + "/" + std::to_string(n.gpus.size()), nullptr},
           {Percent(util), UtilColor(util)},
           {Printable(Join(n.partitions, ",")), nullptr}});
    gpu_lines.push_back(n.gpus.empty() ? "" : line + "\n");
  }
  std::string table;
  t.Render(style.color, style.width, &table);
  // Interleave: the header, then each node's line and its GPUs.
  size_t start = table.find('\n') + 1;
  *out += table.substr(0, start);
  for (const std::string& gpus : gpu_lines) {
    size_t end = table.find('\n', start) + 1;
    *out += table.substr(start, end - start);
    *out += gpus;
    start = end;
  }
}

void FormatRunning(const TopFrame& f, const TopStyle& style, size_t rows, std::string* out) {
  Grid t;
  t.Add({{"JOBID", kBold}, {"USER", kBold}, {"ACCOUNT", kBold}, {"PARTITION", kBold},
         {"GPUS", kBold}, {"ELAPSED", kBold}, {"UTIL", kBold}, {"MEM_MB", kBold},
         {"NODES", kBold}, {"WASTE", kBold}});
  for (size_t i = 0; i < f.running.size() && i < rows; ++i) {
    const TopJob& j = f.running[i];
    t.Add({{j.id.ToString(), nullptr},
           {Printable(j.user), nullptr},
           {Printable(j.account), nullptr},
           {Printable(j.partition), nullptr},
           {std::to_string(j.gpus), nullptr},
           {FormatSlurmDuration(j.elapsed), nullptr},
           {Percent(j.util), UtilColor(j.util)},
           {Megabytes(j.mem_mb), nullptr},
           {Printable(j.nodes), nullptr},
           {j.waste.empty() ? "" : "WASTE: " + Printable(j.waste), kRed}});
  }
  t.Render(style.color, style.width, out);
  if (f.running.size() > rows) {
    *out += "... " + std::to_string(f.running.size() - rows) + " more running\n";
  }
}

void FormatPending(const TopFrame& f, const TopStyle& style, size_t rows, std::string* out) {
  Grid t;
  t.Add({{"JOBID", kBold}, {"USER", kBold}, {"ACCOUNT", kBold}, {"PARTITION", kBold},
         {"GPUS", kBold}, {"PRIORITY", kBold}, {"REASON", kBold}, {"START", kBold}});
  for (size_t i = 0; i < f.pending.size() && i < rows; ++i) {
    const TopJob& j = f.pending[i];
    t.Add({{j.id.ToString(), nullptr},
           {Printable(j.user), nullptr},
           {Printable(j.account), nullptr},
           {Printable(j.partition), nullptr},
           {std::to_string(j.gpus), nullptr},
           {std::to_string(j.priority), nullptr},
           {Printable(j.reason), kYellow},
           {j.estimated_start == Timestamp{} ? "unknown" : FormatTimestamp(j.estimated_start),
            nullptr}});
  }
  t.Render(style.color, style.width, out);
  if (f.pending.size() > rows) {
    *out += "... " + std::to_string(f.pending.size() - rows) + " more pending\n";
  }
}

}  // namespace

TopFrame BuildTopFrame(const std::vector<api::NodeInfo>& nodes,
                       const std::vector<api::JobInfo>& jobs,
                       const std::map<JobId, api::GpuStatsInfo>& stats, Timestamp now,
                       const std::string& controller) {
  TopFrame f;
  f.now = now;
  f.controller = controller;
  // Each allocated GPU's job, and its latest reading from the job's statistics.
  struct Reading {
    JobId job;
    std::optional<double> util;
    std::optional<uint64_t> mem_mb;
    bool waste = false;
  };
  std::map<std::pair<std::string, uint32_t>, Reading> by_gpu;
  for (const api::JobInfo& info : jobs) {
    const Job& j = info.job;
    TopJob t{.id = j.id,
             .user = j.spec.user,
             .account = j.spec.account,
             .partition = j.partition,
             .state = std::string(JobStateName(j.state))};
    if (j.state == JobState::kPending) {
      t.gpus = TotalGpus(j.spec.resources);
      t.priority = info.priority;
      t.reason = j.reason;
      if (!info.reason_detail.empty()) t.reason += " (" + info.reason_detail + ")";
      t.estimated_start = info.estimated_start;
      f.pending.push_back(std::move(t));
      continue;
    }
    if (j.state != JobState::kRunning) continue;
    t.waste = info.gpu_waste;
    t.elapsed = j.start_time != Timestamp{} && now > j.start_time ? now - j.start_time : Duration{};
    auto st = stats.find(j.id);
    double util_sum = 0;
    uint32_t util_n = 0;
    for (const NodeAllocation& a : j.allocation.nodes) {
      if (!t.nodes.empty()) t.nodes += ' ';
      t.nodes += a.node_name + ":" + JoinNumbers(a.gpus.ToVector());
      for (uint32_t g : a.gpus.ToVector()) {
        ++t.gpus;
        Reading r{.job = j.id, .waste = !info.gpu_waste.empty()};
        if (st != stats.end()) {
          for (const api::GpuStatsGpu& s : st->second.gpus) {
            if (s.node != a.node_name || s.gpu != g || s.buckets.empty()) continue;
            r.util = s.buckets.back().util_mean;
            r.mem_mb = s.buckets.back().mem_max_mb;
          }
        }
        if (r.util) util_sum += *r.util, ++util_n;
        if (r.mem_mb) t.mem_mb = t.mem_mb.value_or(0) + *r.mem_mb;
        by_gpu[{a.node_name, g}] = r;
      }
    }
    if (util_n > 0) t.util = util_sum / util_n;
    if (!t.waste.empty()) ++f.waste_flagged;
    f.running.push_back(std::move(t));
  }
  std::sort(f.running.begin(), f.running.end(),
            [](const TopJob& a, const TopJob& b) { return a.id < b.id; });
  std::sort(f.pending.begin(), f.pending.end(), [](const TopJob& a, const TopJob& b) {
    return a.priority != b.priority ? a.priority > b.priority : a.id < b.id;
  });

  for (const api::NodeInfo& n : nodes) {
    TopNode t{.name = n.node.inventory.name,
              .state = Lower(NodeStateName(n.state)),
              .partitions = n.partitions,
              .gpus = {}};
    const bool down = !n.node.responding || n.state == NodeState::kDown ||
                      n.state == NodeState::kUnknown || n.state == NodeState::kPoweredDown;
    for (const GpuInfo& g : n.node.inventory.gpus) {
      TopGpu gpu{.index = g.index, .model = g.model, .state = "free"};
      if (n.node.failed_gpus.contains(g.index)) {
        gpu.state = "failed";
      } else if (down) {
        gpu.state = "down";
      } else if (n.alloc_gpus.contains(g.index)) {
        gpu.state = "allocated";
      }
      if (auto it = by_gpu.find({t.name, g.index}); it != by_gpu.end()) {
        gpu.job = it->second.job;
        gpu.util = it->second.util;
        gpu.mem_mb = it->second.mem_mb;
        gpu.waste = it->second.waste;
        if (gpu.state == "free") gpu.state = "allocated";
      }
      ++f.gpus_total;
      if (gpu.state == "allocated") ++f.gpus_allocated;
      if (gpu.state == "free") ++f.gpus_free;
      if (gpu.state == "failed") ++f.gpus_failed;
      if (gpu.state == "down") ++f.gpus_down;
      t.gpus.push_back(std::move(gpu));
    }
    f.nodes.push_back(std::move(t));
  }
  std::sort(f.nodes.begin(), f.nodes.end(),
            [](const TopNode& a, const TopNode& b) { return a.name < b.name; });
  return f;
}

std::string FormatTopFrame(const TopFrame& f, const TopStyle& style) {
  std::string out;
  std::string head = "corral top  " + FormatTimestamp(f.now) + "  " + Printable(f.controller);
  if (style.interval_s > 0) {
    head += "  (every " + std::to_string(style.interval_s) + "s; q quits)";
  }
  std::map<std::string, uint32_t> states;
  for (const TopNode& n : f.nodes) ++states[n.state];
  std::string node_states;
  for (const auto& [state, n] : states) {
    node_states += (node_states.empty() ? "" : ", ") + std::to_string(n) + " " + state;
  }
  std::string totals =
      "Nodes: " + std::to_string(f.nodes.size()) + " (" + node_states + ")  GPUs: " +
      std::to_string(f.gpus_total) + " (" + std::to_string(f.gpus_allocated) + " allocated, " +
      std::to_string(f.gpus_free) + " free, " + std::to_string(f.gpus_failed) + " failed, " +
      std::to_string(f.gpus_down) + " down)  Jobs: " + std::to_string(f.running.size()) +
      " running, " + std::to_string(f.pending.size()) + " pending  Wasting GPUs: " +
      std::to_string(f.waste_flagged);
  out += style.color ? std::string(kBold) + Cut(head, style.width) + kReset : Cut(head, style.width);
  out += "\n" + Cut(totals, style.width) + "\n\n";
  FormatNodes(f, style, &out);

  // The job lists share what is left of the screen (their titles and headers take 6 lines):
  // the running jobs at least half of it, the pending ones what the running leave.
  size_t running_rows = f.running.size(), pending_rows = f.pending.size();
  if (style.height > 0) {
    size_t used = static_cast<size_t>(std::count(out.begin(), out.end(), '\n')) + 6;
    size_t left = style.height > used + 2 ? style.height - used : 2;
    running_rows = std::min(running_rows, std::max(left / 2, left - std::min(left, pending_rows)));
    pending_rows = std::min(pending_rows, std::max<size_t>(left - running_rows, 1));
  }
  out += "\n";
  out += style.color ? std::string(kBold) + "RUNNING" + kReset + "\n" : "RUNNING\n";
  if (f.running.empty()) {
    out += "(none)\n";
  } else {
    FormatRunning(f, style, running_rows, &out);
  }
  out += "\n";
  out += style.color ? std::string(kBold) + "PENDING" + kReset + "\n" : "PENDING\n";
  if (f.pending.empty()) {
    out += "(none)\n";
  } else {
    FormatPending(f, style, pending_rows, &out);
  }
  return out;
}

std::string EncodeTopFrame(const TopFrame& f) {
  using nlohmann::json;
  auto opt = [](const auto& v) -> json { return v ? json(*v) : json(nullptr); };
  json nodes = json::array();
  for (const TopNode& n : f.nodes) {
    json gpus = json::array();
    for (const TopGpu& g : n.gpus) {
      gpus.push_back({{"index", g.index},
                      {"model", g.model},
                      {"state", g.state},
                      {"job", g.job ? json(g.job->value) : json(nullptr)},
                      {"util", opt(g.util)},
                      {"mem_mb", opt(g.mem_mb)},
                      {"waste", g.waste}});
    }
    nodes.push_back(
        {{"name", n.name}, {"state", n.state}, {"partitions", n.partitions}, {"gpus", gpus}});
  }
  auto job = [&](const TopJob& j) {
    json o = {{"id", j.id.value},         {"user", j.user},   {"account", j.account},
              {"partition", j.partition}, {"state", j.state}, {"gpus", j.gpus}};
    if (j.state == "RUNNING") {
      o["nodes"] = j.nodes;
      o["elapsed_s"] = ToSecondsF(j.elapsed);
      o["util"] = opt(j.util);
      o["mem_mb"] = opt(j.mem_mb);
      o["gpu_waste"] = j.waste;
    } else {
      o["priority"] = j.priority;
      o["reason"] = j.reason;
      o["estimated_start"] =
          j.estimated_start == Timestamp{} ? json(nullptr) : json(FormatTimestamp(j.estimated_start));
    }
    return o;
  };
  json running = json::array(), pending = json::array();
  for (const TopJob& j : f.running) running.push_back(job(j));
  for (const TopJob& j : f.pending) pending.push_back(job(j));
  json out = {{"time", FormatTimestamp(f.now)},
              {"controller", f.controller},
              {"gpus",
               {{"total", f.gpus_total},
                {"allocated", f.gpus_allocated},
                {"free", f.gpus_free},
                {"failed", f.gpus_failed},
                {"down", f.gpus_down}}},
              {"waste_flagged", f.waste_flagged},
              {"nodes", nodes},
              {"running", running},
              {"pending", pending}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace corral::cli::internal
