#include "cli/slurm/sstat.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>

#include "cli/slurm/format_spec.h"
#include "cli/slurm/internal/text.h"
#include "core/hostlist.h"
#include "core/step.h"
#include "core/strings.h"

namespace corral::slurm {
namespace {

// One task of the step and where it runs.
struct TaskAt {
  const api::TaskUsage* usage;
  const api::NodeRunStats* node;
};

// A step's tasks, and the nodes it has tasks on, with what is computed from them.
struct Row {
  std::string label;
  std::vector<TaskAt> tasks;
  std::vector<const api::NodeRunStats*> nodes;
  bool no_convert = false;
};

// A per-task figure.
using Metric = std::function<double(const api::TaskUsage&)>;

struct Extreme {
  double value = 0;
  std::string node;
  uint32_t task = 0;
};

Extreme Max(const Row& r, const Metric& m, bool min = false) {
  Extreme e;
  bool first = true;
  for (const TaskAt& t : r.tasks) {
    double v = m(*t.usage);
    if (first || (min ? v < e.value : v > e.value)) {
      e = {v, t.node->node, t.usage->task};
      first = false;
    }
  }
  return e;
}
double Total(const Row& r, const Metric& m) {
  double sum = 0;
  for (const TaskAt& t : r.tasks) sum += m(*t.usage);
  return sum;
}
double Average(const Row& r, const Metric& m) {
  return r.tasks.empty() ? 0 : Total(r, m) / static_cast<double>(r.tasks.size());
}

// Kilobytes as sacct and sstat print them: exact units (CONVERT_NUM_UNIT_EXACT), or bytes
// with --noconvert.
std::string Kb(double kb, bool no_convert) {
  uint64_t v = static_cast<uint64_t>(kb);
  if (no_convert) return std::to_string(v * 1024);
  if (v == 0) return "0";
  static constexpr const char kUnits[] = "KMGTP";
  size_t unit = 0;
  while (v % 1024 == 0 && unit + 1 < sizeof kUnits - 1) {
    v /= 1024;
    ++unit;
  }
  return std::to_string(v) + kUnits[unit];
}
// A frequency in kHz as sstat prints AveCPUFreq (convert_num_unit2, divisor 1000, converted
// as far as it goes: "2.10G", "1625K" with --noconvert, whole numbers without decimals).
std::string Khz(double khz, bool no_convert) {
  if (static_cast<int64_t>(khz) == 0) return "0";
  static constexpr const char kUnits[] = "KMGTP";
  size_t unit = 0;
  while (!no_convert && khz >= 1000 && unit + 1 < sizeof kUnits - 1) {
    khz /= 1000;
    ++unit;
  }
  char buf[64];
  if (static_cast<double>(static_cast<uint64_t>(khz)) == khz) {
    std::snprintf(buf, sizeof buf, "%llu%c", static_cast<unsigned long long>(khz), kUnits[unit]);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f%c", khz, kUnits[unit]);
  }
  return buf;
}
// The mean over the tasks whose CPU frequency is known (0 when none is).
double AveFreq(const Row& r) {
  double sum = 0;
  size_t n = 0;
  for (const TaskAt& t : r.tasks) {
    if (t.usage->cpu_freq_khz == 0) continue;
    sum += static_cast<double>(t.usage->cpu_freq_khz);
    ++n;
  }
  return n == 0 ? 0 : sum / static_cast<double>(n);
}
std::string Cpu(double seconds) { return internal::LongDuration(static_cast<int64_t>(seconds)); }
std::string Count(double v) { return std::to_string(static_cast<uint64_t>(v)); }

double CpuOf(const api::TaskUsage& t) { return t.cpu_seconds; }
double MaxRssOf(const api::TaskUsage& t) { return static_cast<double>(t.max_rss_kb); }
double RssOf(const api::TaskUsage& t) { return static_cast<double>(t.rss_kb); }
double MaxVmOf(const api::TaskUsage& t) { return static_cast<double>(t.max_vmsize_kb); }
double VmOf(const api::TaskUsage& t) { return static_cast<double>(t.vmsize_kb); }
double PagesOf(const api::TaskUsage& t) { return static_cast<double>(t.pages); }
double ReadOf(const api::TaskUsage& t) { return static_cast<double>(t.read_bytes); }
double WriteOf(const api::TaskUsage& t) { return static_cast<double>(t.write_bytes); }

// The GPU figures of one node of the step: memory used on its GPUs (MiB) and their mean use.
struct NodeGpu {
  std::string node;
  double memory_mb = 0;
  double utilization = 0;
};
std::vector<NodeGpu> GpusOf(const Row& r) {
  std::vector<NodeGpu> out;
  for (const api::NodeRunStats* n : r.nodes) {
    if (n->gpus.empty()) continue;
    NodeGpu g{.node = n->node};
    for (const api::GpuUse& u : n->gpus) {
      g.memory_mb += static_cast<double>(u.memory_used_mb);
      g.utilization += u.utilization;
    }
    g.utilization /= static_cast<double>(n->gpus.size());
    out.push_back(g);
  }
  return out;
}

enum class Stat { kAve, kMax, kMaxNode, kMaxTask, kMin, kMinNode, kMinTask, kTot };

// TRESUsageIn*: cpu, energy, fs/disk (read), gres/gpumem, gres/gpuutil, mem, pages, vmem.
std::string TresIn(const Row& r, Stat s) {
  const bool nc = r.no_convert;
  const bool node = s == Stat::kMaxNode || s == Stat::kMinNode;
  const bool task = s == Stat::kMaxTask || s == Stat::kMinTask;
  const bool min = s == Stat::kMin || s == Stat::kMinNode || s == Stat::kMinTask;
  auto item = [&](const Metric& peak, const Metric& now, auto format) -> std::string {
    switch (s) {
      case Stat::kAve: return format(Average(r, now));
      case Stat::kTot: return format(Total(r, now));
      case Stat::kMax: case Stat::kMin: return format(Max(r, peak, min).value);
      case Stat::kMaxNode: case Stat::kMinNode: return Max(r, peak, min).node;
      case Stat::kMaxTask: case Stat::kMinTask: return std::to_string(Max(r, peak, min).task);
    }
    return "";
  };
  auto mem = [nc](double kb) { return Kb(kb, nc); };
  std::vector<std::pair<std::string, std::string>> items;
  // Slurm prints a task's rank in the cpu item as a time.
  items.emplace_back("cpu", task ? Cpu(Max(r, CpuOf, min).task) : item(CpuOf, CpuOf, Cpu));
  if (!task) items.emplace_back("energy", node ? r.tasks.front().node->node : "0");
  items.emplace_back("fs/disk", item(ReadOf, ReadOf, Count));
  std::vector<NodeGpu> gpus = GpusOf(r);
  if (!gpus.empty() && !task) {
    auto pick = [&](double NodeGpu::*field) -> const NodeGpu& {
      const NodeGpu* best = &gpus.front();
      for (const NodeGpu& g : gpus) {
        if (min ? g.*field < best->*field : g.*field > best->*field) best = &g;
      }
      return *best;
    };
    for (auto [name, field] : {std::pair{"gres/gpumem", &NodeGpu::memory_mb},
                               std::pair{"gres/gpuutil", &NodeGpu::utilization}}) {
      double sum = 0;
      for (const NodeGpu& g : gpus) sum += g.*field;
      const NodeGpu& best = pick(field);
      double v = s == Stat::kTot ? sum
                 : s == Stat::kAve ? sum / static_cast<double>(gpus.size())
                                   : best.*field;
      std::string text = node ? best.node
                         : field == &NodeGpu::memory_mb ? Kb(v * 1024, nc)
                                                        : Count(v);
      items.emplace_back(name, text);
    }
  }
  items.emplace_back("mem", item(MaxRssOf, RssOf, mem));
  items.emplace_back("pages", item(PagesOf, PagesOf, Count));
  items.emplace_back("vmem", item(MaxVmOf, VmOf, mem));
  std::string out;
  for (const auto& [k, v] : items) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

// TRESUsageOut*: energy, fs/disk (written).
std::string TresOut(const Row& r, Stat s) {
  const bool min = s == Stat::kMin || s == Stat::kMinNode || s == Stat::kMinTask;
  switch (s) {
    case Stat::kAve: return "energy=0,fs/disk=" + Count(Average(r, WriteOf));
    case Stat::kTot: return "energy=0,fs/disk=" + Count(Total(r, WriteOf));
    case Stat::kMax: case Stat::kMin:
      return "energy=0,fs/disk=" + Count(Max(r, WriteOf, min).value);
    case Stat::kMaxNode: case Stat::kMinNode: {
      const std::string n = Max(r, WriteOf, min).node;
      return "energy=" + n + ",fs/disk=" + n;
    }
    case Stat::kMaxTask: case Stat::kMinTask:
      return "fs/disk=" + std::to_string(Max(r, WriteOf, min).task);
  }
  return "";
}

struct Field {
  const char* name;
  int width;  // negative: left-aligned
  std::function<std::string(const Row&)> value;
};

// Max/Min with the node and task of a per-task figure.
Field MaxOf(const char* name, int width, Metric m, bool min, std::function<std::string(double)> f) {
  return {name, width, [m, min, f](const Row& r) { return f(Max(r, m, min).value); }};
}
Field NodeOf(const char* name, int width, Metric m, bool min) {
  return {name, width, [m, min](const Row& r) { return Max(r, m, min).node; }};
}
Field TaskOf(const char* name, int width, Metric m, bool min) {
  return {name, width, [m, min](const Row& r) { return std::to_string(Max(r, m, min).task); }};
}
Field AveOf(const char* name, int width, Metric m, std::function<std::string(double)> f) {
  return {name, width, [m, f](const Row& r) { return f(Average(r, m)); }};
}

const std::vector<Field>& Fields() {
  static const std::vector<Field> kFields = [] {
    std::vector<Field> f;
    f.push_back({"JobID", -12, [](const Row& r) { return r.label; }});
    // Memory fields depend on --noconvert (`Row::no_convert`).
    f.push_back({"MaxVMSize", 10, [](const Row& r) { return Kb(Max(r, MaxVmOf).value, r.no_convert); }});
    f.push_back(NodeOf("MaxVMSizeNode", 14, MaxVmOf, false));
    f.push_back(TaskOf("MaxVMSizeTask", 14, MaxVmOf, false));
    f.push_back({"AveVMSize", 10, [](const Row& r) { return Kb(Average(r, VmOf), r.no_convert); }});
    f.push_back({"MaxRSS", 10, [](const Row& r) { return Kb(Max(r, MaxRssOf).value, r.no_convert); }});
    f.push_back(NodeOf("MaxRSSNode", 10, MaxRssOf, false));
    f.push_back(TaskOf("MaxRSSTask", 10, MaxRssOf, false));
    f.push_back({"AveRSS", 10, [](const Row& r) { return Kb(Average(r, RssOf), r.no_convert); }});
    f.push_back(MaxOf("MaxPages", 8, PagesOf, false, Count));
    f.push_back(NodeOf("MaxPagesNode", 12, PagesOf, false));
    f.push_back(TaskOf("MaxPagesTask", 14, PagesOf, false));
    f.push_back(AveOf("AvePages", 10, PagesOf, Count));
    f.push_back(MaxOf("MinCPU", 10, CpuOf, true, Cpu));
    f.push_back(NodeOf("MinCPUNode", 10, CpuOf, true));
    f.push_back(TaskOf("MinCPUTask", 10, CpuOf, true));
    f.push_back(AveOf("AveCPU", 10, CpuOf, Cpu));
    f.push_back({"NTasks", 8, [](const Row& r) { return std::to_string(r.tasks.size()); }});
    f.push_back({"AveCPUFreq", 10, [](const Row& r) { return Khz(AveFreq(r), r.no_convert); }});
    for (const char* n : {"ReqCPUFreqMin", "ReqCPUFreqMax", "ReqCPUFreqGov"}) {
      f.push_back({n, 13, [](const Row&) { return std::string("Unknown"); }});
    }
    f.push_back({"ConsumedEnergy", 14, [](const Row&) { return std::string("0"); }});
    f.push_back(MaxOf("MaxDiskRead", 12, ReadOf, false, Count));
    f.push_back(NodeOf("MaxDiskReadNode", 15, ReadOf, false));
    f.push_back(TaskOf("MaxDiskReadTask", 15, ReadOf, false));
    f.push_back(AveOf("AveDiskRead", 12, ReadOf, Count));
    f.push_back(MaxOf("MaxDiskWrite", 12, WriteOf, false, Count));
    f.push_back(NodeOf("MaxDiskWriteNode", 16, WriteOf, false));
    f.push_back(TaskOf("MaxDiskWriteTask", 16, WriteOf, false));
    f.push_back(AveOf("AveDiskWrite", 12, WriteOf, Count));
    const std::pair<const char*, Stat> in[] = {
        {"TRESUsageInAve", Stat::kAve},         {"TRESUsageInMax", Stat::kMax},
        {"TRESUsageInMaxNode", Stat::kMaxNode}, {"TRESUsageInMaxTask", Stat::kMaxTask},
        {"TRESUsageInMin", Stat::kMin},         {"TRESUsageInMinNode", Stat::kMinNode},
        {"TRESUsageInMinTask", Stat::kMinTask}, {"TRESUsageInTot", Stat::kTot}};
    for (auto [name, s] : in) {
      int w = static_cast<int>(std::string_view(name).size());
      f.push_back({name, w, [s = s](const Row& r) { return TresIn(r, s); }});
    }
    const std::pair<const char*, Stat> out[] = {
        {"TRESUsageOutAve", Stat::kAve},         {"TRESUsageOutMax", Stat::kMax},
        {"TRESUsageOutMaxNode", Stat::kMaxNode}, {"TRESUsageOutMaxTask", Stat::kMaxTask},
        {"TRESUsageOutMin", Stat::kMin},         {"TRESUsageOutMinNode", Stat::kMinNode},
        {"TRESUsageOutMinTask", Stat::kMinTask}, {"TRESUsageOutTot", Stat::kTot}};
    for (auto [name, s] : out) {
      int w = static_cast<int>(std::string_view(name).size());
      f.push_back({name, w, [s = s](const Row& r) { return TresOut(r, s); }});
    }
    // Not in the default list (sstat -e shows them).
    f.push_back({"ConsumedEnergyRaw", 17, [](const Row&) { return std::string("0"); }});
    f.push_back({"Nodelist", 20, [](const Row& r) {
                   std::vector<std::string> names;
                   for (const auto* n : r.nodes) names.push_back(n->node);
                   return CompressHostList(names);
                 }});
    f.push_back({"Pids", 20, [](const Row& r) {
                   std::string s;
                   for (const TaskAt& t : r.tasks) {
                     for (int64_t p : t.usage->pids) {
                       s += (s.empty() ? "" : ",") + std::to_string(p);
                     }
                   }
                   return s;
                 }});
    f.push_back({"ReqCPUFreq", 10, [](const Row&) { return std::string("Unknown"); }});
    return f;
  }();
  return kFields;
}

// The fields printed without -o: Slurm 22.05's default list (all but the last four).
constexpr size_t kDefaultFieldCount = 47;

std::string Cell(std::string v, int width) {
  const int w = std::abs(width);
  if (static_cast<int>(v.size()) > w && w > 0) {
    v.resize(static_cast<size_t>(w));
    v.back() = '+';
  }
  return internal::Pad(v, w, width > 0, true) + " ";
}

}  // namespace

std::vector<uint32_t> StepsIn(const api::JobStatsInfo& stats) {
  std::set<uint32_t> steps;
  for (const auto& n : stats.nodes) {
    for (const auto& t : n.tasks) steps.insert(t.step);
  }
  return {steps.begin(), steps.end()};  // kBatchStepId sorts after numbered steps
}

Result<std::string> RenderSstat(const api::JobStatsInfo& stats,
                                const std::vector<SstatStep>& steps,
                                const SstatOptions& options) {
  struct Column {
    const Field* field;
    int width;
  };
  std::vector<Column> cols;
  const auto& fields = Fields();
  if (options.format.empty()) {
    for (size_t i = 0; i < kDefaultFieldCount; ++i) cols.push_back({&fields[i], fields[i].width});
  } else {
    for (const FormatItem& item : ParseFormat(options.format, FormatSyntax::kSacct)) {
      const Field* found = nullptr;
      for (const Field& f : fields) {
        if (EqualsIgnoreCase(item.name, f.name)) found = &f;
      }
      if (found == nullptr) {
        return InvalidArgument("Invalid field requested: \"" + item.name + "\"");
      }
      int w = found->width;
      if (item.width != 0) w = found->width < 0 ? -std::abs(item.width) : item.width;
      cols.push_back({found, w});
    }
  }
  const bool parsable = options.parsable || options.parsable2;
  auto line = [&](const std::function<std::string(const Column&)>& value) {
    std::string s;
    for (size_t i = 0; i < cols.size(); ++i) {
      std::string v = value(cols[i]);
      if (parsable) {
        s += v;
        if (options.parsable || i + 1 < cols.size()) s += "|";
      } else {
        s += Cell(std::move(v), cols[i].width);
      }
    }
    return s + "\n";
  };
  std::string out;
  if (!options.no_header) {
    out += line([](const Column& c) { return std::string(c.field->name); });
    if (!parsable) {
      for (const Column& c : cols) out += std::string(std::abs(c.width), '-') + " ";
      out += "\n";
    }
  }
  for (const SstatStep& step : steps) {
    Row row{.label = step.label, .no_convert = options.no_convert};
    for (const auto& n : stats.nodes) {
      bool here = false;
      for (const auto& t : n.tasks) {
        if (t.step != step.step) continue;
        row.tasks.push_back({&t, &n});
        here = true;
      }
      if (here) row.nodes.push_back(&n);
    }
    if (row.tasks.empty()) continue;
    std::stable_sort(row.tasks.begin(), row.tasks.end(), [](const TaskAt& a, const TaskAt& b) {
      return a.usage->task < b.usage->task;
    });
    out += line([&](const Column& c) { return c.field->value(row); });
  }
  return out;
}

std::string SstatFieldList() {
  // Slurm's table order, as `sstat -e` prints it.
  static constexpr const char* kOrder[] = {
      "AveCPU", "AveCPUFreq", "AveDiskRead", "AveDiskWrite", "AvePages", "AveRSS", "AveVMSize",
      "ConsumedEnergy", "ConsumedEnergyRaw", "JobID", "MaxDiskRead", "MaxDiskReadNode",
      "MaxDiskReadTask", "MaxDiskWrite", "MaxDiskWriteNode", "MaxDiskWriteTask", "MaxPages",
      "MaxPagesNode", "MaxPagesTask", "MaxRSS", "MaxRSSNode", "MaxRSSTask", "MaxVMSize",
      "MaxVMSizeNode", "MaxVMSizeTask", "MinCPU", "MinCPUNode", "MinCPUTask", "Nodelist",
      "NTasks", "Pids", "ReqCPUFreq", "ReqCPUFreqMin", "ReqCPUFreqMax", "ReqCPUFreqGov",
      "TRESUsageInAve", "TRESUsageInMax", "TRESUsageInMaxNode", "TRESUsageInMaxTask",
      "TRESUsageInMin", "TRESUsageInMinNode", "TRESUsageInMinTask", "TRESUsageInTot",
      "TRESUsageOutAve", "TRESUsageOutMax", "TRESUsageOutMaxNode", "TRESUsageOutMaxTask",
      "TRESUsageOutMin", "TRESUsageOutMinNode", "TRESUsageOutMinTask", "TRESUsageOutTot"};
  std::string out;
  const size_t n = std::size(kOrder);
  for (size_t i = 0; i < n; ++i) {
    out += internal::Pad(kOrder[i], 19, false, false);
    out += (i % 4 == 3 || i + 1 == n) ? "\n" : " ";
  }
  return out;
}

}  // namespace corral::slurm
