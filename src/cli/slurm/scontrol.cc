#include "cli/slurm/scontrol.h"

#include <algorithm>
#include <map>

#include "cli/slurm/internal/text.h"
#include "core/array_spec.h"
#include "core/hostlist.h"
#include "core/output_pattern.h"
#include "core/slurm_env.h"

namespace corral::slurm {
namespace {

using internal::LocalTime;
using internal::LongDuration;

std::string OrNull(const std::string& s) { return s.empty() ? "(null)" : s; }

std::string Time(Timestamp t, const ScontrolOptions& o) {
  return t == Timestamp{} ? "Unknown" : LocalTime(t, o.utc_offset_seconds);
}

// Joins the lines of one record as scontrol does.
std::string Block(const std::vector<std::string>& lines, bool one_liner, bool job) {
  std::string out;
  if (one_liner) {
    for (const auto& l : lines) out += l + " ";
    return out + "\n";
  }
  for (size_t i = 0; i < lines.size(); ++i) out += (i == 0 ? "" : "   ") + lines[i] + "\n";
  return out + (job ? "   \n\n" : "\n");
}

std::string Dependency(const Job& j) {
  if (j.state != JobState::kPending || j.spec.dependencies.empty()) return "(null)";
  std::string out;
  for (const auto& d : j.spec.dependencies) {
    if (d.jobs.empty()) {
      out += (out.empty() ? "" : (j.spec.dependency_any ? "?" : ",")) +
             std::string(DependencyTypeName(d.type)) + "(unfulfilled)";
    }
    for (JobId id : d.jobs) {
      out += (out.empty() ? "" : (j.spec.dependency_any ? "?" : ",")) +
             std::string(DependencyTypeName(d.type)) + ":" + id.ToString();
      if (d.delay.count() > 0) {
        out +=
            "+" + std::to_string(std::chrono::duration_cast<std::chrono::minutes>(d.delay).count());
      }
      out += "(unfulfilled)";
    }
  }
  return out;
}

// `pending_array`: the record of an array's pending tasks, whose %a Slurm prints as 4294967294.
std::string Path(const Job& j, const std::string& text, bool pending_array) {
  // Slurm's scontrol expands only %A %a %j %u %x (and %%); %N, %n, %s, %t and padded forms
  // (%12j) stay as written, as the peer prints them (tests/slurm_diff, 14 and 15).
  std::string pattern;
  for (size_t i = 0; i < text.size(); ++i) {
    pattern += text[i];
    if (text[i] != '%' || i + 1 >= text.size()) continue;
    char next = text[i + 1];
    if (next == '%') {
      pattern += text[++i];
    } else if (std::string_view("Aajux").find(next) == std::string_view::npos) {
      pattern += '%';  // "%%" reads back as a literal '%'
    }
  }
  OutputPatternValues v;
  v.job_id = j.id.value;
  v.array_job_id = j.array_job_id.value;
  v.array_task_id = pending_array ? std::nullopt : j.array_task_id;
  v.job_name = j.spec.name;
  v.user = j.spec.user;
  if (!j.allocation.nodes.empty()) v.node_name = j.allocation.nodes.front().node_name;
  return ResolveOutputPath(pattern, v, j.spec.working_dir);
}

std::string JobTres(const Job& j) {
  std::string out = "cpu=" + std::to_string(internal::CpusOf(j));
  uint64_t mem = 0;
  uint32_t gpus = 0;
  if (!j.allocation.nodes.empty()) {
    for (const auto& n : j.allocation.nodes) {
      mem += n.mem_mb;
      gpus += n.gpus.size();
    }
  } else {
    const ResourceRequest& r = j.spec.resources;
    uint32_t nodes = std::max<uint32_t>(r.nodes, 1);
    if (r.mem_per_node_mb > 0 && r.mem_per_node_mb != kWholeNodeMemory)
      mem = r.mem_per_node_mb * nodes;
    else if (r.mem_per_cpu_mb > 0)
      mem = r.mem_per_cpu_mb * internal::CpusOf(j);
    gpus = r.gpus > 0 ? r.gpus : r.gpus_per_node * nodes + r.gpus_per_task * r.ntasks;
  }
  if (mem > 0) out += ",mem=" + internal::RoundedMemory(mem);
  out += ",node=" + std::to_string(internal::NodesOf(j));
  out += ",billing=" + std::to_string(internal::CpusOf(j));
  if (gpus > 0) out += ",gres/gpu=" + std::to_string(gpus);
  return out;
}

std::string JobBlock(const api::JobInfo& info, const std::string& pending_tasks,
                     const ScontrolOptions& o) {
  const Job& j = info.job;
  const JobSpec& s = j.spec;
  const ResourceRequest& r = s.resources;
  std::vector<std::string> L;
  std::string head = "JobId=" + j.id.ToString();
  if (j.array_task_id.has_value()) {
    uint32_t throttle = 0;
    if (auto a = ParseArraySpec(s.array, 0xffffffffu); a.has_value()) throttle = a->max_running;
    head += " ArrayJobId=" + j.array_job_id.ToString() + " ArrayTaskId=" +
            (pending_tasks.empty() ? std::to_string(*j.array_task_id) : pending_tasks);
    if (throttle > 0) head += " ArrayTaskThrottle=" + std::to_string(throttle);
  }
  L.push_back(head + " JobName=" + s.name);
  std::string group = o.group_name ? o.group_name(s.gid) : std::to_string(s.gid);
  L.push_back("UserId=" + s.user + "(" + std::to_string(s.uid) + ") GroupId=" + group + "(" +
              std::to_string(s.gid) + ") MCS_label=N/A");
  L.push_back("Priority=" + std::to_string(info.priority) + " Nice=" + std::to_string(s.nice) + " Account=" + OrNull(s.account) +
              " QOS=" + OrNull(s.qos));
  std::string reason = j.state == JobState::kRunning || j.state == JobState::kCompleted
                           ? "None"
                           : (j.reason.empty() ? "None" : j.reason);
  L.push_back("JobState=" + std::string(ShownStateName(j)) + " Reason=" + reason +
              " Dependency=" + Dependency(j));
  L.push_back("Requeue=" + std::string(s.requeue ? "1" : "0") +
              " Restarts=" + std::to_string(j.restart_count) + " BatchFlag=1 Reboot=0 ExitCode=" +
              std::to_string(j.exit_code) + ":" + std::to_string(j.exit_signal));
  Duration limit = internal::TimeLimitOf(j);
  L.push_back(
      "RunTime=" + LongDuration(internal::TimeUsed(j, o.now)) + " TimeLimit=" +
      (limit == kUnlimited ? std::string("UNLIMITED") : LongDuration(internal::Seconds(limit))) +
      " TimeMin=N/A");
  bool started = j.state != JobState::kPending && j.start_time != Timestamp{};
  // A held job is not eligible (Slurm: Unknown until it is released).
  const bool held = j.state == JobState::kPending && s.hold;
  const std::string eligible = held ? std::string("Unknown") : Time(j.eligible_time, o);
  L.push_back("SubmitTime=" + Time(j.submit_time, o) + " EligibleTime=" + eligible);
  L.push_back("AccrueTime=" + eligible);
  std::string start = started ? Time(j.start_time, o) : Time(info.estimated_start, o);
  std::string end = "Unknown";
  if (IsTerminal(j.state)) {
    end = Time(j.end_time, o);
  } else if (started && limit != kUnlimited) {
    // Each finished suspension moves the end on (Slurm: not the one in progress).
    end = Time(j.start_time + limit + j.allocation.suspended_for, o);
  }
  L.push_back("StartTime=" + start + " EndTime=" + end + " Deadline=N/A");
  const Allocation& run = j.allocation;
  const bool ever_suspended = started && run.suspend_time != Timestamp{};
  const int64_t pre_suspend = ever_suspended ? internal::Seconds(run.pre_suspend) : 0;
  L.push_back("SuspendTime=" + (ever_suspended ? Time(run.suspend_time, o) : std::string("None")) +
              " SecsPreSuspend=" + std::to_string(pre_suspend) + " LastSchedEval=" +
              Time(started ? j.start_time : j.submit_time, o) + " Scheduler=Main");
  L.push_back("Partition=" + internal::PartitionOf(j) + " AllocNode:Sid=" +
              (s.submit_host.empty() ? std::string("(null)") : s.submit_host) + ":0");
  if (!s.reservation.empty()) L.push_back("Reservation=" + s.reservation);
  L.push_back("ReqNodeList=" + OrNull(CompressHostList(r.nodelist)) +
              " ExcNodeList=" + OrNull(CompressHostList(r.exclude)));
  L.push_back("NodeList=" + CompressHostList(j.allocation.NodeNames()));
  if (!j.allocation.nodes.empty()) L.push_back("BatchHost=" + j.allocation.nodes.front().node_name);
  std::string nodes = std::to_string(internal::NodesOf(j));
  if (j.allocation.nodes.empty() && r.nodes_max > r.nodes)
    nodes += "-" + std::to_string(r.nodes_max);
  L.push_back("NumNodes=" + nodes + " NumCPUs=" + std::to_string(internal::CpusOf(j)) +
              " NumTasks=" + std::to_string(std::max<uint32_t>(r.ntasks, 1)) + " CPUs/Task=" +
              std::to_string(std::max<uint32_t>(r.cpus_per_task, 1)) + " ReqB:S:C:T=0:0:*:*");
  L.push_back("TRES=" + JobTres(j));
  L.push_back("Socks/Node=* NtasksPerN:B:S:C=" + std::to_string(r.ntasks_per_node) +
              ":0:*:* CoreSpec=*");
  std::string mem;
  if (r.mem_per_cpu_mb > 0) {
    mem = "MinMemoryCPU=" + internal::ExactMemory(r.mem_per_cpu_mb);
  } else {
    uint64_t m = r.mem_per_node_mb == kWholeNodeMemory ? 0 : r.mem_per_node_mb;
    mem = "MinMemoryNode=" + internal::ExactMemory(m);
  }
  // As Slurm: the CPUs of one task, times --ntasks-per-node when given.
  const uint32_t min_cpus =
      std::max<uint32_t>(r.cpus_per_task, 1) * std::max<uint32_t>(r.ntasks_per_node, 1);
  L.push_back("MinCPUsNode=" + std::to_string(min_cpus) + " " + mem + " MinTmpDiskNode=0");
  L.push_back("Features=" + OrNull(r.constraint) + " DelayBoot=00:00:00");
  L.push_back("OverSubscribe=" + std::string(r.exclusive ? "NO" : "OK") +
              " Contiguous=0 Licenses=(null) Network=(null)");
  // The script and its arguments, joined by blanks as Slurm prints them.
  std::string command = s.command;
  if (!command.empty()) {
    for (const std::string& a : s.script_args) command += " " + a;
  }
  L.push_back("Command=" + OrNull(command));
  L.push_back("WorkDir=" + s.working_dir);
  if (!s.comment.empty()) L.push_back("Comment=" + s.comment + " ");
  const bool pending_array = !pending_tasks.empty();
  std::string out_path = Path(j, s.stdout_path, pending_array);
  L.push_back("StdErr=" +
              (s.stderr_path.empty() ? out_path : Path(j, s.stderr_path, pending_array)));
  L.push_back("StdIn=" + (s.stdin_path.empty() ? std::string("/dev/null") : s.stdin_path));
  L.push_back("StdOut=" + out_path);
  L.push_back("Power=");
  if (r.cpus_per_gpu > 0) L.push_back("CpusPerTres=gres:gpu:" + std::to_string(r.cpus_per_gpu));
  if (r.mem_per_gpu_mb > 0) L.push_back("MemPerTres=gres:gpu:" + std::to_string(r.mem_per_gpu_mb));
  if (r.gpus_per_node > 0)
    L.push_back("TresPerNode=" + internal::GpuTres(r.gpus_per_node, r.gpu_type));
  if (r.gpus > 0) L.push_back("TresPerJob=" + internal::GpuTres(r.gpus, r.gpu_type));
  if (r.gpus_per_task > 0)
    L.push_back("TresPerTask=" + internal::GpuTres(r.gpus_per_task, r.gpu_type));
  if (!s.mail_user.empty() || !s.mail_type.empty()) {
    // Slurm mails the job's owner when no --mail-user is given.
    L.push_back("MailUser=" + (s.mail_user.empty() ? s.user : s.mail_user) +
                " MailType=" + OrNull(s.mail_type));
  }
  return Block(L, o.one_liner, true);
}

std::string NodeStateText(const api::NodeInfo& n) {
  uint32_t cpus = n.node.inventory.cpus;
  bool full = cpus > 0 && n.alloc_cpus >= cpus;
  switch (n.state) {
    case NodeState::kUnknown:
      return "UNKNOWN+NOT_RESPONDING";
    case NodeState::kIdle:
      return "IDLE";
    case NodeState::kMixed:
      return "MIXED";
    case NodeState::kAllocated:
      return "ALLOCATED";
    case NodeState::kDraining:
      return full ? "ALLOCATED+DRAIN" : "MIXED+DRAIN";
    case NodeState::kDrained:
      return "IDLE+DRAIN";
    case NodeState::kDown:
      return n.node.responding ? "DOWN" : "DOWN+NOT_RESPONDING";
    case NodeState::kPoweredDown:
      return "IDLE+POWERED_DOWN";
  }
  return "UNKNOWN";
}

std::string HostOf(const std::string& address) {
  std::string s = address;
  if (size_t p = s.find("://"); p != std::string::npos) s = s.substr(p + 3);
  if (size_t p = s.find_last_of(':'); p != std::string::npos && s.find(']') == std::string::npos)
    s = s.substr(0, p);
  if (size_t p = s.find('/'); p != std::string::npos) s = s.substr(0, p);
  return s;
}

std::string NodeBlock(const api::NodeInfo& n, const ScontrolOptions& o) {
  const NodeInventory& inv = n.node.inventory;
  std::vector<std::string> L;
  L.push_back("NodeName=" + inv.name + " Arch=x86_64 CoresPerSocket=1 ");
  L.push_back("CPUAlloc=" + std::to_string(n.alloc_cpus) + " CPUEfctv=" + std::to_string(inv.cpus) +
              " CPUTot=" + std::to_string(inv.cpus) + " CPULoad=N/A");
  std::string features;
  for (const auto& f : inv.features) features += (features.empty() ? "" : ",") + f;
  L.push_back("AvailableFeatures=" + OrNull(features));
  L.push_back("ActiveFeatures=" + OrNull(features));
  std::string gres = "(null)";
  if (!inv.gpus.empty()) {
    std::string model = inv.gpus.front().model;
    for (const auto& g : inv.gpus) {
      if (g.model != model) model.clear();
    }
    gres = "gpu:" + (model.empty() ? "" : model + ":") + std::to_string(inv.gpus.size());
  }
  L.push_back("Gres=" + gres);
  std::string addr = inv.address.empty() ? inv.name : HostOf(inv.address);
  L.push_back("NodeAddr=" + addr + " NodeHostName=" + inv.name + " Version=" +
              (inv.agent_version.empty() ? std::string("(null)") : inv.agent_version));
  L.push_back("OS=Linux ");
  L.push_back("RealMemory=" + std::to_string(inv.memory_mb) +
              " AllocMem=" + std::to_string(n.alloc_mem_mb) +
              " FreeMem=N/A Sockets=" + std::to_string(inv.cpus) + " Boards=1");
  L.push_back("State=" + NodeStateText(n) +
              " ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A");
  std::string parts;
  for (const auto& p : n.partitions) parts += (parts.empty() ? "" : ",") + p;
  L.push_back("Partitions=" + parts + " ");
  L.push_back("BootTime=None SlurmdStartTime=None");
  L.push_back("LastBusyTime=Unknown");
  std::string cfg = "cpu=" + std::to_string(inv.cpus);
  if (inv.memory_mb > 0) cfg += ",mem=" + internal::RoundedMemory(inv.memory_mb);
  cfg += ",billing=" + std::to_string(inv.cpus);
  if (!inv.gpus.empty()) cfg += ",gres/gpu=" + std::to_string(inv.gpus.size());
  L.push_back("CfgTRES=" + cfg);
  std::string alloc;
  if (n.alloc_cpus > 0) alloc = "cpu=" + std::to_string(n.alloc_cpus);
  if (n.alloc_mem_mb > 0)
    alloc +=
        (alloc.empty() ? "" : ",") + std::string("mem=") + internal::RoundedMemory(n.alloc_mem_mb);
  if (!n.alloc_gpus.empty())
    alloc +=
        (alloc.empty() ? "" : ",") + std::string("gres/gpu=") + std::to_string(n.alloc_gpus.size());
  L.push_back("AllocTRES=" + alloc);
  L.push_back("CapWatts=n/a");
  L.push_back("CurrentWatts=0 AveWatts=0");
  L.push_back("ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s");
  if (!n.node.reason.empty()) {
    L.push_back("Reason=" + n.node.reason + " [root@" + Time(n.node.reason_time, o) + "]");
  }
  return Block(L, o.one_liner, false);
}

std::string PartitionBlock(const api::PartitionInfo& info, const ScontrolOptions& o) {
  const Partition& p = info.partition;
  std::vector<std::string> L;
  L.push_back("PartitionName=" + p.name);
  // Access (issue 16 item 2) as Slurm shows it: DenyAccounts in AllowAccounts' place.
  auto all_or = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& a : v) out += (out.empty() ? "" : ",") + a;
    return out.empty() ? std::string("ALL") : out;
  };
  const std::string accounts = !p.allowed_accounts.empty() || p.deny_accounts.empty()
                                   ? "AllowAccounts=" + all_or(p.allowed_accounts)
                                   : "DenyAccounts=" + all_or(p.deny_accounts);
  L.push_back("AllowGroups=" + all_or(p.allowed_groups) + " " + accounts +
              " AllowQos=" + all_or(p.allowed_qos));
  L.push_back(std::string("AllocNodes=ALL Default=") + (p.is_default ? "YES" : "NO") + " QoS=N/A");
  L.push_back("DefaultTime=" +
              (p.default_time == kUnlimited ? std::string("NONE")
                                            : LongDuration(internal::Seconds(p.default_time))) +
              " DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO");
  L.push_back(
      "MaxNodes=" +
      (p.max_nodes_per_job == 0 ? std::string("UNLIMITED") : std::to_string(p.max_nodes_per_job)) +
      " MaxTime=" +
      (p.max_time == kUnlimited ? std::string("UNLIMITED")
                                : LongDuration(internal::Seconds(p.max_time))) +
      " MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED");
  L.push_back("Nodes=" + OrNull(CompressHostList(p.nodes)));
  L.push_back("PriorityJobFactor=1 PriorityTier=" + std::to_string(p.priority_tier) +
              " RootOnly=NO ReqResv=NO OverSubscribe=NO");
  L.push_back("OverTimeLimit=NONE PreemptMode=OFF");
  L.push_back(std::string("State=") + (p.up ? "UP" : "DOWN") +
              " TotalCPUs=" + std::to_string(info.total_cpus) +
              " TotalNodes=" + std::to_string(p.nodes.size()) + " SelectTypeParameters=NONE");
  L.push_back("JobDefaults=(null)");
  L.push_back(p.def_mem_per_cpu_mb > 0 ? "DefMemPerCPU=" + std::to_string(p.def_mem_per_cpu_mb) +
                                             " MaxMemPerNode=UNLIMITED"
                                       : "DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED");
  std::string tres = "cpu=" + std::to_string(info.total_cpus) +
                     ",node=" + std::to_string(p.nodes.size()) +
                     ",billing=" + std::to_string(info.total_cpus);
  if (info.total_gpus > 0) tres += ",gres/gpu=" + std::to_string(info.total_gpus);
  L.push_back("TRES=" + tres);
  return Block(L, o.one_liner, false);
}

}  // namespace

