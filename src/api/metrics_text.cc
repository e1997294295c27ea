#include "api/metrics_text.h"

#include <charconv>
#include <cmath>

#include "core/check.h"

namespace corral::api {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the valid UTF-8 sequence at the start of `s` (1-4), or 0 when it is not one
// (a stray continuation byte, a truncated sequence, an overlong form, a surrogate, or a code
// point above U+10FFFF).
size_t Utf8SequenceLength(std::string_view s) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4;
    cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// Appends `s` as valid UTF-8, escaping backslash and newline, and `"` when `quote`.
void AppendEscaped(std::string_view s, bool quote, std::string* out) {
  while (!s.empty()) {
    char c = s[0];
    size_t n = Utf8SequenceLength(s);
    if (n == 0) {
      out->append(kReplacement);
      s.remove_prefix(1);
      continue;
    }
    if (n == 1) {
      if (c == '\\') {
        out->append("\\\\");
      } else if (c == '\n') {
        out->append("\\n");
      } else if (c == '"' && quote) {
        out->append("\\\"");
      } else {
        out->push_back(c);
      }
    } else {
      out->append(s.substr(0, n));
    }
    s.remove_prefix(n);
  }
}

std::string_view TypeName(MetricType t) {
  switch (t) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kUntyped:
      return "untyped";
  }
  return "untyped";
}

// Writes `value` into `buf` (at least 32 bytes); returns its length.
size_t FormatValue(double value, char* buf) {
  std::string_view special;
  if (std::isnan(value)) special = "NaN";
  if (std::isinf(value)) special = value > 0 ? "+Inf" : "-Inf";
  if (!special.empty()) {
    special.copy(buf, special.size());
    return special.size();
  }
  std::to_chars_result r;
  if (value == std::trunc(value) && std::fabs(value) < 1e15) {
    r = std::to_chars(buf, buf + 32, static_cast<int64_t>(value));
  } else {
    r = std::to_chars(buf, buf + 32, value);
  }
  CORRAL_CHECK(r.ec == std::errc()) << "cannot format a metric value";
  return static_cast<size_t>(r.ptr - buf);
}

}  // namespace

void AppendEscapedLabelValue(std::string_view value, std::string* out) {
  AppendEscaped(value, /*quote=*/true, out);
}

std::string FormatMetricValue(double value) {
  char buf[32];
  return std::string(buf, FormatValue(value, buf));
}

bool IsValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view name) {
  return IsValidMetricName(name) && name.find(':') == std::string_view::npos;
}

void MetricsWriter::Family(std::string_view name, MetricType type, std::string_view help) {
  CORRAL_DCHECK(IsValidMetricName(name)) << "metric name " << name;
  family_ = name;
  out_.append("# HELP ").append(name).push_back(' ');
  AppendEscaped(help, /*quote=*/false, &out_);
  out_.append("\n# TYPE ").append(name).push_back(' ');
  out_.append(TypeName(type)).push_back('\n');
}

void MetricsWriter::WriteLabels(std::span<const MetricLabel> labels, std::string_view le) {
  if (labels.empty() && le.empty()) return;
  out_.push_back('{');
  bool first = true;
  for (const MetricLabel& l : labels) {
    CORRAL_DCHECK(IsValidLabelName(l.name)) << "label name " << l.name;
    if (!first) out_.push_back(',');
    first = false;
    out_.append(l.name).append("=\"");
    AppendEscapedLabelValue(l.value, &out_);
    out_.push_back('"');
  }
  if (!le.empty()) {
    if (!first) out_.push_back(',');
    out_.append("le=\"").append(le).push_back('"');
  }
  out_.push_back('}');
}

void MetricsWriter::WriteValue(double value) {
  char buf[32];
  out_.push_back(' ');
  out_.append(buf, FormatValue(value, buf));
  out_.push_back('\n');
}

void MetricsWriter::Sample(std::span<const MetricLabel> labels, double value) {
  out_.append(family_);
  WriteLabels(labels, {});
  WriteValue(value);
}

void MetricsWriter::SampleSuffixed(std::string_view suffix, std::span<const MetricLabel> labels,
                                   double value, std::string_view le) {
  out_.append(family_).append(suffix);
  WriteLabels(labels, le);
  WriteValue(value);
}

void MetricsWriter::Histogram(std::span<const MetricLabel> labels, std::span<const double> bounds,
                              std::span<const uint64_t> counts, double sum) {
  CORRAL_CHECK(counts.size() == bounds.size() + 1)
      << "histogram " << family_ << ": " << counts.size() << " counts for " << bounds.size()
      << " bounds";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    cumulative += counts[i];
    SampleSuffixed("_bucket", labels, static_cast<double>(cumulative),
                   FormatMetricValue(bounds[i]));
  }
  cumulative += counts.back();
  SampleSuffixed("_bucket", labels, static_cast<double>(cumulative), "+Inf");
  SampleSuffixed("_sum", labels, sum);
  SampleSuffixed("_count", labels, static_cast<double>(cumulative));
}

}  // namespace corral::api
