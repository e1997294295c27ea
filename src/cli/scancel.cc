// `scancel` on top of Corral's API: cancels or signals the jobs named or selected by its
// filters, with its options from one table.
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "cli/internal/query_common.h"
#include "cli/slurm/option_values.h"

namespace corral::cli::internal {
namespace {

using A = ScancelArgs;
using slurm::ArgKind;
using slurm::SetList;
using slurm::SetTrue;
using slurm::SetValue;

constexpr const char* kUsage =
    "Usage: scancel [-A account] [--batch] [--full] [-n job_name] [-p partition]\n"
    "               [-Q] [-q qos] [-s signal] [-t state] [-u user] [--me] [-v]\n"
    "               [-w hosts] [job_id[_array_id]...]\n\n";

// -i/--interactive and -R/--reservation: refused by name.
template <char kLetter>
Status Refuse(A&, const std::string&) {
  return MakeError(ErrorCode::kUnimplemented,
                   std::string("option -") + kLetter + " is not supported by Corral");
}

constexpr ArgKind kNone = ArgKind::kNone, kReq = ArgKind::kRequired;

constexpr slurm::CommandOption<A> kOptions[] = {
    {"account", 'A', kReq, SetList<&A::accounts>, "LIST", "jobs of these accounts"},
    {"batch", 'b', kNone, slurm::Accept<A>, nullptr,
     "(accepted: the signal goes to the batch script's process group)"},
    {"full", 'f', kNone, slurm::Accept<A>, nullptr, "(accepted: as --batch)"},
    {"interactive", 'i', kNone, Refuse<'i'>},
    {.name = "name",
     .letter = 'n',
     .arg = kReq,
     .apply = SetList<&A::names>,
     .arg_name = "LIST",
     .help = "jobs with these names",
     .alias = "jobname"},
    {"partition", 'p', kReq, SetList<&A::partitions>, "LIST", "jobs in these partitions"},
    {"qos", 'q', kReq, SetList<&A::qos>, "LIST", "jobs of these QOS"},
    {"quiet", 'Q', kNone, SetTrue<&A::quiet>, nullptr, "no error for jobs that already ended"},
    {"reservation", 'R', kReq, Refuse<'R'>},
    {"signal", 's', kReq, SetValue<&A::signal>, "SIG",
     "send SIG (a number or a name) instead of cancelling"},
    {"state", 't', kReq, SetList<&A::state_names>, "LIST", "jobs in these states"},
    {"user", 'u', kReq, SetUsers<A>, "LIST", "jobs of these users (names or uids)"},
    {"verbose", 'v', kNone, SetTrue<&A::verbose>, nullptr, "say what is done to each job"},
    kVersionOption<A>,
    {"nodelist", 'w', kReq, SetNodes<&A::nodes, kInvalidNodeList>, "HOSTS", "jobs on these nodes"},
    {"me", 0, kNone, SetMe<A>, nullptr, "my jobs (as -u $USER)"},
    kHelpOption<A>,
    kUsageOption<A>,
};
static_assert(slurm::EveryOptionHasAHandler(kOptions));

// A signal by number or name ("USR1", "SIGUSR1"). Returns 0 when unknown.
int SignalNumber(const std::string& text) {
  if (!text.empty() && std::all_of(text.begin(), text.end(), ::isdigit))
    return std::atoi(text.c_str());
  auto spec = slurm::ParseSignalSpec(text);
  return spec ? spec->signal : 0;
}

}  // namespace

std::span<const slurm::CommandOption<ScancelArgs>> ScancelOptionTable() { return kOptions; }

int RunScancel(int argc, char** argv) {
  const std::string prog = "scancel";
  ScancelArgs a;
  slurm::OptionScan scan = slurm::ScanWithTable(ScancelOptionTable(), Words(argc, argv), ":", a);
  if (auto status = ReportScan(prog, scan, a, kUsage, slurm::TableHelp(ScancelOptionTable()))) {
    return *status;
  }
  int signal = 0;
  if (!a.signal.empty()) {
    signal = SignalNumber(a.signal);
    if (signal <= 0) {
      PrintError(prog, "Invalid job signal: " + a.signal);
      return 1;
    }
  }
  bool all_states = false;
  auto states = ParseStates(a.state_names, &all_states);
  if (Failed(prog, states)) return 1;
  auto ids = ParseJobIdArgs(scan.operands, "Invalid job id ");
  if (Failed(prog, ids)) return 1;
  JobFilter filter{.users = a.users,
                   .accounts = a.accounts,
                   .partitions = a.partitions,
                   .names = a.names,
                   .qos = a.qos,
                   .nodes = a.nodes,
                   .states = *states};
  bool filtered = !a.accounts.empty() || !a.names.empty() || !a.partitions.empty() ||
                  !a.qos.empty() || !states->empty() || !a.users.empty() || !a.nodes.empty();
  if (ids->empty() && !filtered) {
    PrintError(prog, "No job identification provided");
    return 1;
  }
  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  std::vector<std::string> missing;
  Result<std::vector<api::JobInfo>> jobs = std::vector<api::JobInfo>{};
  if (!ids->empty()) {
    jobs = ResolveJobIds(*client, *ids, &missing);
  } else {
    // Filters without ids select among one's own jobs unless -u is given.
    if (filter.users.empty()) filter.users = {Me()};
    JobListQuery q;
    q.users = filter.users;
    q.states = StateNames(*states);
    if (q.states.empty()) q.states = {"PENDING", "RUNNING"};
    jobs = client->ListJobs(q);
  }
  if (Failed(prog, jobs)) return 1;
  int status = 0;
  for (const auto& m : missing) {
    std::fprintf(stderr, "scancel: error: Kill job error on job id %s: Invalid job id specified\n",
                 m.c_str());
    status = 1;
  }
  for (const auto& info : *jobs) {
    const Job& j = info.job;
    if (IsTerminal(j.state) && !ids->empty()) {
      // Slurm reports a finished job only when named: "Job/step already completing or completed".
      if (!a.quiet) {
        std::fprintf(stderr,
                     "scancel: error: Kill job error on job id %s: Job/step already completing or "
                     "completed\n",
                     j.id.ToString().c_str());
      }
      status = 1;
      continue;
    }
    if (IsTerminal(j.state) || !filter.Matches(j)) continue;
    if (a.verbose) {
      std::fprintf(stderr, "scancel: %s job %s\n", signal != 0 ? "Signalling" : "Terminating",
                   j.id.ToString().c_str());
    }
    Status s =
        signal != 0 && signal != SIGKILL ? client->Signal(j.id, signal) : client->Cancel(j.id);
    if (!s) {
      if (!a.quiet) {
        std::fprintf(stderr, "scancel: error: Kill job error on job id %s: %s\n",
                     j.id.ToString().c_str(), s.error().message.c_str());
      }
      status = 1;
    }
  }
  return status;
}

}  // namespace corral::cli::internal
