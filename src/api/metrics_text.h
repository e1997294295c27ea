// MetricsWriter: the Prometheus text exposition format (version 0.0.4), written family by
// family: `# HELP`, `# TYPE`, then the family's samples.
//
// What it guarantees, whatever the input: label values are escaped (`\` -> `\\`, `"` -> `\"`,
// newline -> `\n`) and made valid UTF-8 (each invalid byte becomes U+FFFD), HELP text is
// escaped (`\` and newline), values are written as Go's strconv would read them (NaN, +Inf,
// -Inf, integers without an exponent). Names are the caller's: they must match
// [a-zA-Z_:][a-zA-Z0-9_:]* (label names [a-zA-Z_][a-zA-Z0-9_]*), which `CORRAL_DCHECK` verifies.
//
// Used by the controller's /metrics (controller/metrics/) and each agent's (agent/gpu_metrics).
//
// Not thread-safe: one writer per rendering.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace corral::api {

enum class MetricType { kCounter, kGauge, kHistogram, kUntyped };

struct MetricLabel {
  std::string_view name;
  std::string_view value;
};

class MetricsWriter {
 public:
  // Starts family `name` (a counter's name ends in "_total" by convention; the caller's).
  void Family(std::string_view name, MetricType type, std::string_view help);
  // One sample of the current family: `name{labels} value`.
  void Sample(std::span<const MetricLabel> labels, double value);
  void Sample(std::initializer_list<MetricLabel> labels, double value) {
    Sample(std::span<const MetricLabel>(labels.begin(), labels.size()), value);
  }
  // One sample named `family + suffix` (a histogram's "_bucket", "_sum", "_count").
  void SampleSuffixed(std::string_view suffix, std::span<const MetricLabel> labels, double value,
                      std::string_view le = {});
  // A histogram of the current family (MetricType::kHistogram): cumulative buckets with upper
  // bounds `bounds` (ascending; +Inf is added), then _sum and _count. `counts[i]` is the number
  // of observations in bucket i (not cumulative); counts.size() == bounds.size() + 1 (the last
  // is above every bound).
  void Histogram(std::span<const MetricLabel> labels, std::span<const double> bounds,
                 std::span<const uint64_t> counts, double sum);

  const std::string& text() const { return out_; }
  std::string Take() { return std::move(out_); }
  void Reserve(size_t bytes) { out_.reserve(bytes); }

 private:
  void WriteLabels(std::span<const MetricLabel> labels, std::string_view le);
  void WriteValue(double value);

  std::string out_;
  std::string family_;
};

// `value` escaped as a label value (without the quotes): see the class comment.
void AppendEscapedLabelValue(std::string_view value, std::string* out);
// The text `value` takes in the exposition format ("1", "0.25", "NaN", "+Inf").
std::string FormatMetricValue(double value);
// True for a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) / a label name ([a-zA-Z_][a-zA-Z0-9_]*).
bool IsValidMetricName(std::string_view name);
bool IsValidLabelName(std::string_view name);

// The Content-Type of the text format.
inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace corral::api
