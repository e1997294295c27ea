// squeue, sinfo, sacct, scontrol and scancel on top of Corral's API. The text they print
// comes from the pure renderers in cli/slurm/; this file reads options, asks the controller
// and filters.
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "api/auth.h"
#include "api/json_codec.h"
#include "cli/internal/slurm_cli.h"
#include "cli/slurm/begin_time.h"
#include "cli/slurm/job_ids.h"
#include "cli/slurm/option_values.h"
#include "cli/slurm/sacct.h"
#include "cli/slurm/scontrol.h"
#include "cli/slurm/sinfo.h"
#include "cli/slurm/squeue.h"
#include "core/clock.h"
#include "core/duration.h"
#include "core/hostlist.h"
#include "core/strings.h"

namespace corral::cli::internal {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// A user name, or a numeric uid resolved to one (as Slurm's -u takes both).
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

std::string Me() { return api::CurrentProcessIdentity().user; }

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Scans `argc/argv` with getopt_long (argv[0] is the command). Calls `on(opt, optarg)` for
// each option; returns the remaining operands, or false after printing getopt's error.
bool Scan(int argc, char** argv, const char* shorts, const option* longs,
          const std::function<bool(int, const char*)>& on, std::vector<std::string>* operands,
          const std::string& prog) {
  optind = 0;
  opterr = 0;
  std::string optstring = std::string(":") + shorts;
  while (true) {
    int c = getopt_long(argc, argv, optstring.c_str(), longs, nullptr);
    if (c == -1) break;
    if (c == '?' || c == ':') {
      std::string bad = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
      if (c == ':') {
        std::fprintf(stderr, "%s: option '%s' requires an argument\n", prog.c_str(), bad.c_str());
      } else if (optopt != 0 && bad.rfind("--", 0) != 0) {
        std::fprintf(stderr, "%s: invalid option -- '%c'\n", prog.c_str(), optopt);
      } else {
        std::fprintf(stderr, "%s: unrecognized option '%s'\n", prog.c_str(), bad.c_str());
      }
      std::fprintf(stderr, "Try \"%s --help\" for more information\n", prog.c_str());
      return false;
    }
    if (!on(c, optarg)) return false;
  }
  for (int i = optind; i < argc; ++i) operands->push_back(argv[i]);
  return true;
}

// -t/--states of squeue and scancel: names or short codes, any case; "all" = every state.
Result<std::vector<JobState>> ParseStates(const std::vector<std::string>& names, bool* all) {
  std::vector<JobState> out;
  for (const auto& n : names) {
    if (Lower(n) == "all") {
      *all = true;
      continue;
    }
    auto st = ParseJobState(n);
    if (!st) return InvalidArgument("Invalid job state specified: " + n);
    out.push_back(*st);
  }
  return out;
}

std::vector<std::string> StateNames(const std::vector<JobState>& states) {
  std::vector<std::string> out;
  for (JobState s : states) out.emplace_back(JobStateName(s));
  return out;
}

// ---------------------------------------------------------------------------------------------
// squeue

void SqueueUsage() {
  std::printf(
      "Usage: squeue [-A account] [-i seconds] [--job jobid]\n"
      "              [-n name] [-o format] [-O fields] [-p partitions] [--qos qos]\n"
      "              [--start] [--sort fields] [-t states] [-u user_name] [--usage]\n"
      "              [-w nodes] [--me] [-ahlrvV]\n"
      "Corral's squeue: docs/slurm.md\n");
}

}  // namespace

