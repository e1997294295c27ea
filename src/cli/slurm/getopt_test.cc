#include "cli/slurm/getopt.h"

#include <gtest/gtest.h>

namespace corral::slurm {
namespace {

const std::vector<LongOption> kLongs = {
    {"name", ArgKind::kRequired, 'n'},
    {"nice", ArgKind::kOptional, 1000},
    {"help", ArgKind::kNone, 1001},
    {"hold", ArgKind::kNone, 'H'},
};

std::vector<int> Ids(const GetoptResult& r) {
  std::vector<int> ids;
  for (const auto& o : r.options) ids.push_back(o.id);
  return ids;
}

TEST(GetoptTest, LongAndShortFormsAndTheirArguments) {
  GetoptResult r =
      Getopt({"cmd", "--name=a", "--nice", "-Hnb", "--ni=5", "--na", "c", "x"}, kLongs, "+:n:H");
  ASSERT_FALSE(r.failure.has_value());
  EXPECT_EQ(Ids(r), (std::vector<int>{'n', 1000, 'H', 'n', 1000, 'n'}));
  EXPECT_EQ(r.options[0].value, "a");
  EXPECT_FALSE(r.options[1].has_value);  // an optional argument is given with '=' only
  EXPECT_EQ(r.options[3].value, "b");
  EXPECT_EQ(r.options[4].value, "5");
  EXPECT_EQ(r.options[5].value, "c");
  EXPECT_EQ(r.operands, (std::vector<std::string>{"x"}));
}

TEST(GetoptTest, PlusModeStopsAtTheFirstOperandOtherwiseOperandsMoveToTheEnd) {
  GetoptResult stop = Getopt({"cmd", "x", "-H"}, kLongs, "+:n:H");
  EXPECT_TRUE(stop.options.empty());
  EXPECT_EQ(stop.operands, (std::vector<std::string>{"x", "-H"}));
  GetoptResult permute = Getopt({"cmd", "x", "-H", "y", "--", "-n"}, kLongs, ":n:H");
  EXPECT_EQ(Ids(permute), (std::vector<int>{'H'}));
  EXPECT_EQ(permute.operands, (std::vector<std::string>{"x", "y", "-n"}));
}

TEST(GetoptTest, FailuresSayWhatAndWhere) {
  GetoptResult r = Getopt({"cmd", "-H", "--bogus=1", "-H"}, kLongs, "+:n:H");
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(Ids(r), (std::vector<int>{'H'}));  // what came before the failure
  EXPECT_TRUE(r.operands.empty());
  EXPECT_FALSE(r.failure->missing_argument);
  EXPECT_EQ(r.failure->optopt, 0);
  EXPECT_EQ(r.failure->word, "--bogus=1");
  EXPECT_EQ(r.failure->last_word, "--bogus=1");

  r = Getopt({"cmd", "-n"}, kLongs, "+:n:H");
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_TRUE(r.failure->missing_argument);
  EXPECT_EQ(r.failure->optopt, 'n');
  EXPECT_EQ(r.failure->word, "-n");

  r = Getopt({"cmd", "-HZ"}, kLongs, "+:n:H");  // an unknown letter in a bundle
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(r.failure->optopt, 'Z');
  EXPECT_EQ(r.failure->word, "-HZ");

  r = Getopt({"cmd", "--h"}, kLongs, "+:n:H");  // --help or --hold
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(r.failure->word, "--h");

  // A scan starts afresh every time.
  r = Getopt({"cmd", "-H"}, kLongs, "+:n:H");
  EXPECT_FALSE(r.failure.has_value());
  EXPECT_EQ(Ids(r), (std::vector<int>{'H'}));
}

}  // namespace
}  // namespace corral::slurm
