#include "core/hostlist.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

using V = std::vector<std::string>;

TEST(HostListTest, ExpandsRangesListsAndPadding) {
  EXPECT_EQ(*ExpandHostList("gpu-[01-04,07]"), (V{"gpu-01", "gpu-02", "gpu-03", "gpu-04", "gpu-07"}));
  EXPECT_EQ(*ExpandHostList("a1,b[2-3]"), (V{"a1", "b2", "b3"}));
  EXPECT_EQ(*ExpandHostList("r[1-2]-n[1-2]"), (V{"r1-n1", "r1-n2", "r2-n1", "r2-n2"}));
  EXPECT_EQ(*ExpandHostList("node[8-11]"), (V{"node8", "node9", "node10", "node11"}));
  EXPECT_EQ(*ExpandHostList("plain"), (V{"plain"}));
}

TEST(HostListTest, RejectsMalformed) {
  for (std::string_view bad : {"n[1-", "n]1", "n[3-1]", "n[a-b]", "n[[1]]", "n[1-99999999]"}) {
    auto r = ExpandHostList(bad, 1000);
    EXPECT_FALSE(r.has_value()) << bad;
  }
}

TEST(HostListTest, CompressesKeepingOrderAndWidth) {
  EXPECT_EQ(CompressHostList({"n1", "n2", "n3", "m7"}), "n[1-3],m7");
  EXPECT_EQ(CompressHostList({"gpu-01", "gpu-02", "gpu-04"}), "gpu-[01-02,04]");
  EXPECT_EQ(CompressHostList({"node9", "node10"}), "node[9-10]");
  EXPECT_EQ(CompressHostList({"solo"}), "solo");
  EXPECT_EQ(CompressHostList({"n1"}), "n1");
  EXPECT_EQ(CompressHostList({}), "");
}

TEST(HostListTest, RoundTrips) {
  V names = {"gpu-01", "gpu-02", "gpu-03", "gpu-07", "cpu1", "cpu2"};
  EXPECT_EQ(*ExpandHostList(CompressHostList(names)), names);
}

}  // namespace
}  // namespace corral
