#include "cli/commands.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "api/json_codec.h"
#include "cli/client.h"
#include "cli/internal/slurm_cli.h"
#include "cli/internal/timeline_view.h"
#include "cli/audit.h"
#include "cli/governance.h"
#include "cli/jobstats.h"
#include "cli/top.h"
#include "cli/node_commands.h"
#include "cli/run.h"
#include "cli/submit.h"
#include "cli/table.h"
#include "cli/token.h"
#include "core/clock.h"
#include "core/duration.h"
#include "core/hostlist.h"
#include "core/resources.h"
#include "core/software_drift.h"
#include "core/strings.h"

namespace corral::cli {
namespace {

int Error(const std::string& message) {
  std::fprintf(stderr, "corral: error: %s\n", message.c_str());
  return 1;
}

int UsageError(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "corral %s: %s (see `corral %s --help`)\n", command.c_str(), message.c_str(),
               command.c_str());
  return 2;
}

// Flags common to every client command, plus the command's own.
struct Args {
  std::string command;
  std::string controller;
  bool json = false;
  bool help = false;
  std::map<std::string, std::string> values;  // --name VALUE / --name=VALUE
  std::vector<std::string> positional;
};

// `value_flags` take a value; `bool_flags` do not. Returns a usage message on error.
Result<Args> ParseArgs(int argc, char** argv, const std::vector<std::string>& value_flags,
                       const std::vector<std::string>& bool_flags) {
  Args a;
  a.command = argv[0];
  auto is = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      for (++i; i < argc; ++i) a.positional.push_back(argv[i]);
      break;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      a.positional.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (name == "json") {
      a.json = true;
    } else if (name == "help") {
      a.help = true;
    } else if (name == "controller" || is(value_flags, name)) {
      if (!has_value) {
        if (i + 1 >= argc) return InvalidArgument("--" + name + " needs a value");
        value = argv[++i];
      }
      if (name == "controller") {
        a.controller = value;
      } else {
        a.values[name] = value;
      }
    } else if (is(bool_flags, name)) {
      a.values[name] = "1";
    } else {
      return InvalidArgument("unknown option --" + name);
    }
  }
  return a;
}

std::string Elapsed(const Job& j) {
  if (j.start_time.time_since_epoch().count() == 0) return "0:00";
  Timestamp end = j.state == JobState::kRunning ? SystemClock::Get().Now() : j.end_time;
  if (end < j.start_time) return "0:00";
  return FormatSlurmDuration(end - j.start_time);
}

std::string GpuSummary(const Job& j) {
  uint32_t total = 0;
  for (const auto& na : j.allocation.nodes) total += na.gpus.size();
  if (j.state != JobState::kRunning || j.allocation.nodes.empty())
    total = TotalGpus(j.spec.resources);
  std::string s = std::to_string(total);
  if (!j.spec.resources.gpu_type.empty() && total > 0) s = j.spec.resources.gpu_type + ":" + s;
  return s;
}

int Queue(Client& c, const Args& a) {
  JobListQuery q;
  auto split = [](const std::string& s) { return SplitNonEmpty(s, ','); };
  if (auto it = a.values.find("user"); it != a.values.end()) q.users = split(it->second);
  if (auto it = a.values.find("state"); it != a.values.end()) q.states = split(it->second);
  if (auto it = a.values.find("partition"); it != a.values.end()) q.partitions = split(it->second);
  if (a.values.contains("all")) q.all = true;
  q.ids = a.positional;
  auto jobs = c.ListJobs(q);
  if (!jobs) return Error(jobs.error().message);
  if (a.json) {
    std::printf("%s\n", api::EncodeJobInfoList(*jobs).c_str());
    return 0;
  }
  Table t({"JOBID", "PARTITION", "NAME", "USER", "STATE", "TIME", "TIME_LIMIT", "NODES", "GPUS",
           "NODELIST(REASON)"});
  for (const auto& info : *jobs) {
    const Job& j = info.job;
    std::string where;
    if (j.state == JobState::kRunning || (IsTerminal(j.state) && !j.allocation.nodes.empty())) {
      where = CompressHostList(j.allocation.NodeNames());
    } else {
      where = "(" + j.reason + ")";
    }
    t.Add({j.id.ToString(), j.partition, j.spec.name, j.spec.user,
           std::string(JobStateName(j.state)), Elapsed(j), FormatSlurmDuration(j.time_limit),
           std::to_string(j.spec.resources.nodes), GpuSummary(j), where});
  }
  std::fputs(t.Render().c_str(), stdout);
  return 0;
}

