#include "agent/exec/cpu_binding.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace corral::agent {
namespace {

TEST(CpuBindingTest, ParsesCpuLists) {
  EXPECT_EQ(*ParseCpuList("0-3,8,10-11\n"), (std::vector<uint32_t>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(*ParseCpuList(""), std::vector<uint32_t>{});
  EXPECT_FALSE(ParseCpuList("3-1").has_value());
  EXPECT_FALSE(ParseCpuList("a").has_value());
}

TEST(CpuBindingTest, PicksFreeCpusNearTheGpusFirst) {
  NumaTopology t{{{0, {0, 1, 2, 3}}, {1, {4, 5, 6, 7}}}};
  EXPECT_EQ(PickCpus(t, 2, {1}, {}), (std::vector<uint32_t>{4, 5}));
  EXPECT_EQ(PickCpus(t, 2, {1}, {4, 5}), (std::vector<uint32_t>{6, 7}));
  // Spills to the other node, then to busy CPUs.
  EXPECT_EQ(PickCpus(t, 3, {1}, {4, 5}), (std::vector<uint32_t>{0, 6, 7}));
  EXPECT_EQ(PickCpus(t, 8, {0}, {0, 1, 2, 3, 4, 5, 6, 7}).size(), 8u);
  EXPECT_EQ(PickCpus(t, 9, {}, {}).size(), 8u);
  EXPECT_EQ(NodesOf(t, {0, 6, 7}), (std::vector<uint32_t>{0, 1}));
}

TEST(CpuBindingTest, ReadsTopologyFromSysfs) {
  char tmpl[] = "/tmp/corral-numa-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::filesystem::create_directories(dir + "/devices/system/node/node0");
  std::filesystem::create_directories(dir + "/devices/system/node/node1");
  std::ofstream(dir + "/devices/system/node/node0/cpulist") << "0-3\n";
  std::ofstream(dir + "/devices/system/node/node1/cpulist") << "4-7\n";
  EXPECT_EQ(ReadNumaTopology(dir, {}), (NumaTopology{{{0, {0, 1, 2, 3}}, {1, {4, 5, 6, 7}}}}));
  EXPECT_EQ(ReadNumaTopology(dir, {1, 5}), (NumaTopology{{{0, {1}}, {1, {5}}}}));
  std::filesystem::remove_all(dir);
  // This machine: at least one node with the agent's own CPUs.
  NumaTopology here = ReadNumaTopology("/sys", OwnCpuAffinity());
  ASSERT_FALSE(here.cpus_by_node.empty());
}

}  // namespace
}  // namespace corral::agent
