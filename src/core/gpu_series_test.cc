#include "core/gpu_series.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

const Timestamp kT0 = FromMicros(1'764'620'000'000'000);

GpuReading At(Duration offset, double util, uint64_t mem = 1000, uint64_t energy_mj = 0,
              uint32_t gpu = 0) {
  return {.gpu = gpu,
          .time = kT0 + offset,
          .utilization = util,
          .memory_used_mb = mem,
          .power_watts = 70 + util * 6,
          .energy_mj = energy_mj};
}

TEST(GpuSeriesTest, ReadingsFallIntoBucketsOfTheInitialWidth) {
  JobGpuSeries s;
  ASSERT_TRUE(AddGpuReading(&s, "n1", At(Seconds(0), 10)));
  ASSERT_TRUE(AddGpuReading(&s, "n1", At(Seconds(5), 30, 4000)));
  ASSERT_TRUE(AddGpuReading(&s, "n1", At(Seconds(12), 0)));
  ASSERT_EQ(s.tracks.size(), 1u);
  const GpuTrack& t = s.tracks[0];
  EXPECT_EQ(t.width, kInitialBucketWidth);
  ASSERT_EQ(t.buckets.size(), 2u);
  EXPECT_EQ(t.buckets[0].samples, 2u);
  EXPECT_DOUBLE_EQ(t.buckets[0].util_mean(), 20);
  EXPECT_DOUBLE_EQ(t.buckets[0].util_max, 30);
  EXPECT_EQ(t.buckets[0].mem_max_mb, 4000u);
  EXPECT_EQ(t.buckets[1].start, kT0 + Seconds(10));
  EXPECT_EQ(t.buckets[1].idle_samples, 1u);
}

TEST(GpuSeriesTest, TracksAreKeptPerNodeAndGpuInOrder) {
  JobGpuSeries s;
  AddGpuReading(&s, "n2", At(Seconds(0), 1, 0, 0, 0));
  AddGpuReading(&s, "n1", At(Seconds(0), 1, 0, 0, 3));
  AddGpuReading(&s, "n1", At(Seconds(0), 1, 0, 0, 1));
  ASSERT_EQ(s.tracks.size(), 3u);
  EXPECT_EQ(s.tracks[0].node + std::to_string(s.tracks[0].gpu), "n11");
  EXPECT_EQ(s.tracks[1].node + std::to_string(s.tracks[1].gpu), "n13");
  EXPECT_EQ(s.tracks[2].node + std::to_string(s.tracks[2].gpu), "n20");
}

TEST(GpuSeriesTest, AFullTrackMergesItsBucketsTwoToOneAndKeepsTheTotals) {
  JobGpuSeries s;
  // A day of readings every 5 s: far more than kMaxBuckets buckets of 10 s.
  const int n = 24 * 3600 / 5;
  for (int i = 0; i < n; ++i) {
    double util = i < n / 2 ? 100 : 0;
    ASSERT_TRUE(AddGpuReading(&s, "n1", At(Seconds(5 * i), util, 100 + i, 1000ull * i)));
  }
  const GpuTrack& t = s.tracks[0];
  EXPECT_LE(t.buckets.size(), kMaxBuckets);
  EXPECT_GE(t.buckets.size(), kMaxBuckets / 2);
  // The width is the initial one doubled until a day fits.
  Duration w = kInitialBucketWidth;
  while (Seconds(24 * 3600) / w >= static_cast<int64_t>(kMaxBuckets)) w *= 2;
  EXPECT_EQ(t.width, w);
  GpuTrackSummary sum = Summarize(t);
  EXPECT_EQ(sum.samples, static_cast<uint32_t>(n));
  EXPECT_DOUBLE_EQ(sum.util_mean, 50);
  EXPECT_DOUBLE_EQ(sum.util_max, 100);
  EXPECT_DOUBLE_EQ(sum.idle_fraction, 0.5);
  EXPECT_EQ(sum.mem_max_mb, static_cast<uint64_t>(100 + n - 1));
  EXPECT_NEAR(sum.energy_joules, n - 1, 1e-6);  // 1 J per reading after the first
  for (size_t i = 1; i < t.buckets.size(); ++i)
    EXPECT_LT(t.buckets[i - 1].start, t.buckets[i].start);
  EXPECT_NEAR(WastedFraction(t, 5), 0.5, 0.01);
}

TEST(GpuSeriesTest, EnergyCountsTheCounterGrowthAndAResetAddsNothing) {
  JobGpuSeries s;
  AddGpuReading(&s, "n1", At(Seconds(0), 50, 0, 10'000));
  AddGpuReading(&s, "n1", At(Seconds(1), 50, 0, 15'000));
  AddGpuReading(&s, "n1", At(Seconds(2), 50, 0, 2'000));  // the driver reloaded
  AddGpuReading(&s, "n1", At(Seconds(3), 50, 0, 3'000));
  EXPECT_DOUBLE_EQ(Summarize(s.tracks[0]).energy_joules, 6);
}

TEST(GpuSeriesTest, AReadingNotNewerThanTheLastIsDropped) {
  JobGpuSeries s;
  EXPECT_TRUE(AddGpuReading(&s, "n1", At(Seconds(10), 50)));
  EXPECT_FALSE(AddGpuReading(&s, "n1", At(Seconds(10), 90)));
  EXPECT_FALSE(AddGpuReading(&s, "n1", At(Seconds(3), 90)));
  EXPECT_EQ(Summarize(s.tracks[0]).samples, 1u);
}

TEST(GpuSeriesTest, EncodingRoundTripsAndRejectsDamage) {
  JobGpuSeries s;
  s.job = JobId(42);
  s.generation = Generation(3);
  s.waste_flagged = kT0 + Seconds(99);
  s.waste_note = "GPU 0 under 5% for 30m";
  for (int i = 0; i < 500; ++i)
    AddGpuReading(&s, "gpu01", At(Seconds(7 * i), i % 100, i, 10ull * i));
  AddGpuReading(&s, "gpu02", At(Seconds(1), 12.5, 9216, 77, 5));
  std::string blob = EncodeGpuSeries(s);
  auto back = DecodeGpuSeries(blob);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, s);
  EXPECT_FALSE(DecodeGpuSeries(blob.substr(0, blob.size() / 2)).has_value());
  EXPECT_FALSE(DecodeGpuSeries("").has_value());
  EXPECT_FALSE(DecodeGpuSeries(std::string("\x07", 1)).has_value());
}

}  // namespace
}  // namespace corral