// What the agent measured of the job's GPUs (shown once it has ended and something was
// measured).
void AddUsageRows(const JobUsage& u, Table& t) {
  if (u.gpu_seconds <= 0 && u.energy_joules <= 0) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.1f", u.gpu_seconds);
  t.Add({"GpuSeconds:", buf});
  std::snprintf(buf, sizeof buf, "mean %.1f%% max %.1f%%", u.gpu_util_mean, u.gpu_util_max);
  t.Add({"GpuUtil:", buf});
  t.Add({"GpuMemMax:", std::to_string(u.gpu_mem_max_mb) + " MB"});
  std::snprintf(buf, sizeof buf, "%.1f J (%.4f kWh)", u.energy_joules, u.energy_joules / 3.6e6);
  t.Add({"Energy:", buf});
}

void PrintJob(const api::JobInfo& info) {
  const Job& j = info.job;
  const JobSpec& s = j.spec;
  const ResourceRequest& r = s.resources;
  Table t({"JobId:", j.id.ToString()});
  auto row = [&](const char* k, const std::string& v) { t.Add({k, v}); };
  row("Name:", s.name);
  row("User:", s.user + " (uid " + std::to_string(s.uid) + ")");
  row("Account:", s.account.empty() ? "-" : s.account);
  row("Partition:", j.partition);
  row("State:", std::string(JobStateName(j.state)));
  row("Reason:", j.reason + (info.reason_detail.empty() ? "" : " (" + info.reason_detail + ")"));
  row("Submit:", FormatTimestamp(j.submit_time));
  row("Start:", FormatTimestamp(j.start_time));
  row("End:", FormatTimestamp(j.end_time));
  row("Elapsed:", Elapsed(j));
  row("TimeLimit:", FormatSlurmDuration(j.time_limit));
  std::string res = "nodes=" + std::to_string(r.nodes) + " ntasks=" + std::to_string(r.ntasks) +
                    " cpus_per_task=" + std::to_string(r.cpus_per_task);
  PerNodeDemand d = ComputePerNodeDemand(r);
  if (d.mem_mb > 0) res += " mem_per_node=" + FormatMemoryMb(d.mem_mb);
  res += " gpus=" + GpuSummary(j);
  if (r.exclusive) res += " exclusive";
  row("Resources:", res);
  if (!j.allocation.nodes.empty()) {
    row("NodeList:", CompressHostList(j.allocation.NodeNames()));
    std::string gpus;
    for (const auto& na : j.allocation.nodes) {
      if (!gpus.empty()) gpus += " ";
      gpus += na.node_name + ":" + (na.gpus.empty() ? "-" : na.gpus.ToString());
    }
    row("GPUs:", gpus);
    row("Generation:", j.allocation.generation.ToString());
  }
  row("ExitCode:", std::to_string(j.exit_code) + ":" + std::to_string(j.exit_signal));
  row("Restarts:", std::to_string(j.restart_count));
  row("LastCheckpoint:",
      j.last_checkpoint == Timestamp{} ? "-" : FormatTimestamp(j.last_checkpoint));
  if (s.signal.signal != 0) {
    row("Signal:",
        std::string(s.signal.batch_only ? "B:" : "") + std::to_string(s.signal.signal) + "@" +
            std::to_string(
                std::chrono::duration_cast<std::chrono::seconds>(s.signal.before).count()));
  }
  row("Requeue:", s.requeue ? "yes" : "no");
  row("WorkDir:", s.working_dir);
  row("StdOut:", s.stdout_path.empty() ? "slurm-%j.out" : s.stdout_path);
  row("StdErr:", s.stderr_path.empty() ? "(with stdout)" : s.stderr_path);
  if (j.usage.cpu_seconds > 0) row("CPUTime:", std::to_string(j.usage.cpu_seconds) + " s");
  AddUsageRows(j.usage, t);
  if (!info.gpu_waste.empty()) row("GpuWaste:", info.gpu_waste);
  std::fputs(t.Render().c_str(), stdout);
}

