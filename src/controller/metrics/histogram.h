// LatencyHistogram: counts of observations (seconds) in fixed buckets, the form a Prometheus
// histogram is written in (api/metrics_text.h `MetricsWriter::Histogram`).
//
// Value type; not thread-safe (ServiceMetrics guards its own).
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace corral::controller::metrics {

// Upper bounds in seconds: 50 us to 10 s, for scheduling passes, store commits and requests.
inline constexpr std::array<double, 16> kLatencyBounds = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
    0.025,   0.05,   0.1,     0.25,   0.5,   1,      2.5,   10};

struct LatencyHistogram {
  std::array<uint64_t, kLatencyBounds.size() + 1> counts{};  // the last: above every bound
  double sum = 0;

  void Observe(double seconds) {
    size_t i = 0;
    while (i < kLatencyBounds.size() && seconds > kLatencyBounds[i]) ++i;
    ++counts[i];
    sum += seconds;
  }
  uint64_t count() const {
    uint64_t n = 0;
    for (uint64_t c : counts) n += c;
    return n;
  }
  std::span<const double> bounds() const { return kLatencyBounds; }
};

}  // namespace corral::controller::metrics
