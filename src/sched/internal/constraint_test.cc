#include "sched/internal/constraint.h"

#include <gtest/gtest.h>

namespace corral::sched::internal {
namespace {

using Features = std::vector<std::string>;

TEST(ConstraintTest, AmpersandAndCommaNeedEveryFeature) {
  for (const char* text : {"ib&nvme", "ib,nvme"}) {
    Constraint c = ParseConstraint(text);
    EXPECT_FALSE(c.any) << text;
    EXPECT_EQ(c.features, (std::vector<std::string_view>{"ib", "nvme"})) << text;
    EXPECT_TRUE(c.Matches(Features{"gpu", "ib", "nvme"})) << text;
    EXPECT_FALSE(c.Matches(Features{"ib"})) << text;
    EXPECT_FALSE(c.Matches(Features{})) << text;
  }
}

TEST(ConstraintTest, BarNeedsAnyFeature) {
  Constraint c = ParseConstraint("ib|roce");
  EXPECT_TRUE(c.any);
  EXPECT_TRUE(c.Matches(Features{"roce"}));
  EXPECT_TRUE(c.Matches(Features{"ib"}));
  EXPECT_FALSE(c.Matches(Features{"nvme"}));
}

TEST(ConstraintTest, ABarAnywhereMakesTheWholeListAnAnyList) {
  Constraint c = ParseConstraint("a&b|c");
  EXPECT_TRUE(c.any);
  EXPECT_EQ(c.features, (std::vector<std::string_view>{"a", "b", "c"}));
  EXPECT_TRUE(c.Matches(Features{"b"}));
}

TEST(ConstraintTest, EmptyPartsAreDroppedAndEmptyMatchesEverything) {
  EXPECT_EQ(ParseConstraint("a&&b,").features, (std::vector<std::string_view>{"a", "b"}));
  EXPECT_EQ(ParseConstraint("&").features, std::vector<std::string_view>{});
  Constraint none = ParseConstraint("");
  EXPECT_TRUE(none.features.empty());
  EXPECT_TRUE(none.Matches(Features{}));
  EXPECT_TRUE(ParseConstraint(",,").Matches(Features{}));
}

TEST(ConstraintTest, FeaturesMatchWholeNamesOnly) {
  Constraint c = ParseConstraint("ib");
  EXPECT_FALSE(c.Matches(Features{"ib2", "i"}));
  EXPECT_TRUE(c.Matches(Features{"ib2", "ib"}));
}

}  // namespace
}  // namespace corral::sched::internal
