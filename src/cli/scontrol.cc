// `scontrol` on top of Corral's API: show job|node|partition|hostnames|hostlist, requeue,
// hold, release and update TimeLimit, with its options from one table; the text comes from
// the renderers of cli/slurm/scontrol.h.
#include "cli/slurm/scontrol.h"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "api/json_codec.h"
#include "cli/internal/query_common.h"
#include "core/clock.h"
#include "core/duration.h"
#include "core/hostlist.h"
#include "core/strings.h"

namespace corral::cli::internal {
namespace {

using A = ScontrolArgs;
using slurm::ArgKind;
using slurm::SetTrue;

constexpr const char* kUsage =
    "Usage: scontrol [-o] COMMAND\n"
    "  show job [ID] | show node [NAME] | show partition [NAME]\n"
    "  show hostnames [LIST] | show hostlist LIST | show hostlistsorted LIST\n"
    "  requeue ID... | hold ID... | release ID... | update JobId=ID TimeLimit=TIME\n"
    "  update NodeName=LIST State=DRAIN|RESUME|UNDRAIN [Reason=TEXT]\n"
    "  suspend ID... | resume ID... | top ID...   (operators and admins)\n"
    "Corral's scontrol: docs/slurm.md\n";

constexpr ArgKind kNone = ArgKind::kNone;

constexpr slurm::CommandOption<A> kOptions[] = {
    {"oneliner", 'o', kNone, SetTrue<&A::render, &slurm::ScontrolOptions::one_liner>, nullptr,
     "each record on one line"},
    {"details", 'd', kNone, slurm::Accept<A>, nullptr, "(accepted)"},
    {"quiet", 'Q', kNone, slurm::Accept<A>, nullptr, "(accepted)"},
    {"verbose", 'v', kNone, slurm::Accept<A>, nullptr, "(accepted)"},
    kVersionOption<A>,
    {.name = "help", .letter = 'h', .apply = SetHelp<A>, .help = "this help", .stops = true},
    kUsageOption<A>,
    kJsonOption<A>,
    {"all", 'a', kNone, slurm::Accept<A>, nullptr, "(accepted: every partition is shown)"},
};
static_assert(slurm::EveryOptionHasAHandler(kOptions));

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

// Slurm's words for why a suspend, resume or top of one job failed ("... for job 12").
std::string JobVerbErrorText(const Error& e) {
  switch (e.code) {
    case ErrorCode::kPermissionDenied:
    case ErrorCode::kUnauthenticated:
      return "Access/permission denied";
    case ErrorCode::kNotFound:
      return "Invalid job id specified";
    case ErrorCode::kFailedPrecondition:
      if (e.message.ends_with(": pending")) return "Job is pending execution";
      if (e.message.ends_with(": not suspended")) return "Job is not suspended";
      if (e.message.ends_with(": not pending")) return "Job is no longer pending execution";
      return "Job/step already completing or completed";
    default:
      return e.message;
  }
}

// `scontrol suspend|resume|top ID[,ID...] [ID...]`: `action` on each job in turn (for top,
// the last first, so that the first named ends on top, as in Slurm); an error names the job
// and does not stop the rest. Returns the exit status.
int ScontrolJobVerb(Client& client, const std::vector<std::string>& args, const std::string& verb,
                    const std::function<Status(JobId)>& action) {
  if (args.empty()) {
    std::fprintf(stderr, "too few arguments for keyword:%s\n", verb.c_str());
    return 1;
  }
  int status = 0;
  std::vector<JobId> ids;
  for (const auto& a : args) {
    auto parsed = slurm::ParseJobIdList(a);
    if (!parsed) {
      std::fprintf(stderr, "Invalid job id specified for job %s\n", a.c_str());
      status = 1;
      continue;
    }
    std::vector<std::string> missing;
    auto jobs = ResolveJobIds(client, *parsed, &missing);
    if (!jobs) {
      PrintError("scontrol", jobs.error().message);
      return 1;
    }
    for (const auto& m : missing) {
      std::fprintf(stderr, "Invalid job id specified for job %s\n", m.c_str());
      status = 1;
    }
    for (const auto& info : *jobs) ids.push_back(info.job.id);
  }
  if (verb == "top") std::reverse(ids.begin(), ids.end());
  for (JobId id : ids) {
    if (Status s = action(id); !s) {
      std::fprintf(stderr, "%s for job %s\n", JobVerbErrorText(s.error()).c_str(),
                   id.ToString().c_str());
      status = 1;
    }
  }
  return status;
}

// `scontrol update NodeName=LIST State=DRAIN|RESUME|UNDRAIN [Reason=TEXT]`, as Slurm: DRAIN
// needs a reason; RESUME and UNDRAIN return a drained node to service. Other states and
// fields are refused by name.
int ScontrolUpdateNodes(Client& client, const std::vector<std::string>& args) {
  std::string nodes, state, reason;
  for (const auto& a : args) {
    size_t eq = a.find('=');
    std::string key = Lower(a.substr(0, eq)),
                value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (key == "nodename" || key == "node") {
      nodes = value;
    } else if (key == "state") {
      state = Upper(value);
    } else if (key == "reason") {
      reason = value;
    } else {
      std::fprintf(stderr, "scontrol: error: Update of node %s is not supported by Corral\n",
                   a.substr(0, eq).c_str());
      return 1;
    }
  }
  auto names = ExpandHostList(nodes, 100000);
  if (!names || names->empty()) {
    std::fprintf(stderr, "scontrol: error: Invalid node name specified: %s\n", nodes.c_str());
    return 1;
  }
  if (state.empty()) {
    std::fprintf(stderr, "scontrol: error: Nothing to update\n");
    return 1;
  }
  const bool drain = state == "DRAIN";
  if (!drain && state != "RESUME" && state != "UNDRAIN") {
    std::fprintf(stderr,
                 "scontrol: error: State=%s is not supported by Corral (DRAIN, RESUME, "
                 "UNDRAIN)\n",
                 state.c_str());
    return 1;
  }
  if (drain && reason.empty()) {
    std::fprintf(stderr,
                 "You must specify a reason when DOWNING or DRAINING a node. Request denied\n");
    return 1;
  }
  int status = 0;
  for (const std::string& n : *names) {
    Status s = drain ? client.Drain(n, reason) : client.Resume(n);
    if (!s) {
      std::fprintf(stderr, "slurm_update error: %s\n", s.error().message.c_str());
      status = 1;
    }
  }
  return status;
}

// `scontrol update JobId=12 TimeLimit=1:00:00` (also "+30" / "-30" minutes relative to now).
int ScontrolUpdate(Client& client, const std::vector<std::string>& args) {
  if (!args.empty() &&
      (Lower(args[0]).rfind("nodename=", 0) == 0 || Lower(args[0]).rfind("node=", 0) == 0)) {
    return ScontrolUpdateNodes(client, args);
  }
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

}  // namespace

std::span<const slurm::CommandOption<ScontrolArgs>> ScontrolOptionTable() { return kOptions; }

int RunScontrol(int argc, char** argv) {
  const std::string prog = "scontrol";
  ScontrolArgs a;
  slurm::ScontrolOptions& o = a.render;
  slurm::OptionScan scan = slurm::ScanWithTable(ScontrolOptionTable(), Words(argc, argv), ":", a);
  if (scan.failure) {
    std::fprintf(stderr, "scontrol: unrecognized option '%s'\n", scan.failure->last_word.c_str());
    std::fprintf(stderr, "Try \"scontrol --help\" for more information\n");
    return 1;
  }
  if (a.version) {
    PrintVersion();
    return 0;
  }
  if (a.help) {
    std::printf("%s\n%s", kUsage, slurm::TableHelp(ScontrolOptionTable()).c_str());
    return 0;
  }
  const std::vector<std::string>& words = scan.operands;
  if (words.empty()) {
    std::printf("%s", kUsage);
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
      if (Failed(prog, jobs)) return 1;
      if (a.json) {
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
      if (Failed(prog, nodes)) return 1;
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
      if (a.json) {
        std::printf("%s\n", api::EncodeNodeInfoList(shown).c_str());
      } else {
        std::fputs(slurm::RenderScontrolNodes(shown, o).c_str(), stdout);
      }
      return 0;
    }
    if (what == "partition" || what == "partitions") {
      auto parts = client->ListPartitions();
      if (Failed(prog, parts)) return 1;
      std::vector<api::PartitionInfo> shown;
      for (const auto& p : *parts) {
        if (name.empty() || p.partition.name == name) shown.push_back(p);
      }
      if (shown.empty() && !name.empty()) {
        std::fprintf(stderr, "Partition %s not found\n", name.c_str());
        return 1;
      }
      if (a.json) {
        std::printf("%s\n", api::EncodePartitionInfoList(shown).c_str());
      } else {
        std::fputs(slurm::RenderScontrolPartitions(shown, o).c_str(), stdout);
      }
      return 0;
    }
    std::fprintf(stderr, "scontrol: error: show %s is not supported by Corral\n", rest[0].c_str());
    return 1;
  }
  if (verb == "requeue" || verb == "requeuehold") {
    bool hold = verb == "requeuehold";
    return ForEachNamedJob(*client, rest, "Requeue",
                           [&](JobId id) { return client->Requeue(id, hold); });
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
  if (verb == "suspend" || verb == "resume") {
    const bool suspend = verb == "suspend";
    return ScontrolJobVerb(*client, rest, verb,
                           [&](JobId id) { return client->Suspend(id, suspend); });
  }
  if (verb == "top") {
    return ScontrolJobVerb(*client, rest, verb, [&](JobId id) { return client->Top(id); });
  }
  std::fprintf(stderr, "scontrol: error: %s is not supported by Corral\n", words[0].c_str());
  return 1;
}

}  // namespace corral::cli::internal
