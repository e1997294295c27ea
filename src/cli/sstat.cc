// `sstat` on top of Corral's API: GET /api/v1/jobs/{id}/stats (the job's user, operators,
// admins: docs/slurm.md, "sstat") printed by the renderer of cli/slurm/sstat.h, with its
// options from one table.
#include "cli/slurm/sstat.h"

#include <cstdio>

#include "api/job_stats.h"
#include "api/json_codec.h"
#include "cli/internal/query_common.h"
#include "core/step.h"
#include "core/strings.h"

namespace corral::cli::internal {
namespace {

struct SstatArgs : QueryArgs {
  slurm::SstatOptions render;
  std::vector<std::string> jobs;  // -j lists and operands, each "J[.S],..."
  bool all_steps = false;
  bool field_list = false;  // -e
};
using A = SstatArgs;
using slurm::ArgKind;

constexpr const char* kUsage =
    "Usage: sstat [options] -j job[.stepid]\n"
    "Corral's sstat: docs/slurm.md\n";

Status SetJobs(A& a, const std::string& v) {
  a.jobs.push_back(v);
  return {};
}
Status SetFormat(A& a, const std::string& v) {
  a.render.format = a.render.format.empty() ? v : a.render.format + "," + v;
  return {};
}
Status SetPidFormat(A& a, const std::string&) {
  a.render.format = "JobID,Nodelist,Pids";
  return {};
}
template <bool A::*kFlag>
Status Set(A& a, const std::string&) {
  a.*kFlag = true;
  return {};
}
template <bool slurm::SstatOptions::*kFlag>
Status SetRender(A& a, const std::string&) {
  a.render.*kFlag = true;
  return {};
}

constexpr ArgKind kNone = ArgKind::kNone, kReq = ArgKind::kRequired;

constexpr slurm::CommandOption<A> kOptions[] = {
    {"allsteps", 'a', kNone, Set<&A::all_steps>, nullptr, "every running step of the jobs"},
    {"helpformat", 'e', kNone, Set<&A::field_list>, nullptr, "list the fields of --format"},
    {"jobs", 'j', kReq, SetJobs, "JOB[.STEP],...", "the jobs (and steps) to show"},
    {"noheader", 'n', kNone, SetRender<&slurm::SstatOptions::no_header>, nullptr,
     "no header line"},
    {"noconvert", 0, kNone, SetRender<&slurm::SstatOptions::no_convert>, nullptr,
     "memory in bytes, without units"},
    {"format", 'o', kReq, SetFormat, "FIELD[%W],...", "the fields to show", "fields"},
    {"parsable", 'p', kNone, SetRender<&slurm::SstatOptions::parsable>, nullptr,
     "fields separated by '|', one after the last"},
    {"parsable2", 'P', kNone, SetRender<&slurm::SstatOptions::parsable2>, nullptr,
     "fields separated by '|'"},
    {"pidformat", 'i', kNone, SetPidFormat, nullptr, "JobID, Nodelist and Pids"},
    {"verbose", 'v', kNone, slurm::Accept<A>, nullptr, "(accepted)"},
    kHelpOption<A>,
    kUsageOption<A>,
    kVersionOption<A>,
    kJsonOption<A>,
};
static_assert(slurm::EveryOptionHasAHandler(kOptions));

// One item of a -j list: the job and its step ("12", "12.0", "12.batch").
struct Wanted {
  JobId job;
  std::optional<uint32_t> step;  // none: the first numbered step (-a: every step)
  std::string text;
};

Result<Wanted> ParseWanted(const std::string& item) {
  Wanted w{.text = item};
  const size_t dot = item.find('.');
  std::optional<uint64_t> job = ParseUint(item.substr(0, dot));
  if (!job || *job == 0) return InvalidArgument("Invalid job id: " + item);
  w.job = JobId(*job);
  if (dot != std::string::npos) {
    const std::string step = item.substr(dot + 1);
    if (step == "batch") {
      w.step = kBatchStepId;
    } else if (auto n = ParseUint(step); n && *n < kBatchStepId) {
      w.step = static_cast<uint32_t>(*n);
    } else {
      return InvalidArgument("Invalid job step id: " + item);
    }
  }
  return w;
}

std::string Label(JobId job, uint32_t step) {
  return job.ToString() + "." + (step == kBatchStepId ? "batch" : std::to_string(step));
}

}  // namespace

int RunSstat(int argc, char** argv) {
  const std::string prog = "sstat";
  A a;
  slurm::OptionScan scan = slurm::ScanWithTable(std::span<const slurm::CommandOption<A>>(kOptions),
                                                Words(argc, argv), ":", a);
  if (auto status = ReportScan(prog, scan, a, std::string(kUsage) + "\n",
                               slurm::TableHelp(std::span<const slurm::CommandOption<A>>(kOptions)))) {
    return *status;
  }
  if (a.field_list) {
    std::fputs(slurm::SstatFieldList().c_str(), stdout);
    return 0;
  }
  for (const std::string& op : scan.operands) a.jobs.push_back(op);
  std::vector<Wanted> wanted;
  for (const std::string& list : a.jobs) {
    for (const std::string& item : SplitNonEmpty(list)) {
      auto w = ParseWanted(item);
      if (Failed(prog, w)) return 1;
      wanted.push_back(*w);
    }
  }
  if (wanted.empty()) {
    PrintError(prog, "You didn't give me any jobs to stat.");
    return 1;
  }
  // The fields are checked before anything is asked (Slurm refuses an unknown one first).
  if (auto check = slurm::RenderSstat({}, {}, a.render); !check) {
    PrintError(prog, check.error().message);
    return 1;
  }
  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  std::string out;
  slurm::SstatOptions body = a.render;
  body.no_header = true;
  if (!a.render.no_header && !a.json) {
    out = *slurm::RenderSstat({}, {}, a.render);
    std::fputs(out.c_str(), stdout);
  }
  for (const Wanted& w : wanted) {
    auto stats = client->JobStats(w.job);
    if (!stats) {
      // Slurm's words, then Corral's reason.
      PrintError(prog, "couldn't get steps for job " + w.job.ToString() + " (" +
                           stats.error().message + ")");
      continue;
    }
    for (const api::NodeRunStats& n : stats->nodes) {
      if (!n.error.empty()) {
        PrintError(prog, "node " + n.node + " did not answer for job " + w.job.ToString() + ": " +
                             n.error);
      }
    }
    if (a.json) {
      std::printf("%s\n", api::EncodeJobStatsInfo(*stats).c_str());
      continue;
    }
    const std::vector<uint32_t> running = slurm::StepsIn(*stats);
    std::vector<slurm::SstatStep> steps;
    if (w.step) {
      if (std::find(running.begin(), running.end(), *w.step) == running.end()) {
        PrintError(prog, "StepId=" + Label(w.job, *w.step) + " not found running.");
        continue;
      }
      steps.push_back({*w.step, Label(w.job, *w.step)});
    } else if (a.all_steps) {
      // As Slurm lists them: the batch step first, then the numbered ones.
      if (std::find(running.begin(), running.end(), kBatchStepId) != running.end()) {
        steps.push_back({kBatchStepId, Label(w.job, kBatchStepId)});
      }
      for (uint32_t s : running) {
        if (s != kBatchStepId) steps.push_back({s, Label(w.job, s)});
      }
    } else if (!running.empty() && running.front() != kBatchStepId) {
      steps.push_back({running.front(), Label(w.job, running.front())});
    }
    auto text = slurm::RenderSstat(*stats, steps, body);
    if (Failed(prog, text)) return 1;
    std::fputs(text->c_str(), stdout);
  }
  return 0;
}

}  // namespace corral::cli::internal
