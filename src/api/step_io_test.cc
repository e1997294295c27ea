// The frames of a terminal step's input (api/step_io.h): what srun queues and the agent,
// which takes the caller's bytes as hostile, decodes.
#include "api/step_io.h"

#include <gtest/gtest.h>

namespace corral::api {
namespace {

TEST(PtyFramesTest, RoundTripAndPartialFrames) {
  const PtyFrame typed{.data = std::string("ls\r\x03", 4)};
  const PtyFrame resize{.kind = PtyFrame::Kind::kResize, .rows = 40, .cols = 120};
  std::string bytes = EncodePtyFrame(typed) + EncodePtyFrame(resize);
  EXPECT_EQ(bytes.size(), 5u + 4u + 5u + 4u);
  EXPECT_EQ(EncodePtyFrame(resize), std::string("w\0\0\0\x04\0\x28\0\x78", 9));
  std::vector<PtyFrame> frames;
  auto used = DecodePtyFrames(bytes, &frames);
  ASSERT_TRUE(used) << used.error().message;
  EXPECT_EQ(*used, bytes.size());
  EXPECT_EQ(frames, (std::vector<PtyFrame>{typed, resize}));
  // A frame cut short is left for later; nothing of it is taken.
  frames.clear();
  used = DecodePtyFrames(std::string_view(bytes).substr(0, bytes.size() - 2), &frames);
  ASSERT_TRUE(used);
  EXPECT_EQ(*used, 9u);
  EXPECT_EQ(frames, (std::vector<PtyFrame>{typed}));
  frames.clear();
  EXPECT_EQ(*DecodePtyFrames("", &frames), 0u);
  EXPECT_TRUE(frames.empty());
}

TEST(PtyFramesTest, HostileFramesAreRefusedByName) {
  std::vector<PtyFrame> frames;
  auto bad = DecodePtyFrames(std::string("x\0\0\0\x01z", 6), &frames);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "pty input: unknown frame type 120");
  bad = DecodePtyFrames(std::string("d\xff\xff\xff\xff", 5), &frames);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "pty input: a data frame of 4294967295 bytes (1..4096)");
  bad = DecodePtyFrames(std::string("d\0\0\0\0", 5), &frames);
  EXPECT_FALSE(bad);
  bad = DecodePtyFrames(std::string("w\0\0\0\x05\0\x01\0\x01\0", 10), &frames);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "pty input: a window-size frame of 5 bytes (4)");
  bad = DecodePtyFrames(std::string("w\0\0\0\x04\0\0\0\x50", 9), &frames);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "pty input: a window size of 0x80 (1..4096 each)");
  bad = DecodePtyFrames(std::string("w\0\0\0\x04\xff\xff\0\x50", 9), &frames);
  EXPECT_FALSE(bad);
  EXPECT_TRUE(frames.empty());  // nothing of a refused answer is used
}

}  // namespace
}  // namespace corral::api
