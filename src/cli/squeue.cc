// `squeue` on top of Corral's API: reads its options (one table), asks the controller, filters
// and prints with the renderer of cli/slurm/squeue.h.
#include "cli/slurm/squeue.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "api/json_codec.h"
#include "cli/internal/query_common.h"
#include "core/clock.h"
#include "core/strings.h"

namespace corral::cli::internal {
namespace {

using A = SqueueArgs;
using R = slurm::SqueueOptions;
using slurm::ArgKind;
using slurm::SetList;
using slurm::SetTrue;
using slurm::SetValue;

constexpr const char* kUsage =
    "Usage: squeue [-A account] [-i seconds] [--job jobid]\n"
    "              [-n name] [-o format] [-O fields] [-p partitions] [--qos qos]\n"
    "              [--start] [--sort fields] [-t states] [-u user_name] [--usage]\n"
    "              [-w nodes] [--me] [-ahlrvV]\n"
    "Corral's squeue: docs/slurm.md\n\n";

Status Iterate(A& a, const std::string& v) {
  a.iterate = std::atoi(v.c_str());
  return {};
}
Status Jobs(A& a, const std::string& v) {
  a.jobs_given = true;
  if (!v.empty()) a.job_args.push_back(v);
  return {};
}

constexpr ArgKind kNone = ArgKind::kNone, kReq = ArgKind::kRequired, kOpt = ArgKind::kOptional;

constexpr slurm::CommandOption<A> kOptions[] = {
    {"account", 'A', kReq, SetList<&A::accounts>, "LIST", "jobs of these accounts"},
    {"all", 'a', kNone, slurm::Accept<A>, nullptr, "(accepted: every partition is shown)"},
    {"array", 'r', kNone, SetTrue<&A::render, &R::array_tasks>, nullptr, "one line per array task"},
    {"noheader", 'h', kNone, SetTrue<&A::render, &R::no_header>, nullptr, "no header line"},
    kHelpOption<A>,
    {"iterate", 'i', kReq, Iterate, "SECONDS", "print again every SECONDS"},
    {.name = "jobs",
     .letter = 'j',
     .arg = kOpt,
     .apply = Jobs,
     .arg_name = "LIST",
     .help = "these jobs (any state)",
     .alias = "job"},
    {"long", 'l', kNone, SetTrue<&A::render, &R::long_output>, nullptr,
     "more columns, and the time first"},
    {"name", 'n', kReq, SetList<&A::names>, "LIST", "jobs with these names"},
    {"me", 0, kNone, SetMe<A>, nullptr, "my jobs (as -u $USER)"},
    {"format", 'o', kReq, SetValue<&A::render, &R::format>, "FORMAT",
     "the columns, as \"%.18i %.9P %.8j ...\""},
    {"Format", 'O', kReq, SetValue<&A::render, &R::long_format>, "FIELDS",
     "the columns, as \"JobID:10,Name:.20,...\""},
    {"partition", 'p', kReq, SetList<&A::partitions>, "LIST", "jobs in these partitions"},
    {"qos", 'q', kReq, SetList<&A::qos>, "LIST", "jobs of these QOS"},
    {"sort", 'S', kReq, slurm::Accept<A>, "FIELDS",
     "(accepted: jobs are in Slurm's default order)"},
    {"start", 0, kNone, SetTrue<&A::render, &R::start>, nullptr,
     "pending jobs and when they are expected to start"},
    {.name = "states",
     .letter = 't',
     .arg = kReq,
     .apply = SetList<&A::state_names>,
     .arg_name = "LIST",
     .help = "jobs in these states (PD, R, ..., all)",
     .alias = "state"},
    {.name = "user",
     .letter = 'u',
     .arg = kReq,
     .apply = SetUsers<A>,
     .arg_name = "LIST",
     .help = "jobs of these users (names or uids)",
     .alias = "users"},
    kUsageOption<A>,
    {"verbose", 'v', kNone, slurm::Accept<A>, nullptr, "(accepted)"},
    kVersionOption<A>,
    {"nodelist", 'w', kReq, SetNodes<&A::nodes, kInvalidNodeName>, "HOSTS",
     "running jobs on these nodes"},
    kJsonOption<A>,
};
static_assert(slurm::EveryOptionHasAHandler(kOptions));

}  // namespace

std::span<const slurm::CommandOption<SqueueArgs>> SqueueOptionTable() { return kOptions; }

int RunSqueue(int argc, char** argv) {
  const std::string prog = "squeue";
  SqueueArgs a;
  a.render.format = Env("SQUEUE_FORMAT");
  a.render.long_format = Env("SQUEUE_FORMAT2");
  a.users = SplitNonEmpty(Env("SQUEUE_USERS"), ',');
  a.partitions = SplitNonEmpty(Env("SQUEUE_PARTITION"), ',');
  a.accounts = SplitNonEmpty(Env("SQUEUE_ACCOUNT"), ',');
  a.state_names = SplitNonEmpty(Env("SQUEUE_STATES"), ',');
  a.names = SplitNonEmpty(Env("SQUEUE_NAMES"), ',');
  slurm::OptionScan scan = slurm::ScanWithTable(SqueueOptionTable(), Words(argc, argv), ":", a);
  if (auto status = ReportScan(prog, scan, a, kUsage, slurm::TableHelp(SqueueOptionTable()))) {
    return *status;
  }
  // `squeue -j 12 13` takes the ids as operands too.
  if (a.jobs_given) a.job_args.insert(a.job_args.end(), scan.operands.begin(), scan.operands.end());
  auto ids = ParseJobIdArgs(a.job_args, "Invalid job id: ");
  if (Failed(prog, ids)) return 1;
  bool all_states = false;
  auto states = ParseStates(a.state_names, &all_states);
  if (Failed(prog, states)) return 1;
  // Default: pending and running jobs, or, with -j, the named jobs in any state.
  if (states->empty() && !all_states && ids->empty()) {
    *states = {JobState::kPending, JobState::kRunning};
  }
  if (a.render.start) *states = {JobState::kPending};

  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  slurm::SqueueOptions& o = a.render;
  o.now = SystemClock::Get().Now();
  o.utc_offset_seconds = LocalUtcOffset();
  o.group_name = GroupName;
  JobFilter filter{.users = a.users,
                   .accounts = a.accounts,
                   .partitions = a.partitions,
                   .names = a.names,
                   .qos = a.qos,
                   .nodes = a.nodes,
                   .states = *states,
                   .running_on_nodes = true};
  filter.SetRunningStates(a.state_names);
  while (true) {
    Result<std::vector<api::JobInfo>> jobs = std::vector<api::JobInfo>{};
    if (!ids->empty()) {
      std::vector<std::string> missing;
      jobs = ResolveJobIds(*client, *ids, &missing);
      if (jobs && jobs->empty() && ids->size() == 1) {
        std::fprintf(stderr, "slurm_load_jobs error: Invalid job id specified\n");
        return 1;
      }
    } else {
      JobListQuery q;
      q.users = a.users;
      q.partitions = a.partitions;
      q.accounts = a.accounts;
      q.states = StateNames(*states);
      jobs = client->ListJobs(q);
    }
    if (Failed(prog, jobs)) return 1;
    std::vector<api::JobInfo> shown;
    for (auto& info : *jobs) {
      if (filter.Matches(info.job)) shown.push_back(std::move(info));
    }
    if (a.json) {
      std::printf("%s\n", api::EncodeJobInfoList(shown).c_str());
    } else {
      slurm::RenderResult r = slurm::RenderSqueue(shown, o);
      for (const auto& w : r.warnings) std::fprintf(stderr, "%s\n", w.c_str());
      std::fputs(r.text.c_str(), stdout);
    }
    std::fflush(stdout);
    if (a.iterate <= 0) return 0;
    std::printf("\n");
    sleep(static_cast<unsigned>(a.iterate));
    o.now = SystemClock::Get().Now();
  }
}

}  // namespace corral::cli::internal
