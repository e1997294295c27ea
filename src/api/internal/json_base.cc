#include "api/internal/json_base.h"

#include "core/strings.h"

namespace corral::api::internal {

size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) -> unsigned { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return k < s.size() && byte(k) >= lo && byte(k) <= hi;
  };
  unsigned c = byte(i);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c == 0xE0) return cont(i + 1, 0xA0) && cont(i + 2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(i + 1) && cont(i + 2) ? 3 : 0;
  if (c == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;
  if (c == 0xF0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  return 0;
}

std::string Excerpt(std::string_view s, size_t max_bytes, bool quoted) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  size_t i = 0;
  while (i < s.size() && out.size() < max_bytes) {
    auto c = static_cast<unsigned char>(s[i]);
    if (quoted && (c == '"' || c == '\\')) {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\n') {
      out += "\\n";
      ++i;
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    } else if (size_t len = Utf8SequenceLength(s, i); len > 0) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    }
  }
  if (i < s.size()) out += "...";
  return out;
}

std::optional<Timestamp> ParseRfc3339(std::string_view s) {
  auto num = [&](size_t pos, size_t n, int* out) {
    if (pos + n > s.size()) return false;
    int v = 0;
    for (size_t k = pos; k < pos + n; ++k) {
      if (s[k] < '0' || s[k] > '9') return false;
      v = v * 10 + (s[k] - '0');
    }
    *out = v;
    return true;
  };
  int year, month, day, hour, minute, second;
  if (!num(0, 4, &year) || s.size() < 20 || s[4] != '-' || !num(5, 2, &month) || s[7] != '-' ||
      !num(8, 2, &day) || (s[10] != 'T' && s[10] != 't') || !num(11, 2, &hour) || s[13] != ':' ||
      !num(14, 2, &minute) || s[16] != ':' || !num(17, 2, &second)) {
    return std::nullopt;
  }
  size_t pos = 19;
  int64_t micros = 0;
  if (s[pos] == '.') {
    ++pos;
    size_t digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 6) micros = micros * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0 || digits > 9) return std::nullopt;
    for (size_t k = digits; k < 6; ++k) micros *= 10;
  }
  int offset_minutes = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!num(pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !num(pos + 4, 2, &om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_minutes = (s[pos] == '+' ? 1 : -1) * (oh * 60 + om);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  std::chrono::year_month_day ymd{std::chrono::year{year},
                                  std::chrono::month{static_cast<unsigned>(month)},
                                  std::chrono::day{static_cast<unsigned>(day)}};
  if (!ymd.ok() || hour > 23 || minute > 59 || second > 59) return std::nullopt;
  int64_t days = std::chrono::sys_days{ymd}.time_since_epoch().count();
  int64_t secs = days * 86400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
  return FromMicros(secs * 1'000'000 + micros);
}

std::string_view JobEventTypeName(JobEventType t) {
  switch (t) {
    case JobEventType::kStarted:
      return "STARTED";
    case JobEventType::kExited:
      return "EXITED";
    case JobEventType::kLaunchFailed:
      return "LAUNCH_FAILED";
    case JobEventType::kTaskExited:
      return "TASK_EXITED";
    case JobEventType::kTaskLaunchFailed:
      return "TASK_LAUNCH_FAILED";
  }
  return "UNKNOWN";
}

Result<JobEventType> ParseJobEventType(std::string_view text) {
  for (JobEventType t : {JobEventType::kStarted, JobEventType::kExited, JobEventType::kLaunchFailed,
                         JobEventType::kTaskExited, JobEventType::kTaskLaunchFailed}) {
    if (EqualsIgnoreCase(text, JobEventTypeName(t))) return t;
  }
  return InvalidArgument("unknown job event type \"" + Excerpt(text) + "\"");
}

Result<PreemptMode> ParsePreemptModeText(std::string_view text) {
  if (std::optional<PreemptMode> m = ParsePreemptMode(text)) return *m;
  return InvalidArgument("unknown preempt mode \"" + Excerpt(text) +
                         "\" (expected off, requeue or cancel)");
}

Result<BudgetPeriod> ParseBudgetPeriodText(std::string_view text) {
  if (std::optional<BudgetPeriod> p = ParseBudgetPeriod(text)) return *p;
  return InvalidArgument("unknown budget period \"" + Excerpt(text) +
                         "\" (expected day, week, month or window)");
}

Result<DependencyType> ParseDependencyType(std::string_view text) {
  for (DependencyType t :
       {DependencyType::kAfter, DependencyType::kAfterAny, DependencyType::kAfterOk,
        DependencyType::kAfterNotOk, DependencyType::kAfterCorr, DependencyType::kSingleton}) {
    if (EqualsIgnoreCase(text, DependencyTypeName(t))) return t;
  }
  return InvalidArgument("unknown dependency type \"" + Excerpt(text) + "\"");
}

}  // namespace corral::api::internal
