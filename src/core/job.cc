#include "core/job.h"

#include <array>
#include <cctype>

namespace corral {
namespace {

struct StateNames {
  JobState state;
  std::string_view name;
  std::string_view short_name;
};

constexpr std::array<StateNames, 9> kStates = {{
    {JobState::kPending, "PENDING", "PD"},
    {JobState::kRunning, "RUNNING", "R"},
    {JobState::kCompleted, "COMPLETED", "CD"},
    {JobState::kFailed, "FAILED", "F"},
    {JobState::kCancelled, "CANCELLED", "CA"},
    {JobState::kTimeout, "TIMEOUT", "TO"},
    {JobState::kNodeFail, "NODE_FAIL", "NF"},
    {JobState::kOutOfMemory, "OUT_OF_MEMORY", "OOM"},
    {JobState::kPreempted, "PREEMPTED", "PR"},
}};

}  // namespace

std::string_view JobStateName(JobState s) {
  for (const auto& e : kStates) {
    if (e.state == s) return e.name;
  }
  return "UNKNOWN";
}

std::string_view JobStateShortName(JobState s) {
  for (const auto& e : kStates) {
    if (e.state == s) return e.short_name;
  }
  return "?";
}

Result<JobState> ParseJobState(std::string_view text) {
  std::string upper;
  for (char c : text) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "CANCELED") upper = "CANCELLED";
  for (const auto& e : kStates) {
    if (upper == e.name || upper == e.short_name) return e.state;
  }
  return InvalidArgument("unknown job state \"" + std::string(text) + "\"");
}

bool IsTerminal(JobState s) { return s != JobState::kPending && s != JobState::kRunning; }

Status CheckTransition(JobState from, JobState to) {
  bool ok = false;
  switch (from) {
    case JobState::kPending:
      ok = to == JobState::kRunning || to == JobState::kCancelled || to == JobState::kFailed;
      break;
    case JobState::kRunning:
      ok = to != JobState::kRunning;  // any end, or requeue to PENDING
      break;
    default:
      ok = to == JobState::kPending;  // requeue of a finished batch job
      break;
  }
  if (ok) return {};
  return FailedPrecondition("cannot go from " + std::string(JobStateName(from)) + " to " +
                            std::string(JobStateName(to)));
}

std::string_view DependencyTypeName(DependencyType t) {
  switch (t) {
    case DependencyType::kAfter: return "after";
    case DependencyType::kAfterAny: return "afterany";
    case DependencyType::kAfterOk: return "afterok";
    case DependencyType::kAfterNotOk: return "afternotok";
    case DependencyType::kAfterCorr: return "aftercorr";
    case DependencyType::kSingleton: return "singleton";
  }
  return "unknown";
}

std::vector<std::string> Allocation::NodeNames() const {
  std::vector<std::string> out;
  out.reserve(nodes.size());
  for (const auto& n : nodes) out.push_back(n.node_name);
  return out;
}

}  // namespace corral
