#include "cli/slurm/submit.h"

#include "cli/slurm/directives.h"
#include "cli/slurm/internal/job_builder.h"

namespace corral::slurm {
namespace {

using internal::JobBuilder;
using internal::Source;

std::string Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace

Result<ClientOptions> ScanSbatchCommandLine(const std::vector<std::string>& args) {
  CORRAL_ASSIGN_OR_RETURN(ScanResult scan, ScanOptions(Command::kSbatch, args));
  ClientOptions c;
  for (const auto& o : scan.options) {
    if (o.name == "wrap") c.wrap = o.value;
    if (o.name == "help") c.help = true;
    if (o.name == "usage") c.usage = true;
    if (o.name == "version") c.version = true;
  }
  if (!scan.operands.empty()) {
    c.script_path = scan.operands.front();
    c.script_args.assign(scan.operands.begin() + 1, scan.operands.end());
  }
  return c;
}

Result<SubmitRequest> ParseSbatch(const std::vector<std::string>& args, std::string_view script,
                                  const SubmitContext& ctx) {
  CORRAL_ASSIGN_OR_RETURN(ScanResult cmdline, ScanOptions(Command::kSbatch, args));
  JobBuilder b(Command::kSbatch, ctx);
  std::string wrap;  // the last --wrap
  bool wrapped = false;
  for (const auto& o : cmdline.options) {
    if (o.name != "wrap") continue;
    wrap = o.value;
    wrapped = true;
  }
  std::string text;
  if (wrapped) {
    if (!cmdline.operands.empty()) {
      return InvalidArgument("sbatch: error: Script arguments not permitted with --wrap option");
    }
    text = WrapScript(wrap);
  } else {
    text = std::string(script);
    CORRAL_RETURN_IF_ERROR(CheckBatchScript(text));
  }
  std::string script_path = cmdline.operands.empty() ? "" : cmdline.operands.front();
  // 1. Directives.
  if (!wrapped) {
    CORRAL_ASSIGN_OR_RETURN(
        auto words,
        ExtractDirectives(text, script_path.empty() ? "sbatch" : Basename(script_path)));
    CORRAL_ASSIGN_OR_RETURN(ScanResult directives, ScanOptions(Command::kSbatch, words));
    if (!directives.operands.empty()) {
      return InvalidArgument("sbatch: error: Invalid directive found in batch script: " +
                             directives.operands.front());
    }
    CORRAL_RETURN_IF_ERROR(b.ApplyAll(directives.options, Source::kDirective));
  }
  // 2. SBATCH_* variables. 3. The command line.
  CORRAL_RETURN_IF_ERROR(b.ApplyEnvironment());
  CORRAL_RETURN_IF_ERROR(b.ApplyAll(cmdline.options, Source::kCommandLine));
  SubmitRequest& req = b.req;
  req.spec.script = text;
  req.client.script_path = script_path;
  if (!cmdline.operands.empty()) {
    req.client.script_args.assign(cmdline.operands.begin() + 1, cmdline.operands.end());
  }
  std::string default_name =
      wrapped ? "wrap" : (script_path.empty() ? "sbatch" : Basename(script_path));
  return b.Finish(default_name);
}

Result<SubmitRequest> ParseSrun(const std::vector<std::string>& args, const SubmitContext& ctx) {
  CORRAL_ASSIGN_OR_RETURN(ScanResult cmdline, ScanOptions(Command::kSrun, args));
  JobBuilder b(Command::kSrun, ctx);
  CORRAL_RETURN_IF_ERROR(b.ApplyEnvironment());
  CORRAL_RETURN_IF_ERROR(b.ApplyAll(cmdline.options, Source::kCommandLine));
  SubmitRequest& req = b.req;
  req.client.command = cmdline.operands;
  bool informational = req.client.help || req.client.usage || req.client.version;
  if (req.client.command.empty() && !informational) {
    return InvalidArgument("srun: fatal: No command given to execute.");
  }
  std::string name = req.client.command.empty() ? "srun" : Basename(req.client.command.front());
  // Inside an allocation, the job's name (SLURM_JOB_NAME) is not the step's.
  return b.Finish(name);
}

Result<SubmitRequest> ParseSalloc(const std::vector<std::string>& args, const SubmitContext& ctx) {
  CORRAL_ASSIGN_OR_RETURN(ScanResult cmdline, ScanOptions(Command::kSalloc, args));
  JobBuilder b(Command::kSalloc, ctx);
  CORRAL_RETURN_IF_ERROR(b.ApplyEnvironment());
  CORRAL_RETURN_IF_ERROR(b.ApplyAll(cmdline.options, Source::kCommandLine));
  b.req.client.command = cmdline.operands;
  return b.Finish("interactive");
}

}  // namespace corral::slurm
