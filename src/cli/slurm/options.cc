#include "cli/slurm/options.h"

#include <array>

#include "cli/slurm/getopt.h"
#include "cli/slurm/internal/job_options.h"

namespace corral::slurm {
namespace {

using internal::Arg;
using internal::ArgOf;
using internal::JobOption;
using internal::JobOptions;

// Long options have ids past every letter: 256 + their index in the table.
constexpr int kLongIdBase = 256;

ArgKind KindOf(Arg a) {
  switch (a) {
    case Arg::kReq:
      return ArgKind::kRequired;
    case Arg::kOpt:
      return ArgKind::kOptional;
    case Arg::kNa:
    case Arg::kNo:
      break;
  }
  return ArgKind::kNone;
}

std::string_view Canonical(const JobOption& o) {
  return o.alias_of != nullptr ? o.alias_of : o.name;
}

// The getopt tables of one command, built once.
struct Tables {
  std::vector<LongOption> longs;
  std::string optstring;
};

const Tables& TablesFor(Command c) {
  static const std::array<Tables, 3> tables = [] {
    std::array<Tables, 3> t;
    std::span<const JobOption> options = JobOptions();
    for (Command cmd : {Command::kSbatch, Command::kSrun, Command::kSalloc}) {
      Tables& tb = t[static_cast<int>(cmd)];
      tb.optstring = "+:";  // report missing arguments apart; stop at the first operand
      for (size_t i = 0; i < options.size(); ++i) {
        Arg a = ArgOf(options[i], cmd);
        if (a == Arg::kNa) continue;
        tb.longs.push_back({options[i].name, KindOf(a), static_cast<int>(kLongIdBase + i)});
      }
      for (const JobOption& o : options) {
        if (!internal::LetterIn(o, cmd)) continue;
        tb.optstring += o.letter;
        // Slurm's short forms of options whose long form takes an optional argument take
        // none (-k, -s); -I and -K keep theirs attached ("-I60"), as in Slurm.
        Arg a = ArgOf(o, cmd);
        if (a == Arg::kReq) {
          tb.optstring += ':';
        } else if (a == Arg::kOpt && (o.letter == 'I' || o.letter == 'K')) {
          tb.optstring += "::";
        }
      }
    }
    return t;
  }();
  return tables[static_cast<int>(c)];
}

const JobOption* ByLetter(Command c, int letter) {
  for (const JobOption& o : JobOptions()) {
    if (o.letter == letter && internal::LetterIn(o, c)) return &o;
  }
  return nullptr;
}

std::string Prefixed(Command c, const std::string& message) {
  return std::string(CommandName(c)) + ": " + message;
}

// glibc's message for a long option getopt_long refused.
std::string LongOptionError(Command c, std::string_view arg) {
  std::string_view body = arg.substr(2);
  size_t eq = body.find('=');
  std::string_view name = body.substr(0, eq);
  std::vector<const char*> matches;
  for (const LongOption& o : TablesFor(c).longs) {
    std::string_view n = o.name;
    if (n == name) {
      matches = {o.name};
      break;
    }
    if (n.substr(0, name.size()) == name) matches.push_back(o.name);
  }
  if (matches.empty()) return "unrecognized option '" + std::string(arg) + "'";
  std::string first = matches[0];
  if (matches.size() > 1) {
    std::string out = "option '" + std::string(arg) + "' is ambiguous; possibilities:";
    for (const char* m : matches) out += " '--" + std::string(m) + "'";
    return out;
  }
  if (eq != std::string_view::npos && ArgOf(*internal::FindJobOption(first), c) == Arg::kNo) {
    return "option '--" + first + "' doesn't allow an argument";
  }
  return "option '--" + first + "' requires an argument";
}

}  // namespace

std::string_view CommandName(Command c) {
  switch (c) {
    case Command::kSbatch:
      return "sbatch";
    case Command::kSrun:
      return "srun";
    case Command::kSalloc:
      return "salloc";
  }
  return "?";
}

std::string_view CanonicalOptionName(Command command, std::string_view name) {
  const JobOption* o = internal::FindJobOption(name);
  return o != nullptr && ArgOf(*o, command) != Arg::kNa ? Canonical(*o) : std::string_view();
}

std::vector<std::string> LongOptionNames(Command command) {
  std::vector<std::string> out;
  for (const LongOption& o : TablesFor(command).longs) out.push_back(o.name);
  return out;
}

std::string OptionsHelp(Command command) {
  std::vector<HelpLine> lines;
  for (const JobOption& o : JobOptions()) {
    if (!internal::HelpIn(o, command)) continue;
    lines.push_back({internal::LetterIn(o, command) ? o.letter : '\0', o.name,
                     KindOf(ArgOf(o, command)), o.arg_name, o.help});
  }
  return FormatHelp(lines);
}

Result<ScanResult> ScanOptions(Command command, const std::vector<std::string>& args) {
  const Tables& tb = TablesFor(command);
  std::vector<std::string> words;
  words.reserve(args.size() + 1);
  words.push_back(std::string(CommandName(command)));
  words.insert(words.end(), args.begin(), args.end());
  GetoptResult scan = Getopt(words, tb.longs, tb.optstring);
  if (scan.failure.has_value()) {
    const GetoptFailure& f = *scan.failure;
    if (f.word.rfind("--", 0) != 0) {
      std::string letter(1, static_cast<char>(f.optopt));
      return InvalidArgument(
          Prefixed(command, f.missing_argument ? "option requires an argument -- '" + letter + "'"
                                               : "invalid option -- '" + letter + "'"));
    }
    return InvalidArgument(Prefixed(command, LongOptionError(command, f.word)));
  }
  ScanResult result;
  std::span<const JobOption> options = JobOptions();
  for (GetoptOption& g : scan.options) {
    const JobOption* o =
        g.id >= kLongIdBase ? &options[g.id - kLongIdBase] : ByLetter(command, g.id);
    result.options.push_back(ParsedOption{
        .name = std::string(Canonical(*o)), .has_value = g.has_value, .value = std::move(g.value)});
  }
  result.operands = std::move(scan.operands);
  return result;
}

}  // namespace corral::slurm
