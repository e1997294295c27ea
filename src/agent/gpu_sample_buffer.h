// GpuSampleBuffer: the readings of the GPUs held by jobs, kept between heartbeats until the
// controller has them. Bounded: when full, the oldest go (counted). A heartbeat carries the
// oldest `max` and acknowledges them only once the controller has answered, so a failed
// heartbeat loses nothing (the next carries them again).
//
// Not thread-safe (NodeMonitor calls it under its lock).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "api/messages.h"

namespace corral::agent {

class GpuSampleBuffer {
 public:
  explicit GpuSampleBuffer(size_t capacity) : capacity_(capacity) {}

  void Add(const api::GpuSample& sample);
  // Appends the oldest `max` readings to `out`; returns the token that acknowledges them.
  uint64_t Peek(size_t max, std::vector<api::GpuSample>* out) const;
  // The readings up to `token` have been delivered: they go.
  void Delivered(uint64_t token);

  size_t size() const { return samples_.size(); }
  uint64_t dropped() const { return dropped_; }

 private:
  size_t capacity_;
  std::deque<std::pair<uint64_t, api::GpuSample>> samples_;  // (sequence, reading), oldest first
  uint64_t next_ = 1;
  uint64_t dropped_ = 0;
};

}  // namespace corral::agent
