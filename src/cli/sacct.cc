// `sacct` on top of Corral's API: reads its options (one table), asks the controller for the
// jobs of the window, filters and prints with the renderer of cli/slurm/sacct.h.
#include "cli/slurm/sacct.h"

#include <cstdio>

#include "api/json_codec.h"
#include "cli/internal/query_common.h"
#include "cli/slurm/begin_time.h"
#include "core/clock.h"

namespace corral::cli::internal {
namespace {

using A = SacctArgs;
using R = slurm::SacctOptions;
using slurm::ArgKind;
using slurm::SetList;
using slurm::SetTrue;
using slurm::SetValue;

constexpr const char* kUsage =
    "Usage: sacct [-abDeXLnPpX] [-j jobs] [-u users] [-A accounts] [-S start] [-E end]\n"
    "             [-s states] [-r partitions] [-N nodes] [--name names] [-o fields]\n"
    "Corral's sacct: docs/slurm.md\n\n";

constexpr const char* kFieldNames =
    "Account AllocCPUS AllocGRES AllocNodes AllocTRES Comment Constraints\n"
    "ConsumedEnergy ConsumedEnergyRaw CPUTime CPUTimeRAW DerivedExitCode Elapsed\n"
    "ElapsedRaw Eligible End ExitCode GID Group JobID JobIDRaw JobName MaxRSS NCPUS\n"
    "NNodes NodeList NTasks Priority Partition QOS Reason ReqCPUS ReqGRES ReqMem\n"
    "ReqNodes ReqTRES Reservation Start State Submit Timelimit TimelimitRaw TotalCPU\n"
    "UID User WorkDir\n";

Status Brief(A& a, const std::string&) {
  a.render.format = "JobID,State,ExitCode";
  return {};
}
Status Jobs(A& a, const std::string& v) {
  a.job_args.push_back(v);
  return {};
}
Status LongFormat(A& a, const std::string&) {
  a.render.format =
      "JobID,JobIDRaw,JobName,Partition,MaxRSS,NTasks,AllocCPUS,TotalCPU,Elapsed,State,"
      "ExitCode,ReqCPUS,ReqMem,ReqTRES,AllocTRES,NNodes,NodeList,ConsumedEnergy";
  return {};
}

constexpr ArgKind kNone = ArgKind::kNone, kReq = ArgKind::kRequired;

constexpr slurm::CommandOption<A> kOptions[] = {
    {"allusers", 'a', kNone, SetTrue<&A::all_users>, nullptr, "every user's jobs"},
    {"accounts", 'A', kReq, SetList<&A::accounts>, "LIST", "jobs of these accounts"},
    {"brief", 'b', kNone, Brief, nullptr, "JobID, State and ExitCode only"},
    {"duplicates", 'D', kNone, slurm::Accept<A>, nullptr, "(accepted)"},
    {"endtime", 'E', kReq, SetValue<&A::end_text>, "TIME", "jobs active before TIME"},
    {.name = "helpformat",
     .letter = 'e',
     .apply = SetTrue<&A::help_format>,
     .help = "list the field names",
     .stops = true},
    {"jobs", 'j', kReq, Jobs, "LIST", "these jobs"},
    {"long", 'l', kNone, LongFormat, nullptr, "more fields"},
    {"allclusters", 'L', kNone, slurm::Accept<A>, nullptr, "(accepted)"},
    {"noheader", 'n', kNone, SetTrue<&A::render, &R::no_header>, nullptr, "no header lines"},
    {"nodelist", 'N', kReq, SetNodes<&A::nodes, kInvalidNodeList>, "HOSTS",
     "jobs that ran on these nodes"},
    {"name", 0, kReq, SetList<&A::names>, "LIST", "jobs with these names"},
    {"format", 'o', kReq, SetValue<&A::render, &R::format>, "FIELDS",
     "the fields, as \"JobID,JobName%30,...\""},
    {"parsable", 'p', kNone, SetTrue<&A::render, &R::parsable>, nullptr, "fields ended by '|'"},
    {"parsable2", 'P', kNone, SetTrue<&A::render, &R::parsable2>, nullptr,
     "fields separated by '|'"},
    {"delimiter", 0, kReq, SetValue<&A::render, &R::delimiter>, "TEXT",
     "the separator of -p and -P"},
    {"partition", 'r', kReq, SetList<&A::partitions>, "LIST", "jobs in these partitions"},
    {"state", 's', kReq, SetList<&A::state_names>, "LIST", "jobs in these states"},
    {"starttime", 'S', kReq, SetValue<&A::start_text>, "TIME",
     "jobs active after TIME (default: midnight)"},
    {"truncate", 'T', kNone, slurm::Accept<A>, nullptr, "(accepted)"},
    {.name = "user",
     .letter = 'u',
     .arg = kReq,
     .apply = SetUsers<A>,
     .arg_name = "LIST",
     .help = "jobs of these users (names or uids)",
     .alias = "uid"},
    {"allocations", 'X', kNone, SetTrue<&A::render, &R::allocations>, nullptr, "no step lines"},
    kHelpOption<A>,
    kUsageOption<A>,
    kVersionOption<A>,
    {"verbose", 'v', kNone, slurm::Accept<A>, nullptr, "(accepted)"},
    kJsonOption<A>,
};
static_assert(slurm::EveryOptionHasAHandler(kOptions));

}  // namespace

std::span<const slurm::CommandOption<SacctArgs>> SacctOptionTable() { return kOptions; }

int RunSacct(int argc, char** argv) {
  const std::string prog = "sacct";
  SacctArgs a;
  a.render.format = Env("SACCT_FORMAT");
  slurm::OptionScan scan = slurm::ScanWithTable(SacctOptionTable(), Words(argc, argv), ":", a);
  if (auto status = ReportScan(prog, scan, a, kUsage, slurm::TableHelp(SacctOptionTable()))) {
    return *status;
  }
  if (a.help_format) {
    std::printf("%s", kFieldNames);
    return 0;
  }
  auto ids = ParseJobIdArgs(a.job_args, "Invalid job id: ");
  if (Failed(prog, ids)) return 1;
  bool all_states = false;
  auto states = ParseStates(a.state_names, &all_states);
  if (Failed(prog, states)) return 1;
  Timestamp now = SystemClock::Get().Now();
  int64_t offset = LocalUtcOffset();
  // Default window: since today's midnight (since ever with -j), until now.
  Timestamp from{}, until{};
  if (!a.start_text.empty()) {
    auto t = slurm::ParsePastTime(a.start_text, now, offset);
    if (Failed(prog, t)) return 1;
    from = *t;
  } else if (ids->empty()) {
    from = *slurm::ParsePastTime("today", now, offset);
  }
  if (!a.end_text.empty()) {
    auto t = slurm::ParsePastTime(a.end_text, now, offset);
    if (Failed(prog, t)) return 1;
    until = *t;
  }
  // As Slurm's sacct for a non-administrator: one's own jobs unless -a or -u.
  if (a.users.empty() && !a.all_users) a.users = {Me()};

  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  Result<std::vector<api::JobInfo>> jobs = std::vector<api::JobInfo>{};
  if (!ids->empty()) {
    jobs = ResolveJobIds(*client, *ids, nullptr);
  } else {
    JobListQuery q;
    q.all = true;
    q.users = a.users;
    q.accounts = a.accounts;
    q.partitions = a.partitions;
    q.active_from = from;
    q.active_until = until;
    jobs = client->ListJobs(q);
  }
  if (Failed(prog, jobs)) return 1;
  // With -j the jobs named are shown whoever they belong to.
  JobFilter filter{.users = ids->empty() ? a.users : std::vector<std::string>{},
                   .names = a.names,
                   .nodes = a.nodes,
                   .states = *states};
  std::vector<api::JobInfo> shown;
  for (auto& info : *jobs) {
    if (filter.Matches(info.job)) shown.push_back(std::move(info));
  }
  if (a.json) {
    std::printf("%s\n", api::EncodeJobInfoList(shown).c_str());
    return 0;
  }
  a.render.now = now;
  a.render.utc_offset_seconds = offset;
  a.render.group_name = GroupName;
  auto r = slurm::RenderSacct(shown, a.render);
  if (Failed(prog, r)) return 1;
  for (const auto& w : r->warnings) std::fprintf(stderr, "%s\n", w.c_str());
  std::fputs(r->text.c_str(), stdout);
  return 0;
}

}  // namespace corral::cli::internal
