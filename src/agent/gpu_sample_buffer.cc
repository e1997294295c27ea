#include "agent/gpu_sample_buffer.h"

namespace corral::agent {

void GpuSampleBuffer::Add(const api::GpuSample& sample) {
  if (capacity_ == 0) return;
  if (samples_.size() >= capacity_) {
    samples_.pop_front();
    ++dropped_;
  }
  samples_.emplace_back(next_++, sample);
}

uint64_t GpuSampleBuffer::Peek(size_t max, std::vector<api::GpuSample>* out) const {
  uint64_t token = 0;
  for (size_t i = 0; i < samples_.size() && i < max; ++i) {
    out->push_back(samples_[i].second);
    token = samples_[i].first;
  }
  return token;
}

void GpuSampleBuffer::Delivered(uint64_t token) {
  while (!samples_.empty() && samples_.front().first <= token) samples_.pop_front();
}

}  // namespace corral::agent
