// The state sbatch, srun and salloc build a request in: the options of every source
// (directives, input environment variables, the command line) are applied to it one by one,
// each by its entry in the option table (internal/job_options.h), then `Finish` runs Slurm's
// verification. Internal to cli/slurm.
//
// Not thread-safe; one builder per parse.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/slurm/options.h"
#include "cli/slurm/submit.h"
#include "core/result.h"

namespace corral::slurm::internal {

// Where an option came from; it decides the precedence and names the source in errors.
enum class Source { kDirective, kEnvironment, kCommandLine };

// One occurrence of an option, as its handler sees it.
struct OptionUse {
  const std::string& name;  // the canonical long name
  bool has_value = false;
  const std::string& value;
  Source source = Source::kCommandLine;
  std::string_view variable;  // the environment variable, for kEnvironment

  // How errors name the source: " (in a #SBATCH directive)", " (from the environment
  // variable V)", or "" for the command line.
  std::string Where() const;
};

struct JobBuilder {
  JobBuilder(Command c, const SubmitContext& context) : command(c), ctx(context) {}

  // Applies `options` from `source` in order. Returns the first option's error.
  Status ApplyAll(const std::vector<ParsedOption>& options, Source source);
  // Applies the command's input environment variables (environment.h), then, for srun, the
  // pyxis variables it inherits.
  Status ApplyEnvironment();
  // Applies one option by its table entry; an option without one is refused by name.
  Status Apply(const ParsedOption& option, Source source, std::string_view variable);
  // Slurm's option verification: defaults, counts that follow from each other, and the
  // job's environment. Returns the request, or kInvalidArgument naming the problem.
  Result<SubmitRequest> Finish(const std::string& default_name);

  // "CMD: error: MESSAGE" (kInvalidArgument).
  tl::unexpected<Error> Err(const std::string& message) const;
  // "CMD: error: invalid --NAME value \"V\"WHERE: WHY" (kInvalidArgument).
  tl::unexpected<Error> BadValue(const OptionUse& use, const std::string& why) const;
  // "CMD: error: option WHATWHERE is not supported by Corral" (kUnimplemented).
  tl::unexpected<Error> Unsupported(const std::string& what, const std::string& where) const;
  // Reads the option's value as a count into `*out`; refuses 0 unless `allow_zero`.
  Status Count(const OptionUse& use, uint32_t* out, bool allow_zero) const;

  const Command command;
  const SubmitContext& ctx;
  SubmitRequest req;
  // What the handlers record for `Finish`.
  std::optional<std::string> job_name;
  std::optional<std::string> export_value;  // --export as given
  std::optional<char> open_mode;
  bool ntasks_set = false;
  bool cpus_set = false;
  bool nodes_set = false;
  int mem_set[3] = {0, 0, 0};  // --mem, --mem-per-cpu, --mem-per-gpu: 0 unset, 1 environment,
                               // 2 command line or directive
  std::string gpus_env[3];     // --gpus, --gpus-per-node, --gpus-per-task as given
};

}  // namespace corral::slurm::internal