int Show(Client& c, const Args& a) {
  if (a.positional.empty()) return UsageError(a.command, "give a job id");
  int status = 0;
  for (const auto& arg : a.positional) {
    auto id = ParseJobIdArg(arg);
    if (!id) return UsageError(a.command, id.error().message);
    if (a.values.contains("timeline")) {
      auto t = c.Timeline(*id);
      if (!t) {
        status = Error(t.error().message);
      } else {
        std::fputs((a.json ? api::EncodeJobTimeline(*t) + "\n" : internal::RenderTimeline(*t)).c_str(),
                   stdout);
      }
      continue;
    }
    auto info = c.GetJob(*id);
    if (!info) {
      status = Error(info.error().message);
      continue;
    }
    if (a.json) {
      std::printf("%s\n", api::EncodeJobInfo(*info).c_str());
    } else {
      PrintJob(*info);
    }
  }
  return status;
}

int ForEachJob(const Args& a, const std::function<Status(JobId)>& action) {
  if (a.positional.empty()) return UsageError(a.command, "give one or more job ids");
  int status = 0;
  for (const auto& arg : a.positional) {
    auto id = ParseJobIdArg(arg);
    if (!id) return UsageError(a.command, id.error().message);
    if (Status s = action(*id); !s) status = Error(s.error().message);
  }
  return status;
}

int Wait(Client& c, const Args& a) {
  if (a.positional.empty()) return UsageError(a.command, "give one or more job ids");
  std::vector<JobId> ids;
  for (const auto& arg : a.positional) {
    auto id = ParseJobIdArg(arg);
    if (!id) return UsageError(a.command, id.error().message);
    ids.push_back(*id);
  }
  int status = 0;
  std::vector<api::JobInfo> done;
  for (JobId id : ids) {
    while (true) {
      auto info = c.WaitJob(id, 60);
      if (!info) return Error(info.error().message);
      if (!IsTerminal(info->job.state)) continue;
      if (status == 0) status = internal::JobExitStatus(info->job);
      done.push_back(*info);
      if (!a.json) {
        std::printf("job %s %s exit %d:%d\n", id.ToString().c_str(),
                    std::string(JobStateName(info->job.state)).c_str(), info->job.exit_code,
                    info->job.exit_signal);
      }
      break;
    }
  }
  if (a.json) std::printf("%s\n", api::EncodeJobInfoList(done).c_str());
  return status;
}

// The drain/down reason, else the first failing GPU check.
std::string NodeReason(const api::NodeInfo& n) {
  if (!n.node.reason.empty()) return n.node.reason;
  if (!n.gpu_problems.empty()) {
    return "gpu " + std::to_string(n.gpu_problems[0].gpu) + ": " + n.gpu_problems[0].reason;
  }
  return "-";
}

// "550.54/12.4", with "DRIFT(p,q)" when the node differs from partitions p and q; "-" when
// it reports no versions.
std::string SoftwareColumn(const api::NodeInfo& n,
                           const std::map<std::string, std::vector<std::string>>& drift) {
  const NodeInventory& inv = n.node.inventory;
  if (inv.driver_version.empty() && inv.cuda_version.empty()) return "-";
  std::string out = (inv.driver_version.empty() ? "?" : inv.driver_version) + "/" +
                    (inv.cuda_version.empty() ? "?" : inv.cuda_version);
  auto it = drift.find(inv.name);
  if (it == drift.end()) return out;
  std::string parts;
  for (const auto& p : it->second) parts += (parts.empty() ? "" : ",") + p;
  return out + " DRIFT(" + parts + ")";
}

