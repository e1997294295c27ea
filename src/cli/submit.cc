#include "cli/submit.h"

#include <getopt.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/auth.h"
#include "api/json_codec.h"
#include "cli/client.h"
#include "cli/slurm/submit.h"
#include "core/duration.h"
#include "core/resources.h"

extern char** environ;

namespace corral::cli {
namespace {

enum Opt {
  kJobName = 1000, kPartition, kNodes, kNtasks, kCpusPerTask, kMem, kGpus, kGpusPerNode, kTime,
  kOutput, kError, kChdir, kExport, kRequeue, kNoRequeue, kWrap, kParsable, kController, kJson,
  kAccount, kHold, kNice, kExclusive, kHelp, kWait, kSignal, kNtasksPerNode,
};

const option kOptions[] = {
    {"job-name", required_argument, nullptr, kJobName},
    {"partition", required_argument, nullptr, kPartition},
    {"nodes", required_argument, nullptr, kNodes},
    {"ntasks", required_argument, nullptr, kNtasks},
    {"cpus-per-task", required_argument, nullptr, kCpusPerTask},
    {"mem", required_argument, nullptr, kMem},
    {"gpus", required_argument, nullptr, kGpus},
    {"gpus-per-node", required_argument, nullptr, kGpusPerNode},
    {"time", required_argument, nullptr, kTime},
    {"output", required_argument, nullptr, kOutput},
    {"error", required_argument, nullptr, kError},
    {"chdir", required_argument, nullptr, kChdir},
    {"export", required_argument, nullptr, kExport},
    {"requeue", no_argument, nullptr, kRequeue},
    {"no-requeue", no_argument, nullptr, kNoRequeue},
    {"account", required_argument, nullptr, kAccount},
    {"hold", no_argument, nullptr, kHold},
    {"nice", optional_argument, nullptr, kNice},
    {"exclusive", no_argument, nullptr, kExclusive},
    {"wrap", required_argument, nullptr, kWrap},
    {"parsable", no_argument, nullptr, kParsable},
    {"wait", no_argument, nullptr, kWait},
    {"signal", required_argument, nullptr, kSignal},
    {"ntasks-per-node", required_argument, nullptr, kNtasksPerNode},
    {"controller", required_argument, nullptr, kController},
    {"json", no_argument, nullptr, kJson},
    {"help", no_argument, nullptr, kHelp},
    {nullptr, 0, nullptr, 0},
};

struct Settings {
  JobSpec spec;
  std::string export_mode = "ALL";
  std::string wrap;
  std::string controller;
  bool parsable = false;
  bool json = false;
  bool wait = false;
  bool help = false;
};

Result<uint32_t> Count(const char* opt, const std::string& v) {
  char* end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < 0 || n > 1'000'000) {
    return InvalidArgument(std::string("--") + opt + ": \"" + v + "\" is not a valid count");
  }
  return static_cast<uint32_t>(n);
}

// Applies one option to `s`.
Status Apply(int opt, const std::string& v, Settings* s) {
  ResourceRequest& r = s->spec.resources;
  switch (opt) {
    case kJobName: s->spec.name = v; break;
    case kPartition: {
      s->spec.partitions.clear();
      std::stringstream ss(v);
      std::string p;
      while (std::getline(ss, p, ',')) {
        if (!p.empty()) s->spec.partitions.push_back(p);
      }
      break;
    }
    case kNodes: { CORRAL_ASSIGN_OR_RETURN(r.nodes, Count("nodes", v)); break; }
    case kNtasks: { CORRAL_ASSIGN_OR_RETURN(r.ntasks, Count("ntasks", v)); break; }
    case kNtasksPerNode: { CORRAL_ASSIGN_OR_RETURN(r.ntasks_per_node, Count("ntasks-per-node", v)); break; }
    case kCpusPerTask: { CORRAL_ASSIGN_OR_RETURN(r.cpus_per_task, Count("cpus-per-task", v)); break; }
    case kMem: {
      auto mb = ParseMemoryMb(v);
      if (!mb) return InvalidArgument("--mem: " + mb.error().message);
      r.mem_per_node_mb = *mb;
      break;
    }
    case kGpus:
    case kGpusPerNode: {
      std::string count = v;
      if (auto colon = v.rfind(':'); colon != std::string::npos) {
        r.gpu_type = v.substr(0, colon);
        count = v.substr(colon + 1);
      }
      CORRAL_ASSIGN_OR_RETURN(uint32_t n, Count(opt == kGpus ? "gpus" : "gpus-per-node", count));
      (opt == kGpus ? r.gpus : r.gpus_per_node) = n;
      break;
    }
    case kTime: {
      auto d = ParseSlurmDuration(v);
      if (!d) return InvalidArgument("--time: " + d.error().message);
      s->spec.time_limit = *d;
      break;
    }
    case kOutput: s->spec.stdout_path = v; break;
    case kError: s->spec.stderr_path = v; break;
    case kChdir: s->spec.working_dir = v; break;
    case kExport: s->export_mode = v; break;
    case kRequeue: s->spec.requeue = true; break;
    case kNoRequeue: s->spec.requeue = false; break;
    case kAccount: s->spec.account = v; break;
    case kHold: s->spec.hold = true; break;
    case kNice: {
      char* end = nullptr;
      long n = v.empty() ? 100 : std::strtol(v.c_str(), &end, 10);
      if (!v.empty() && *end != '\0') return InvalidArgument("--nice: \"" + v + "\" is not a number");
      s->spec.nice = static_cast<int32_t>(n);
      break;
    }
    case kExclusive: r.exclusive = true; break;
    case kWrap: s->wrap = v; break;
    case kParsable: s->parsable = true; break;
    case kWait: s->wait = true; break;
    case kSignal: {
      auto sig = slurm::ParseSignalSpec(v);
      if (!sig) return tl::unexpected<Error>(sig.error());
      s->spec.signal = *sig;
      break;
    }
    case kController: s->controller = v; break;
    case kJson: s->json = true; break;
    case kHelp: s->help = true; break;
    default: return InvalidArgument("unsupported option");
  }
  return {};
}

// Parses options with getopt_long (abbreviations as in Slurm). Returns the index of the first
// non-option argument.
Result<int> ParseOptions(std::vector<std::string> args, Settings* s, bool stop_at_first_positional) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  optind = 0;
  opterr = 0;
  std::string optstring = stop_at_first_positional ? "+:" : ":";
  while (true) {
    int c = getopt_long(static_cast<int>(args.size()), argv.data(), optstring.c_str(), kOptions, nullptr);
    if (c == -1) break;
    if (c == '?') {
      std::string bad = optind > 0 && optind <= static_cast<int>(args.size()) ? args[optind - 1] : "?";
      return InvalidArgument("unrecognized or ambiguous option \"" + bad + "\"");
    }
    if (c == ':') return InvalidArgument("option \"" + args[optind - 1] + "\" needs a value");
    CORRAL_RETURN_IF_ERROR(Apply(c, optarg == nullptr ? "" : optarg, s));
  }
  return optind;
}

