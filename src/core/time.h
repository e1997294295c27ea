// Time types shared by every component.
//
// `Timestamp` is UTC wall time (stored, shown, sent); `MonoTime` is for timeouts only.
// Both have microsecond resolution. Nothing reads a real clock except `SystemClock`
// (core/clock.cc): everything else takes a `Clock` or is handed `now`.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace corral {

using Duration = std::chrono::microseconds;
using Timestamp = std::chrono::sys_time<Duration>;
using MonoTime = std::chrono::time_point<std::chrono::steady_clock, Duration>;

// A duration that stands for "no limit" (Slurm's UNLIMITED / INFINITE).
inline constexpr Duration kUnlimited = Duration::max();

constexpr Duration Seconds(int64_t s) { return std::chrono::seconds(s); }
constexpr Duration Millis(int64_t ms) { return std::chrono::milliseconds(ms); }
constexpr Duration Minutes(int64_t m) { return std::chrono::minutes(m); }

inline int64_t ToMicros(Timestamp t) { return t.time_since_epoch().count(); }
inline Timestamp FromMicros(int64_t us) { return Timestamp(Duration(us)); }
inline double ToSecondsF(Duration d) { return static_cast<double>(d.count()) / 1e6; }

// "2026-11-29T16:51:03" in UTC (Slurm's ISO form, without a zone), or "Unknown" for the epoch.
std::string FormatTimestamp(Timestamp t);

}  // namespace corral
