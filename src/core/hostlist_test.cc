#include "core/hostlist.h"

#include <random>

#include <gtest/gtest.h>

namespace corral {
namespace {

using V = std::vector<std::string>;

// Expected values are `scontrol show hostnames TEXT` from a real Slurm 22.05.8.
TEST(HostListTest, ExpandsLikeScontrolShowHostnames) {
  const std::pair<std::string_view, V> cases[] = {
      {"gpu-[01-04,07]", {"gpu-01", "gpu-02", "gpu-03", "gpu-04", "gpu-07"}},
      {"a1,b[2-3]", {"a1", "b2", "b3"}},
      {"r[1-2]-n[1-2]", {"r1-n1", "r1-n2", "r2-n1", "r2-n2"}},
      {"node[8-11]", {"node8", "node9", "node10", "node11"}},
      {"n1 n2", {"n1", "n2"}},
      {"n1 n2\tn3", {"n1", "n2", "n3"}},
      {"n1,,n2", {"n1", "n2"}},
      {" n1 ", {"n1"}},
      {"n[8-010]", {"n8", "n9", "n10"}},
      {"n[01-2]", {"n01", "n02"}},
      {"n[1-02]", {"n1", "n2"}},
      {"n[0-0]", {"n0"}},
      {"n[1-]", {"n1"}},
      {"[1-3]", {"1", "2", "3"}},
      {"n[1-3],n[2-4]", {"n1", "n2", "n3", "n2", "n3", "n4"}},
      {"n[001-003]", {"n001", "n002", "n003"}},
      {"n[1,1,2]", {"n1", "n1", "n2"}},
      {"n[08-09]", {"n08", "n09"}},
      {"n[9-11]", {"n9", "n10", "n11"}},
      {"n[1-2][3-4]", {"n13", "n14", "n23", "n24"}},
      {"n[1-2]-[3-4]", {"n1-3", "n1-4", "n2-3", "n2-4"}},
      {"n[1-3]y[1-2]", {"n1y1", "n1y2", "n2y1", "n2y2", "n3y1", "n3y2"}},
      // Three brackets: Slurm varies the middle one slowest.
      {"x[1-2]y[3-4]z[5-6]",
       {"x1y3z5", "x1y3z6", "x2y3z5", "x2y3z6", "x1y4z5", "x1y4z6", "x2y4z5", "x2y4z6"}},
      {"n1.dom,n2.dom", {"n1.dom", "n2.dom"}},
      {"plain", {"plain"}},
      {",", {}},
      {"", {}},
  };
  for (const auto& [text, want] : cases) {
    auto got = ExpandHostList(text);
    ASSERT_TRUE(got.has_value()) << text << ": " << got.error().message;
    EXPECT_EQ(*got, want) << text;
  }
}

TEST(HostListTest, RejectsWhatSlurmRejects) {
  // Each is "Invalid hostlist" for scontrol 22.05.8.
  for (std::string_view bad :
       {"n[1-3]x", "n[010-8]", "n[3-1]", "n[a-b]", "n[[1]]", "n[-1]", "n[]", "n[1,,2]", "n[1,]",
        "n[,1]", "n[1-2-3]", "n[0x1f]", "n[1 ]", "n[1-3 ]", "n[1-2]]", "n[0-65536]"}) {
    auto r = ExpandHostList(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message.find(std::string(bad)), std::string::npos) << r.error().message;
  }
  EXPECT_EQ(ExpandHostList("n[1-65536]")->size(), 65536u);
}

TEST(HostListTest, RejectsMalformedBracketsThatSlurmMangles) {
  // Slurm prints "n]", "1-2", "n01 n02", "x]" for these; Corral refuses them.
  for (std::string_view bad : {"n[1-3", "[1-2", "n[ 1-2]", "n[+1]", "n[1-2],x]", "a]b[1-2]"}) {
    EXPECT_FALSE(ExpandHostList(bad).has_value()) << bad;
  }
}

TEST(HostListTest, LimitsTheNumberOfNames) {
  EXPECT_FALSE(ExpandHostList("n[1-1000]", 999).has_value());
  EXPECT_EQ(ExpandHostList("n[1-1000]", 1000)->size(), 1000u);
  EXPECT_FALSE(ExpandHostList("a[1-1000]b[1-1000]", 100000).has_value());
  EXPECT_FALSE(ExpandHostList("n[1-9999999999999999999]").has_value());
}

// Expected values are `scontrol show hostlist NAMES` from a real Slurm 22.05.8.
TEST(HostListTest, CompressesLikeScontrolShowHostlist) {
  const std::pair<V, std::string_view> cases[] = {
      {{"n3", "n1", "n2"}, "n[3,1-2]"},
      {{"n1", "n2", "n3", "m7"}, "n[1-3],m7"},
      {{"gpu-01", "gpu-02", "gpu-04"}, "gpu-[01-02,04]"},
      {{"node9", "node10"}, "node[9-10]"},
      {{"n09", "n10"}, "n[09-10]"},
      {{"n9", "n010"}, "n[9,010]"},
      {{"n8", "n9", "n10", "n011"}, "n[8-10,011]"},
      {{"n1", "m1", "n2"}, "n1,m1,n2"},
      {{"n1", "n1", "n2"}, "n[1,1-2]"},
      {{"a", "b", "a"}, "a,b,a"},
      {{"n1", "n3", "m1", "n5"}, "n[1,3],m1,n5"},
      {{"123", "124"}, "[123-124]"},
      {{"n1a", "n2a"}, "n1a,n2a"},
      {{"rack1-n1", "rack1-n2", "rack2-n1"}, "rack1-n[1-2],rack2-n1"},
      {{"n1", "n2", "n3", "n2", "n3", "n4"}, "n[1-3,2-4]"},
      {{"n0", "n00", "n000"}, "n[0,00,000]"},
      {{"n007", "n8", "n9"}, "n[007,8-9]"},
      {{"n99", "n100", "n0101"}, "n[99-100,0101]"},
      {{"n1.dom", "n2.dom"}, "n1.dom,n2.dom"},
      {{"solo"}, "solo"},
      {{"n1"}, "n1"},
      {{}, ""},
  };
  for (const auto& [names, want] : cases) {
    EXPECT_EQ(CompressHostList(names), want) << want;
  }
}

TEST(HostListTest, SortsLikeScontrolShowHostlistsorted) {
  // scontrol show hostlistsorted n3,n1,n2,m1,n10,n09 -> m1,n[1-3,09-10]
  EXPECT_EQ(CompressHostList(SortHostNames({"n3", "n1", "n2", "m1", "n10", "n09"})),
            "m1,n[1-3,09-10]");
  EXPECT_EQ(SortHostNames({"rack10-n1", "rack2-n1", "rack2", "rack2-n"}),
            (V{"rack2", "rack2-n", "rack2-n1", "rack10-n1"}));
}

TEST(HostListTest, RoundTrips) {
  V names = {"gpu-01", "gpu-02", "gpu-03", "gpu-07", "cpu1", "cpu2"};
  EXPECT_EQ(*ExpandHostList(CompressHostList(names)), names);
}

TEST(HostListTest, RandomListsRoundTrip) {
  std::mt19937_64 rng(42);
  const char* prefixes[] = {"n", "gpu-", "rack1-n", "", "a.b", "x"};
  for (int iter = 0; iter < 2000; ++iter) {
    V names;
    int count = static_cast<int>(rng() % 12);
    for (int k = 0; k < count; ++k) {
      std::string name = prefixes[rng() % 6];
      if (rng() % 8 != 0 || name.empty()) {
        uint64_t n = rng() % 120;
        std::string digits = std::to_string(n);
        size_t width = digits.size() + rng() % 3 * (rng() % 2);
        name += std::string(width - digits.size(), '0') + digits;
      }
      names.push_back(name);
    }
    std::string compressed = CompressHostList(names);
    auto back = ExpandHostList(compressed);
    ASSERT_TRUE(back.has_value()) << compressed;
    EXPECT_EQ(*back, names) << compressed;
    EXPECT_EQ(CompressHostList(*back), compressed);
  }
}

}  // namespace
}  // namespace corral
