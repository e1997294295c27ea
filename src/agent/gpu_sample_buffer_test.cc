#include "agent/gpu_sample_buffer.h"

#include <gtest/gtest.h>

namespace corral::agent {
namespace {

api::GpuSample Reading(uint32_t gpu, double util) {
  return {.gpu = gpu, .job = JobId(7), .utilization = util};
}

TEST(GpuSampleBufferTest, AFailedHeartbeatLosesNothingAndADeliveredOneSendsNothingTwice) {
  GpuSampleBuffer b(100);
  b.Add(Reading(0, 10));
  b.Add(Reading(1, 20));
  std::vector<api::GpuSample> first;
  uint64_t token = b.Peek(10, &first);
  ASSERT_EQ(first.size(), 2u);
  // The heartbeat failed: nothing acknowledged; the next one carries them again, plus more.
  b.Add(Reading(0, 30));
  std::vector<api::GpuSample> second;
  uint64_t token2 = b.Peek(10, &second);
  ASSERT_EQ(second.size(), 3u);
  EXPECT_EQ(second[0], first[0]);
  // A reading added while a heartbeat is in flight stays for the next one.
  b.Add(Reading(1, 40));
  b.Delivered(token2);
  std::vector<api::GpuSample> third;
  b.Peek(10, &third);
  ASSERT_EQ(third.size(), 1u);
  EXPECT_DOUBLE_EQ(third[0].utilization, 40);
  b.Delivered(token);  // an old token drops nothing more
  EXPECT_EQ(b.size(), 1u);
}

TEST(GpuSampleBufferTest, AHeartbeatCarriesAtMostMaxAndAFullBufferDropsTheOldest) {
  GpuSampleBuffer b(3);
  for (int i = 0; i < 5; ++i) b.Add(Reading(0, i));
  EXPECT_EQ(b.size(), 3u);
  EXPECT_EQ(b.dropped(), 2u);
  std::vector<api::GpuSample> out;
  uint64_t token = b.Peek(2, &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_DOUBLE_EQ(out[0].utilization, 2);
  EXPECT_DOUBLE_EQ(out[1].utilization, 3);
  b.Delivered(token);
  out.clear();
  b.Peek(2, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOUBLE_EQ(out[0].utilization, 4);
}

}  // namespace
}  // namespace corral::agent