int Nodes(Client& c, const Args& a) {
  auto nodes = c.ListNodes();
  if (!nodes) return Error(nodes.error().message);
  if (a.json) {
    std::printf("%s\n", api::EncodeNodeInfoList(*nodes).c_str());
    return 0;
  }
  Table t({"NODE", "STATE", "CPUS(A/T)", "MEM_MB(A/T)", "GPUS(A/T)", "GPU_MODEL", "PARTITIONS",
           "SOFTWARE", "REASON"});
  // Software drift (core/software_drift.h): nodes whose driver/CUDA versions differ from
  // their partition's common ones are marked.
  std::vector<NodeSoftware> software;
  for (const auto& n : *nodes) {
    software.push_back({.node = n.node.inventory.name,
                        .partitions = n.partitions,
                        .driver_version = n.node.inventory.driver_version,
                        .cuda_version = n.node.inventory.cuda_version,
                        .nccl_version = {}});
  }
  auto drift = FindSoftwareDrift(software);
  for (const auto& n : *nodes) {
    const NodeInventory& inv = n.node.inventory;
    std::string model = inv.gpus.empty() ? "-" : inv.gpus.front().model;
    std::string parts;
    for (const auto& p : n.partitions) parts += (parts.empty() ? "" : ",") + p;
    t.Add(
        {inv.name, std::string(NodeStateName(n.state)),
         std::to_string(n.alloc_cpus) + "/" + std::to_string(inv.cpus),
         std::to_string(n.alloc_mem_mb) + "/" + std::to_string(inv.memory_mb),
         std::to_string(n.alloc_gpus.size()) + "/" + std::to_string(inv.gpus.size()) +
             (n.node.failed_gpus.empty() ? "" : " (failed " + n.node.failed_gpus.ToString() + ")"),
         model, parts.empty() ? "-" : parts, SoftwareColumn(n, drift), NodeReason(n)});
  }
  std::fputs(t.Render().c_str(), stdout);
  return 0;
}

int Priority(Client& c, const Args& a) {
  JobId job;
  if (a.positional.size() > 1) return UsageError(a.command, "give at most one job id");
  if (!a.positional.empty()) {
    auto id = ParseJobIdArg(a.positional[0]);
    if (!id) return UsageError(a.command, id.error().message);
    job = *id;
  }
  auto list = c.Priorities(job);
  if (!list) return Error(list.error().message);
  if (a.json) {
    std::printf("%s\n", api::EncodePriorityList(*list).c_str());
    return 0;
  }
  // Like sprio: each factor's points, then the total.
  Table t({"JOBID", "USER", "ACCOUNT", "QOS", "PRIORITY", "AGE", "FAIRSHARE", "JOBSIZE",
           "PARTITION", "QOS_PTS", "NICE", "TIER"});
  for (const auto& p : *list) {
    t.Add({p.job.ToString(), p.user, p.account.empty() ? "-" : p.account, p.qos,
           std::to_string(p.priority), std::to_string(p.age_points),
           std::to_string(p.fairshare_points), std::to_string(p.job_size_points),
           std::to_string(p.partition_points), std::to_string(p.qos_points), std::to_string(p.nice),
           std::to_string(p.priority_tier)});
  }
  std::fputs(t.Render().c_str(), stdout);
  return 0;
}

