#include "cli/slurm/sacct.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "cli/slurm/format_spec.h"
#include "cli/slurm/internal/text.h"
#include "core/array_spec.h"
#include "core/hostlist.h"
#include "core/slurm_env.h"
#include "core/strings.h"

namespace corral::slurm {
namespace {

// A line: a job, or its batch step.
struct Row {
  const api::JobInfo* info;
  bool batch_step = false;
  std::string pending_tasks;
};

struct Ctx {
  const SacctOptions& opt;
};

enum class Kind { kText, kNumber };

// An empty value prints as a blank field (Slurm's NULL / NO_VAL).
struct Field {
  int width;  // Slurm's default; negative = left-aligned
  const char* name;
  Kind kind;
  std::string (*value)(const Row&, const Ctx&);
};

const Job& J(const Row& r) { return r.info->job; }
bool Started(const Job& j) { return j.start_time != Timestamp{} && j.state != JobState::kPending; }

std::string Date(Timestamp t, const Ctx& c) {
  return t == Timestamp{} ? "Unknown" : internal::LocalTime(t, c.opt.utc_offset_seconds);
}

std::string Tres(const std::map<std::string, std::string>& items) {
  std::string out;
  for (const auto& [k, v] : items) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

uint32_t AllocGpus(const Job& j) {
  uint32_t n = 0;
  for (const auto& a : j.allocation.nodes) n += a.gpus.size();
  return n;
}

uint64_t AllocMem(const Job& j) {
  uint64_t n = 0;
  for (const auto& a : j.allocation.nodes) n += a.mem_mb;
  return n;
}

std::string AllocTres(const Row& r, const Ctx&) {
  const Job& j = J(r);
  if (j.allocation.nodes.empty()) return "";
  std::map<std::string, std::string> t;
  const NodeAllocation& first = j.allocation.nodes.front();
  uint32_t cpus = r.batch_step ? first.cpus : internal::CpusOf(j);
  uint32_t gpus = r.batch_step ? first.gpus.size() : AllocGpus(j);
  uint64_t mem = r.batch_step ? first.mem_mb : AllocMem(j);
  if (!r.batch_step) t["billing"] = std::to_string(cpus);
  t["cpu"] = std::to_string(cpus);
  if (gpus > 0) t["gres/gpu"] = std::to_string(gpus);
  if (mem > 0) t["mem"] = internal::ExactMemory(mem);
  t["node"] = r.batch_step ? "1" : std::to_string(j.allocation.nodes.size());
  return Tres(t);
}

std::string ReqTres(const Row& r, const Ctx&) {
  if (r.batch_step) return "";
  const Job& j = J(r);
  const ResourceRequest& q = j.spec.resources;
  std::map<std::string, std::string> t;
  uint32_t cpus = std::max<uint32_t>(q.ntasks, 1) * std::max<uint32_t>(q.cpus_per_task, 1);
  uint32_t nodes = std::max<uint32_t>(q.nodes, 1);
  t["billing"] = std::to_string(cpus);
  t["cpu"] = std::to_string(cpus);
  uint32_t gpus = q.gpus > 0 ? q.gpus : q.gpus_per_node * nodes + q.gpus_per_task * q.ntasks;
  if (gpus > 0) t["gres/gpu"] = std::to_string(gpus);
  uint64_t mem = 0;
  if (q.mem_per_node_mb > 0 && q.mem_per_node_mb != kWholeNodeMemory)
    mem = q.mem_per_node_mb * nodes;
  else if (q.mem_per_cpu_mb > 0)
    mem = q.mem_per_cpu_mb * cpus;
  else if (q.mem_per_gpu_mb > 0)
    mem = q.mem_per_gpu_mb * gpus;
  if (mem > 0) t["mem"] = internal::ExactMemory(mem);
  t["node"] = std::to_string(nodes);
  return Tres(t);
}

std::string State(const Row& r, const Ctx&) {
  const Job& j = J(r);
  if (j.state == JobState::kCancelled && !r.batch_step) {
    return "CANCELLED by " + std::to_string(j.spec.uid);
  }
  return std::string(ShownStateName(j));
}

std::string Elapsed(const Row& r, const Ctx& c) {
  return internal::LongDuration(internal::TimeUsed(J(r), c.opt.now));
}

std::string JobIdText(const Row& r) {
  return internal::JobIdText(J(r), r.pending_tasks) + (r.batch_step ? ".batch" : "");
}

const Field kFields[] = {
    {10, "Account", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string { return J(r).spec.account; }},
    {10, "AllocCPUS", Kind::kNumber,
     [](const Row& r, const Ctx&) -> std::string {
       const Job& j = J(r);
       if (j.allocation.nodes.empty()) return std::string("0");
       return std::to_string(r.batch_step ? j.allocation.nodes.front().cpus : internal::CpusOf(j));
     }},
    {12, "AllocGRES", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       uint32_t g = AllocGpus(J(r));
       return g == 0 ? std::string() : "gpu:" + std::to_string(g);
     }},
    {10, "AllocNodes", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       return std::to_string(r.batch_step ? 1 : J(r).allocation.nodes.size());
     }},
    {10, "AllocTRES", Kind::kText, AllocTres},
    {10, "Comment", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string { return r.batch_step ? "" : J(r).spec.comment; }},
    {19, "Constraints", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       return r.batch_step ? "" : J(r).spec.resources.constraint;
     }},
    {14, "ConsumedEnergy", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       return std::to_string(static_cast<uint64_t>(J(r).usage.energy_joules));
     }},
    {17, "ConsumedEnergyRaw", Kind::kNumber,
     [](const Row& r, const Ctx&) -> std::string {
       return std::to_string(static_cast<uint64_t>(J(r).usage.energy_joules));
     }},
    {10, "CPUTime", Kind::kText,
     [](const Row& r, const Ctx& c) -> std::string {
       return internal::LongDuration(internal::TimeUsed(J(r), c.opt.now) * internal::CpusOf(J(r)));
     }},
    {10, "CPUTimeRAW", Kind::kNumber,
     [](const Row& r, const Ctx& c) -> std::string {
       return std::to_string(internal::TimeUsed(J(r), c.opt.now) * internal::CpusOf(J(r)));
     }},
    {15, "DerivedExitCode", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string { return r.batch_step ? "" : "0:0"; }},
    {10, "Elapsed", Kind::kText, Elapsed},
    {10, "ElapsedRaw", Kind::kNumber,
     [](const Row& r, const Ctx& c) -> std::string {
       return std::to_string(internal::TimeUsed(J(r), c.opt.now));
     }},
    {19, "Eligible", Kind::kText,
     [](const Row& r, const Ctx& c) -> std::string { return Date(J(r).eligible_time, c); }},
    {19, "End", Kind::kText,
     [](const Row& r, const Ctx& c) -> std::string {
       return IsTerminal(J(r).state) ? Date(J(r).end_time, c) : std::string("Unknown");
     }},
    {8, "ExitCode", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       return std::to_string(J(r).exit_code) + ":" + std::to_string(J(r).exit_signal);
     }},
    {6, "GID", Kind::kNumber,
     [](const Row& r, const Ctx&) -> std::string { return std::to_string(J(r).spec.gid); }},
    {9, "Group", Kind::kText,
     [](const Row& r, const Ctx& c) -> std::string {
       if (r.batch_step) return std::string();
       return c.opt.group_name ? c.opt.group_name(J(r).spec.gid) : std::to_string(J(r).spec.gid);
     }},
    {-12, "JobID", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string { return JobIdText(r); }},
    {-12, "JobIDRaw", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       return J(r).id.ToString() + (r.batch_step ? ".batch" : "");
     }},
    {10, "JobName", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       return r.batch_step ? "batch" : J(r).spec.name;
     }},
    {10, "MaxRSS", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       if (!r.batch_step || J(r).usage.max_rss_mb == 0) return std::string();
       return std::to_string(J(r).usage.max_rss_mb * 1024) + "K";
     }},
    {10, "NCPUS", Kind::kNumber,
     [](const Row& r, const Ctx&) -> std::string {
       const Job& j = J(r);
       if (j.allocation.nodes.empty()) return std::string("0");
       return std::to_string(r.batch_step ? j.allocation.nodes.front().cpus : internal::CpusOf(j));
     }},
    {8, "NNodes", Kind::kNumber,
     [](const Row& r, const Ctx&) -> std::string {
       return std::to_string(r.batch_step ? 1 : internal::NodesOf(J(r)));
     }},
    {15, "NodeList", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       const Job& j = J(r);
       if (j.allocation.nodes.empty()) return std::string("None assigned");
       if (r.batch_step) return j.allocation.nodes.front().node_name;
       return CompressHostList(j.allocation.NodeNames());
     }},
    {8, "NTasks", Kind::kNumber,
     [](const Row& r, const Ctx&) -> std::string { return r.batch_step ? "1" : ""; }},
    {10, "Priority", Kind::kNumber,
     [](const Row& r, const Ctx&) -> std::string {
       return r.batch_step ? "" : std::to_string(r.info->priority);
     }},
    {10, "Partition", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       return r.batch_step ? "" : internal::PartitionOf(J(r));
     }},
    {10, "QOS", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string { return r.batch_step ? "" : J(r).spec.qos; }},
    {22, "Reason", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       return r.batch_step ? std::string() : (J(r).reason.empty() ? "None" : J(r).reason);
     }},
    {8, "ReqCPUS", Kind::kNumber,
     [](const Row& r, const Ctx&) -> std::string {
       const ResourceRequest& q = J(r).spec.resources;
       return std::to_string(std::max<uint32_t>(q.ntasks, 1) *
                             std::max<uint32_t>(q.cpus_per_task, 1));
     }},
    {12, "ReqGRES", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       uint32_t g = J(r).spec.resources.gpus_per_node;
       return r.batch_step || g == 0 ? std::string() : "gpu:" + std::to_string(g);
     }},
    {10, "ReqMem", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       const ResourceRequest& q = J(r).spec.resources;
       if (r.batch_step) return std::string();
       if (q.mem_per_node_mb == kWholeNodeMemory) return std::string("0");
       if (q.mem_per_node_mb > 0) return internal::ExactMemory(q.mem_per_node_mb);
       if (q.mem_per_cpu_mb > 0) return internal::ExactMemory(q.mem_per_cpu_mb);
       return std::string("0");
     }},
    {8, "ReqNodes", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       return std::to_string(std::max<uint32_t>(J(r).spec.resources.nodes, 1));
     }},
    {10, "ReqTRES", Kind::kText, ReqTres},
    {20, "Reservation", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       return r.batch_step ? "" : J(r).spec.reservation;
     }},
    {19, "Start", Kind::kText,
     [](const Row& r, const Ctx& c) -> std::string {
       return Started(J(r)) ? Date(J(r).start_time, c) : std::string("Unknown");
     }},
    {10, "State", Kind::kText, State},
    {19, "Submit", Kind::kText,
     [](const Row& r, const Ctx& c) -> std::string { return Date(J(r).submit_time, c); }},
    {10, "Timelimit", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       if (r.batch_step) return std::string();
       Duration d = internal::TimeLimitOf(J(r));
       return d == kUnlimited ? std::string("UNLIMITED")
                              : internal::LongDuration(internal::Seconds(d));
     }},
    {10, "TimelimitRaw", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       if (r.batch_step) return std::string();
       Duration d = internal::TimeLimitOf(J(r));
       return d == kUnlimited ? std::string("UNLIMITED")
                              : std::to_string(internal::Seconds(d) / 60);
     }},
    {10, "TotalCPU", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string {
       return internal::LongDuration(static_cast<int64_t>(J(r).usage.cpu_seconds));
     }},
    {6, "UID", Kind::kNumber,
     [](const Row& r, const Ctx&) -> std::string { return std::to_string(J(r).spec.uid); }},
    {9, "User", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string { return r.batch_step ? "" : J(r).spec.user; }},
    {20, "WorkDir", Kind::kText,
     [](const Row& r, const Ctx&) -> std::string { return J(r).spec.working_dir; }},
};

