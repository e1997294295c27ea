#include "cli/slurm/option_values.h"

#include <cctype>
#include <chrono>
#include <string>

#include "core/duration.h"
#include "core/strings.h"

namespace corral::slurm {
namespace {

using internal::AllDigits;

struct SignalName {
  std::string_view name;
  int number;
};
constexpr SignalName kSignals[] = {
    {"HUP", 1},   {"INT", 2},    {"QUIT", 3},  {"ABRT", 6},  {"KILL", 9},  {"USR1", 10},
    {"USR2", 12}, {"ALRM", 14},  {"TERM", 15}, {"CONT", 18}, {"STOP", 19}, {"TSTP", 20},
    {"TTIN", 21}, {"TTOU", 22},  {"URG", 23},  {"XCPU", 24}, {"XFSZ", 25}, {"VTALRM", 26},
    {"PROF", 27}, {"WINCH", 28}, {"IO", 29},   {"PWR", 30},  {"SYS", 31},
};

}  // namespace

namespace internal {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace internal

Result<Duration> ParseTimeLimit(std::string_view text) {
  std::string t(text);
  if (!t.empty() && t.back() == '-') t += "0";
  auto d = ParseSlurmDuration(t);
  if (!d.has_value()) return InvalidArgument("invalid time limit \"" + std::string(text) + "\"");
  if (*d == kUnlimited) return kUnlimited;
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(*d).count();
  if (secs == 0) return kUnlimited;
  int64_t minutes = (secs + 59) / 60;
  return std::chrono::duration_cast<Duration>(std::chrono::minutes(minutes));
}

Result<SignalSpec> ParseSignalSpec(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument("invalid --signal specification \"" + std::string(text) + "\"");
  };
  SignalSpec spec;
  std::string_view s = text;
  if (s.size() >= 2 && s[1] == ':') {
    char flag = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    if (flag == 'B') {
      spec.batch_only = true;
    } else if (flag == 'R') {
      return MakeError(ErrorCode::kUnimplemented,
                       "--signal=R:... (signal on reservation end) is not supported by Corral");
    } else {
      return bad();
    }
    s.remove_prefix(2);
  }
  std::string_view sig = s, secs;
  if (size_t at = s.find('@'); at != std::string_view::npos) {
    sig = s.substr(0, at);
    secs = s.substr(at + 1);
  }
  if (AllDigits(sig) && sig.size() <= 5) {
    spec.signal = std::stoi(std::string(sig));
  } else {
    std::string upper = Upper(sig);
    if (upper.rfind("SIG", 0) == 0) upper = upper.substr(3);
    for (const SignalName& n : kSignals) {
      if (upper == n.name) spec.signal = n.number;
    }
  }
  if (spec.signal <= 0 || spec.signal > 64) return bad();
  int64_t seconds = 60;
  if (!secs.empty() || s.find('@') != std::string_view::npos) {
    if (!AllDigits(secs) || secs.size() > 5) return bad();
    seconds = std::stoll(std::string(secs));
    if (seconds > 0xffff) return bad();
  }
  spec.before = std::chrono::duration_cast<Duration>(std::chrono::seconds(seconds));
  return spec;
}

}  // namespace corral::slurm
