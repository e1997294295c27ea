#include "sched/internal/gpu_pick.h"

#include <gtest/gtest.h>

#include "sched/testing/cluster_builder.h"

namespace corral::sched::internal {
namespace {

using testing::Gpus;
using testing::MakeNode;

// An 8-GPU node without NVSwitch: NVLink islands {0..3} and {4..7}, NUMA as given.
NodeView TwoIslands(uint32_t numa) {
  NodeView n = MakeNode(1, "n1", 8, "a100", 64, 512 * 1024, /*nvlink=*/false, numa);
  for (uint32_t g = 0; g < 8; ++g) {
    for (uint32_t p = 0; p < 8; ++p) {
      if (p != g && p / 4 == g / 4) n.gpus[g].nvlink_peers.push_back(p);
    }
  }
  return n;
}

TEST(PickGpusTest, TheSmallestNumaGroupThatFitsOnAnNvSwitchNode) {
  NodeView n = MakeNode(1, "n1", 8);                           // NVSwitch, NUMA {0..3} and {4..7}
  EXPECT_EQ(PickGpus(n, GpuSet::FirstN(8), 2), Gpus({0, 1}));  // equal groups: lowest index
  const GpuSet cand = Gpus({0, 1, 2, 4, 5});
  EXPECT_EQ(PickGpus(n, cand, 2), Gpus({4, 5}));  // exactly two free on NUMA 1
  EXPECT_EQ(PickGpus(n, cand, 3), Gpus({0, 1, 2}));
  // No NUMA node holds four: one NVLink domain, its lowest indices.
  EXPECT_EQ(PickGpus(n, cand, 4), Gpus({0, 1, 2, 4}));
}

TEST(PickGpusTest, NvlinkIslandsBeforeNuma) {
  NodeView n = TwoIslands(/*numa=*/1);  // one NUMA node for all
  EXPECT_EQ(PickGpus(n, Gpus({1, 2, 3, 6, 7}), 3), Gpus({1, 2, 3}));
  EXPECT_EQ(PickGpus(n, Gpus({1, 2, 3, 6, 7}), 2), Gpus({6, 7}));
  // No island holds four: NUMA node 0 holds them all, lowest indices.
  EXPECT_EQ(PickGpus(n, Gpus({1, 2, 3, 6, 7}), 4), Gpus({1, 2, 3, 6}));
}

TEST(PickGpusTest, IslandAndNumaTogetherFirst) {
  // Islands {0..3}, {4..7}; NUMA {0,1}, {2,3}, {4,5}, {6,7}.
  NodeView n = TwoIslands(/*numa=*/4);
  EXPECT_EQ(PickGpus(n, Gpus({0, 2, 3, 4, 5, 6}), 2), Gpus({2, 3}));
  // Three fit in no (island, NUMA) group; island 1 has three candidates, island 0 three too:
  // equal sizes, the lower index wins.
  EXPECT_EQ(PickGpus(n, Gpus({0, 2, 3, 4, 5, 6}), 3), Gpus({0, 2, 3}));
}

TEST(PickGpusTest, UnknownNumaAndNoLinksFallBackToLowestIndices) {
  NodeView n = MakeNode(1, "n1", 8, "v100", 64, 512 * 1024, /*nvlink=*/false, /*numa=*/0);
  EXPECT_EQ(n.gpus[0].numa_node, -1);
  EXPECT_EQ(PickGpus(n, Gpus({1, 3, 5, 7}), 3), Gpus({1, 3, 5}));
}

TEST(PickGpusTest, EdgeCases) {
  NodeView n = MakeNode(1, "n1", 8);
  EXPECT_EQ(PickGpus(n, GpuSet::FirstN(8), 0), GpuSet());
  EXPECT_EQ(PickGpus(n, Gpus({3, 6}), 2), Gpus({3, 6}));  // all candidates
  EXPECT_EQ(PickGpus(n, Gpus({3, 6}), 5), Gpus({3, 6}));  // fewer than asked: all of them
  EXPECT_EQ(LowestGpus(Gpus({2, 5, 9, 11}), 3), Gpus({2, 5, 9}));
  EXPECT_EQ(LowestGpus(Gpus({2, 5}), 3), Gpus({2, 5}));
}

}  // namespace
}  // namespace corral::sched::internal
