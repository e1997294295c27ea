// glibc's getopt_long as a function of the words: long options and a getopt string in, the
// options found, the operands and the first error out. The CLI's only caller of getopt_long,
// so that every command's abbreviations ("--part"), "--opt=value" / "--opt value", bundled
// short options ("-Hc4") and errors behave exactly as in Slurm, whose commands use it too.
//
// Also the option lists of --help texts, from the same tables (`FormatHelp`).
//
// Thread-safe: getopt_long's global state is guarded by a mutex and reset (optind = 0) for
// every scan; it prints nothing (opterr = 0).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace corral::slurm {

// Whether an option takes an argument: getopt's no_argument, required_argument and
// optional_argument.
enum class ArgKind { kNone, kRequired, kOptional };

struct LongOption {
  const char* name;
  ArgKind arg;
  int id;  // what `GetoptOption::id` says when this option is found
};

struct GetoptOption {
  int id;  // the long option's id, or the short option's letter
  bool has_value = false;
  std::string value;
};

// The first word getopt_long refused.
struct GetoptFailure {
  bool missing_argument = false;  // an option without its argument (getopt's ':'); else '?'
  int optopt = 0;                 // getopt's `optopt`: the short option at fault, else 0 or id
  std::string word;               // the word the failing call began on ("" past the end)
  std::string last_word;          // the word before `optind` after it ("?" when none)
};

struct GetoptResult {
  std::vector<GetoptOption> options;  // in order; up to the failure when there is one
  std::vector<std::string> operands;  // what is left (empty after a failure)
  std::optional<GetoptFailure> failure;
};

// Scans `words` (words[0] is the program's name) with getopt_long over `longs` and
// `optstring` (getopt's syntax: a leading '+' stops at the first operand, ':' reports a
// missing argument apart; otherwise operands are permuted to the end, as GNU does).
GetoptResult Getopt(const std::vector<std::string>& words, const std::vector<LongOption>& longs,
                    const std::string& optstring);

// One line of an option list in a --help text.
struct HelpLine {
  char letter = 0;             // the short form, 0 = none
  const char* name = nullptr;  // the long form (null = none)
  ArgKind arg = ArgKind::kNone;
  const char* arg_name = nullptr;  // the argument's name ("N"); null = "ARG"
  const char* help = nullptr;      // what the option does
};

// The lines, one an option: "  -J, --job-name=NAME           the job's name" ("[=ARG]" for an
// optional argument), the help at column 33 or two blanks after a longer option.
std::string FormatHelp(const std::vector<HelpLine>& lines);

}  // namespace corral::slurm
