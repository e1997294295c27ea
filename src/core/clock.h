// Clock: the only way Corral code reads time.
//
// Daemons take a `const Clock&` in their constructor; the scheduler core never holds one
// (it is handed `now`). `SystemClock` reads the real clocks; tests use `FakeClock`
// (core/testing/fake_clock.h) and the simulator its own clock advanced by the event queue.
// There is no Sleep(): waiting belongs to event loops.
#pragma once

#include "core/time.h"

namespace corral {

// Thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Timestamp Now() const = 0;
  virtual MonoTime MonotonicNow() const = 0;
};

// Reads `std::chrono::system_clock` and `steady_clock`. Thread-safe.
class SystemClock final : public Clock {
 public:
  Timestamp Now() const override;
  MonoTime MonotonicNow() const override;
  // A process-wide instance for `main()` functions to pass down.
  static const SystemClock& Get();
};

}  // namespace corral
