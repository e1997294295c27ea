#include "sched/internal/topology.h"

#include <gtest/gtest.h>

namespace corral::sched::internal {
namespace {

// Two leaves of four nodes under a spine; a third leaf under a second spine; a core above both.
Topology ThreeLeaves() {
  return Topology({SwitchConfig{.name = "leafA", .nodes = {"n1", "n2", "n3", "n4"}},
                   SwitchConfig{.name = "leafB", .nodes = {"n5", "n6", "n7", "n8"}},
                   SwitchConfig{.name = "leafC", .nodes = {"n9", "n10"}},
                   SwitchConfig{.name = "spine1", .switches = {"leafA", "leafB"}},
                   SwitchConfig{.name = "spine2", .switches = {"leafC"}},
                   SwitchConfig{.name = "core", .switches = {"spine1", "spine2"}}});
}

using Picks = std::vector<uint32_t>;

TEST(TopologyTest, LeavesAndLevels) {
  Topology t = ThreeLeaves();
  EXPECT_EQ(t.LeafOf("n1"), 0);
  EXPECT_EQ(t.LeafOf("n7"), 1);
  EXPECT_EQ(t.LeafOf("n10"), 2);
  EXPECT_EQ(t.LeafOf("n99"), -1);
  ASSERT_EQ(t.switches().size(), 6u);
  EXPECT_EQ(t.switches()[0].level, 0);
  EXPECT_EQ(t.switches()[3].level, 1);
  EXPECT_EQ(t.switches()[5].level, 2);
  EXPECT_EQ(t.switches()[5].leaves, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(t.switches()[0].parent, 3);
}

TEST(TopologyTest, TheLeafWithTheFewestCandidatesThatSuffices) {
  Topology t = ThreeLeaves();
  // Candidates in preference order on leaves A, A, B, B, B, C, C.
  const std::vector<int> leaves = {0, 0, 1, 1, 1, 2, 2};
  EXPECT_EQ(t.Choose(leaves, 2), (Picks{0, 1}));     // A and C have two: A's index is lower
  EXPECT_EQ(t.Choose(leaves, 3), (Picks{2, 3, 4}));  // only B holds three
}

TEST(TopologyTest, TheLowestSwitchThenItsFullestLeaves) {
  Topology t = ThreeLeaves();
  const std::vector<int> leaves = {0, 0, 1, 1, 1, 2, 2, 2};
  // No leaf holds four; spine1 (level 1) holds five: B's three, then A's first.
  EXPECT_EQ(t.Choose(leaves, 4), (Picks{0, 2, 3, 4}));
  // Six: only the core holds them: B (3), then C (3) (equal counts: lower leaf first).
  EXPECT_EQ(t.Choose(leaves, 6), (Picks{2, 3, 4, 5, 6, 7}));
}

TEST(TopologyTest, NodesOutsideTheTopologyComeLast) {
  Topology t = ThreeLeaves();
  const std::vector<int> leaves = {-1, 0, 1, -1};
  // No switch holds three of the candidates: every leaf, fullest first, outsiders as one leaf
  // (two candidates, so it goes first), then leaf A.
  EXPECT_EQ(t.Choose(leaves, 3), (Picks{0, 1, 3}));
}

TEST(TopologyTest, WithoutATopologyTheFirstCandidates) {
  Topology t({});
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.LeafOf("n1"), -1);
  EXPECT_EQ(t.Choose({-1, -1, -1}, 2), (Picks{0, 1}));
}

}  // namespace
}  // namespace corral::sched::internal
