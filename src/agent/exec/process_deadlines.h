// ProcessDeadlines: when the process supervisor signals one of its processes — the warning
// signal `warn.before` the time limit, SIGTERM at the limit, SIGKILL a grace period after
// SIGTERM (at the limit or at a cancel) — and how a new time limit moves them.
//
// Pure: it sends nothing and reads no clock. Times come in as arguments; `Due(now)` says what
// to send now and records it as sent. The supervisor (process_supervisor.cc) keeps one per
// process and sends the signals.
//
// Value type; not thread-safe (the supervisor holds its lock around it).
#pragma once

#include "core/job.h"
#include "core/time.h"

namespace corral::agent {

class ProcessDeadlines {
 public:
  static constexpr MonoTime kNever = MonoTime::max();

  // What the process was launched with (see `ProcessSpec`): its time limit, counted from
  // `limit_start` (the epoch: from the process's own start), the grace between SIGTERM and
  // SIGKILL, and its warning. `start_time`/`start_mono` are the process's start on each clock.
  // A limit already over at the start ends it 1 ms after it. A warning whose time is already
  // past at the start is due at once when the limit counts from the process's own start, and
  // never otherwise (a step started after its job's warning time).
  ProcessDeadlines(Duration time_limit, Timestamp limit_start, Duration kill_grace, SignalSpec warn,
                   Timestamp start_time, MonoTime start_mono);

  // What is due at `now`, each at most once: the warning, SIGCONT + SIGTERM (the limit: the
  // process is then `timed_out`), SIGKILL (the grace after SIGTERM has passed).
  struct Due {
    bool warn = false;
    bool term = false;
    bool kill = false;
    bool operator==(const Due&) const = default;
  };
  Due Take(MonoTime now);

  // A cancel at `now`: SIGCONT + SIGTERM now (returns true), SIGKILL after the grace. A second
  // cancel does nothing (returns false).
  bool Cancel(MonoTime now);

  // A new time limit at `now`, counted from where the first one counted from. The warning
  // moves with it: re-armed when its new time is ahead, due now when its time is past and it
  // was not sent, not sent again otherwise. A process already being terminated (cancelled or
  // timed out) is left as it is (returns false).
  bool SetLimit(Duration limit, MonoTime now);

  // The earliest deadline left, or `kNever`.
  MonoTime Next() const;

  bool timed_out() const { return timed_out_; }
  bool cancelled() const { return cancelled_; }
  const SignalSpec& warn() const { return warn_; }

 private:
  void BeginTermination(MonoTime now);

  MonoTime limit_origin_{};  // what the time limit counts from
  Duration kill_grace_{};
  SignalSpec warn_;
  bool warned_ = false;  // the warning was sent (or its time had passed at the start)
  MonoTime warn_at_ = kNever;
  MonoTime term_at_ = kNever;
  MonoTime kill_at_ = kNever;
  bool timed_out_ = false;
  bool cancelled_ = false;
};

// `start + d`, saturating at `ProcessDeadlines::kNever` (`kUnlimited` is `Duration::max()`; a
// negative `d` is no deadline either).
MonoTime AddSaturating(MonoTime start, Duration d);

}  // namespace corral::agent