struct Column {
  const Field* field;
  int width;
};

Result<std::vector<Column>> ParseFields(const std::string& format) {
  std::vector<Column> cols;
  for (const FormatItem& item : ParseFormat(format, FormatSyntax::kSacct)) {
    const Field* found = nullptr;
    for (const Field& f : kFields) {
      std::string_view name = f.name;
      const std::string& n = item.name;
      if (n.size() <= name.size() && EqualsIgnoreCase(n, name.substr(0, n.size()))) {
        found = &f;
        break;
      }
    }
    if (found == nullptr) {
      return InvalidArgument("sacct: error: Invalid field requested: \"" + item.name + "\"");
    }
    cols.push_back(Column{found, item.width != 0 ? item.width : found->width});
  }
  return cols;
}

std::string Cell(const std::string& v, const Column& col, bool header) {
  int w = std::abs(col.width);
  bool right = col.width > 0;
  std::string s = v;
  if (s.empty() && !header) {
    s = col.field->kind == Kind::kNumber ? "" : " ";
  }
  if (!header && col.field->kind == Kind::kText && static_cast<int>(s.size()) > w && w > 0) {
    s.resize(static_cast<size_t>(w));
    s.back() = '+';
  }
  return internal::Pad(s, w, right, true) + " ";
}

}  // namespace

