#include "cli/slurm/getopt.h"

#include <getopt.h>

#include <mutex>

namespace corral::slurm {
namespace {

std::mutex& GetoptMutex() {
  static std::mutex mu;
  return mu;
}

int HasArg(ArgKind a) {
  switch (a) {
    case ArgKind::kNone:
      return no_argument;
    case ArgKind::kRequired:
      return required_argument;
    case ArgKind::kOptional:
      return optional_argument;
  }
  return no_argument;
}

}  // namespace

GetoptResult Getopt(const std::vector<std::string>& words, const std::vector<LongOption>& longs,
                    const std::string& optstring) {
  std::vector<struct option> table;
  table.reserve(longs.size() + 1);
  for (const LongOption& l : longs) table.push_back({l.name, HasArg(l.arg), nullptr, l.id});
  table.push_back({nullptr, 0, nullptr, 0});
  // getopt_long wants mutable C strings (and permutes them unless in "+" mode).
  std::vector<std::string> storage = words;
  std::vector<char*> argv;
  argv.reserve(storage.size() + 1);
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  const int argc = static_cast<int>(storage.size());

  GetoptResult result;
  std::lock_guard<std::mutex> lock(GetoptMutex());
  optind = 0;  // full reinitialisation of glibc's scanner
  opterr = 0;
  while (true) {
    int started = optind == 0 ? 1 : optind;
    int c = getopt_long(argc, argv.data(), optstring.c_str(), table.data(), nullptr);
    if (c == -1) break;
    if (c == '?' || c == ':') {
      GetoptFailure f;
      f.missing_argument = c == ':';
      f.optopt = optopt;
      f.word = started < argc ? argv[started] : "";
      f.last_word = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
      result.failure = std::move(f);
      return result;
    }
    GetoptOption o{.id = c};
    if (optarg != nullptr) {
      o.has_value = true;
      o.value = optarg;
    }
    result.options.push_back(std::move(o));
  }
  for (int i = optind; i < argc; ++i) result.operands.push_back(argv[i]);
  return result;
}

std::string FormatHelp(const std::vector<HelpLine>& lines) {
  constexpr size_t kHelpColumn = 32;
  std::string out;
  for (const HelpLine& l : lines) {
    std::string left = l.letter != 0 ? std::string("  -") + l.letter : std::string(4, ' ');
    if (l.name != nullptr) left += (l.letter != 0 ? ", --" : "  --") + std::string(l.name);
    std::string arg = l.arg_name != nullptr ? l.arg_name : "ARG";
    if (l.arg == ArgKind::kRequired) left += "=" + arg;
    if (l.arg == ArgKind::kOptional) left += "[=" + arg + "]";
    left += left.size() + 2 <= kHelpColumn ? std::string(kHelpColumn - left.size(), ' ') : "  ";
    out += left + l.help + "\n";
  }
  return out;
}

}  // namespace corral::slurm
