// `scontrol show job|node|partition` (and -o/--oneliner) as Slurm 22.05 prints them (checked
// against a real 22.05.8): key=value blocks in Slurm's order and spelling, which scripts grep
// (JobState=, NodeList=, BatchHost=, RunTime=, TimeLimit=, StdOut=, ...), and `scontrol show
// hostnames|hostlist|hostlistsorted`.
//
// Values Corral does not track print as Slurm prints them when unset or default:
// MCS_label=N/A, Command=(null) for a script from stdin or --wrap, AllocNode:Sid=HOST:0,
// "Reason=... [root@TIME]" for a node's reason. Output paths are shown expanded and absolute,
// as Slurm shows them. Pending tasks of one array are one record ("ArrayTaskId=2-3%2").
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "api/messages.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::slurm {

struct ScontrolOptions {
  bool one_liner = false;  // -o: each record on one line
  Timestamp now{};
  int64_t utc_offset_seconds = 0;
  std::function<std::string(uint32_t gid)> group_name;  // GroupId=NAME(GID); numeric when unset
};

std::string RenderScontrolJobs(const std::vector<api::JobInfo>& jobs,
                               const ScontrolOptions& options);
std::string RenderScontrolNodes(const std::vector<api::NodeInfo>& nodes,
                                const ScontrolOptions& options);
std::string RenderScontrolPartitions(const std::vector<api::PartitionInfo>& partitions,
                                     const ScontrolOptions& options);

// `scontrol show hostnames LIST`: one name per line. `scontrol show hostlist LIST` /
// `hostlistsorted`: the compressed form and a newline. Return kInvalidArgument
// ("Invalid hostlist: LIST") for a malformed list.
Result<std::string> ScontrolShowHostnames(std::string_view list);
Result<std::string> ScontrolShowHostlist(std::string_view list, bool sorted);

}  // namespace corral::slurm
