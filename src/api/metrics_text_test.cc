#include "api/metrics_text.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace corral::api {
namespace {

std::string Escaped(std::string_view s) {
  std::string out;
  AppendEscapedLabelValue(s, &out);
  return out;
}

TEST(MetricsTextTest, WritesHelpTypeAndSamples) {
  MetricsWriter w;
  w.Family("slurm_jobs_pending", MetricType::kGauge, "Pending jobs");
  w.Sample({{"partition", "gpu"}, {"account", "ml"}}, 3);
  w.Sample({}, 0.5);
  EXPECT_EQ(w.text(),
            "# HELP slurm_jobs_pending Pending jobs\n"
            "# TYPE slurm_jobs_pending gauge\n"
            "slurm_jobs_pending{partition=\"gpu\",account=\"ml\"} 3\n"
            "slurm_jobs_pending 0.5\n");
}

TEST(MetricsTextTest, EscapesQuotesBackslashesAndNewlines) {
  EXPECT_EQ(Escaped("a\"b"), "a\\\"b");
  EXPECT_EQ(Escaped("a\\b"), "a\\\\b");
  EXPECT_EQ(Escaped("a\nb"), "a\\nb");
  EXPECT_EQ(Escaped("\"}\n# TYPE x counter"), "\\\"}\\n# TYPE x counter");
  MetricsWriter w;
  w.Family("x", MetricType::kGauge, "two\nlines \\ and \"quotes\"");
  // HELP escapes backslash and newline only.
  EXPECT_EQ(w.text(), "# HELP x two\\nlines \\\\ and \"quotes\"\n# TYPE x gauge\n");
}

TEST(MetricsTextTest, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(Escaped("caf\xC3\xA9 \xE6\x97\xA5\xF0\x9F\x9A\x80"),
            "caf\xC3\xA9 \xE6\x97\xA5\xF0\x9F\x9A\x80");
  EXPECT_EQ(Escaped("a\xFF"
                    "b"),
            "a\xEF\xBF\xBD"
            "b");                                                              // not a lead byte
  EXPECT_EQ(Escaped("a\x80"), "a\xEF\xBF\xBD");                                // stray continuation
  EXPECT_EQ(Escaped("a\xC3"), "a\xEF\xBF\xBD");                                // truncated
  EXPECT_EQ(Escaped("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
  EXPECT_EQ(Escaped("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(Escaped("\xF4\x90\x80\x80").substr(0, 3), "\xEF\xBF\xBD");         // above U+10FFFF
  EXPECT_EQ(Escaped(std::string_view("a\0b", 3)), std::string("a\0b", 3));
}

TEST(MetricsTextTest, FormatsValuesAsPrometheusReadsThem) {
  EXPECT_EQ(FormatMetricValue(0), "0");
  EXPECT_EQ(FormatMetricValue(42), "42");
  EXPECT_EQ(FormatMetricValue(-7), "-7");
  EXPECT_EQ(FormatMetricValue(0.25), "0.25");
  EXPECT_EQ(FormatMetricValue(1e20), "1e+20");
  EXPECT_EQ(FormatMetricValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatMetricValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatMetricValue(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(MetricsTextTest, WritesCumulativeHistograms) {
  MetricsWriter w;
  w.Family("slurm_sched_cycle_seconds", MetricType::kHistogram, "Pass time");
  const double bounds[] = {0.001, 0.01};
  const uint64_t counts[] = {2, 1, 4};
  MetricLabel labels[] = {{"kind", "main"}};
  w.Histogram(labels, bounds, counts, 12.5);
  EXPECT_EQ(w.text(),
            "# HELP slurm_sched_cycle_seconds Pass time\n"
            "# TYPE slurm_sched_cycle_seconds histogram\n"
            "slurm_sched_cycle_seconds_bucket{kind=\"main\",le=\"0.001\"} 2\n"
            "slurm_sched_cycle_seconds_bucket{kind=\"main\",le=\"0.01\"} 3\n"
            "slurm_sched_cycle_seconds_bucket{kind=\"main\",le=\"+Inf\"} 7\n"
            "slurm_sched_cycle_seconds_sum{kind=\"main\"} 12.5\n"
            "slurm_sched_cycle_seconds_count{kind=\"main\"} 7\n");
}

TEST(MetricsTextTest, ChecksNames) {
  EXPECT_TRUE(IsValidMetricName("DCGM_FI_DEV_GPU_UTIL"));
  EXPECT_TRUE(IsValidMetricName("a:b_c1"));
  EXPECT_FALSE(IsValidMetricName("1abc"));
  EXPECT_FALSE(IsValidMetricName("a-b"));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_TRUE(IsValidLabelName("GPU_I_PROFILE"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
}

}  // namespace
}  // namespace corral::api
