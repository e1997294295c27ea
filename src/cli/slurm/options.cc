#include "cli/slurm/options.h"

#include <array>

#include "cli/slurm/getopt.h"

namespace corral::slurm {
namespace {

enum Arg : int8_t { kNa, kNo, kReq, kOpt };

struct OptionDef {
  const char* name;
  Arg sbatch;
  Arg srun;
  Arg salloc;
};

// Generated from the probes of the real sbatch/srun/salloc 22.05.8 (see the header), plus
// pyxis' SPANK options. Sorted by name.
constexpr OptionDef kOptions[] = {
    {"accel-bind", kNa, kReq, kNa},
    {"account", kReq, kReq, kReq},
    {"acctg-freq", kReq, kReq, kReq},
    {"array", kReq, kNa, kNa},
    {"batch", kReq, kNa, kNa},
    {"bb", kReq, kReq, kReq},
    {"bbf", kReq, kReq, kReq},
    {"bcast", kNa, kOpt, kNa},
    {"bcast-exclude", kNa, kReq, kNa},
    {"begin", kReq, kReq, kReq},
    {"bell", kNa, kNa, kNo},
    {"chdir", kReq, kReq, kReq},
    {"cluster", kReq, kReq, kReq},
    {"cluster-constraint", kReq, kReq, kReq},
    {"clusters", kReq, kReq, kReq},
    {"comment", kReq, kReq, kReq},
    {"compress", kNa, kOpt, kNa},
    {"constraint", kReq, kReq, kReq},
    {"container", kReq, kReq, kReq},
    {"container-entrypoint", kNo, kNo, kNo},
    {"container-env", kReq, kReq, kReq},
    {"container-image", kReq, kReq, kReq},
    {"container-mount-home", kNo, kNo, kNo},
    {"container-mounts", kReq, kReq, kReq},
    {"container-name", kReq, kReq, kReq},
    {"container-readonly", kNo, kNo, kNo},
    {"container-remap-root", kNo, kNo, kNo},
    {"container-save", kReq, kReq, kReq},
    {"container-workdir", kReq, kReq, kReq},
    {"container-writable", kNo, kNo, kNo},
    {"context", kReq, kReq, kReq},
    {"contiguous", kNo, kNo, kNo},
    {"core-spec", kReq, kReq, kReq},
    {"cores-per-socket", kReq, kReq, kReq},
    {"cpu-bind", kNa, kReq, kNa},
    {"cpu-freq", kReq, kReq, kReq},
    {"cpu_bind", kNa, kReq, kNa},
    {"cpus-per-gpu", kReq, kReq, kReq},
    {"cpus-per-task", kReq, kReq, kReq},
    {"deadline", kReq, kReq, kReq},
    {"debugger-test", kNa, kNo, kNa},
    {"delay-boot", kReq, kReq, kReq},
    {"dependency", kReq, kReq, kReq},
    {"disable-status", kNa, kNo, kNa},
    {"distribution", kReq, kReq, kReq},
    {"epilog", kNa, kReq, kNa},
    {"error", kReq, kReq, kNa},
    {"exact", kNa, kNo, kNa},
    {"exclude", kReq, kReq, kReq},
    {"exclusive", kOpt, kOpt, kOpt},
    {"export", kReq, kReq, kNa},
    {"export-file", kReq, kNa, kNa},
    {"extra-node-info", kReq, kReq, kReq},
    {"get-user-env", kOpt, kNa, kOpt},
    {"gid", kReq, kReq, kReq},
    {"gpu-bind", kReq, kReq, kReq},
    {"gpu-freq", kReq, kReq, kReq},
    {"gpus", kReq, kReq, kReq},
    {"gpus-per-node", kReq, kReq, kReq},
    {"gpus-per-socket", kReq, kReq, kReq},
    {"gpus-per-task", kReq, kReq, kReq},
    {"gres", kReq, kReq, kReq},
    {"gres-flags", kReq, kReq, kReq},
    {"help", kNo, kNo, kNo},
    {"het-group", kNa, kReq, kNa},
    {"hint", kReq, kReq, kReq},
    {"hold", kNo, kNo, kNo},
    {"ignore-pbs", kNo, kNa, kNa},
    {"immediate", kNa, kOpt, kOpt},
    {"input", kReq, kReq, kNa},
    {"interactive", kNa, kNo, kNa},
    {"job-name", kReq, kReq, kReq},
    {"jobid", kNa, kReq, kNa},
    {"kill-command", kNa, kNa, kOpt},
    {"kill-on-bad-exit", kNa, kOpt, kNa},
    {"kill-on-invalid-dep", kReq, kNa, kNa},
    {"label", kNa, kNo, kNa},
    {"licenses", kReq, kReq, kReq},
    {"mail-type", kReq, kReq, kReq},
    {"mail-user", kReq, kReq, kReq},
    {"mcs-label", kReq, kReq, kReq},
    {"mem", kReq, kReq, kReq},
    {"mem-bind", kReq, kReq, kReq},
    {"mem-per-cpu", kReq, kReq, kReq},
    {"mem-per-gpu", kReq, kReq, kReq},
    {"mincpus", kReq, kReq, kReq},
    {"mpi", kNa, kReq, kNa},
    {"msg-timeout", kNa, kReq, kNa},
    {"multi-prog", kNa, kNo, kNa},
    {"network", kReq, kReq, kReq},
    {"nice", kOpt, kOpt, kOpt},
    {"no-allocate", kNa, kNo, kNa},
    {"no-bell", kNa, kNa, kNo},
    {"no-container-entrypoint", kNo, kNo, kNo},
    {"no-container-mount-home", kNo, kNo, kNo},
    {"no-container-remap-root", kNo, kNo, kNo},
    {"no-kill", kOpt, kOpt, kOpt},
    {"no-requeue", kNo, kNa, kNa},
    {"no-shell", kNa, kNa, kNo},
    {"nodefile", kReq, kReq, kReq},
    {"nodelist", kReq, kReq, kReq},
    {"nodes", kReq, kReq, kReq},
    {"ntasks", kReq, kReq, kReq},
    {"ntasks-per-core", kReq, kReq, kReq},
    {"ntasks-per-gpu", kReq, kReq, kReq},
    {"ntasks-per-node", kReq, kReq, kReq},
    {"ntasks-per-socket", kReq, kReq, kReq},
    {"ntasks-per-tres", kReq, kReq, kReq},
    {"open-mode", kReq, kReq, kNa},
    {"output", kReq, kReq, kNa},
    {"overcommit", kNo, kNo, kNo},
    {"overlap", kNa, kOpt, kNa},
    {"oversubscribe", kNo, kNo, kNo},
    {"pack-group", kNa, kReq, kNa},
    {"parsable", kNo, kNa, kNa},
    {"partition", kReq, kReq, kReq},
    {"power", kReq, kReq, kReq},
    {"prefer", kReq, kReq, kReq},
    {"preserve-env", kNa, kNo, kNa},
    {"priority", kReq, kReq, kReq},
    {"profile", kReq, kReq, kReq},
    {"prolog", kNa, kReq, kNa},
    {"propagate", kOpt, kOpt, kNa},
    {"pty", kNa, kNo, kNa},
    {"qos", kReq, kReq, kReq},
    {"quiet", kNo, kNo, kNo},
    {"quit-on-interrupt", kNa, kNo, kNa},
    {"reboot", kNo, kNo, kNo},
    {"relative", kNa, kReq, kNa},
    {"requeue", kNo, kNa, kNa},
    {"reservation", kReq, kReq, kReq},
    {"resv-ports", kNa, kOpt, kNa},
    {"send-libs", kNa, kOpt, kNa},
    {"signal", kReq, kReq, kReq},
    {"slurmd-debug", kNa, kReq, kNa},
    {"sockets-per-node", kReq, kReq, kReq},
    {"spread-job", kNo, kNo, kNo},
    {"switches", kReq, kReq, kReq},
    {"task-epilog", kNa, kReq, kNa},
    {"task-prolog", kNa, kReq, kNa},
    {"tasks-per-node", kReq, kReq, kReq},
    {"test-only", kNo, kNo, kNa},
    {"thread-spec", kReq, kReq, kReq},
    {"threads", kNa, kReq, kNa},
    {"threads-per-core", kReq, kReq, kReq},
    {"time", kReq, kReq, kReq},
    {"time-min", kReq, kReq, kReq},
    {"tmp", kReq, kReq, kReq},
    {"uid", kReq, kReq, kReq},
    {"unbuffered", kNa, kNo, kNa},
    {"usage", kNo, kNo, kNo},
    {"use-min-nodes", kNo, kNo, kNo},
    {"verbose", kNo, kNo, kNo},
    {"version", kNo, kNo, kNo},
    {"wait", kNo, kReq, kNa},
    {"wait-all-nodes", kReq, kNa, kReq},
    {"wckey", kReq, kReq, kReq},
    {"whole", kNa, kNo, kNa},
    {"wrap", kReq, kNa, kNa},
    {"x11", kNa, kOpt, kOpt},
};

// Aliases Slurm accepts under another name: same meaning, reported under the canonical one.
struct Alias {
  const char* alias;
  const char* canonical;
};
constexpr Alias kAliases[] = {
    {"tasks-per-node", "ntasks-per-node"},
    {"cpu_bind", "cpu-bind"},
    {"clusters", "cluster"},
    {"pack-group", "het-group"},
};

// Short options: the getopt string of each command (":" first to report missing arguments,
// "+" to stop at the first non-option) and the long option each letter stands for.
struct ShortDef {
  char letter;
  const char* sbatch;
  const char* srun;
  const char* salloc;
};
constexpr ShortDef kShort[] = {
    {'a', "array", nullptr, nullptr},
    {'b', "begin", "begin", "begin"},
    {'c', "cpus-per-task", "cpus-per-task", "cpus-per-task"},
    {'d', "dependency", "dependency", "dependency"},
    {'e', "error", "error", nullptr},
    {'h', "help", "help", "help"},
    {'i', "input", "input", nullptr},
    {'k', "no-kill", "no-kill", "no-kill"},
    {'l', nullptr, "label", nullptr},
    {'m', "distribution", "distribution", "distribution"},
    {'n', "ntasks", "ntasks", "ntasks"},
    {'o', "output", "output", nullptr},
    {'p', "partition", "partition", "partition"},
    {'q', "qos", "qos", "qos"},
    {'r', nullptr, "relative", nullptr},
    {'s', "oversubscribe", "oversubscribe", "oversubscribe"},
    {'t', "time", "time", "time"},
    {'u', nullptr, "unbuffered", "usage"},
    {'v', "verbose", "verbose", "verbose"},
    {'w', "nodelist", "nodelist", "nodelist"},
    {'x', "exclude", "exclude", "exclude"},
    {'A', "account", "account", "account"},
    {'B', "extra-node-info", "extra-node-info", "extra-node-info"},
    {'C', "constraint", "constraint", "constraint"},
    {'D', "chdir", "chdir", "chdir"},
    {'E', nullptr, "preserve-env", nullptr},
    {'F', "nodefile", "nodefile", "nodefile"},
    {'G', "gpus", "gpus", "gpus"},
    {'H', "hold", "hold", "hold"},
    {'I', nullptr, "immediate", "immediate"},
    {'J', "job-name", "job-name", "job-name"},
    {'K', nullptr, "kill-on-bad-exit", "kill-command"},
    {'L', "licenses", "licenses", "licenses"},
    {'M', "cluster", "cluster", "cluster"},
    {'N', "nodes", "nodes", "nodes"},
    {'O', "overcommit", "overcommit", "overcommit"},
    {'Q', "quiet", "quiet", "quiet"},
    {'S', "core-spec", "core-spec", "core-spec"},
    {'T', nullptr, "threads", nullptr},
    {'V', "version", "version", "version"},
    {'W', "wait", "wait", nullptr},
    {'X', nullptr, "disable-status", nullptr},
    {'Z', nullptr, "no-allocate", nullptr},
};

Arg ArgFor(const OptionDef& d, Command c) {
  switch (c) {
    case Command::kSbatch:
      return d.sbatch;
    case Command::kSrun:
      return d.srun;
    case Command::kSalloc:
      return d.salloc;
  }
  return kNa;
}

const char* ShortFor(const ShortDef& d, Command c) {
  switch (c) {
    case Command::kSbatch:
      return d.sbatch;
    case Command::kSrun:
      return d.srun;
    case Command::kSalloc:
      return d.salloc;
  }
  return nullptr;
}

std::string_view Canonical(std::string_view name) {
  for (const Alias& a : kAliases) {
    if (name == a.alias) return a.canonical;
  }
  return name;
}

Arg ArgOfLong(Command c, std::string_view name) {
  for (const OptionDef& d : kOptions) {
    if (name == d.name) return ArgFor(d, c);
  }
  return kNa;
}

ArgKind KindOf(Arg a) {
  return a == kReq ? ArgKind::kRequired : (a == kOpt ? ArgKind::kOptional : ArgKind::kNone);
}

// Long options have ids past every letter: 256 + their index in kOptions.
constexpr int kLongIdBase = 256;

// The getopt tables of one command, built once.
struct Tables {
  std::vector<LongOption> longopts;
  std::string optstring;
};

const Tables& TablesFor(Command c) {
  static const std::array<Tables, 3> tables = [] {
    std::array<Tables, 3> t;
    for (Command cmd : {Command::kSbatch, Command::kSrun, Command::kSalloc}) {
      Tables& tb = t[static_cast<int>(cmd)];
      for (size_t i = 0; i < std::size(kOptions); ++i) {
        Arg a = ArgFor(kOptions[i], cmd);
        if (a == kNa) continue;
        tb.longopts.push_back({kOptions[i].name, KindOf(a), static_cast<int>(kLongIdBase + i)});
      }
      tb.optstring = "+:";
      for (const ShortDef& s : kShort) {
        const char* name = ShortFor(s, cmd);
        if (name == nullptr) continue;
        tb.optstring += s.letter;
        Arg a = ArgOfLong(cmd, name);
        // Slurm's short forms of options whose long form takes an optional argument take
        // none (-k, -s); -I and -K keep theirs attached ("-I60"), as in Slurm.
        if (a == kReq) {
          tb.optstring += ':';
        } else if (a == kOpt && (s.letter == 'I' || s.letter == 'K')) {
          tb.optstring += "::";
        }
      }
    }
    return t;
  }();
  return tables[static_cast<int>(c)];
}

std::string Prefixed(Command c, const std::string& message) {
  return std::string(CommandName(c)) + ": " + message;
}

// glibc's message for a long option getopt_long refused.
std::string LongOptionError(Command c, std::string_view arg) {
  std::string_view body = arg.substr(2);
  size_t eq = body.find('=');
  std::string_view name = body.substr(0, eq);
  std::vector<std::string> matches;
  const Tables& tb = TablesFor(c);
  for (const auto& o : tb.longopts) {
    if (std::string_view(o.name) == name) {
      matches = {o.name};
      break;
    }
    if (std::string_view(o.name).substr(0, name.size()) == name) matches.push_back(o.name);
  }
  if (matches.empty()) return "unrecognized option '" + std::string(arg) + "'";
  if (matches.size() > 1) {
    std::string out = "option '" + std::string(arg) + "' is ambiguous; possibilities:";
    for (const auto& m : matches) out += " '--" + m + "'";
    return out;
  }
  Arg a = ArgOfLong(c, matches[0]);
  if (eq != std::string_view::npos && a == kNo) {
    return "option '--" + matches[0] + "' doesn't allow an argument";
  }
  return "option '--" + matches[0] + "' requires an argument";
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
  for (const OptionDef& d : kOptions) {
    if (name == d.name && ArgFor(d, command) != kNa) return Canonical(d.name);
  }
  return {};
}

std::vector<std::string> LongOptionNames(Command command) {
  std::vector<std::string> out;
  for (const OptionDef& d : kOptions) {
    if (ArgFor(d, command) != kNa) out.push_back(d.name);
  }
  return out;
}

Result<ScanResult> ScanOptions(Command command, const std::vector<std::string>& args) {
  const Tables& tb = TablesFor(command);
  std::vector<std::string> words;
  words.reserve(args.size() + 1);
  words.push_back(std::string(CommandName(command)));
  words.insert(words.end(), args.begin(), args.end());
  GetoptResult scan = Getopt(words, tb.longopts, tb.optstring);
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
  for (GetoptOption& g : scan.options) {
    ParsedOption opt;
    if (g.id >= kLongIdBase) {
      opt.name = std::string(Canonical(kOptions[g.id - kLongIdBase].name));
    } else {
      for (const ShortDef& s : kShort) {
        if (s.letter == g.id) opt.name = ShortFor(s, command);
      }
      opt.name = std::string(Canonical(opt.name));
    }
    opt.has_value = g.has_value;
    opt.value = std::move(g.value);
    result.options.push_back(std::move(opt));
  }
  result.operands = std::move(scan.operands);
  return result;
}

}  // namespace corral::slurm
