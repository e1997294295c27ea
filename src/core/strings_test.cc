#include "core/strings.h"

#include <gtest/gtest.h>

#include "core/hex.h"

namespace corral {
namespace {

using Strings = std::vector<std::string>;

TEST(StringsTest, CaseFoldsAsciiOnly) {
  EXPECT_EQ(Lower("GPU:H100"), "gpu:h100");
  EXPECT_EQ(Upper("node-01"), "NODE-01");
  EXPECT_EQ(Lower("\xc3\x89t\xc3\xa9"), "\xc3\x89t\xc3\xa9");  // UTF-8 bytes are kept
  EXPECT_TRUE(EqualsIgnoreCase("Content-Length", "content-length"));
  EXPECT_FALSE(EqualsIgnoreCase("abc", "abd"));
  EXPECT_FALSE(EqualsIgnoreCase("abc", "ab"));
}

TEST(StringsTest, SplitKeepsEmptyParts) {
  EXPECT_EQ(Split("a,,b", ','), (Strings{"a", "", "b"}));
  EXPECT_EQ(Split("", ','), (Strings{""}));
  EXPECT_EQ(Split("a,", ','), (Strings{"a", ""}));
  EXPECT_EQ(Split("abc", ','), (Strings{"abc"}));
}

TEST(StringsTest, SplitNonEmptyDropsEmptyParts) {
  EXPECT_EQ(SplitNonEmpty("a,,b,"), (Strings{"a", "b"}));
  EXPECT_EQ(SplitNonEmpty(""), Strings{});
  EXPECT_EQ(SplitNonEmpty(",,"), Strings{});
  EXPECT_EQ(SplitNonEmpty("x:y", ':'), (Strings{"x", "y"}));
}

TEST(StringsTest, JoinsPartsAndNumbers) {
  EXPECT_EQ(Join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(Join({}, ","), "");
  EXPECT_EQ(JoinNumbers({0, 3, 7}), "0,3,7");
  EXPECT_EQ(JoinNumbers({}), "");
}

TEST(StringsTest, TrimsBlanks) {
  EXPECT_EQ(Trim(" \t a b \r\n"), "a b");
  EXPECT_EQ(Trim("   "), "");
  EXPECT_EQ(Trim("x"), "x");
}

TEST(StringsTest, ParsesWholeUnsignedNumbers) {
  EXPECT_EQ(ParseUint("42"), 42u);
  EXPECT_EQ(ParseUint("0"), 0u);
  EXPECT_EQ(ParseUint(""), std::nullopt);
  EXPECT_EQ(ParseUint("-1"), std::nullopt);
  EXPECT_EQ(ParseUint("4x"), std::nullopt);
  EXPECT_EQ(ParseUint(" 4"), std::nullopt);
  EXPECT_EQ(ParseUint("18446744073709551616"), std::nullopt);  // 2^64 overflows
}

TEST(HexTest, EncodesLowerCaseAndDecodesBackOrRefuses) {
  EXPECT_EQ(HexEncode(std::string("\x01\xab\xff\x00", 4)), "01abff00");
  EXPECT_EQ(HexEncode(""), "");
  EXPECT_EQ(HexDecode("01abff00"), std::string("\x01\xab\xff\x00", 4));
  EXPECT_EQ(HexDecode("01ABFF"), std::string("\x01\xab\xff", 3));
  EXPECT_EQ(HexDecode("abc"), std::nullopt);  // odd length
  EXPECT_EQ(HexDecode("0g"), std::nullopt);   // not a digit
}

}  // namespace
}  // namespace corral
