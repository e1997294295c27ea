#include "core/array_spec.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

using V = std::vector<uint32_t>;

// Every accepted case below was accepted by a real Slurm 22.05.8 (MaxArraySize 1001), and
// squeue showed the indices given in the comment.
TEST(ArraySpecTest, ParsesWhatSlurmAccepts) {
  EXPECT_EQ(ParseArraySpec("0-15:4")->indices, (V{0, 4, 8, 12}));  // 151_[0,4,8,12]
  EXPECT_EQ(ParseArraySpec("0-15:4")->step, 4u);
  auto s = ParseArraySpec("1-7:3,20%2");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->indices, (V{1, 4, 7, 20}));  // 152_[1,4,7,20]
  EXPECT_EQ(s->max_running, 2u);
  EXPECT_EQ(s->step, 3u);  // SLURM_ARRAY_TASK_STEP=3 for "1-7:3,20"
  EXPECT_EQ(ParseArraySpec("5,1,3")->indices, (V{1, 3, 5}));
  EXPECT_EQ(ParseArraySpec("5,1,3")->step, 1u);
  EXPECT_EQ(ParseArraySpec("1-3%0")->max_running, 0u);
  EXPECT_EQ(ParseArraySpec("0-1000")->indices.size(), 1001u);
  EXPECT_EQ(ParseArraySpec("1,,3")->indices, (V{1, 3}));
  EXPECT_EQ(ParseArraySpec(" 1")->indices, (V{1}));
  EXPECT_EQ(ParseArraySpec("1-3%")->max_running, 0u);
  EXPECT_EQ(ParseArraySpec("01-03")->indices, (V{1, 2, 3}));
  EXPECT_EQ(ParseArraySpec("1-3,2-4")->indices, (V{1, 2, 3, 4}));
  EXPECT_EQ(ParseArraySpec("0-9%2")->max_running, 2u);
  EXPECT_EQ(ParseArraySpec("7")->indices, (V{7}));
}

TEST(ArraySpecTest, RejectsWhatSlurmRejects) {
  // "Invalid job array specification" from a real Slurm 22.05.8.
  for (std::string_view bad : {"0-1001", "3-1", "1-5:0", "1:2", "1-", "4294967294", "-1", "", "a",
                               "1-3%a", "%2", "1-2-3"}) {
    auto r = ParseArraySpec(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message.find(std::string(bad)), std::string::npos) << r.error().message;
  }
  EXPECT_TRUE(ParseArraySpec("0-5000", 10001).has_value());
  // Re-parsing an accepted specification without a size limit stays cheap.
  EXPECT_EQ(ParseArraySpec("7-4000000000:1000000000", 0xffffffffu)->indices,
            (V{7, 1000000007, 2000000007, 3000000007}));
  EXPECT_FALSE(ParseArraySpec("0-4000000000", 0xffffffffu).has_value());
  EXPECT_FALSE(ParseArraySpec("0-5000", 5000).has_value());
}

TEST(ArraySpecTest, FormatsLikeSqueue) {
  EXPECT_EQ(FormatArrayIndices({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 2), "0-9%2");
  EXPECT_EQ(FormatArrayIndices({1, 4, 7, 20}), "1,4,7,20");
  EXPECT_EQ(FormatArrayIndices({1, 2, 3, 7}), "1-3,7");
  EXPECT_EQ(FormatArrayIndices({1, 2}), "1-2");
  EXPECT_EQ(FormatArrayIndices({}), "");
  EXPECT_EQ(FormatArrayIndices(ParseArraySpec("1-3,2-4")->indices), "1-4");
}

}  // namespace
}  // namespace corral
