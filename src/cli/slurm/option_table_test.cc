#include "cli/slurm/option_table.h"

#include <gtest/gtest.h>

namespace corral::slurm {
namespace {

struct Render {
  bool no_header = false;
  std::string format;
};
struct Settings {
  Render render;
  bool dead = false;
  bool version = false;
  std::vector<std::string> users;
  std::vector<std::string> levels;  // every --level, in order
};

Status Users(Settings& s, const std::string& v) {
  if (v == "bad") return InvalidArgument("no user \"bad\"");
  return SetList<&Settings::users>(s, v);
}
Status Level(Settings& s, const std::string& v) {
  s.levels.push_back(v);
  return {};
}

constexpr ArgKind kNone = ArgKind::kNone, kReq = ArgKind::kRequired, kOpt = ArgKind::kOptional;
constexpr CommandOption<Settings> kTable[] = {
    {"noheader", 'h', kNone, SetTrue<&Settings::render, &Render::no_header>, nullptr, "no header"},
    {"dead", 'd', kNone, SetTrue<&Settings::dead>},
    {"format", 'o', kReq, SetValue<&Settings::render, &Render::format>, "FORMAT", "the columns"},
    {.name = "user", .letter = 'u', .arg = kReq, .apply = Users, .help = "users", .alias = "users"},
    {"level", 'L', kOpt, Level, "N", "a level"},
    {"sort", 0, kReq, Accept<Settings>},
    {.name = "version", .letter = 'V', .apply = SetTrue<&Settings::version>, .stops = true},
};
static_assert(EveryOptionHasAHandler(kTable));

OptionScan Scan(std::vector<std::string> words, Settings* s, const char* mode = ":") {
  words.insert(words.begin(), "prog");
  return ScanWithTable<Settings>(kTable, words, mode, *s);
}

TEST(OptionTableTest, HandlersSetTheFieldsInOrder) {
  Settings s;
  OptionScan scan = Scan({"-hd", "x", "--format=%i", "--users", "a,,b", "-L", "-L2", "--level=3",
                          "--sort", "k", "-u", "c", "y"},
                         &s);
  ASSERT_FALSE(scan.failure.has_value());
  ASSERT_FALSE(scan.error.has_value());
  EXPECT_TRUE(s.render.no_header);
  EXPECT_TRUE(s.dead);
  EXPECT_EQ(s.render.format, "%i");
  EXPECT_EQ(s.users, (std::vector<std::string>{"c"}));  // the last -u wins
  EXPECT_EQ(s.levels, (std::vector<std::string>{"", "2", "3"}));
  EXPECT_EQ(scan.operands, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(scan.applied, (std::vector<size_t>{0, 1, 2, 3, 4, 4, 4, 5, 3}));
  // "+:" stops at the first operand.
  Settings t;
  scan = Scan({"-d", "x", "-h"}, &t, "+:");
  EXPECT_EQ(scan.operands, (std::vector<std::string>{"x", "-h"}));
  EXPECT_FALSE(t.render.no_header);
}

TEST(OptionTableTest, ErrorsAndStopsEndTheScan) {
  Settings s;
  // A handler's error ends the scan: what follows is neither applied nor scanned for errors.
  OptionScan scan = Scan({"-u", "bad", "-d", "--bogus"}, &s);
  ASSERT_TRUE(scan.error.has_value());
  EXPECT_EQ(scan.error->message, "no user \"bad\"");
  EXPECT_FALSE(scan.failure.has_value());
  EXPECT_FALSE(s.dead);
  // So does an entry that stops.
  scan = Scan({"-d", "-V", "--bogus"}, &s);
  EXPECT_TRUE(scan.stopped);
  EXPECT_TRUE(s.version);
  EXPECT_FALSE(scan.failure.has_value());
  // getopt's refusal comes after the options before it were applied.
  Settings t;
  scan = Scan({"-h", "--no-such=1"}, &t);
  ASSERT_TRUE(scan.failure.has_value());
  EXPECT_EQ(scan.failure->last_word, "--no-such=1");
  EXPECT_TRUE(t.render.no_header);
  EXPECT_TRUE(scan.operands.empty());
  scan = Scan({"-o"}, &t);
  ASSERT_TRUE(scan.failure.has_value());
  EXPECT_TRUE(scan.failure->missing_argument);
  EXPECT_EQ(scan.failure->optopt, 'o');
}

TEST(OptionTableTest, HelpListsTheEntriesWithAHelpLine) {
  EXPECT_EQ(TableHelp<Settings>(kTable),
            "  -h, --noheader                no header\n"
            "  -o, --format=FORMAT           the columns\n"
            "  -u, --user=ARG                users\n"
            "  -L, --level[=N]               a level\n");
}

}  // namespace
}  // namespace corral::slurm
