#include "cli/slurm/format_spec.h"

#include <gtest/gtest.h>

namespace corral::slurm {
namespace {

FormatItem Literal(std::string text) {
  return FormatItem{.is_literal = true, .literal = std::move(text)};
}
FormatItem Letter(std::string text, char letter, int width, bool right, std::string suffix) {
  return FormatItem{.letter = letter,
                    .text = std::move(text),
                    .width = width,
                    .right = right,
                    .suffix = std::move(suffix)};
}
FormatItem Named(std::string name, int width, bool right = false, std::string suffix = "") {
  return FormatItem{.name = std::move(name), .width = width, .right = right, .suffix = suffix};
}

using Items = std::vector<FormatItem>;

TEST(FormatSpecTest, PercentItemsHaveWidthAlignmentAndSuffix) {
  EXPECT_EQ(ParseFormat("%.18i %9P|%j", FormatSyntax::kPercent),
            (Items{Letter(".18i ", 'i', 18, true, " "), Letter("9P|", 'P', 9, false, "|"),
                   Letter("j", 'j', 0, false, "")}));
  // Text before the first '%' is printed as is; "%%" is no item (strtok); "%5" has no letter.
  EXPECT_EQ(
      ParseFormat("JOBS: %%%i%5", FormatSyntax::kPercent),
      (Items{Literal("JOBS: "), Letter("i", 'i', 0, false, ""), Letter("5", 0, 5, false, "")}));
  EXPECT_EQ(ParseFormat("no fields", FormatSyntax::kPercent), (Items{Literal("no fields")}));
  EXPECT_EQ(ParseFormat("%", FormatSyntax::kPercent), (Items{}));
  // Widths stop at 100000.
  EXPECT_EQ(ParseFormat("%.9999999x", FormatSyntax::kPercent)[0].width, 100000);
}

TEST(FormatSpecTest, ColonListsDefaultToTwentyWide) {
  EXPECT_EQ(ParseFormat("JobID:10,Name:.20|,,State", FormatSyntax::kColon),
            (Items{Named("JobID", 10), Named("Name", 20, true, "|"), Named("State", 20)}));
  // "Name:" is zero wide (printed as is); the suffix needs no width.
  EXPECT_EQ(ParseFormat("Name:,x: ", FormatSyntax::kColon),
            (Items{Named("Name", 0), Named("x", 0, false, " ")}));
}

TEST(FormatSpecTest, SacctListsReadTheWidthAsAtoi) {
  EXPECT_EQ(ParseFormat("JobID%20, jobname,State%-8,,Elapsed%x,User%0", FormatSyntax::kSacct),
            (Items{Named("JobID", 20), Named("jobname", 0), Named("State", -8), Named("Elapsed", 0),
                   Named("User", 0)}));
  EXPECT_EQ(ParseFormat(" , ,", FormatSyntax::kSacct), (Items{}));
}

struct Field {
  char letter;
  const char* name;
};
constexpr Field kFields[] = {{'i', "JobID"}, {'j', "Name"}};

const Field* ByLetter(char c) {
  for (const Field& f : kFields) {
    if (f.letter == c) return &f;
  }
  return nullptr;
}
const Field* ByName(std::string_view n) {
  for (const Field& f : kFields) {
    if (n == f.name) return &f;
  }
  return nullptr;
}

TEST(FormatSpecTest, BindingReportsUnknownFields) {
  std::vector<std::string> warnings;
  auto cols = BindFormat<Field>("x%.5i %q|%j", FormatSyntax::kPercent, ByLetter, ByName,
                                "bad: ", &warnings);
  ASSERT_EQ(cols.size(), 4u);
  EXPECT_EQ(cols[0].literal, "x");
  EXPECT_EQ(cols[1].field, &kFields[0]);
  EXPECT_EQ(cols[1].width, 5);
  EXPECT_TRUE(cols[1].right);
  EXPECT_EQ(cols[1].suffix, " ");
  // An unknown letter is printed literally, with its text.
  EXPECT_EQ(cols[2].field, nullptr);
  EXPECT_EQ(cols[2].literal, "%q|");
  EXPECT_EQ(cols[3].field, &kFields[1]);
  EXPECT_EQ(warnings, (std::vector<std::string>{"bad: q"}));

  // An unknown name of a list is dropped.
  warnings.clear();
  cols = BindFormat<Field>("Name:4,Bogus,JobID", FormatSyntax::kColon, ByLetter, ByName,
                           "bad: ", &warnings);
  ASSERT_EQ(cols.size(), 2u);
  EXPECT_EQ(cols[0].field, &kFields[1]);
  EXPECT_EQ(cols[0].width, 4);
  EXPECT_EQ(cols[1].field, &kFields[0]);
  EXPECT_EQ(cols[1].width, 20);
  EXPECT_EQ(warnings, (std::vector<std::string>{"bad: Bogus"}));
}

}  // namespace
}  // namespace corral::slurm
