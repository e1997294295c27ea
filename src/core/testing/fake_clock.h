// FakeClock: a manual clock for tests. `Set` and `Advance` move the wall and the monotonic
// view together. Thread-safe.
#pragma once

#include <atomic>

#include "core/clock.h"

namespace corral::testing {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(Timestamp start = Timestamp(Seconds(1'700'000'000)))
      : micros_(ToMicros(start)) {}

  Timestamp Now() const override { return FromMicros(micros_.load()); }
  MonoTime MonotonicNow() const override { return MonoTime(Duration(micros_.load())); }

  void Set(Timestamp t) { micros_.store(ToMicros(t)); }
  void Advance(Duration d) { micros_.fetch_add(d.count()); }

 private:
  std::atomic<int64_t> micros_;
};

}  // namespace corral::testing
