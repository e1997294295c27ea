// `sbatch` and `corral submit`: one option parser (cli/slurm/submit.h) for both.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/json_codec.h"
#include "cli/internal/slurm_cli.h"
#include "cli/slurm/job_ids.h"
#include "cli/slurm/options.h"
#include "cli/slurm/submit.h"
#include "core/resources.h"

namespace corral::cli {
namespace internal {
namespace {

// The usage, then the option table's lines (cli/slurm/options.h).
void PrintSbatchHelp(const std::string& prog) {
  std::printf(
      "Usage: %s [OPTIONS...] executable [args...]\n"
      "       %s [OPTIONS...] --wrap=\"command\"\n\n"
      "Slurm's sbatch options, on the command line, in SBATCH_* variables or as #SBATCH lines at\n"
      "the top of the script (command line > environment > directives):\n%s"
      "Options Corral does not support are refused by name. Details: docs/slurm.md\n",
      prog.c_str(), prog.c_str(), slurm::OptionsHelp(slurm::Command::kSbatch).c_str());
}

bool ReadAll(int fd, std::string* out) {
  char buf[65536];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) return true;
    out->append(buf, static_cast<size_t>(n));
  }
}

// Whether `option` (one argument word) consumes the next word as its value for sbatch.
bool TakesNextWord(const std::string& option) {
  auto scan = slurm::ScanOptions(slurm::Command::kSbatch, {option, "\x01"});
  return scan.has_value() && scan->operands.empty() && !scan->options.empty() &&
         scan->options.back().value == "\x01";
}

// `corral submit` takes --controller URL and --json besides sbatch's options; they are taken
// out (before the script operand) so that the rest is exactly sbatch's command line.
Status TakeCorralOptions(std::vector<std::string>* args, std::string* controller, bool* json) {
  std::vector<std::string> out;
  size_t i = 0;
  for (; i < args->size(); ++i) {
    const std::string& a = (*args)[i];
    if (a == "--") break;
    if (a == "--json") {
      *json = true;
      continue;
    }
    if (a == "--controller" || a.rfind("--controller=", 0) == 0) {
      if (a == "--controller") {
        if (i + 1 >= args->size())
          return InvalidArgument("option '--controller' requires an argument");
        *controller = (*args)[++i];
      } else {
        *controller = a.substr(13);
      }
      continue;
    }
    out.push_back(a);
    if (a.size() < 2 || a[0] != '-') break;  // the script: the rest are its arguments
    if (a.find('=') == std::string::npos && TakesNextWord(a) && i + 1 < args->size()) {
      out.push_back((*args)[++i]);
    }
  }
  for (++i; i < args->size(); ++i) out.push_back((*args)[i]);
  *args = std::move(out);
  return {};
}

// Waits for every job in `ids` to end; returns the highest exit status, as sbatch --wait.
int WaitForJobs(Client& client, const std::vector<JobId>& ids, const std::string& prog) {
  int status = 0;
  for (JobId id : ids) {
    while (true) {
      auto info = client.WaitJob(id, 60);
      if (!info) {
        PrintError(prog, info.error().message);
        return 1;
      }
      if (!IsTerminal(info->job.state)) continue;
      status = std::max(status, JobExitStatus(info->job));
      break;
    }
  }
  return status;
}

}  // namespace

