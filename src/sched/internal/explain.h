// Pieces of the explanations a pass gives blocked jobs (`Blocker::detail`): what a job waits
// for ("waiting for 2 nodes with 8 GPUs of type h100 each in partition train") and lists of
// job ids.
//
// Thread-safe: pure functions.
#pragma once

#include <string>
#include <vector>

#include "core/ids.h"
#include "core/partition.h"
#include "core/strings.h"
#include "sched/internal/job_info.h"

namespace corral::sched::internal {

// "3, 5, 8": job ids as explanations list them.
inline std::string JoinJobIds(const std::vector<JobId>& ids) {
  std::vector<std::string> parts;
  parts.reserve(ids.size());
  for (JobId id : ids) parts.push_back(id.ToString());
  return Join(parts, ", ");
}

// What one node of `j` needs, for people: "a whole node", "4 CPUs", "8 GPUs of type h100".
std::string DemandUnit(const JobInfo& j, const Demand& d);

// "waiting for <what> in partition <name>", `d` being `j`'s demand in `partition`.
std::string DescribeDemand(const JobInfo& j, const Partition& partition, const Demand& d);

}  // namespace corral::sched::internal