int Why(Client& c, const Args& a) {
  if (a.positional.size() != 1) return UsageError(a.command, "give one job id");
  auto id = ParseJobIdArg(a.positional[0]);
  if (!id) return UsageError(a.command, id.error().message);
  auto why = c.Why(*id);
  if (!why) return Error(why.error().message);
  if (a.json) {
    std::printf("%s\n", api::EncodeWhyInfo(*why).c_str());
    return 0;
  }
  const api::WhyInfo& w = *why;
  if (w.state != JobState::kPending) {
    std::printf("job %s is %s (%s)\n", w.job.ToString().c_str(),
                std::string(JobStateName(w.state)).c_str(), w.reason.c_str());
    return 0;
  }
  std::printf("job %s is pending: %s%s\n", w.job.ToString().c_str(), w.reason.c_str(),
              w.detail.empty() ? "" : (" (" + w.detail + ")").c_str());
  std::printf("  priority %lld\n", static_cast<long long>(w.priority));
  if (w.estimated_start.time_since_epoch().count() != 0) {
    std::printf("  expected to start at %s (reserved)\n",
                FormatTimestamp(w.estimated_start).c_str());
  }
  for (size_t i = 0; i < w.blockers.size(); ++i) {
    const api::BlockerInfo& b = w.blockers[i];
    std::string line = "  " + std::to_string(i + 1) + ". " + b.code + ": " + b.detail;
    if (!b.jobs.empty()) {
      line += " [jobs";
      for (JobId j : b.jobs) line += " " + j.ToString();
      line += "]";
    }
    std::printf("%s\n", line.c_str());
  }
  if (w.blockers.empty()) std::printf("  (not examined by a scheduling pass yet)\n");
  return 0;
}

int Partitions(Client& c, const Args& a) {
  auto parts = c.ListPartitions();
  if (!parts) return Error(parts.error().message);
  if (a.json) {
    std::printf("%s\n", api::EncodePartitionInfoList(*parts).c_str());
    return 0;
  }
  Table t({"PARTITION", "DEFAULT", "STATE", "NODES", "GPUS(A/T)", "DEFAULT_TIME", "MAX_TIME",
           "NODELIST"});
  for (const auto& p : *parts) {
    t.Add({p.partition.name, p.partition.is_default ? "yes" : "no", p.partition.up ? "up" : "down",
           std::to_string(p.partition.nodes.size()),
           std::to_string(p.alloc_gpus) + "/" + std::to_string(p.total_gpus),
           FormatSlurmDuration(p.partition.default_time), FormatSlurmDuration(p.partition.max_time),
           p.partition.nodes.empty() ? "-" : CompressHostList(p.partition.nodes)});
  }
  std::fputs(t.Render().c_str(), stdout);
  return 0;
}

// `corral checkpoint-done [JOB]`: the job (default: the one it runs in) has written a checkpoint.
int CheckpointDone(Client& c, const Args& a) {
  std::string text;
  if (a.positional.size() > 1) return UsageError(a.command, "give at most one job id");
  if (!a.positional.empty()) {
    text = a.positional[0];
  } else if (const char* env = std::getenv("CORRAL_JOB_ID"); env != nullptr) {
    text = env;
  } else {
    return UsageError(a.command, "not inside a job (CORRAL_JOB_ID is not set): give a job id");
  }
  auto id = ParseJobIdArg(text);
  if (!id) return UsageError(a.command, id.error().message);
  auto info = c.CheckpointDone(*id);
  if (!info) return Error(info.error().message);
  if (a.json) {
    std::printf("%s\n", api::EncodeJobInfo(*info).c_str());
  } else {
    std::printf("job %s: checkpoint recorded at %s\n", id->ToString().c_str(),
                FormatTimestamp(info->job.last_checkpoint).c_str());
  }
  return 0;
}

int Ok(const Args& a, const std::string& what) {
  if (a.json) {
    std::printf("%s\n", api::EncodeStringMap({{"status", "ok"}}).c_str());
  } else if (!what.empty()) {
    std::printf("%s\n", what.c_str());
  }
  return 0;
}

struct CommandInfo {
  const char* name;
  const char* usage;
  std::vector<std::string> value_flags;
  std::vector<std::string> bool_flags;
  std::function<int(Client&, const Args&)> run;
};