// sbatch, or `corral submit` when `corral_submit`.
int RunBatchSubmit(int argc, char** argv, bool corral_submit) {
  const std::string prog = corral_submit ? "corral submit" : "sbatch";
  // The parser's messages name sbatch; `corral submit` names itself.
  auto report = [&](std::string message) {
    if (corral_submit && message.rfind("sbatch:", 0) == 0) message = prog + message.substr(6);
    PrintError(prog, message);
  };
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string controller;
  bool json = false;
  if (corral_submit) {
    if (Status s = TakeCorralOptions(&args, &controller, &json); !s) {
      PrintError(prog, s.error().message);
      return 2;
    }
  }
  auto first = slurm::ScanSbatchCommandLine(args);
  if (!first) {
    report(first.error().message);
    std::fprintf(stderr, "Try \"%s --help\" for more information\n", prog.c_str());
    return 1;
  }
  if (first->help || first->usage) {
    PrintSbatchHelp(prog);
    return 0;
  }
  if (first->version) {
    PrintVersion();
    return 0;
  }
  std::string script;
  std::string script_path = first->script_path;
  if (first->wrap.empty()) {
    if (script_path.empty()) {
      if (!ReadAll(0, &script)) {
        PrintError(prog, "cannot read the batch script from standard input");
        return 1;
      }
    } else {
      int fd = open(script_path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || !ReadAll(fd, &script)) {
        if (fd >= 0) close(fd);
        PrintError(prog, corral_submit ? "cannot read script \"" + script_path + "\""
                                       : "Unable to open file " + script_path);
        return 1;
      }
      close(fd);
    }
  }
  // `corral submit` reads `#CORRAL` lines as `#SBATCH` ones.
  std::string parsed_text = script;
  if (corral_submit) {
    for (size_t pos = 0; pos < parsed_text.size();) {
      if (parsed_text.compare(pos, 7, "#CORRAL") == 0) parsed_text.replace(pos, 7, "#SBATCH");
      size_t nl = parsed_text.find('\n', pos);
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
  }
  slurm::SubmitContext ctx = ProcessContext();
  ctx.exact_time_limits = corral_submit;
  auto req = slurm::ParseSbatch(args, parsed_text, ctx);
  if (!req) {
    report(req.error().message);
    return 1;
  }
  for (const auto& w : req->warnings) report(w);
  JobSpec& spec = req->spec;
  if (first->wrap.empty()) spec.script = script;
  spec.script_args = req->client.script_args;
  if (!script_path.empty()) {
    // As Slurm: a relative path is made absolute against the current directory, unless -D
    // moved the job elsewhere (Slurm then keeps it as given).
    const bool moved = !spec.working_dir.empty() && spec.working_dir != ctx.cwd;
    spec.command = script_path[0] == '/' || moved ? script_path : ctx.cwd + "/" + script_path;
  }
  if (!controller.empty()) setenv("CORRAL_CONTROLLER", controller.c_str(), 1);
  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;

  if (req->client.test_only) {
    // Parse and check against the cluster's partitions, but submit nothing.
    auto parts = client->ListPartitions();
    if (!parts) {
      PrintError(prog, parts.error().message);
      return 1;
    }
    std::string partition;
    for (const auto& p : *parts) {
      if (spec.partitions.empty() ? p.partition.is_default
                                  : p.partition.name == spec.partitions.front()) {
        partition = p.partition.name;
      }
    }
    if (partition.empty()) {
      PrintError(
          prog, "invalid partition specified: " +
                    (spec.partitions.empty() ? std::string("(default)") : spec.partitions.front()));
      return 1;
    }
    const ResourceRequest& r = spec.resources;
    std::fprintf(
        stderr,
        "%s: Job would be submitted to partition %s: %u node(s), %u task(s), %u CPU(s) per "
        "task, %u GPU(s) (nothing was submitted)\n",
        prog.c_str(), partition.c_str(), r.nodes, r.ntasks, r.cpus_per_task, TotalGpus(r));
    return 0;
  }

  auto r = client->Submit(spec);
  if (!r) {
    PrintError(prog, "Batch job submission failed: " + r.error().message);
    return 1;
  }
  if (json) {
    std::printf("%s\n", api::EncodeSubmitResponse(*r).c_str());
  } else {
    std::fputs(slurm::SubmittedMessage(r->job_id.value, req->client.parsable).c_str(), stdout);
  }
  std::fflush(stdout);
  if (!req->client.wait) return 0;
  std::vector<JobId> ids = r->task_ids.empty() ? std::vector<JobId>{r->job_id} : r->task_ids;
  return WaitForJobs(*client, ids, prog);
}

int RunSbatch(int argc, char** argv) { return RunBatchSubmit(argc, argv, false); }

}  // namespace internal
}  // namespace corral::cli