std::string RenderScontrolJobs(const std::vector<api::JobInfo>& jobs,
                               const ScontrolOptions& options) {
  // Pending tasks of one array are one record.
  std::map<uint64_t, std::vector<const api::JobInfo*>> pending;
  for (const auto& j : jobs) {
    if (j.job.state == JobState::kPending && j.job.array_task_id.has_value()) {
      pending[j.job.array_job_id.value].push_back(&j);
    }
  }
  std::string out;
  for (const auto& j : jobs) {
    if (j.job.state == JobState::kPending && j.job.array_task_id.has_value()) {
      auto& group = pending[j.job.array_job_id.value];
      if (group.empty() || group.front() != &j) continue;
      if (group.size() == 1) {
        out += JobBlock(j, "", options);
        continue;
      }
      std::vector<uint32_t> ids;
      for (auto* t : group) ids.push_back(*t->job.array_task_id);
      std::sort(ids.begin(), ids.end());
      uint32_t throttle = 0;
      if (auto a = ParseArraySpec(j.job.spec.array, 0xffffffffu); a.has_value())
        throttle = a->max_running;
      out += JobBlock(j, FormatArrayIndices(ids, throttle), options);
      continue;
    }
    out += JobBlock(j, "", options);
  }
  return out;
}

std::string RenderScontrolNodes(const std::vector<api::NodeInfo>& nodes,
                                const ScontrolOptions& options) {
  std::string out;
  for (const auto& n : nodes) out += NodeBlock(n, options);
  return out;
}

std::string RenderScontrolPartitions(const std::vector<api::PartitionInfo>& partitions,
                                     const ScontrolOptions& options) {
  std::string out;
  for (const auto& p : partitions) out += PartitionBlock(p, options);
  return out;
}

Result<std::string> ScontrolShowHostnames(std::string_view list) {
  auto names = ExpandHostList(list);
  if (!names.has_value()) return InvalidArgument("Invalid hostlist: " + std::string(list));
  std::string out;
  for (const auto& n : *names) out += n + "\n";
  return out;
}

Result<std::string> ScontrolShowHostlist(std::string_view list, bool sorted) {
  auto names = ExpandHostList(list);
  if (!names.has_value()) return InvalidArgument("Invalid hostlist: " + std::string(list));
  return CompressHostList(sorted ? SortHostNames(std::move(*names)) : *names) + "\n";
}

}  // namespace corral::slurm
