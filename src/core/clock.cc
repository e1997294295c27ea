#include "core/clock.h"

#include <ctime>

namespace corral {

Timestamp SystemClock::Now() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

MonoTime SystemClock::MonotonicNow() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::steady_clock::now());
}

const SystemClock& SystemClock::Get() {
  static const SystemClock clock;
  return clock;
}

std::string FormatTimestamp(Timestamp t) {
  if (t.time_since_epoch().count() == 0) return "Unknown";
  std::time_t secs = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

}  // namespace corral
