#include "agent/exec/process_deadlines.h"

#include <algorithm>

namespace corral::agent {

MonoTime AddSaturating(MonoTime start, Duration d) {
  constexpr MonoTime kNever = ProcessDeadlines::kNever;
  if (d == kUnlimited || d.count() < 0) return kNever;
  if (kNever - start <= d) return kNever;
  return start + d;
}

ProcessDeadlines::ProcessDeadlines(Duration time_limit, Timestamp limit_start, Duration kill_grace,
                                   SignalSpec warn, Timestamp start_time, MonoTime start_mono)
    : kill_grace_(kill_grace), warn_(warn) {
  const bool own_start = limit_start == Timestamp{};
  limit_origin_ = own_start ? start_mono : start_mono + (limit_start - start_time);
  term_at_ = AddSaturating(limit_origin_, time_limit);
  if (term_at_ != kNever) term_at_ = std::max(term_at_, start_mono + Millis(1));
  if (warn_.signal != 0 && term_at_ != kNever) {
    MonoTime warn_time = term_at_ - warn_.before;
    if (warn_time >= start_mono) {
      warn_at_ = warn_time;
    } else if (own_start) {
      warn_at_ = start_mono;
    } else {
      warned_ = true;
    }
  }
}

void ProcessDeadlines::BeginTermination(MonoTime now) {
  term_at_ = kNever;
  warn_at_ = kNever;
  kill_at_ = std::min(kill_at_, AddSaturating(now, kill_grace_));
}

ProcessDeadlines::Due ProcessDeadlines::Take(MonoTime now) {
  Due due;
  if (warn_at_ <= now) {
    warn_at_ = kNever;
    warned_ = true;
    due.warn = true;
  }
  if (term_at_ <= now) {
    timed_out_ = true;
    BeginTermination(now);
    due.term = true;
  }
  if (kill_at_ <= now) {
    kill_at_ = kNever;
    due.kill = true;
  }
  return due;
}

bool ProcessDeadlines::Cancel(MonoTime now) {
  if (cancelled_) return false;
  cancelled_ = true;
  BeginTermination(now);
  return true;
}

bool ProcessDeadlines::SetLimit(Duration limit, MonoTime now) {
  if (cancelled_ || timed_out_) return false;
  term_at_ = AddSaturating(limit_origin_, limit);
  warn_at_ = kNever;
  if (warn_.signal == 0 || term_at_ == kNever) return true;
  MonoTime warn_time = term_at_ - warn_.before;
  if (warn_time > now) {
    warned_ = false;  // re-armed: the new limit puts the warning time back in the future
    warn_at_ = warn_time;
  } else if (!warned_) {
    warn_at_ = now;
  }
  return true;
}

MonoTime ProcessDeadlines::Next() const { return std::min({warn_at_, term_at_, kill_at_}); }

}  // namespace corral::agent