Result<RenderResult> RenderSacct(const std::vector<api::JobInfo>& jobs,
                                 const SacctOptions& options) {
  CORRAL_ASSIGN_OR_RETURN(
      auto cols, ParseFields(options.format.empty() ? kSacctDefaultFormat : options.format));
  Ctx c{options};
  bool parsable = options.parsable || options.parsable2;
  std::string delim = options.delimiter.empty() ? "|" : options.delimiter;

  std::vector<const api::JobInfo*> sorted;
  for (const auto& j : jobs) sorted.push_back(&j);
  std::stable_sort(sorted.begin(), sorted.end(), [](const api::JobInfo* a, const api::JobInfo* b) {
    return a->job.id < b->job.id;
  });
  // Pending tasks of one array are one record, as in Slurm's database.
  std::vector<Row> rows;
  std::map<uint64_t, size_t> pending_arrays;
  std::map<size_t, std::vector<uint32_t>> tasks;
  for (const api::JobInfo* info : sorted) {
    const Job& j = info->job;
    if (j.state == JobState::kPending && j.array_task_id.has_value()) {
      auto it = pending_arrays.find(j.array_job_id.value);
      if (it != pending_arrays.end()) {
        tasks[it->second].push_back(*j.array_task_id);
        continue;
      }
      pending_arrays[j.array_job_id.value] = rows.size();
      tasks[rows.size()].push_back(*j.array_task_id);
    }
    rows.push_back(Row{info});
    if (!options.allocations && Started(j)) rows.push_back(Row{info, true});
  }
  for (auto& [i, t] : tasks) {
    if (t.size() < 2) continue;
    std::sort(t.begin(), t.end());
    uint32_t throttle = 0;
    if (auto spec = ParseArraySpec(rows[i].info->job.spec.array, 0xffffffffu); spec.has_value()) {
      throttle = spec->max_running;
    }
    rows[i].pending_tasks = FormatArrayIndices(t, throttle);
  }

  RenderResult out;
  auto line = [&](const Row* r) {
    std::string s;
    for (size_t i = 0; i < cols.size(); ++i) {
      std::string v = r == nullptr ? cols[i].field->name : cols[i].field->value(*r, c);
      if (parsable) {
        s += v;
        if (options.parsable || i + 1 < cols.size()) s += delim;
      } else {
        s += Cell(v, cols[i], r == nullptr);
      }
    }
    return s + "\n";
  };
  if (!options.no_header) {
    out.text += line(nullptr);
    if (!parsable) {
      for (const Column& col : cols) out.text += std::string(std::abs(col.width), '-') + " ";
      out.text += "\n";
    }
  }
  for (const Row& r : rows) out.text += line(&r);
  return out;
}

}  // namespace corral::slurm