// The `#CORRAL` / `#SBATCH` lines at the top of the script (up to the first command).
std::vector<std::string> DirectiveArgs(const std::string& script) {
  std::vector<std::string> out = {"directives"};
  std::istringstream in(script);
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (first && line.rfind("#!", 0) == 0) {
      first = false;
      continue;
    }
    first = false;
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    if (line[start] != '#') break;  // the first command ends the directives
    std::string rest;
    if (line.compare(start, 7, "#CORRAL") == 0) {
      rest = line.substr(start + 7);
    } else if (line.compare(start, 7, "#SBATCH") == 0) {
      rest = line.substr(start + 7);
    } else {
      continue;
    }
    std::istringstream words(rest);
    std::string w;
    while (words >> w) {
      if (w[0] == '#') break;  // an inline comment
      out.push_back(w);
    }
  }
  return out;
}

void Usage() {
  std::printf(
      "usage: corral submit [options] script.sh [args]\n"
      "       corral submit [options] --wrap \"command\"\n"
      "Options (Slurm's names; also as #CORRAL or #SBATCH lines at the top of the script):\n"
      "  --job-name NAME --partition P[,P] --account A --nodes N --ntasks N --ntasks-per-node N\n"
      "  --cpus-per-task N\n"
      "  --mem SIZE[K|M|G|T] --gpus [TYPE:]N --gpus-per-node [TYPE:]N --time TIME --exclusive\n"
      "  --output PATTERN --error PATTERN --chdir DIR --export ALL|NONE|VAR[=val],...\n"
      "  --requeue --no-requeue --hold --nice[=N] --wrap CMD --parsable --wait --json\n"
      "  --signal [B:]SIG[@SECONDS]  checkpoint signal SECONDS (default 60) before the time limit\n"
      "                              or a preemption; B: to the batch script only\n");
}

}  // namespace