int RunSqueue(int argc, char** argv) {
  const std::string prog = "squeue";
  enum { kMe = 1000, kStart, kUsage, kHelp, kJson, kSort };
  const option longs[] = {{"account", required_argument, nullptr, 'A'},
                          {"all", no_argument, nullptr, 'a'},
                          {"array", no_argument, nullptr, 'r'},
                          {"noheader", no_argument, nullptr, 'h'},
                          {"help", no_argument, nullptr, kHelp},
                          {"iterate", required_argument, nullptr, 'i'},
                          {"jobs", optional_argument, nullptr, 'j'},
                          {"job", optional_argument, nullptr, 'j'},
                          {"long", no_argument, nullptr, 'l'},
                          {"name", required_argument, nullptr, 'n'},
                          {"me", no_argument, nullptr, kMe},
                          {"format", required_argument, nullptr, 'o'},
                          {"Format", required_argument, nullptr, 'O'},
                          {"partition", required_argument, nullptr, 'p'},
                          {"qos", required_argument, nullptr, 'q'},
                          {"sort", required_argument, nullptr, 'S'},
                          {"start", no_argument, nullptr, kStart},
                          {"states", required_argument, nullptr, 't'},
                          {"state", required_argument, nullptr, 't'},
                          {"user", required_argument, nullptr, 'u'},
                          {"users", required_argument, nullptr, 'u'},
                          {"usage", no_argument, nullptr, kUsage},
                          {"verbose", no_argument, nullptr, 'v'},
                          {"version", no_argument, nullptr, 'V'},
                          {"nodelist", required_argument, nullptr, 'w'},
                          {"json", no_argument, nullptr, kJson},
                          {nullptr, 0, nullptr, 0}};
  slurm::SqueueOptions o;
  o.format = Env("SQUEUE_FORMAT");
  o.long_format = Env("SQUEUE_FORMAT2");
  std::vector<std::string> users = SplitNonEmpty(Env("SQUEUE_USERS"), ',');
  std::vector<std::string> partitions = SplitNonEmpty(Env("SQUEUE_PARTITION"), ',');
  std::vector<std::string> accounts = SplitNonEmpty(Env("SQUEUE_ACCOUNT"), ',');
  std::vector<std::string> state_names = SplitNonEmpty(Env("SQUEUE_STATES"), ',');
  std::vector<std::string> names = SplitNonEmpty(Env("SQUEUE_NAMES"), ',');
  std::vector<std::string> qos, job_args, nodes;
  bool jobs_given = false, json = false;
  int iterate = 0;
  std::vector<std::string> operands;
  bool ok = Scan(
      argc, argv, "A:ahi:j::ln:o:O:p:q:rS:t:u:vVw:", longs,
      [&](int c, const char* arg) {
        std::string v = arg == nullptr ? "" : arg;
        switch (c) {
          case 'A':
            accounts = SplitNonEmpty(v, ',');
            break;
          case 'h':
            o.no_header = true;
            break;
          case 'i':
            iterate = std::atoi(v.c_str());
            break;
          case 'j':
            jobs_given = true;
            if (!v.empty()) job_args.push_back(v);
            break;
          case 'l':
            o.long_output = true;
            break;
          case 'n':
            names = SplitNonEmpty(v, ',');
            break;
          case kMe:
            users = {Me()};
            break;
          case 'o':
            o.format = v;
            break;
          case 'O':
            o.long_format = v;
            break;
          case 'p':
            partitions = SplitNonEmpty(v, ',');
            break;
          case 'q':
            qos = SplitNonEmpty(v, ',');
            break;
          case 'r':
            o.array_tasks = true;
            break;
          case kStart:
            o.start = true;
            break;
          case 't':
            state_names = SplitNonEmpty(v, ',');
            break;
          case 'u':
            users.clear();
            for (auto& u : SplitNonEmpty(v, ',')) users.push_back(UserName(u));
            break;
          case 'w': {
            auto hosts = ExpandHostList(v);
            if (!hosts) {
              PrintError(prog, "Invalid node name specified: " + v);
              return false;
            }
            nodes = *hosts;
            break;
          }
          case 'V':
            std::printf("slurm 22.05.8 (corral 0.1.0)\n");
            std::exit(0);
          case kHelp:
          case kUsage:
            SqueueUsage();
            std::exit(0);
          case kJson:
            json = true;
            break;
          default:
            break;  // -a, -S, -v: accepted
        }
        return true;
      },
      &operands, prog);
  if (!ok) return 1;
  // `squeue -j 12 13` takes the ids as operands too.
  if (jobs_given) job_args.insert(job_args.end(), operands.begin(), operands.end());
  std::vector<slurm::JobIdSpec> ids;
  for (const auto& a : job_args) {
    auto parsed = slurm::ParseJobIdList(a);
    if (!parsed) {
      PrintError(prog, "Invalid job id: " + a);
      return 1;
    }
    ids.insert(ids.end(), parsed->begin(), parsed->end());
  }
  bool all_states = false;
  auto states = ParseStates(state_names, &all_states);
  if (!states) {
    PrintError(prog, states.error().message);
    return 1;
  }
  // Default: pending and running jobs, or, with -j, the named jobs in any state.
  if (states->empty() && !all_states && ids.empty())
    *states = {JobState::kPending, JobState::kRunning};
  if (o.start) *states = {JobState::kPending};

  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  o.now = SystemClock::Get().Now();
  o.utc_offset_seconds = LocalUtcOffset();
  o.group_name = GroupName;
  while (true) {
    Result<std::vector<api::JobInfo>> jobs = std::vector<api::JobInfo>{};
    if (!ids.empty()) {
      std::vector<std::string> missing;
      jobs = ResolveJobIds(*client, ids, &missing);
      if (jobs && jobs->empty() && ids.size() == 1) {
        std::fprintf(stderr, "slurm_load_jobs error: Invalid job id specified\n");
        return 1;
      }
    } else {
      JobListQuery q;
      q.users = users;
      q.partitions = partitions;
      q.accounts = accounts;
      q.states = StateNames(*states);
      jobs = client->ListJobs(q);
    }
    if (!jobs) {
      PrintError(prog, jobs.error().message);
      return 1;
    }
    std::vector<api::JobInfo> shown;
    for (auto& info : *jobs) {
      const Job& j = info.job;
      if (!users.empty() && !Contains(users, j.spec.user)) continue;
      if (!accounts.empty() && !Contains(accounts, j.spec.account)) continue;
      if (!partitions.empty() && !Contains(partitions, j.partition)) continue;
      if (!names.empty() && !Contains(names, j.spec.name)) continue;
      if (!qos.empty() && !Contains(qos, j.spec.qos)) continue;
      if (!states->empty() && std::find(states->begin(), states->end(), j.state) == states->end())
        continue;
      if (!nodes.empty()) {
        bool on = false;
        for (const auto& n : j.allocation.nodes) on = on || Contains(nodes, n.node_name);
        if (!on || j.state != JobState::kRunning) continue;
      }
      shown.push_back(std::move(info));
    }
    if (json) {
      std::printf("%s\n", api::EncodeJobInfoList(shown).c_str());
    } else {
      slurm::RenderResult r = slurm::RenderSqueue(shown, o);
      for (const auto& w : r.warnings) std::fprintf(stderr, "%s\n", w.c_str());
      std::fputs(r.text.c_str(), stdout);
    }
    std::fflush(stdout);
    if (iterate <= 0) return 0;
    std::printf("\n");
    sleep(static_cast<unsigned>(iterate));
    o.now = SystemClock::Get().Now();
  }
}