const std::vector<CommandInfo>& Commands() {
  static const std::vector<CommandInfo> commands = {
      {"queue",
       "corral queue [--user U,..] [--state S,..] [--partition P,..] [--all] [JOB...]",
       {"user", "state", "partition"},
       {"all"},
       Queue},
      {"show", "corral show [--timeline] JOB...", {}, {"timeline"}, Show},
      {"cancel",
       "corral cancel JOB...",
       {},
       {},
       [](Client& c, const Args& a) {
         return ForEachJob(a, [&](JobId id) { return c.Cancel(id); });
       }},
      {"requeue",
       "corral requeue JOB...",
       {},
       {},
       [](Client& c, const Args& a) {
         return ForEachJob(a, [&](JobId id) { return c.Requeue(id); });
       }},
      {"hold",
       "corral hold JOB...",
       {},
       {},
       [](Client& c, const Args& a) {
         return ForEachJob(a, [&](JobId id) { return c.Hold(id, true); });
       }},
      {"release",
       "corral release JOB...",
       {},
       {},
       [](Client& c, const Args& a) {
         return ForEachJob(a, [&](JobId id) { return c.Hold(id, false); });
       }},
      {"update",
       "corral update JOB... --time-limit TIME   (pending or running; only admins may raise it)",
       {"time-limit"},
       {},
       [](Client& c, const Args& a) {
         auto it = a.values.find("time-limit");
         if (it == a.values.end()) return UsageError(a.command, "--time-limit is required");
         if (auto d = ParseSlurmDuration(it->second); !d) {
           return UsageError(a.command, "--time-limit " + it->second + ": " + d.error().message);
         }
         return ForEachJob(a, [&](JobId id) { return c.UpdateTimeLimit(id, it->second); });
       }},
      {"wait",
       "corral wait JOB...   (exits with the first failing job's exit status)",
       {},
       {},
       Wait},
      {"checkpoint-done",
       "corral checkpoint-done [JOB]   (inside a job: records its checkpoint)",
       {},
       {},
       CheckpointDone},
      {"nodes", "corral nodes", {}, {}, Nodes},
      {"partitions", "corral partitions", {}, {}, Partitions},
      {"priority",
       "corral priority [JOB]   (each pending job's priority and its factors)",
       {},
       {},
       Priority},
      {"why", "corral why JOB          (everything that holds a pending job back)", {}, {}, Why},
      {"jobstats",
       "corral jobstats JOB...   (how a job used its GPUs: per-GPU use and notes)",
       {},
       {},
       [](Client& c, const Args& a) { return Jobstats(c, a.positional, a.json); }},
      {"report",
       "corral report usage [--since T] [--until T] [--jobs] | waste [--since T]   (usage: "
       "CPU/GPU-hours and kWh by account, user, partition, GPU model; waste: idle GPU-hours)",
       {"since", "until"},
       {"jobs"},
       [](Client& c, const Args& a) {
         auto value = [&](const char* name) {
           auto it = a.values.find(name);
           return it == a.values.end() ? std::string() : it->second;
         };
         if (a.positional.size() == 1 && a.positional[0] == "usage") {
           return UsageReportCommand(c, value("since"), value("until"), !value("jobs").empty(),
                                     a.json);
         }
         return Report(c, a.positional, value("since"), a.json);
       }},
      {"audit",
       "corral audit [verify] [--since T] [--user U] [--job J] [--node N] [--limit N] (admins, operators)",
       {"since", "user", "job", "node", "limit"},
       {},
       [](Client& c, const Args& a) { return Audit(c, a.positional, a.values, a.json); }},
      // Accounts, users and QOS as data (governance.h).
      {"account",
       "corral account add|modify|delete|show|list|budget [NAME] [--parent P] [--shares N] [--max-gpus N] [--gpu-hours H --period P] ... | coordinator add|remove ACCOUNT USER[,USER..]",
       GovernanceFlags(),
       {},
       [](Client& c, const Args& a) { return Governance(c, "account", a.positional, a.values, a.json); }},
      {"user",
       "corral user add|modify|delete|show|list [NAME] [--account A,..] [--default-account A] [--in-account A (that association's limits)] [--max-gpus N] ...",
       GovernanceFlags(),
       {},
       [](Client& c, const Args& a) { return Governance(c, "user", a.positional, a.values, a.json); }},
      {"qos",
       "corral qos add|modify|delete|show|list [NAME] [--priority N] [--max-time T] ...",
       GovernanceFlags(),
       {},
       [](Client& c, const Args& a) { return Governance(c, "qos", a.positional, a.values, a.json); }},
      {"drain",
       "corral drain NODE --reason TEXT",
       {"reason"},
       {},
       [](Client& c, const Args& a) {
         if (a.positional.size() != 1) return UsageError(a.command, "give one node name");
         auto it = a.values.find("reason");
         if (it == a.values.end() || it->second.empty())
           return UsageError(a.command, "--reason is required");
         if (Status s = c.Drain(a.positional[0], it->second); !s) return Error(s.error().message);
         return Ok(a, "node " + a.positional[0] + " draining");
       }},
      {"resume",
       "corral resume NODE",
       {},
       {},
       [](Client& c, const Args& a) {
         if (a.positional.size() != 1) return UsageError(a.command, "give one node name");
         if (Status s = c.Resume(a.positional[0]); !s) return Error(s.error().message);
         return Ok(a, "node " + a.positional[0] + " resumed");
       }},
  };
  return commands;
}

}  // namespace

