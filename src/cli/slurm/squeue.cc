#include "cli/slurm/squeue.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "cli/slurm/dependency.h"
#include "cli/slurm/format_spec.h"
#include "cli/slurm/internal/text.h"
#include "core/array_spec.h"
#include "core/hostlist.h"
#include "core/slurm_env.h"
#include "core/strings.h"

namespace corral::slurm {
namespace {

using internal::Pad;

// One line of output: a job, or the combined pending tasks of an array.
struct Row {
  const api::JobInfo* info;
  std::string pending_tasks;  // "2-3%2" for a combined array record
};

struct Ctx {
  const SqueueOptions& opt;
};

struct Field {
  char letter;            // -o letter, 0 = -O only
  const char* long_name;  // -O name, "" = -o only
  const char* header;
  bool cut;  // Slurm cuts the value to the width
  std::string (*value)(const Row&, const Ctx&);
};

const Job& J(const Row& r) { return r.info->job; }
std::string OrNull(const std::string& s) { return s.empty() ? "(null)" : s; }

int StateOrder(JobState s) {
  switch (s) {
    case JobState::kPending:
      return 0;
    case JobState::kRunning:
      return 1;
    case JobState::kCompleted:
      return 3;
    case JobState::kCancelled:
      return 4;
    case JobState::kFailed:
      return 5;
    case JobState::kTimeout:
      return 6;
    case JobState::kNodeFail:
      return 7;
    case JobState::kPreempted:
      return 8;
    case JobState::kOutOfMemory:
      return 11;
  }
  return 12;
}

std::string Reason(const Job& j) {
  if (j.state == JobState::kRunning || j.state == JobState::kCompleted) return "None";
  return j.reason.empty() ? "None" : j.reason;
}

std::string NodeList(const Job& j) { return CompressHostList(j.allocation.NodeNames()); }

std::string TimeOrNA(Timestamp t, const Ctx& c) {
  return t == Timestamp{} ? "N/A" : internal::LocalTime(t, c.opt.utc_offset_seconds);
}

std::string StartTime(const Row& r, const Ctx& c) {
  const Job& j = J(r);
  if (j.state == JobState::kPending) {
    Timestamp t = r.info->estimated_start;
    if (t == Timestamp{} && j.eligible_time > c.opt.now) t = j.eligible_time;
    return TimeOrNA(t, c);
  }
  return TimeOrNA(j.start_time, c);
}

std::string EndTime(const Row& r, const Ctx& c) {
  const Job& j = J(r);
  if (j.state == JobState::kPending) return "N/A";
  if (j.state == JobState::kRunning) {
    Duration limit = internal::TimeLimitOf(j);
    if (limit == kUnlimited) return "NONE";
    return TimeOrNA(j.start_time + limit, c);
  }
  return TimeOrNA(j.end_time, c);
}

std::string TimeLimit(const Row& r, const Ctx&) {
  Duration limit = internal::TimeLimitOf(J(r));
  return limit == kUnlimited ? "UNLIMITED" : internal::ShortDuration(internal::Seconds(limit));
}

std::string TimeLeft(const Row& r, const Ctx& c) {
  Duration limit = internal::TimeLimitOf(J(r));
  if (limit == kUnlimited) return "UNLIMITED";
  return internal::ShortDuration(internal::Seconds(limit) - internal::TimeUsed(J(r), c.opt.now));
}

std::string ArrayTaskId(const Row& r, const Ctx&) {
  if (!r.pending_tasks.empty()) return r.pending_tasks;
  if (J(r).array_task_id.has_value()) return std::to_string(*J(r).array_task_id);
  return "N/A";
}

std::string MinMemory(const Row& r, const Ctx&) {
  const ResourceRequest& res = J(r).spec.resources;
  if (res.mem_per_node_mb == kWholeNodeMemory) return "0";
  if (res.mem_per_node_mb > 0) return internal::ExactMemory(res.mem_per_node_mb);
  if (res.mem_per_cpu_mb > 0) return internal::ExactMemory(res.mem_per_cpu_mb);
  return "0";
}

std::string GroupName(const Row& r, const Ctx& c) {
  if (c.opt.group_name) return c.opt.group_name(J(r).spec.gid);
  return std::to_string(J(r).spec.gid);
}

std::string TresAlloc(const Row& r, const Ctx&) {
  const Job& j = J(r);
  std::string out = "cpu=" + std::to_string(internal::CpusOf(j));
  uint64_t mem = 0;
  uint32_t gpus = 0;
  for (const auto& n : j.allocation.nodes) {
    mem += n.mem_mb;
    gpus += n.gpus.size();
  }
  if (mem > 0) out += ",mem=" + internal::RoundedMemory(mem);
  out += ",node=" + std::to_string(internal::NodesOf(j));
  out += ",billing=" + std::to_string(internal::CpusOf(j));
  if (gpus > 0) out += ",gres/gpu=" + std::to_string(gpus);
  return out;
}

std::string Dependencies(const Row& r, const Ctx&) {
  const Job& j = J(r);
  if (j.state != JobState::kPending || j.spec.dependencies.empty()) return "(null)";
  std::string s = FormatDependencies(j.spec.dependencies, j.spec.dependency_any);
  return s + "(unfulfilled)";
}

const Field kFields[] = {
    {'a', "Account", "ACCOUNT", true,
     [](const Row& r, const Ctx&) { return OrNull(J(r).spec.account); }},
    {'A', "JobID", "JOBID", true,
     [](const Row& r, const Ctx&) {
       return r.pending_tasks.empty() ? J(r).id.ToString() : J(r).array_job_id.ToString();
     }},
    {'b', "tres-per-node", "TRES_PER_NODE", true,
     [](const Row& r, const Ctx&) {
       std::string s =
           internal::GpuTres(J(r).spec.resources.gpus_per_node, J(r).spec.resources.gpu_type);
       return s.empty() ? std::string("N/A") : s;
     }},
    {0, "tres-per-job", "TRES_PER_JOB", true,
     [](const Row& r, const Ctx&) {
       std::string s = internal::GpuTres(J(r).spec.resources.gpus, J(r).spec.resources.gpu_type);
       return s.empty() ? std::string("N/A") : s;
     }},
    {0, "tres-per-task", "TRES_PER_TASK", true,
     [](const Row& r, const Ctx&) {
       std::string s =
           internal::GpuTres(J(r).spec.resources.gpus_per_task, J(r).spec.resources.gpu_type);
       return s.empty() ? std::string("N/A") : s;
     }},
    {0, "tres-alloc", "TRES_ALLOC", true, TresAlloc},
    {'B', "BatchHost", "EXEC_HOST", true,
     [](const Row& r, const Ctx&) {
       return J(r).allocation.nodes.empty() ? std::string("n/a")
                                            : J(r).allocation.nodes[0].node_name;
     }},
    {'c', "MinCpus", "MIN_CPUS", true,
     [](const Row& r, const Ctx&) {
       return std::to_string(std::max<uint32_t>(J(r).spec.resources.cpus_per_task, 1));
     }},
    {0, "cpus-per-task", "CPUS_PER_TASK", true,
     [](const Row& r, const Ctx&) {
       return std::to_string(std::max<uint32_t>(J(r).spec.resources.cpus_per_task, 1));
     }},
    {'C', "NumCPUs", "CPUS", true,
     [](const Row& r, const Ctx&) { return std::to_string(internal::CpusOf(J(r))); }},
    {'d', "MinTmpDisk", "MIN_TMP_DISK", true,
     [](const Row&, const Ctx&) { return std::string("0"); }},
    {'D', "NumNodes", "NODES", true,
     [](const Row& r, const Ctx&) { return std::to_string(internal::NodesOf(J(r))); }},
    {'e', "EndTime", "END_TIME", true, EndTime},
    {'E', "Dependency", "DEPENDENCY", true, Dependencies},
    {0, "EligibleTime", "ELIGIBLE_TIME", true,
     [](const Row& r, const Ctx& c) { return TimeOrNA(J(r).eligible_time, c); }},
    {0, "exit_code", "EXIT_CODE", true,
     [](const Row& r, const Ctx&) { return std::to_string(J(r).exit_code); }},
    {'f', "Feature", "FEATURES", true,
     [](const Row& r, const Ctx&) { return OrNull(J(r).spec.resources.constraint); }},
    {'F', "ArrayJobID", "ARRAY_JOB_ID", true,
     [](const Row& r, const Ctx&) {
       return (J(r).array_job_id.value != 0 ? J(r).array_job_id : J(r).id).ToString();
     }},
    {'g', "GroupName", "GROUP", true, GroupName},
    {'G', "GroupID", "GROUP", true,
     [](const Row& r, const Ctx&) { return std::to_string(J(r).spec.gid); }},
    {'h', "OverSubscribe", "OVER_SUBSCRIBE", true,
     [](const Row& r, const Ctx&) {
       return std::string(J(r).spec.resources.exclusive ? "NO" : "OK");
     }},
    {'H', "Sockets", "SOCKETS_PER_NODE", true,
     [](const Row&, const Ctx&) { return std::string("*"); }},
    {'i', "JobArrayID", "JOBID", true,
     [](const Row& r, const Ctx&) { return internal::JobIdText(J(r), r.pending_tasks); }},
    {'I', "Cores", "CORES_PER_SOCKET", true,
     [](const Row&, const Ctx&) { return std::string("*"); }},
    {'j', "Name", "NAME", true, [](const Row& r, const Ctx&) { return J(r).spec.name; }},
    {'J', "Threads", "THREADS_PER_CORE", true,
     [](const Row&, const Ctx&) { return std::string("*"); }},
    {'k', "Comment", "COMMENT", true,
     [](const Row& r, const Ctx&) { return OrNull(J(r).spec.comment); }},
    {'K', "ArrayTaskID", "ARRAY_TASK_ID", true, ArrayTaskId},
    {'l', "TimeLimit", "TIME_LIMIT", false, TimeLimit},
    {'L', "TimeLeft", "TIME_LEFT", false, TimeLeft},
    {'m', "MinMemory", "MIN_MEMORY", true, MinMemory},
    {'M', "TimeUsed", "TIME", false,
     [](const Row& r, const Ctx& c) {
       return internal::ShortDuration(internal::TimeUsed(J(r), c.opt.now));
     }},
    {'n', "ReqNodes", "REQ_NODES", true,
     [](const Row& r, const Ctx&) { return CompressHostList(J(r).spec.resources.nodelist); }},
    {'N', "NodeList", "NODELIST", false, [](const Row& r, const Ctx&) { return NodeList(J(r)); }},
    {'o', "Command", "COMMAND", true,
     [](const Row& r, const Ctx&) {
       // The script and its arguments, as scontrol's Command=.
       std::string command = J(r).spec.command;
       if (!command.empty()) {
         for (const std::string& a : J(r).spec.script_args) command += " " + a;
       }
       return OrNull(command);
     }},
    {'O', "Contiguous", "CONTIGUOUS", true,
     [](const Row&, const Ctx&) { return std::string("0"); }},
    {'p', "Priority", "PRIORITY", true,
     [](const Row& r, const Ctx&) {
       // Slurm's normalised priority: the integer one over 2^32 - 1.
       char buf[64];
       std::snprintf(buf, sizeof buf, "%.14f",
                     static_cast<double>(std::max<int64_t>(r.info->priority, 0)) / 4294967295.0);
       return std::string(buf);
     }},
    {'P', "Partition", "PARTITION", true,
     [](const Row& r, const Ctx&) { return internal::PartitionOf(J(r)); }},
    {'q', "QOS", "QOS", true, [](const Row& r, const Ctx&) { return OrNull(J(r).spec.qos); }},
    {'Q', "PriorityLong", "PRIORITY", true,
     [](const Row& r, const Ctx&) { return std::to_string(r.info->priority); }},
    {'r', "Reason", "REASON", true, [](const Row& r, const Ctx&) { return Reason(J(r)); }},
    {'R', "ReasonList", "NODELIST(REASON)", false,
     [](const Row& r, const Ctx&) {
       const Job& j = J(r);
       bool show_reason = j.state == JobState::kPending || j.state == JobState::kTimeout ||
                          j.state == JobState::kOutOfMemory || j.state == JobState::kFailed;
       return show_reason ? "(" + Reason(j) + ")" : NodeList(j);
     }},
    {0, "Requeue", "REQUEUE", true,
     [](const Row& r, const Ctx&) { return std::string(J(r).spec.requeue ? "1" : "0"); }},
    {0, "RestartCnt", "RESTART_COUNT", true,
     [](const Row& r, const Ctx&) { return std::to_string(J(r).restart_count); }},
    {'S', "StartTime", "START_TIME", true, StartTime},
    {'t', "StateCompact", "ST", true,
     [](const Row& r, const Ctx&) { return std::string(ShownStateShortName(J(r))); }},
    {'T', "State", "STATE", true,
     [](const Row& r, const Ctx&) { return std::string(ShownStateName(J(r))); }},
    {'u', "UserName", "USER", true, [](const Row& r, const Ctx&) { return J(r).spec.user; }},
    {'U', "UserID", "UID", true,
     [](const Row& r, const Ctx&) { return std::to_string(J(r).spec.uid); }},
    {'v', "Reservation", "RESERVATION", true,
     [](const Row& r, const Ctx&) { return OrNull(J(r).spec.reservation); }},
    {'V', "SubmitTime", "SUBMIT_TIME", true,
     [](const Row& r, const Ctx& c) { return TimeOrNA(J(r).submit_time, c); }},
    {'w', "WCKey", "WCKEY", true, [](const Row&, const Ctx&) { return std::string("(null)"); }},
    {'x', "", "EXC_NODES", true,
     [](const Row& r, const Ctx&) { return CompressHostList(J(r).spec.resources.exclude); }},
    {'y', "Nice", "NICE", true,
     [](const Row& r, const Ctx&) { return std::to_string(J(r).spec.nice); }},
    {'Y', "SchedNodes", "SCHEDNODES", false,
     [](const Row&, const Ctx&) { return std::string("(null)"); }},
    {'z', "SCT", "S:C:T", true, [](const Row&, const Ctx&) { return std::string("*:*:*"); }},
    {'Z', "WorkDir", "WORK_DIR", true,
     [](const Row& r, const Ctx&) { return J(r).spec.working_dir; }},
    {0, "NumTasks", "TASKS", true,
     [](const Row& r, const Ctx&) { return std::to_string(J(r).spec.resources.ntasks); }},
    {0, "PendingTime", "PENDING_TIME", true,
     [](const Row& r, const Ctx& c) {
       const Job& j = J(r);
       Timestamp until =
           j.start_time != Timestamp{} && j.start_time < c.opt.now ? j.start_time : c.opt.now;
       return std::to_string(internal::Seconds(until - j.submit_time));
     }},
    {0, "STDOUT", "STDOUT", true, [](const Row& r, const Ctx&) { return J(r).spec.stdout_path; }},
    {0, "STDERR", "STDERR", true,
     [](const Row& r, const Ctx&) {
       return J(r).spec.stderr_path.empty() ? J(r).spec.stdout_path : J(r).spec.stderr_path;
     }},
    {0, "STDIN", "STDIN", true, [](const Row&, const Ctx&) { return std::string("/dev/null"); }},
};

const Field* ByLetter(char c) { return FieldByLetter(kFields, c); }
const Field* ByName(std::string_view name) { return FieldByName(kFields, name); }

using Item = FormatColumn<Field>;

std::string RenderLine(const std::vector<Item>& items, const Row* row, const Ctx& c) {
  std::string line;
  for (const Item& it : items) {
    if (it.field == nullptr) {
      line += it.literal;
      continue;
    }
    if (row == nullptr) {
      // Headers are cut, except those of node lists.
      line += Pad(it.field->header, it.width, it.right, it.field->cut);
    } else {
      line += Pad(it.field->value(*row, c), it.width, it.right, it.field->cut);
    }
    line += it.suffix;
  }
  line += '\n';
  return line;
}

// Combines the pending tasks of each array into one row, as squeue does without -r.
std::vector<Row> BuildRows(const std::vector<api::JobInfo>& jobs, bool array_tasks) {
  std::vector<Row> rows;
  std::map<std::tuple<uint64_t, std::string, std::string>, size_t> groups;
  std::vector<std::vector<uint32_t>> tasks;
  for (const auto& info : jobs) {
    const Job& j = info.job;
    if (array_tasks || j.state != JobState::kPending || !j.array_task_id.has_value()) {
      rows.push_back(Row{&info, ""});
      tasks.emplace_back();
      continue;
    }
    auto key = std::make_tuple(j.array_job_id.value, j.spec.name, internal::PartitionOf(j));
    auto it = groups.find(key);
    if (it == groups.end()) {
      groups[key] = rows.size();
      rows.push_back(Row{&info, ""});
      tasks.push_back({*j.array_task_id});
    } else {
      Row& first = rows[it->second];
      tasks[it->second].push_back(*j.array_task_id);
      if (*j.array_task_id < *first.info->job.array_task_id) first.info = &info;
    }
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    if (tasks[i].size() < 2) continue;
    std::sort(tasks[i].begin(), tasks[i].end());
    uint32_t throttle = 0;
    if (auto spec = ParseArraySpec(rows[i].info->job.spec.array, 0xffffffffu); spec.has_value()) {
      throttle = spec->max_running;
    }
    rows[i].pending_tasks = FormatArrayIndices(tasks[i], throttle);
  }
  return rows;
}

}  // namespace

std::string CtimeLine(Timestamp t, int64_t utc_offset_seconds) {
  static const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  auto local =
      std::chrono::floor<std::chrono::seconds>(t) + std::chrono::seconds(utc_offset_seconds);
  auto day = std::chrono::floor<std::chrono::days>(local);
  std::chrono::year_month_day ymd{day};
  std::chrono::weekday wd{day};
  std::chrono::hh_mm_ss hms{local - day};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s %s %2u %02ld:%02ld:%02ld %d", kDays[wd.c_encoding()],
                kMonths[static_cast<unsigned>(ymd.month()) - 1], static_cast<unsigned>(ymd.day()),
                static_cast<long>(hms.hours().count()), static_cast<long>(hms.minutes().count()),
                static_cast<long>(hms.seconds().count()), static_cast<int>(ymd.year()));
  return buf;
}

