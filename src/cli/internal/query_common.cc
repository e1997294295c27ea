#include "cli/internal/query_common.h"

#include <pwd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "api/auth.h"
#include "core/hostlist.h"
#include "core/strings.h"

namespace corral::cli::internal {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

std::string Me() { return api::CurrentProcessIdentity().user; }

namespace {

// A user name, or a numeric uid resolved to one.
std::string UserName(const std::string& text) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), ::isdigit)) return text;
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buf[4096];
  if (getpwuid_r(static_cast<uid_t>(std::strtoul(text.c_str(), nullptr, 10)), &pw, buf, sizeof buf,
                 &found) != 0 ||
      found == nullptr) {
    return text;
  }
  return found->pw_name;
}

}  // namespace

std::vector<std::string> UserNames(const std::string& list) {
  std::vector<std::string> out;
  for (const auto& u : SplitNonEmpty(list, ',')) out.push_back(UserName(u));
  return out;
}

Result<std::vector<std::string>> NodeNames(const std::string& list, const std::string& message) {
  auto hosts = ExpandHostList(list);
  if (!hosts) return InvalidArgument(message + list);
  return *hosts;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

Result<std::vector<JobState>> ParseStates(const std::vector<std::string>& names, bool* all) {
  std::vector<JobState> out;
  for (const auto& n : names) {
    if (Lower(n) == "all") {
      *all = true;
      continue;
    }
    // SUSPENDED is a running job whose run is suspended (core/job.h); `JobFilter` tells them
    // apart.
    const std::string upper = Upper(n);
    auto st = upper == "S" || upper == "SUSPENDED" ? Result<JobState>(JobState::kRunning)
                                                   : ParseJobState(n);
    if (!st) return InvalidArgument("Invalid job state specified: " + n);
    if (std::find(out.begin(), out.end(), *st) == out.end()) out.push_back(*st);
  }
  return out;
}

void JobFilter::SetRunningStates(const std::vector<std::string>& state_names) {
  bool running = false, suspended = false;
  for (const auto& n : state_names) {
    const std::string upper = Upper(n);
    if (upper == "ALL") return;
    running = running || upper == "R" || upper == "RUNNING";
    suspended = suspended || upper == "S" || upper == "SUSPENDED";
  }
  if (running || suspended) {
    show_running = running;
    show_suspended = suspended;
  }
}

std::vector<std::string> StateNames(const std::vector<JobState>& states) {
  std::vector<std::string> out;
  for (JobState s : states) out.emplace_back(JobStateName(s));
  return out;
}

Result<std::vector<slurm::JobIdSpec>> ParseJobIdArgs(const std::vector<std::string>& args,
                                                     const std::string& message) {
  std::vector<slurm::JobIdSpec> ids;
  for (const auto& a : args) {
    auto parsed = slurm::ParseJobIdList(a);
    if (!parsed) return InvalidArgument(message + a);
    ids.insert(ids.end(), parsed->begin(), parsed->end());
  }
  return ids;
}

bool JobFilter::Matches(const Job& j) const {
  if (!users.empty() && !Contains(users, j.spec.user)) return false;
  if (!accounts.empty() && !Contains(accounts, j.spec.account)) return false;
  if (!partitions.empty() && !Contains(partitions, j.partition)) return false;
  if (!names.empty() && !Contains(names, j.spec.name)) return false;
  if (!qos.empty() && !Contains(qos, j.spec.qos)) return false;
  if (!states.empty() && std::find(states.begin(), states.end(), j.state) == states.end()) {
    return false;
  }
  if (j.state == JobState::kRunning && !(IsSuspended(j) ? show_suspended : show_running)) {
    return false;
  }
  if (!nodes.empty()) {
    bool on = false;
    for (const auto& n : j.allocation.nodes) on = on || Contains(nodes, n.node_name);
    if (!on || (running_on_nodes && j.state != JobState::kRunning)) return false;
  }
  return true;
}

std::optional<int> ReportScan(const std::string& prog, const slurm::OptionScan& scan,
                              const QueryArgs& args, const std::string& usage,
                              const std::string& options_help) {
  if (scan.failure) {
    const slurm::GetoptFailure& f = *scan.failure;
    const std::string& bad = f.last_word;
    if (f.missing_argument) {
      std::fprintf(stderr, "%s: option '%s' requires an argument\n", prog.c_str(), bad.c_str());
    } else if (f.optopt != 0 && bad.rfind("--", 0) != 0) {
      std::fprintf(stderr, "%s: invalid option -- '%c'\n", prog.c_str(), f.optopt);
    } else {
      std::fprintf(stderr, "%s: unrecognized option '%s'\n", prog.c_str(), bad.c_str());
    }
    std::fprintf(stderr, "Try \"%s --help\" for more information\n", prog.c_str());
    return 1;
  }
  if (scan.error) {
    PrintError(prog, scan.error->message);
    return 1;
  }
  if (args.version) {
    PrintVersion();
    return 0;
  }
  if (args.help) {
    std::printf("%s%s", usage.c_str(), options_help.c_str());
    return 0;
  }
  return std::nullopt;
}

std::vector<std::string> Words(int argc, char** argv) { return {argv, argv + argc}; }

}  // namespace corral::cli::internal
