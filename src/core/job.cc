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

bool IsSuspended(const Job& job) {
  return job.state == JobState::kRunning && job.allocation.suspended;
}

std::string_view ShownStateName(const Job& job) {
  return IsSuspended(job) ? "SUSPENDED" : JobStateName(job.state);
}

std::string_view ShownStateShortName(const Job& job) {
  return IsSuspended(job) ? "S" : JobStateShortName(job.state);
}

Duration RunTime(const Job& job, Timestamp now) {
  if (job.start_time == Timestamp{} || job.state == JobState::kPending) return Duration(0);
  Timestamp until = IsTerminal(job.state) && job.end_time != Timestamp{} ? job.end_time : now;
  if (until <= job.start_time) return Duration(0);
  const Allocation& a = job.allocation;
  Duration suspended = a.suspended_for;
  if (a.suspended && until > a.suspend_time) suspended += until - a.suspend_time;
  Duration run = until - job.start_time;
  return run > suspended ? run - suspended : Duration(0);
}

Duration RunDeadlineLimit(const Job& job) {
  if (job.allocation.suspended || job.time_limit == kUnlimited) return kUnlimited;
  if (job.time_limit > kUnlimited - job.allocation.suspended_for) return kUnlimited;
  return job.time_limit + job.allocation.suspended_for;
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
