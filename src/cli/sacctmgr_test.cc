// sacctmgr's pure parts: TRES lists as Slurm 22.05 prints and reads them, and its tables
// (fixed width, right-aligned, '+' on cut text; -P and -p).
#include "cli/sacctmgr.h"

#include <gtest/gtest.h>

namespace corral::cli {
namespace {

TEST(SacctmgrTest, TresListsReadAndPrintAsSlurms) {
  std::optional<uint64_t> cpus, gpus, mem;
  ASSERT_TRUE(ParseTres("gres/gpu=8,cpu=64,mem=100G", &cpus, &gpus, &mem).has_value());
  EXPECT_EQ(cpus, std::optional<uint64_t>(64));
  EXPECT_EQ(gpus, std::optional<uint64_t>(8));
  EXPECT_EQ(mem, std::optional<uint64_t>(102400));
  // As sacctmgr prints it after `GrpTRES=gres/gpu=8,cpu=64,mem=100G`.
  EXPECT_EQ(FormatTres(cpus, gpus, mem), "cpu=64,gres/gpu=8,mem=100G");
  EXPECT_EQ(FormatTres({}, 4, {}), "gres/gpu=4");
  EXPECT_EQ(FormatTres({}, {}, 1500), "mem=1500M");
  ASSERT_TRUE(ParseTres("gpu=-1", &cpus, &gpus, &mem).has_value());
  EXPECT_FALSE(gpus.has_value());
  auto bad = ParseTres("gres/gpu=8,node=2", &cpus, &gpus, &mem);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("node"), std::string::npos);
  EXPECT_FALSE(ParseTres("gres/gpu=x", &cpus, &gpus, &mem).has_value());
  EXPECT_FALSE(ParseTres("cpu=4", nullptr, &gpus, nullptr).has_value());  // MaxTRES: GPUs only
}

TEST(SacctmgrTest, TimesAsSlurmPrintsMaxWall) {
  EXPECT_EQ(FormatSacctmgrTime(Minutes(60)), "01:00:00");
  EXPECT_EQ(FormatSacctmgrTime(Minutes(2 * 24 * 60)), "2-00:00:00");
  EXPECT_EQ(FormatSacctmgrTime(Duration{0}), "00:00:00");
}

TEST(SacctmgrTest, TablesAsSlurmPrintsThem) {
  // `sacctmgr show account` on the Slurm peer (a blank after every cell, the last too).
  EXPECT_EQ(RenderSacctmgr({"Account", "Descr", "Org"}, {10, 20, 20},
                           {{"root", "default root account", "root"}}, false, false, false),
            "   Account                Descr                  Org \n"
            "---------- -------------------- -------------------- \n"
            "      root default root account                 root \n");
  EXPECT_EQ(
      RenderSacctmgr({"User", "Admin"}, {10, 9}, {{"root", "Administrator"}}, true, false, false),
      "      root Administ+ \n");
  EXPECT_EQ(RenderSacctmgr({"User", "Def Acct", "Admin"}, {10, 10, 9}, {{"alice", "nlp", "None"}},
                           false, true, true),
            "User|Def Acct|Admin|\nalice|nlp|None|\n");
  EXPECT_EQ(RenderSacctmgr({"Account", "User"}, {10, 10}, {{"nlp", ""}}, true, true, false),
            "nlp|\n");
}

// `show account withcoord` (issue 16 item 2): an account's coordinators and those above it,
// as Slurm lists them for every sub-account.
TEST(SacctmgrTest, WithcoordListsTheCoordinatorsOfAnAccountAndOfThoseAboveIt) {
  std::vector<AccountConfig> all = {{.name = "top"},
                                    {.name = "proja", .parent = "top", .coordinators = {"carol"}},
                                    {.name = "suba", .parent = "proja", .coordinators = {"alice"}},
                                    {.name = "projb", .parent = "top"}};
  EXPECT_EQ(InheritedCoordinators(all, "proja"), "carol");
  EXPECT_EQ(InheritedCoordinators(all, "suba"), "alice,carol");
  EXPECT_EQ(InheritedCoordinators(all, "projb"), "");
  EXPECT_EQ(InheritedCoordinators(all, "nope"), "");
  // A loop (never stored; the controller refuses it) does not hang.
  all[0].parent = "suba";
  EXPECT_EQ(InheritedCoordinators(all, "suba"), "alice,carol");
}

}  // namespace
}  // namespace corral::cli