// ---------------------------------------------------------------------------------------------
// sinfo

namespace {

bool NodeStateMatches(const api::NodeInfo& n, const std::string& wanted) {
  std::string w = Lower(wanted);
  if (!w.empty() && w.back() == '*') w.pop_back();
  switch (n.state) {
    case NodeState::kIdle:
      return w == "idle";
    case NodeState::kMixed:
      return w == "mix" || w == "mixed";
    case NodeState::kAllocated:
      return w == "alloc" || w == "allocated";
    case NodeState::kDraining:
      return w == "drng" || w == "draining" || w == "drain";
    case NodeState::kDrained:
      return w == "drain" || w == "drained";
    case NodeState::kDown:
      return w == "down";
    case NodeState::kPoweredDown:
      return w == "powered_down" || w == "power_down" || w == "powerdown";
    case NodeState::kUnknown:
      return w == "unk" || w == "unknown";
  }
  return false;
}

}  // namespace

int RunSinfo(int argc, char** argv) {
  const std::string prog = "sinfo";
  enum { kUsage = 1000, kHelp, kJson };
  const option longs[] = {
      {"all", no_argument, nullptr, 'a'},          {"dead", no_argument, nullptr, 'd'},
      {"exact", no_argument, nullptr, 'e'},        {"noheader", no_argument, nullptr, 'h'},
      {"help", no_argument, nullptr, kHelp},       {"iterate", required_argument, nullptr, 'i'},
      {"long", no_argument, nullptr, 'l'},         {"Node", no_argument, nullptr, 'N'},
      {"nodes", required_argument, nullptr, 'n'},  {"format", required_argument, nullptr, 'o'},
      {"Format", required_argument, nullptr, 'O'}, {"partition", required_argument, nullptr, 'p'},
      {"responding", no_argument, nullptr, 'r'},   {"list-reasons", no_argument, nullptr, 'R'},
      {"summarize", no_argument, nullptr, 's'},    {"sort", required_argument, nullptr, 'S'},
      {"states", required_argument, nullptr, 't'}, {"usage", no_argument, nullptr, kUsage},
      {"verbose", no_argument, nullptr, 'v'},      {"version", no_argument, nullptr, 'V'},
      {"json", no_argument, nullptr, kJson},       {nullptr, 0, nullptr, 0}};
  slurm::SinfoOptions o;
  o.format = Env("SINFO_FORMAT");
  std::vector<std::string> partitions = SplitNonEmpty(Env("SINFO_PARTITION"), ',');
  std::vector<std::string> node_filter, states;
  bool responding = false, dead = false, json = false;
  std::vector<std::string> operands;
  bool ok = Scan(
      argc, argv, "adehi:lNn:o:O:p:rRsS:t:vV", longs,
      [&](int c, const char* arg) {
        std::string v = arg == nullptr ? "" : arg;
        switch (c) {
          case 'd':
            dead = true;
            break;
          case 'h':
            o.no_header = true;
            break;
          case 'l':
            o.long_output = true;
            break;
          case 'N':
            o.node_oriented = true;
            break;
          case 'n': {
            auto hosts = ExpandHostList(v);
            if (!hosts) {
              PrintError(prog, "Invalid node name specified: " + v);
              return false;
            }
            node_filter = *hosts;
            break;
          }
          case 'o':
            o.format = v;
            break;
          case 'O':
            o.long_format = v;
            break;
          case 'p':
            partitions = SplitNonEmpty(v, ',');
            break;
          case 'r':
            responding = true;
            break;
          case 'R':
            o.list_reasons = true;
            break;
          case 's':
            o.summarize = true;
            break;
          case 't':
            states = SplitNonEmpty(v, ',');
            break;
          case 'V':
            std::printf("slurm 22.05.8 (corral 0.1.0)\n");
            std::exit(0);
          case kHelp:
          case kUsage:
            std::printf(
                "Usage: sinfo [-adelNRrsv] [-i seconds] [-t states] [-p partition] [-n nodes]\n"
                "             [-S fields] [-o format] [-O Format]\n");
            std::exit(0);
          case kJson:
            json = true;
            break;
          default:
            break;
        }
        return true;
      },
      &operands, prog);
  if (!ok) return 1;
  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  auto parts = client->ListPartitions();
  if (!parts) {
    PrintError(prog, parts.error().message);
    return 1;
  }
  auto nodes = client->ListNodes();
  if (!nodes) {
    PrintError(prog, nodes.error().message);
    return 1;
  }
  if (json) {
    std::printf("%s\n", api::EncodeNodeInfoList(*nodes).c_str());
    return 0;
  }
  std::vector<api::PartitionInfo> shown_parts;
  for (const auto& p : *parts) {
    if (partitions.empty() || Contains(partitions, p.partition.name)) shown_parts.push_back(p);
  }
  std::vector<api::NodeInfo> shown_nodes;
  for (const auto& n : *nodes) {
    const std::string& name = n.node.inventory.name;
    if (!node_filter.empty() && !Contains(node_filter, name)) continue;
    if (responding && !n.node.responding) continue;
    if (dead && n.node.responding) continue;
    if (!states.empty() && std::none_of(states.begin(), states.end(), [&](const std::string& s) {
          return NodeStateMatches(n, s);
        })) {
      continue;
    }
    shown_nodes.push_back(n);
  }
  o.now = SystemClock::Get().Now();
  o.utc_offset_seconds = LocalUtcOffset();
  slurm::RenderResult r = slurm::RenderSinfo(shown_parts, shown_nodes, o);
  for (const auto& w : r.warnings) std::fprintf(stderr, "%s\n", w.c_str());
  std::fputs(r.text.c_str(), stdout);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// sacct

int RunSacct(int argc, char** argv) {
  const std::string prog = "sacct";
  enum { kDelimiter = 1000, kName, kHelp, kUsage, kJson };
  const option longs[] = {{"allusers", no_argument, nullptr, 'a'},
                          {"accounts", required_argument, nullptr, 'A'},
                          {"brief", no_argument, nullptr, 'b'},
                          {"duplicates", no_argument, nullptr, 'D'},
                          {"endtime", required_argument, nullptr, 'E'},
                          {"helpformat", no_argument, nullptr, 'e'},
                          {"jobs", required_argument, nullptr, 'j'},
                          {"long", no_argument, nullptr, 'l'},
                          {"allclusters", no_argument, nullptr, 'L'},
                          {"noheader", no_argument, nullptr, 'n'},
                          {"nodelist", required_argument, nullptr, 'N'},
                          {"name", required_argument, nullptr, kName},
                          {"format", required_argument, nullptr, 'o'},
                          {"parsable", no_argument, nullptr, 'p'},
                          {"parsable2", no_argument, nullptr, 'P'},
                          {"delimiter", required_argument, nullptr, kDelimiter},
                          {"partition", required_argument, nullptr, 'r'},
                          {"state", required_argument, nullptr, 's'},
                          {"starttime", required_argument, nullptr, 'S'},
                          {"truncate", no_argument, nullptr, 'T'},
                          {"user", required_argument, nullptr, 'u'},
                          {"uid", required_argument, nullptr, 'u'},
                          {"allocations", no_argument, nullptr, 'X'},
                          {"help", no_argument, nullptr, kHelp},
                          {"usage", no_argument, nullptr, kUsage},
                          {"version", no_argument, nullptr, 'V'},
                          {"verbose", no_argument, nullptr, 'v'},
                          {"json", no_argument, nullptr, kJson},
                          {nullptr, 0, nullptr, 0}};
  slurm::SacctOptions o;
  o.format = Env("SACCT_FORMAT");
  std::vector<std::string> users, accounts, job_args, names, partitions, state_names, nodes;
  std::string start_text, end_text;
  bool all_users = false, json = false;
  std::vector<std::string> operands;
  bool ok = Scan(
      argc, argv, "aA:bDE:ej:lLnN:o:pPr:s:S:Tu:XvV", longs,
      [&](int c, const char* arg) {
        std::string v = arg == nullptr ? "" : arg;
        switch (c) {
          case 'a':
            all_users = true;
            break;
          case 'A':
            accounts = SplitNonEmpty(v, ',');
            break;
          case 'b':
            o.format = "JobID,State,ExitCode";
            break;
          case 'E':
            end_text = v;
            break;
          case 'e':
            std::printf(
                "Account AllocCPUS AllocGRES AllocNodes AllocTRES Comment Constraints\n"
                "ConsumedEnergy ConsumedEnergyRaw CPUTime CPUTimeRAW DerivedExitCode Elapsed\n"
                "ElapsedRaw Eligible End ExitCode GID Group JobID JobIDRaw JobName MaxRSS NCPUS\n"
                "NNodes NodeList NTasks Priority Partition QOS Reason ReqCPUS ReqGRES ReqMem\n"
                "ReqNodes ReqTRES Reservation Start State Submit Timelimit TimelimitRaw TotalCPU\n"
                "UID User WorkDir\n");
            std::exit(0);
          case 'j':
            job_args.push_back(v);
            break;
          case 'l':
            o.format =
                "JobID,JobIDRaw,JobName,Partition,MaxRSS,NTasks,AllocCPUS,TotalCPU,Elapsed,State,"
                "ExitCode,ReqCPUS,ReqMem,ReqTRES,AllocTRES,NNodes,NodeList,ConsumedEnergy";
            break;
          case 'n':
            o.no_header = true;
            break;
          case 'N': {
            auto hosts = ExpandHostList(v);
            if (!hosts) {
              PrintError(prog, "Invalid node list: " + v);
              return false;
            }
            nodes = *hosts;
            break;
          }
          case kName:
            names = SplitNonEmpty(v, ',');
            break;
          case 'o':
            o.format = v;
            break;
          case 'p':
            o.parsable = true;
            break;
          case 'P':
            o.parsable2 = true;
            break;
          case kDelimiter:
            o.delimiter = v;
            break;
          case 'r':
            partitions = SplitNonEmpty(v, ',');
            break;
          case 's':
            state_names = SplitNonEmpty(v, ',');
            break;
          case 'S':
            start_text = v;
            break;
          case 'u':
            users.clear();
            for (auto& u : SplitNonEmpty(v, ',')) users.push_back(UserName(u));
            break;
          case 'X':
            o.allocations = true;
            break;
          case 'V':
            std::printf("slurm 22.05.8 (corral 0.1.0)\n");
            std::exit(0);
          case kHelp:
          case kUsage:
            std::printf(
                "Usage: sacct [-abDeXLnPpX] [-j jobs] [-u users] [-A accounts] [-S start] [-E "
                "end]\n"
                "             [-s states] [-r partitions] [-N nodes] [--name names] [-o fields]\n");
            std::exit(0);
          case kJson:
            json = true;
            break;
          default:
            break;  // -D, -L, -T, -v: accepted
        }
        return true;
      },
      &operands, prog);
  if (!ok) return 1;
  std::vector<slurm::JobIdSpec> ids;
  for (const auto& a : job_args) {
    auto parsed = slurm::ParseJobIdList(a);
    if (!parsed) {
      PrintError(prog, "Invalid job id: " + a);
      return 1;
    }
    ids.insert(ids.end(), parsed->begin(), parsed->end());
  }
  bool all_states = false;
  auto states = ParseStates(state_names, &all_states);
  if (!states) {
    PrintError(prog, states.error().message);
    return 1;
  }
  Timestamp now = SystemClock::Get().Now();
  int64_t offset = LocalUtcOffset();
  // Default window: since today's midnight (since ever with -j), until now.
  Timestamp from{}, until{};
  if (!start_text.empty()) {
    auto t = slurm::ParsePastTime(start_text, now, offset);
    if (!t) {
      PrintError(prog, t.error().message);
      return 1;
    }
    from = *t;
  } else if (ids.empty()) {
    from = *slurm::ParsePastTime("today", now, offset);
  }
  if (!end_text.empty()) {
    auto t = slurm::ParsePastTime(end_text, now, offset);
    if (!t) {
      PrintError(prog, t.error().message);
      return 1;
    }
    until = *t;
  }
  // As Slurm's sacct for a non-administrator: one's own jobs unless -a or -u.
  if (users.empty() && !all_users) users = {Me()};

  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  Result<std::vector<api::JobInfo>> jobs = std::vector<api::JobInfo>{};
  if (!ids.empty()) {
    jobs = ResolveJobIds(*client, ids, nullptr);
  } else {
    JobListQuery q;
    q.all = true;
    q.users = users;
    q.accounts = accounts;
    q.partitions = partitions;
    q.active_from = from;
    q.active_until = until;
    jobs = client->ListJobs(q);
  }
  if (!jobs) {
    PrintError(prog, jobs.error().message);
    return 1;
  }
  std::vector<api::JobInfo> shown;
  for (auto& info : *jobs) {
    const Job& j = info.job;
    if (ids.empty() && !users.empty() && !Contains(users, j.spec.user)) continue;
    if (!names.empty() && !Contains(names, j.spec.name)) continue;
    if (!states->empty() && std::find(states->begin(), states->end(), j.state) == states->end())
      continue;
    if (!nodes.empty()) {
      bool on = false;
      for (const auto& n : j.allocation.nodes) on = on || Contains(nodes, n.node_name);
      if (!on) continue;
    }
    shown.push_back(std::move(info));
  }
  if (json) {
    std::printf("%s\n", api::EncodeJobInfoList(shown).c_str());
    return 0;
  }
  o.now = now;
  o.utc_offset_seconds = offset;
  o.group_name = GroupName;
  auto r = slurm::RenderSacct(shown, o);
  if (!r) {
    PrintError(prog, r.error().message);
    return 1;
  }
  for (const auto& w : r->warnings) std::fprintf(stderr, "%s\n", w.c_str());
  std::fputs(r->text.c_str(), stdout);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// scontrol

namespace {

// Parses the ids of `scontrol requeue|hold|release ID[,ID...]` (several arguments too) and
// applies `action` to every job they name. Returns the exit status.
int ForEachNamedJob(Client& client, const std::vector<std::string>& args, const std::string& verb,
                    const std::function<Status(JobId)>& action) {
  if (args.empty()) {
    std::fprintf(stderr, "scontrol: error: Invalid job id specified\n");
    return 1;
  }
  std::vector<slurm::JobIdSpec> ids;
  for (const auto& a : args) {
    std::string text = a;
    if (Lower(text.substr(0, 6)) == "jobid=") text = text.substr(6);
    auto parsed = slurm::ParseJobIdList(text);
    if (!parsed) {
      std::fprintf(stderr, "scontrol: error: Invalid job id specified\n");
      return 1;
    }
    ids.insert(ids.end(), parsed->begin(), parsed->end());
  }
  std::vector<std::string> missing;
  auto jobs = ResolveJobIds(client, ids, &missing);
  if (!jobs) {
    PrintError("scontrol", jobs.error().message);
    return 1;
  }
  int status = 0;
  for (const auto& m : missing) {
    std::fprintf(stderr, "%s error: Invalid job id specified for job %s\n", verb.c_str(),
                 m.c_str());
    status = 1;
  }
  for (const auto& info : *jobs) {
    if (Status s = action(info.job.id); !s) {
      std::fprintf(stderr, "%s error: %s\n", verb.c_str(), s.error().message.c_str());
      status = 1;
    }
  }
  return status;
}

// `scontrol update JobId=12 TimeLimit=1:00:00` (also "+30" / "-30" minutes relative to now).
int ScontrolUpdate(Client& client, const std::vector<std::string>& args) {
  std::string job_text, limit;
  bool has_limit = false;
  for (const auto& a : args) {
    size_t eq = a.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "scontrol: error: Invalid input: %s\n", a.c_str());
      return 1;
    }
    std::string key = Lower(a.substr(0, eq)), value = a.substr(eq + 1);
    if (key == "jobid" || key == "job") {
      job_text = value;
    } else if (key == "timelimit") {
      limit = value;
      has_limit = true;
    } else {
      std::fprintf(stderr, "scontrol: error: Update of %s is not supported by Corral\n",
                   a.substr(0, eq).c_str());
      return 1;
    }
  }
  if (job_text.empty()) {
    std::fprintf(stderr, "scontrol: error: No job specified (JobId=...)\n");
    return 1;
  }
  if (!has_limit) {
    std::fprintf(stderr, "scontrol: error: Nothing to update\n");
    return 1;
  }
  return ForEachNamedJob(client, {job_text}, "slurm_update", [&](JobId id) -> Status {
    std::string value = limit;
    if (!value.empty() && (value[0] == '+' || value[0] == '-')) {
      // Relative to the current limit, as Slurm's TimeLimit=+MINUTES.
      auto delta = ParseSlurmDuration(value.substr(1));
      if (!delta) return InvalidArgument("Invalid TimeLimit: " + limit);
      CORRAL_ASSIGN_OR_RETURN(api::JobInfo info, client.GetJob(id));
      Duration current = info.job.time_limit;
      if (current == kUnlimited)
        return InvalidArgument("job " + id.ToString() + " has no time limit");
      Duration next = value[0] == '+' ? current + *delta : current - std::min(current, *delta);
      value = std::to_string(std::chrono::duration_cast<std::chrono::seconds>(next).count() / 60);
    } else if (!ParseSlurmDuration(value)) {
      return InvalidArgument("Invalid TimeLimit: " + limit);
    }
    return client.UpdateTimeLimit(id, value);
  });
}

void ScontrolUsage() {
  std::printf(
      "Usage: scontrol [-o] COMMAND\n"
      "  show job [ID] | show node [NAME] | show partition [NAME]\n"
      "  show hostnames [LIST] | show hostlist LIST | show hostlistsorted LIST\n"
      "  requeue ID... | hold ID... | release ID... | update JobId=ID TimeLimit=TIME\n"
      "Corral's scontrol: docs/slurm.md\n");
}

}  // namespace

