// The one table of sbatch's, srun's and salloc's options (Slurm 22.05's `slurm_opt.c` in
// Corral's shape): every long option of the three commands, supported by Corral or not, plus
// pyxis' container options, each with its short letter, how each command takes it, its help
// line and the handler that applies it. The scanner (options.h), every source of options
// (directives, input variables, the command line: submit.h) and `--help` read it; the input
// variables (environment.h) name its entries.
//
// The names and argument kinds were read off the real 22.05.8 binaries: their getopt_long
// "ambiguous; possibilities" lists enumerate every long option, and probing each option gave
// its argument kind. The table is sorted by name (the order of those lists).
//
// Every entry has a handler, except aliases (another name for an entry: "--clusters" is
// "--cluster"); a static_assert checks it. Options Corral does not support are refused by name
// (handler `Refuse`); a few with no effect on Corral are accepted and listed in
// `ClientOptions::ignored` (`Ignore`). Internal to cli/slurm. Thread-safe (constant data).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "cli/slurm/options.h"
#include "core/result.h"

namespace corral::slurm::internal {

struct JobBuilder;
struct OptionUse;

// How a command takes an option: not at all (kNa), or as getopt's kinds.
enum class Arg : int8_t { kNa, kNo, kReq, kOpt };

// A set of commands: bit `1 << Command`.
constexpr uint8_t CommandBit(Command c) { return static_cast<uint8_t>(1u << static_cast<int>(c)); }
constexpr uint8_t kEveryCommand = 0b111;

using JobOptionHandler = Status (*)(JobBuilder& builder, const OptionUse& use);

struct JobOption {
  const char* name;
  char letter = 0;  // the short form, 0 = none
  Arg sbatch = Arg::kNa;
  Arg srun = Arg::kNa;
  Arg salloc = Arg::kNa;
  JobOptionHandler apply = nullptr;  // null only for an alias
  const char* arg_name = nullptr;    // --help: the argument's name ("N", "LIST")
  const char* help = nullptr;        // --help: what it does; null = not listed
  const char* alias_of = nullptr;    // an alias: the canonical entry's name
  // The commands (`CommandBit`s) in which the letter stands for the option (-u is --usage in
  // salloc only: srun's -u is --unbuffered) and which list its help line.
  uint8_t letter_in = kEveryCommand;
  uint8_t help_in = kEveryCommand;
};

// The table, sorted by name.
std::span<const JobOption> JobOptions();

// The entry named `name` exactly (an alias' own entry), or null.
const JobOption* FindJobOption(std::string_view name);

// How `command` takes `option`.
Arg ArgOf(const JobOption& option, Command command);

// Whether `option`'s short letter stands for it in `command`.
bool LetterIn(const JobOption& option, Command command);

// Whether `command`'s --help lists `option`.
bool HelpIn(const JobOption& option, Command command);

}  // namespace corral::slurm::internal
