#include "core/duration.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>

namespace corral {
namespace {

bool ParseField(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 12) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<Duration> ParseSlurmDuration(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return InvalidArgument("invalid time \"" + std::string(text) + "\": " + std::string(why));
  };
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return bad("empty");
  if (EqualsIgnoreCase(s, "UNLIMITED") || EqualsIgnoreCase(s, "INFINITE")) return kUnlimited;

  int64_t days = 0;
  bool has_days = false;
  if (auto dash = s.find('-'); dash != std::string_view::npos) {
    if (!ParseField(s.substr(0, dash), &days)) return bad("expected days before '-'");
    has_days = true;
    s = s.substr(dash + 1);
  }
  std::array<int64_t, 3> fields{};
  size_t n = 0;
  // "D-" alone is D days, as Slurm reads it.
  while (!(has_days && s.empty())) {
    size_t colon = s.find(':');
    std::string_view part = s.substr(0, colon);
    if (n == fields.size()) return bad("too many ':' fields");
    if (!ParseField(part, &fields[n])) return bad("expected a number in each field");
    ++n;
    if (colon == std::string_view::npos) break;
    s = s.substr(colon + 1);
  }
  int64_t secs = 0;
  if (has_days) {
    // D-H, D-H:M, D-H:M:S
    int64_t h = fields[0], m = n > 1 ? fields[1] : 0, sec = n > 2 ? fields[2] : 0;
    secs = ((days * 24 + h) * 60 + m) * 60 + sec;
  } else if (n == 1) {
    secs = fields[0] * 60;  // minutes
  } else if (n == 2) {
    secs = fields[0] * 60 + fields[1];  // M:S
  } else {
    secs = (fields[0] * 60 + fields[1]) * 60 + fields[2];  // H:M:S
  }
  constexpr int64_t kMaxSeconds = std::numeric_limits<int64_t>::max() / 1'000'000 / 2;
  if (days > 1'000'000 || secs < 0 || secs > kMaxSeconds) return bad("too large");
  return Duration(Seconds(secs));
}

std::string FormatSlurmDuration(Duration d) {
  if (d == kUnlimited) return "UNLIMITED";
  if (d.count() < 0) return "INVALID";
  int64_t total = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  int64_t days = total / 86400;
  int64_t h = (total / 3600) % 24;
  int64_t m = (total / 60) % 60;
  int64_t s = total % 60;
  char buf[64];
  if (days > 0) {
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(days),
                  static_cast<long long>(h), static_cast<long long>(m), static_cast<long long>(s));
  } else if (h > 0) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(h),
                  static_cast<long long>(m), static_cast<long long>(s));
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(m),
                  static_cast<long long>(s));
  }
  return buf;
}

}  // namespace corral