int RunScontrol(int argc, char** argv) {
  const std::string prog = "scontrol";
  enum { kHelp = 1000, kJson, kUsage };
  const option longs[] = {
      {"oneliner", no_argument, nullptr, 'o'}, {"details", no_argument, nullptr, 'd'},
      {"quiet", no_argument, nullptr, 'Q'},    {"verbose", no_argument, nullptr, 'v'},
      {"version", no_argument, nullptr, 'V'},  {"help", no_argument, nullptr, kHelp},
      {"usage", no_argument, nullptr, kUsage}, {"json", no_argument, nullptr, kJson},
      {"all", no_argument, nullptr, 'a'},      {nullptr, 0, nullptr, 0}};
  slurm::ScontrolOptions o;
  bool json = false;
  std::vector<std::string> words;
  // scontrol's options may come anywhere ("scontrol show job 12 --json").
  std::vector<std::string> args(argv, argv + argc);
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  optind = 0;
  opterr = 0;
  while (true) {
    int c = getopt_long(argc, cargv.data(), ":adoQvVh", longs, nullptr);
    if (c == -1) break;
    switch (c) {
      case 'o':
        o.one_liner = true;
        break;
      case kJson:
        json = true;
        break;
      case 'V':
        std::printf("slurm 22.05.8 (corral 0.1.0)\n");
        return 0;
      case 'h':
      case kHelp:
      case kUsage:
        ScontrolUsage();
        return 0;
      case '?':
      case ':':
        std::fprintf(stderr, "scontrol: unrecognized option '%s'\n",
                     optind > 0 && optind <= argc ? cargv[optind - 1] : "?");
        std::fprintf(stderr, "Try \"scontrol --help\" for more information\n");
        return 1;
      default:
        break;
    }
  }
  for (int i = optind; i < argc; ++i) words.push_back(cargv[i]);
  if (words.empty()) {
    ScontrolUsage();
    return 1;
  }
  std::string verb = Lower(words[0]);
  std::vector<std::string> rest(words.begin() + 1, words.end());

  // Host lists need no controller.
  if (verb == "show" && !rest.empty()) {
    std::string what = Lower(rest[0]);
    if (what == "hostnames" || what == "hostname" || what == "hostlist" ||
        what == "hostlistsorted") {
      std::string list = rest.size() > 1 ? rest[1] : Env("SLURM_JOB_NODELIST");
      if (list.empty()) {
        std::fprintf(stderr, "scontrol: error: host list is empty\n");
        return 1;
      }
      auto out = what.rfind("hostname", 0) == 0
                     ? slurm::ScontrolShowHostnames(list)
                     : slurm::ScontrolShowHostlist(list, what == "hostlistsorted");
      if (!out) {
        std::fprintf(stderr, "scontrol: error: %s\n", out.error().message.c_str());
        return 1;
      }
      std::fputs(out->c_str(), stdout);
      return 0;
    }
  }

  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  o.now = SystemClock::Get().Now();
  o.utc_offset_seconds = LocalUtcOffset();
  o.group_name = GroupName;

  if (verb == "show") {
    if (rest.empty()) {
      std::fprintf(stderr, "scontrol: error: too few arguments for keyword:show\n");
      return 1;
    }
    std::string what = Lower(rest[0]);
    std::string name = rest.size() > 1 ? rest[1] : "";
    if (what == "job" || what == "jobs") {
      Result<std::vector<api::JobInfo>> jobs = std::vector<api::JobInfo>{};
      if (name.empty()) {
        jobs = client->ListJobs({});
      } else {
        auto parsed = slurm::ParseJobIdList(name);
        if (!parsed) {
          std::fprintf(stderr, "scontrol: error: Invalid job id specified\n");
          return 1;
        }
        jobs = ResolveJobIds(*client, *parsed, nullptr);
        if (jobs && jobs->empty()) {
          std::fprintf(stderr, "slurm_load_jobs error: Invalid job id specified\n");
          return 1;
        }
      }
      if (!jobs) {
        PrintError(prog, jobs.error().message);
        return 1;
      }
      if (json) {
        std::printf("%s\n", api::EncodeJobInfoList(*jobs).c_str());
      } else if (jobs->empty()) {
        std::printf("No jobs in the system\n");
      } else {
        std::fputs(slurm::RenderScontrolJobs(*jobs, o).c_str(), stdout);
      }
      return 0;
    }
    if (what == "node" || what == "nodes") {
      auto nodes = client->ListNodes();
      if (!nodes) {
        PrintError(prog, nodes.error().message);
        return 1;
      }
      std::vector<api::NodeInfo> shown;
      std::vector<std::string> wanted;
      if (!name.empty()) {
        auto hosts = ExpandHostList(name);
        wanted = hosts ? *hosts : std::vector<std::string>{name};
      }
      for (const auto& n : *nodes) {
        if (wanted.empty() || Contains(wanted, n.node.inventory.name)) shown.push_back(n);
      }
      if (shown.empty() && !name.empty()) {
        std::fprintf(stderr, "Node %s not found\n", name.c_str());
        return 1;
      }
      if (json) {
        std::printf("%s\n", api::EncodeNodeInfoList(shown).c_str());
      } else {
        std::fputs(slurm::RenderScontrolNodes(shown, o).c_str(), stdout);
      }
      return 0;
    }
    if (what == "partition" || what == "partitions") {
      auto parts = client->ListPartitions();
      if (!parts) {
        PrintError(prog, parts.error().message);
        return 1;
      }
      std::vector<api::PartitionInfo> shown;
      for (const auto& p : *parts) {
        if (name.empty() || p.partition.name == name) shown.push_back(p);
      }
      if (shown.empty() && !name.empty()) {
        std::fprintf(stderr, "Partition %s not found\n", name.c_str());
        return 1;
      }
      if (json) {
        std::printf("%s\n", api::EncodePartitionInfoList(shown).c_str());
      } else {
        std::fputs(slurm::RenderScontrolPartitions(shown, o).c_str(), stdout);
      }
      return 0;
    }
    std::fprintf(stderr, "scontrol: error: show %s is not supported by Corral\n", rest[0].c_str());
    return 1;
  }
  if (verb == "requeue") {
    return ForEachNamedJob(*client, rest, "Requeue", [&](JobId id) { return client->Requeue(id); });
  }
  if (verb == "hold" || verb == "uhold") {
    return ForEachNamedJob(*client, rest, "slurm_update",
                           [&](JobId id) { return client->Hold(id, true); });
  }
  if (verb == "release") {
    return ForEachNamedJob(*client, rest, "slurm_update",
                           [&](JobId id) { return client->Hold(id, false); });
  }
  if (verb == "update") return ScontrolUpdate(*client, rest);
  std::fprintf(stderr, "scontrol: error: %s is not supported by Corral\n", words[0].c_str());
  return 1;
}

