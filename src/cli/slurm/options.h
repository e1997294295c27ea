// The command-line scanner of sbatch, srun and salloc: glibc's own getopt_long (getopt.h) over
// the one table of their options (internal/job_options.h: every option of Slurm 22.05's three
// commands, supported by Corral or not, plus pyxis' container options), so that abbreviations
// ("--out", "--err", "--tasks" for --tasks-per-node), "--opt=value" / "--opt value", bundled
// short options and errors ("ambiguous", "requires an argument") behave exactly as in Slurm.
//
// Thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace corral::slurm {

enum class Command { kSbatch, kSrun, kSalloc };

// "sbatch", "srun", "salloc".
std::string_view CommandName(Command c);

// One option occurrence, with its canonical long name ("output" for "-o", "--out" or
// "--output") and its argument, if any.
struct ParsedOption {
  std::string name;
  bool has_value = false;
  std::string value;
  bool operator==(const ParsedOption&) const = default;
};

struct ScanResult {
  std::vector<ParsedOption> options;
  std::vector<std::string> operands;  // everything from the first non-option on
};

// Scans `args` (without argv[0]) for `command`. Scanning stops at the first non-option
// argument or after "--" (Slurm's "+" getopt mode); the rest are operands.
// Returns kInvalidArgument with glibc's message ("unrecognized option '--foo'",
// "option '--gpu' is ambiguous; possibilities: '--gpu-bind' ...", "option '--job-name' requires
// an argument", "option '--hold' doesn't allow an argument", "invalid option -- 'Z'",
// "option requires an argument -- 'J'").
Result<ScanResult> ScanOptions(Command command, const std::vector<std::string>& args);

// The canonical name of a long option of `command` given exactly, or "" when it has none.
std::string_view CanonicalOptionName(Command command, std::string_view name);

// Every long option name `command` accepts (for documentation and tests).
std::vector<std::string> LongOptionNames(Command command);

// The option lines of `command`'s --help: every option the table gives a help line, with its
// short form and argument ("  -J, --job-name=NAME          the job's name").
std::string OptionsHelp(Command command);

}  // namespace corral::slurm
