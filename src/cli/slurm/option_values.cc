#include "cli/slurm/option_values.h"

#include <cctype>
#include <chrono>
#include <set>
#include <string>
#include <vector>

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

const std::set<std::string> kMailTypes = {
    "NONE",          "BEGIN",          "END",        "FAIL",       "REQUEUE",
    "ALL",           "INVALID_DEPEND", "STAGE_OUT",  "TIME_LIMIT", "TIME_LIMIT_90",
    "TIME_LIMIT_80", "TIME_LIMIT_50",  "ARRAY_TASKS"};

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

std::optional<NodeCount> ParseNodeCount(std::string_view text) {
  size_t dash = text.find('-');
  std::string_view lo = text.substr(0, dash);
  std::string_view hi = dash == std::string_view::npos ? "" : text.substr(dash + 1);
  if (!AllDigits(lo) || lo.size() > 9 || (!hi.empty() && (!AllDigits(hi) || hi.size() > 9))) {
    return std::nullopt;
  }
  NodeCount n;
  n.min = static_cast<uint32_t>(std::stoul(std::string(lo)));
  n.max = hi.empty() ? 0 : static_cast<uint32_t>(std::stoul(std::string(hi)));
  if (n.min == 0 || (n.max != 0 && n.max < n.min)) return std::nullopt;
  if (n.max == n.min) n.max = 0;
  return n;
}

Result<GpuCount> ParseGpuCount(std::string_view text) {
  if (text.find(',') != std::string_view::npos) {
    return InvalidArgument("one GPU type per job is supported");
  }
  std::vector<std::string> parts = Split(text, ':');
  if (parts.size() > 1 && parts.front() == "gpu") parts.erase(parts.begin());
  if (parts.size() > 2 || !AllDigits(parts.back()) || parts.back().size() > 6) {
    return InvalidArgument("expected [type:]count");
  }
  GpuCount g;
  g.count = static_cast<uint32_t>(std::stoul(parts.back()));
  if (parts.size() == 2) g.type = parts[0];
  return g;
}

Result<GpuCount> ParseGres(std::string_view text) {
  GpuCount g;
  if (Lower(text) == "none") return g;
  for (std::string item : Split(text, ',')) {
    if (item.rfind("gres/", 0) == 0) item = item.substr(5);
    if (item.rfind("gres:", 0) == 0) item = item.substr(5);
    std::vector<std::string> parts = Split(item, ':');
    if (parts.front() != "gpu") return MakeError(ErrorCode::kUnimplemented, parts.front());
    uint32_t n = 1;
    if (parts.size() >= 2 && AllDigits(parts.back())) {
      if (parts.back().size() > 6) return InvalidArgument("count too large");
      n = static_cast<uint32_t>(std::stoul(parts.back()));
      parts.pop_back();
    }
    if (parts.size() > 2) return InvalidArgument("expected gpu[:type][:count]");
    g.count = n;
    if (parts.size() == 2 && !parts[1].empty()) g.type = parts[1];
  }
  return g;
}

Result<int32_t> ParseNice(std::string_view text) {
  std::string_view digits = text;
  if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) digits.remove_prefix(1);
  if (!AllDigits(digits) || digits.size() > 10) return InvalidArgument("expected a number");
  long long n = std::stoll(std::string(digits));
  if (n > 2147483645LL) return InvalidArgument("out of range");
  return static_cast<int32_t>(text.front() == '-' ? -n : n);
}

Status CheckMailTypes(std::string_view text) {
  for (const std::string& t : Split(text, ',')) {
    if (kMailTypes.count(Upper(t)) == 0) {
      return InvalidArgument("unknown mail type \"" + t + "\"");
    }
  }
  return {};
}

Result<std::string> AddMailTypes(std::string_view current, std::string_view text) {
  CORRAL_RETURN_IF_ERROR(CheckMailTypes(text));
  static constexpr const char* kOrder[] = {
      "ARRAY_TASKS", "INVALID_DEPEND", "BEGIN",         "END",           "FAIL",         "REQUEUE",
      "STAGE_OUT",   "TIME_LIMIT",     "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50"};
  std::set<std::string> have;
  for (const std::string& t : Split(current, ',')) have.insert(Upper(t));
  for (const std::string& t : Split(text, ',')) {
    std::string u = Upper(t);
    if (u == "ALL") {
      have.insert({"INVALID_DEPEND", "BEGIN", "END", "FAIL", "REQUEUE", "STAGE_OUT"});
    } else if (u != "NONE") {
      have.insert(u);
    }
  }
  std::string out;
  for (const char* t : kOrder) {
    if (have.count(t) == 0) continue;
    if (!out.empty()) out += ',';
    out += t;
  }
  return out;
}

}  // namespace corral::slurm
