#include "cli/slurm/begin_time.h"

#include <cctype>
#include <chrono>
#include <string>

#include "core/strings.h"

namespace corral::slurm {
namespace {

using std::chrono::days;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

bool Digits(std::string_view s, size_t n) {
  if (s.size() != n) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

int Num(std::string_view s) {
  int n = 0;
  for (char c : s) n = n * 10 + (c - '0');
  return n;
}

// "HH:MM[:SS][ ][AM|PM]" -> seconds after midnight.
bool ParseClock(std::string_view s, int64_t* out) {
  std::string t = Lower(s);
  int add = 0;
  bool ampm = false;
  auto strip_suffix = [&](std::string_view suffix) {
    if (t.size() >= suffix.size() &&
        t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0) {
      t.resize(t.size() - suffix.size());
      while (!t.empty() && t.back() == ' ') t.pop_back();
      return true;
    }
    return false;
  };
  if (strip_suffix("pm")) {
    add = 12;
    ampm = true;
  } else if (strip_suffix("am")) {
    ampm = true;
  }
  size_t c1 = t.find(':');
  if (c1 == std::string::npos) return false;
  std::string_view h = std::string_view(t).substr(0, c1);
  std::string_view rest = std::string_view(t).substr(c1 + 1);
  std::string_view m = rest, sec;
  if (size_t c2 = rest.find(':'); c2 != std::string_view::npos) {
    m = rest.substr(0, c2);
    sec = rest.substr(c2 + 1);
    if (!Digits(sec, 2)) return false;
  }
  if (!(Digits(h, 1) || Digits(h, 2)) || !Digits(m, 2)) return false;
  int hh = Num(h), mm = Num(m), ss = sec.empty() ? 0 : Num(sec);
  if (ampm) {
    if (hh < 1 || hh > 12) return false;
    hh = hh % 12 + add;
  }
  if (hh > 23 || mm > 59 || ss > 59) return false;
  *out = hh * 3600 + mm * 60 + ss;
  return true;
}

// --begin (`past` false): times roll forward and past ones give the epoch. sacct -S/-E
// (`past` true): times roll back and are returned as they are.
Result<Timestamp> ParseTime(std::string_view text, Timestamp now, int64_t utc_offset_seconds,
                            bool past) {
  auto bad = [&] {
    return InvalidArgument(
        std::string(past ? "invalid time specification \"" : "invalid --begin specification \"") +
        std::string(text) + "\"");
  };
  std::string s = Lower(text);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  if (s.empty()) return bad();

  const seconds offset(utc_offset_seconds);
  // Local wall time as a sys_time, and today's local midnight.
  auto local_now = std::chrono::floor<seconds>(now) + offset;
  auto local_midnight = std::chrono::floor<days>(local_now);
  auto from_local = [&](std::chrono::sys_seconds local) -> Timestamp {
    Timestamp t = std::chrono::time_point_cast<Duration>(local - offset);
    return t <= now && !past ? Timestamp{} : t;
  };
  // A time of day: today, or tomorrow once passed (yesterday when still to come, in `past`).
  auto next_clock = [&](int64_t secs) {
    auto t = local_midnight + seconds(secs);
    if (!past && t <= local_now) t += days(1);
    if (past && t > local_now) t -= days(1);
    return from_local(t);
  };

  if (s.rfind("now", 0) == 0) {
    std::string_view rest = std::string_view(s).substr(3);
    if (rest.empty()) return past ? now : Timestamp{};
    int sign = rest.front() == '-' ? -1 : (rest.front() == '+' ? 1 : 0);
    if (sign == 0) return bad();
    rest.remove_prefix(1);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    size_t d = 0;
    while (d < rest.size() && std::isdigit(static_cast<unsigned char>(rest[d]))) ++d;
    if (d == 0 || d > 9) return bad();
    int64_t count = Num(rest.substr(0, d));
    std::string_view unit = rest.substr(d);
    while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
    int64_t mult = 0;
    for (auto [name, m] : {std::pair<std::string_view, int64_t>{"seconds", 1},
                           {"second", 1},
                           {"minutes", 60},
                           {"minute", 60},
                           {"hours", 3600},
                           {"hour", 3600},
                           {"days", 86400},
                           {"day", 86400},
                           {"weeks", 604800},
                           {"week", 604800},
                           {"", 1}}) {
      if (unit == name) {
        mult = m;
        break;
      }
    }
    if (mult == 0) return bad();
    if (count * mult > int64_t{100} * 366 * 86400) return bad();  // beyond a century
    Timestamp t = now + std::chrono::duration_cast<Duration>(seconds(sign * count * mult));
    return t <= now && !past ? Timestamp{} : t;
  }
  if (s == "today") return past ? from_local(local_midnight) : Timestamp{};
  if (s == "tomorrow" || s == "midnight") return from_local(local_midnight + days(1));
  if (s == "noon") return next_clock(12 * 3600);
  if (s == "elevenses") return next_clock(11 * 3600);
  if (s == "fika") return next_clock(15 * 3600);
  if (s == "teatime") return next_clock(16 * 3600);

  // YYYY-MM-DD[THH:MM[:SS]]
  if (s.size() >= 10 && Digits(std::string_view(s).substr(0, 4), 4) && s[4] == '-' && s[7] == '-') {
    std::string_view y = std::string_view(s).substr(0, 4), mo = std::string_view(s).substr(5, 2),
                     da = std::string_view(s).substr(8, 2);
    if (!Digits(mo, 2) || !Digits(da, 2)) return bad();
    std::chrono::year_month_day ymd{std::chrono::year(Num(y)),
                                    std::chrono::month(static_cast<unsigned>(Num(mo))),
                                    std::chrono::day(static_cast<unsigned>(Num(da)))};
    if (!ymd.ok()) return bad();
    int64_t clock = 0;
    if (s.size() > 10) {
      if (s[10] != 't' || !ParseClock(std::string_view(s).substr(11), &clock)) return bad();
    }
    return from_local(std::chrono::sys_days(ymd) + seconds(clock));
  }

  // MMDD[YY] / MM/DD[/YY] / MM.DD[.YY], optionally "-HH:MM[:SS]".
  std::string_view date = s, clock_text;
  if (size_t dash = s.find('-'); dash != std::string::npos) {
    date = std::string_view(s).substr(0, dash);
    clock_text = std::string_view(s).substr(dash + 1);
  }
  if (date.find(':') == std::string_view::npos && !date.empty() &&
      std::isdigit(static_cast<unsigned char>(date.front()))) {
    std::string compact;
    char sep = 0;
    for (char c : date) {
      if (c == '/' || c == '.') {
        if (sep != 0 && sep != c) return bad();
        sep = c;
        continue;
      }
      compact += c;
    }
    std::string_view mo, da, yy;
    if (sep != 0) {
      // MM/DD[/YY] with one- or two-digit parts.
      size_t a = date.find(sep);
      size_t b = date.find(sep, a + 1);
      mo = date.substr(0, a);
      da = date.substr(a + 1, b == std::string_view::npos ? std::string_view::npos : b - a - 1);
      if (b != std::string_view::npos) yy = date.substr(b + 1);
      if (!(Digits(mo, 1) || Digits(mo, 2)) || !(Digits(da, 1) || Digits(da, 2)) ||
          !(yy.empty() || Digits(yy, 2))) {
        return bad();
      }
    } else if (Digits(compact, 4) || Digits(compact, 6)) {
      mo = std::string_view(date).substr(0, 2);
      da = std::string_view(date).substr(2, 2);
      if (compact.size() == 6) yy = std::string_view(date).substr(4, 2);
    } else {
      return bad();
    }
    int64_t clock = 0;
    if (!clock_text.empty() && !ParseClock(clock_text, &clock)) return bad();
    std::chrono::year_month_day today{local_midnight};
    int year = yy.empty() ? static_cast<int>(today.year()) : 2000 + Num(yy);
    auto make = [&](int yr) {
      return std::chrono::year_month_day{std::chrono::year(yr),
                                         std::chrono::month(static_cast<unsigned>(Num(mo))),
                                         std::chrono::day(static_cast<unsigned>(Num(da)))};
    };
    auto ymd = make(year);
    if (!ymd.ok()) return bad();
    auto t = std::chrono::sys_days(ymd) + seconds(clock);
    if (yy.empty() && (past ? t > local_now : t <= local_now)) {
      ymd = make(past ? year - 1 : year + 1);
      if (!ymd.ok()) return bad();
      t = std::chrono::sys_days(ymd) + seconds(clock);
    }
    return from_local(t);
  }

  int64_t clock = 0;
  if (ParseClock(s, &clock)) return next_clock(clock);
  return bad();
}

}  // namespace

Result<Timestamp> ParseBeginTime(std::string_view text, Timestamp now, int64_t utc_offset_seconds) {
  return ParseTime(text, now, utc_offset_seconds, /*past=*/false);
}

Result<Timestamp> ParsePastTime(std::string_view text, Timestamp now, int64_t utc_offset_seconds) {
  return ParseTime(text, now, utc_offset_seconds, /*past=*/true);
}

}  // namespace corral::slurm