int RunSubmitCommand(int argc, char** argv) {
  Settings s;
  std::vector<std::string> args(argv, argv + argc);
  auto first = ParseOptions(args, &s, /*stop_at_first_positional=*/true);
  if (!first) {
    std::fprintf(stderr, "corral submit: error: %s\n", first.error().message.c_str());
    return 2;
  }
  if (s.help) {
    Usage();
    return 0;
  }
  std::vector<std::string> rest(args.begin() + *first, args.end());
  std::string script;
  if (!s.wrap.empty()) {
    if (!rest.empty()) {
      std::fprintf(stderr, "corral submit: error: give either a script or --wrap, not both\n");
      return 2;
    }
    script = "#!/bin/sh\n# This script was created by corral submit --wrap.\n\n" + s.wrap + "\n";
    if (s.spec.name.empty()) s.spec.name = "wrap";
  } else {
    if (rest.empty()) {
      std::fprintf(stderr, "corral submit: error: no batch script given (or use --wrap)\n");
      return 2;
    }
    std::ifstream in(rest[0], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "corral submit: error: cannot read script \"%s\"\n", rest[0].c_str());
      return 1;
    }
    std::ostringstream text;
    text << in.rdbuf();
    script = text.str();
    std::string base = rest[0].substr(rest[0].rfind('/') + 1);
    // Directives first, then the command line again so that it wins.
    Settings from_script;
    auto d = ParseOptions(DirectiveArgs(script), &from_script, false);
    if (!d) {
      std::fprintf(stderr, "corral submit: error: in script %s: %s\n", rest[0].c_str(), d.error().message.c_str());
      return 1;
    }
    from_script.controller = s.controller;
    s = from_script;
    (void)ParseOptions(args, &s, true);
    if (s.spec.name.empty()) s.spec.name = base;
  }
  s.spec.script = script;
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) != nullptr) s.spec.submit_dir = cwd;
  if (s.spec.working_dir.empty()) s.spec.working_dir = s.spec.submit_dir;
  if (s.spec.working_dir[0] != '/') s.spec.working_dir = s.spec.submit_dir + "/" + s.spec.working_dir;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  s.spec.submit_host = host;
  api::Identity me = api::CurrentProcessIdentity();
  s.spec.user = me.user;
  // --export: ALL (default), NONE, or a list of names / NAME=value (with ALL in it, plus all).
  std::map<std::string, std::string> env;
  std::vector<std::string> items;
  {
    std::stringstream ss(s.export_mode);
    std::string item;
    while (std::getline(ss, item, ',')) items.push_back(item);
  }
  bool all = s.export_mode.empty() || std::find(items.begin(), items.end(), "ALL") != items.end();
  if (all) {
    for (char** e = environ; *e != nullptr; ++e) {
      std::string kv = *e;
      auto eq = kv.find('=');
      if (eq != std::string::npos && eq > 0) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  for (const auto& item : items) {
    if (item == "ALL" || item == "NONE" || item.empty()) continue;
    auto eq = item.find('=');
    if (eq != std::string::npos) {
      env[item.substr(0, eq)] = item.substr(eq + 1);
    } else if (const char* v = std::getenv(item.c_str())) {
      env[item] = v;
    }
  }
  s.spec.environment = std::move(env);

  auto client = Client::Connect(s.controller);
  if (!client) {
    std::fprintf(stderr, "corral submit: error: %s\n", client.error().message.c_str());
    return 1;
  }
  auto r = (*client)->Submit(s.spec);
  if (!r) {
    std::fprintf(stderr, "corral submit: error: %s\n", r.error().message.c_str());
    return 1;
  }
  if (s.json) {
    std::printf("%s\n", api::EncodeSubmitResponse(*r).c_str());
  } else if (s.parsable) {
    std::printf("%s\n", r->job_id.ToString().c_str());
  } else {
    std::printf("Submitted batch job %s\n", r->job_id.ToString().c_str());
  }
  std::fflush(stdout);
  if (s.wait) {
    while (true) {
      auto info = (*client)->WaitJob(r->job_id, 60);
      if (!info) {
        std::fprintf(stderr, "corral submit: error: %s\n", info.error().message.c_str());
        return 1;
      }
      if (!IsTerminal(info->job.state)) continue;
      const Job& j = info->job;
      if (j.state == JobState::kCompleted) return 0;
      return j.exit_code != 0 ? j.exit_code : (j.exit_signal != 0 ? 128 + j.exit_signal : 1);
    }
  }
  return 0;
}

}  // namespace corral::cli
