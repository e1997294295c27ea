// Pieces of the explanations a pass gives blocked jobs (`Blocker::detail`).
//
// Thread-safe: pure functions.
#pragma once

#include <string>
#include <vector>

#include "core/ids.h"
#include "core/strings.h"

namespace corral::sched::internal {

// "3, 5, 8": job ids as explanations list them.
inline std::string JoinJobIds(const std::vector<JobId>& ids) {
  std::vector<std::string> parts;
  parts.reserve(ids.size());
  for (JobId id : ids) parts.push_back(id.ToString());
  return Join(parts, ", ");
}

}  // namespace corral::sched::internal