void PrintUsage() {
  std::printf(
      "usage: corral COMMAND [options]\n\n"
      "Cluster:\n"
      "  dev          start a local cluster: a controller and N agents with simulated GPUs\n"
      "  controller   run the controller daemon (--config corral.toml)\n"
      "  agent        run a node agent (--config agent.toml)\n"
      "  ca           the cluster CA, certificates and keys (corral ca --help)\n"
      "  sim          replay a job trace through the scheduler (corral sim --help)\n\n"
      "Jobs:\n"
      "  submit       submit a batch script (Slurm's sbatch options; #CORRAL or #SBATCH lines)\n"
      "  run          inside a job: run a command on its nodes, one task per rank (like srun)\n");
  for (const auto& c : Commands()) std::printf("  %-12s %s\n", c.name, c.usage);
  std::printf(
      "  %-12s %s\n", "node",
      "corral node resume-gpu NODE GPU | corral node inject NODE --gpu N --xid X ... (admins)");
  std::printf("  %-12s %s\n", "top",
              "corral top [--interval S] [--once]   (live view of nodes, GPUs and the queue)");
  std::printf("  %-12s %s\n", "token",
              "corral token --role metrics   (a bearer token for Prometheus; docs/metrics.md)");
  std::printf(
      "\nEvery client command takes --controller URL and --json. The controller is found through\n"
      "--controller, CORRAL_CONTROLLER, or the running `corral dev` cluster.\n");
}

int RunClientCommand(int argc, char** argv) {
  std::string name = argv[0];
  if (name == "submit") return RunSubmitCommand(argc, argv);
  if (name == "node") return RunNodeCommand(argc, argv);
  if (name == "ca") return RunCaCommand(argc, argv);
  if (name == "token") return RunTokenCommand(argc, argv);
  if (name == "top") return RunTopCommand(argc, argv);
  if (name == "run") return RunStepCommand(argc, argv);
  for (const auto& info : Commands()) {
    if (name != info.name) continue;
    auto args = ParseArgs(argc, argv, info.value_flags, info.bool_flags);
    if (!args) return UsageError(name, args.error().message);
    if (args->help) {
      std::printf("usage: %s [--controller URL] [--json]\n", info.usage);
      return 0;
    }
    auto client = Client::Connect(args->controller);
    if (!client) return Error(client.error().message);
    return info.run(**client, *args);
  }
  std::fprintf(stderr, "corral: unknown command \"%s\"\n\n", name.c_str());
  PrintUsage();
  return 2;
}

}  // namespace corral::cli
