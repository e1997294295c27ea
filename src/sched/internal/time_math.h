// Saturating time and counter arithmetic for the scheduling pass: a job's end, a reservation's
// start and an unlimited time limit never overflow; they stop at `kNever`.
//
// Invariant: `kNever` (Timestamp::max()) means "never" everywhere in the pass, and `kUnlimited`
// (core/time.h) "no limit"; `AddSat` maps one onto the other.
//
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "core/time.h"

namespace corral::sched::internal {

inline constexpr Timestamp kNever = Timestamp::max();

// `t + d`, or `kNever` when `d` is unlimited, `t` is never or the sum would reach past it;
// `t` when `d` is not positive.
inline Timestamp AddSat(Timestamp t, Duration d) {
  if (d == kUnlimited || t == kNever) return kNever;
  if (d.count() <= 0) return t;
  if (kNever - t <= d) return kNever;
  return t + d;
}

// A job's time limit as the pass uses it: 0 or less means no limit.
inline Duration EffectiveLimit(Duration d) { return d.count() <= 0 ? kUnlimited : d; }

// `a - b`, or 0 when `b` is larger.
inline uint32_t SubSat(uint32_t a, uint32_t b) { return a > b ? a - b : 0; }
inline uint64_t SubSat(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// `FormatTimestamp`, or "never" for `kNever`.
inline std::string FormatTime(Timestamp t) { return t == kNever ? "never" : FormatTimestamp(t); }

}  // namespace corral::sched::internal