// ---------------------------------------------------------------------------------------------
// scancel

namespace {

// A signal by number or name ("USR1", "SIGUSR1"). Returns 0 when unknown.
int SignalNumber(const std::string& text) {
  if (!text.empty() && std::all_of(text.begin(), text.end(), ::isdigit))
    return std::atoi(text.c_str());
  auto spec = slurm::ParseSignalSpec(text);
  return spec ? spec->signal : 0;
}

}  // namespace

int RunScancel(int argc, char** argv) {
  const std::string prog = "scancel";
  enum { kMe = 1000, kHelp, kUsage };
  const option longs[] = {{"account", required_argument, nullptr, 'A'},
                          {"batch", no_argument, nullptr, 'b'},
                          {"full", no_argument, nullptr, 'f'},
                          {"interactive", no_argument, nullptr, 'i'},
                          {"name", required_argument, nullptr, 'n'},
                          {"jobname", required_argument, nullptr, 'n'},
                          {"partition", required_argument, nullptr, 'p'},
                          {"qos", required_argument, nullptr, 'q'},
                          {"quiet", no_argument, nullptr, 'Q'},
                          {"reservation", required_argument, nullptr, 'R'},
                          {"signal", required_argument, nullptr, 's'},
                          {"state", required_argument, nullptr, 't'},
                          {"user", required_argument, nullptr, 'u'},
                          {"verbose", no_argument, nullptr, 'v'},
                          {"version", no_argument, nullptr, 'V'},
                          {"nodelist", required_argument, nullptr, 'w'},
                          {"me", no_argument, nullptr, kMe},
                          {"help", no_argument, nullptr, kHelp},
                          {"usage", no_argument, nullptr, kUsage},
                          {nullptr, 0, nullptr, 0}};
  std::vector<std::string> accounts, names, partitions, qos, state_names, users, nodes;
  std::string signal_text;
  bool quiet = false, verbose = false;
  std::vector<std::string> operands;
  bool ok = Scan(
      argc, argv, "A:bfin:p:q:QR:s:t:u:vVw:", longs,
      [&](int c, const char* arg) {
        std::string v = arg == nullptr ? "" : arg;
        switch (c) {
          case 'A':
            accounts = SplitNonEmpty(v, ',');
            break;
          case 'n':
            names = SplitNonEmpty(v, ',');
            break;
          case 'p':
            partitions = SplitNonEmpty(v, ',');
            break;
          case 'q':
            qos = SplitNonEmpty(v, ',');
            break;
          case 'Q':
            quiet = true;
            break;
          case 's':
            signal_text = v;
            break;
          case 't':
            state_names = SplitNonEmpty(v, ',');
            break;
          case 'u':
            users.clear();
            for (auto& u : SplitNonEmpty(v, ',')) users.push_back(UserName(u));
            break;
          case kMe:
            users = {Me()};
            break;
          case 'v':
            verbose = true;
            break;
          case 'w': {
            auto hosts = ExpandHostList(v);
            if (!hosts) {
              PrintError(prog, "Invalid node list: " + v);
              return false;
            }
            nodes = *hosts;
            break;
          }
          case 'i':
          case 'R':
            std::fprintf(stderr, "scancel: error: option -%c is not supported by Corral\n", c);
            return false;
          case 'V':
            std::printf("slurm 22.05.8 (corral 0.1.0)\n");
            std::exit(0);
          case kHelp:
          case kUsage:
            std::printf(
                "Usage: scancel [-A account] [--batch] [--full] [-n job_name] [-p partition]\n"
                "               [-Q] [-q qos] [-s signal] [-t state] [-u user] [--me] [-v]\n"
                "               [-w hosts] [job_id[_array_id]...]\n");
            std::exit(0);
          default:
            break;  // -b, -f: the signal goes to the batch script's process group
        }
        return true;
      },
      &operands, prog);
  if (!ok) return 1;
  int signal = 0;
  if (!signal_text.empty()) {
    signal = SignalNumber(signal_text);
    if (signal <= 0) {
      PrintError(prog, "Invalid job signal: " + signal_text);
      return 1;
    }
  }
  bool all_states = false;
  auto states = ParseStates(state_names, &all_states);
  if (!states) {
    PrintError(prog, states.error().message);
    return 1;
  }
  std::vector<slurm::JobIdSpec> ids;
  for (const auto& a : operands) {
    auto parsed = slurm::ParseJobIdList(a);
    if (!parsed) {
      PrintError(prog, "Invalid job id " + a);
      return 1;
    }
    ids.insert(ids.end(), parsed->begin(), parsed->end());
  }
  bool filtered = !accounts.empty() || !names.empty() || !partitions.empty() || !qos.empty() ||
                  !states->empty() || !users.empty() || !nodes.empty();
  if (ids.empty() && !filtered) {
    PrintError(prog, "No job identification provided");
    return 1;
  }
  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  std::vector<std::string> missing;
  Result<std::vector<api::JobInfo>> jobs = std::vector<api::JobInfo>{};
  if (!ids.empty()) {
    jobs = ResolveJobIds(*client, ids, &missing);
  } else {
    // Filters without ids select among one's own jobs unless -u is given.
    if (users.empty()) users = {Me()};
    JobListQuery q;
    q.users = users;
    q.states = StateNames(*states);
    if (q.states.empty()) q.states = {"PENDING", "RUNNING"};
    jobs = client->ListJobs(q);
  }
  if (!jobs) {
    PrintError(prog, jobs.error().message);
    return 1;
  }
  int status = 0;
  for (const auto& m : missing) {
    std::fprintf(stderr, "scancel: error: Kill job error on job id %s: Invalid job id specified\n",
                 m.c_str());
    status = 1;
  }
  for (const auto& info : *jobs) {
    const Job& j = info.job;
    if (IsTerminal(j.state) && !ids.empty()) {
      // Slurm reports a finished job only when named: "Job/step already completing or completed".
      if (!quiet) {
        std::fprintf(stderr,
                     "scancel: error: Kill job error on job id %s: Job/step already completing or "
                     "completed\n",
                     j.id.ToString().c_str());
      }
      status = 1;
      continue;
    }
    if (IsTerminal(j.state)) continue;
    if (!users.empty() && !Contains(users, j.spec.user)) continue;
    if (!accounts.empty() && !Contains(accounts, j.spec.account)) continue;
    if (!names.empty() && !Contains(names, j.spec.name)) continue;
    if (!partitions.empty() && !Contains(partitions, j.partition)) continue;
    if (!qos.empty() && !Contains(qos, j.spec.qos)) continue;
    if (!states->empty() && std::find(states->begin(), states->end(), j.state) == states->end())
      continue;
    if (!nodes.empty()) {
      bool on = false;
      for (const auto& n : j.allocation.nodes) on = on || Contains(nodes, n.node_name);
      if (!on) continue;
    }
    if (verbose) {
      std::fprintf(stderr, "scancel: %s job %s\n", signal != 0 ? "Signalling" : "Terminating",
                   j.id.ToString().c_str());
    }
    Status s =
        signal != 0 && signal != SIGKILL ? client->Signal(j.id, signal) : client->Cancel(j.id);
    if (!s) {
      if (!quiet) {
        std::fprintf(stderr, "scancel: error: Kill job error on job id %s: %s\n",
                     j.id.ToString().c_str(), s.error().message.c_str());
      }
      status = 1;
    }
  }
  return status;
}

}  // namespace corral::cli::internal