RenderResult RenderSqueue(const std::vector<api::JobInfo>& jobs, const SqueueOptions& options) {
  RenderResult out;
  Ctx c{options};
  constexpr const char* kInvalid = "squeue: error: Invalid job format specification: ";
  std::vector<Item> items;
  if (!options.long_format.empty()) {
    items = BindFormat<Field>(options.long_format, FormatSyntax::kColon, ByLetter, ByName, kInvalid,
                              &out.warnings);
  } else {
    std::string format = options.format;
    if (format.empty()) {
      format = options.start ? kSqueueStartFormat
                             : (options.long_output ? kSqueueLongFormat : kSqueueDefaultFormat);
    }
    items = BindFormat<Field>(format, FormatSyntax::kPercent, ByLetter, ByName, kInvalid,
                              &out.warnings);
  }

  std::vector<api::JobInfo> sorted;
  for (const auto& j : jobs) {
    if (!options.start || j.job.state == JobState::kPending) sorted.push_back(j);
  }
  std::stable_sort(sorted.begin(), sorted.end(), [&](const api::JobInfo& a, const api::JobInfo& b) {
    const Job& x = a.job;
    const Job& y = b.job;
    if (options.start) {
      Timestamp sx = a.estimated_start, sy = b.estimated_start;
      if (sx != sy) {
        if (sx == Timestamp{}) return false;
        if (sy == Timestamp{}) return true;
        return sx < sy;
      }
    }
    std::string px = internal::PartitionOf(x), py = internal::PartitionOf(y);
    if (px != py) return px < py;
    if (StateOrder(x.state) != StateOrder(y.state))
      return StateOrder(x.state) < StateOrder(y.state);
    // Slurm then sorts by priority; jobs submitted earlier rank first. The tasks of one array
    // share its record in Slurm: they stay together, by index.
    if (x.submit_time != y.submit_time) return x.submit_time < y.submit_time;
    JobId gx = x.array_job_id.value != 0 ? x.array_job_id : x.id;
    JobId gy = y.array_job_id.value != 0 ? y.array_job_id : y.id;
    if (gx != gy) return gx < gy;
    return x.array_task_id.value_or(0) < y.array_task_id.value_or(0);
  });
  std::vector<Row> rows = BuildRows(sorted, options.array_tasks);

  if (!options.no_header) {
    if (options.long_output) out.text += CtimeLine(options.now, options.utc_offset_seconds) + "\n";
    out.text += RenderLine(items, nullptr, c);
  }
  for (const Row& r : rows) out.text += RenderLine(items, &r, c);
  return out;
}

}  // namespace corral::slurm
