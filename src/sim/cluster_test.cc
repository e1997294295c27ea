#include "sim/cluster.h"

#include <gtest/gtest.h>

namespace corral::sim {
namespace {

TEST(ClusterTest, ShortForm) {
  auto c = ParseClusterShortForm("nodes=3,gpus_per_node=8,model=v100");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  auto nodes = BuildNodes(*c);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].name, "v100-001");
  EXPECT_EQ(nodes[2].name, "v100-003");
  EXPECT_EQ(nodes[2].id, NodeId(3));
  EXPECT_EQ(nodes[0].usable_gpus.size(), 8u);
  EXPECT_EQ(nodes[0].gpus[7].model, "v100");
  EXPECT_EQ(nodes[0].gpus[0].nvlink_peers.size(), 7u);
  EXPECT_EQ(nodes[0].gpus[7].numa_node, 1);
  EXPECT_TRUE(nodes[0].schedulable);
  EXPECT_TRUE(nodes[0].used_gpus.empty());
}

TEST(ClusterTest, SeveralGroupsAndKeys) {
  auto c = ParseClusterShortForm(
      "nodes=2,gpus_per_node=8,model=a100;nodes=1,gpus=4,model=h100,name=big,cpus=128,memory=1T,"
      "nvlink=0");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  auto nodes = BuildNodes(*c);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[2].name, "big-001");
  EXPECT_EQ(nodes[2].id, NodeId(3));
  EXPECT_EQ(nodes[2].cpus, 128u);
  EXPECT_EQ(nodes[2].mem_mb, 1024u * 1024);
  EXPECT_TRUE(nodes[2].gpus[0].nvlink_peers.empty());
}

TEST(ClusterTest, ShortFormErrors) {
  auto err = [](const std::string& s) {
    auto c = ParseClusterShortForm(s);
    return c.has_value() ? std::string("ok") : c.error().message;
  };
  EXPECT_EQ(err("gpus_per_node=8"), "--cluster group 1: nodes is required (>= 1)");
  EXPECT_EQ(err("nodes=2"), "--cluster group 1: gpus_per_node is required (1..64)");
  EXPECT_EQ(err("nodes=2,gpus_per_node=65"),
            "--cluster group 1: gpus_per_node: 65 is out of range 1..64");
  EXPECT_EQ(err("nodes=2,gpus_per_node=8,colour=red"),
            "--cluster group 1: unknown key \"colour\" (known: nodes, gpus_per_node, model, name, "
            "cpus, memory, "
            "nvlink, numa)");
  EXPECT_EQ(err("nodes=x,gpus_per_node=8"), "--cluster group 1: nodes: not an integer \"x\"");
  EXPECT_EQ(err("nodes=1,gpus_per_node=8;oops"),
            "--cluster group 2: expected key=value, got \"oops\"");
  EXPECT_EQ(
      err("nodes=1,gpus_per_node=8,model=t4;nodes=2,gpus_per_node=4,model=t4"),
      "--cluster: groups 1 and 2 have the same name \"t4\" (set name= to tell their nodes apart)");
}

TEST(ClusterTest, TomlGroupsWithSchedulingSections) {
  auto c = ParseClusterToml(R"(
[[nodes]]
name = "vc1"
count = 2
gpus_per_node = 8
model = "v100"
features = ["ib"]

[[nodes]]
name = "vc2"
count = 1000
gpus_per_node = 4
model = "t4"
nvlink = false

[scheduler.priority]
weight_age = 10

[[partition]]
name = "vc1"
nodes = "vc1-[001-002]"
)",
                            "c.toml");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_TRUE(c->sets_priority);
  auto nodes = BuildNodes(*c);
  ASSERT_EQ(nodes.size(), 1002u);
  EXPECT_EQ(nodes[1].features, std::vector<std::string>{"ib"});
  EXPECT_EQ(nodes[2].name, "vc2-0001");
  EXPECT_EQ(nodes[2].gpus[0].model, "t4");
}

TEST(ClusterTest, TomlErrors) {
  auto err = [](const std::string& s) {
    auto c = ParseClusterToml(s, "c.toml");
    return c.has_value() ? std::string("ok") : c.error().message;
  };
  EXPECT_EQ(err("[[partition]]\nname = \"x\"\n"),
            "c.toml: no [[nodes]] groups (each: count, gpus_per_node, model, ...)");
  EXPECT_EQ(err("[[nodes]]\ncount = 1\ngpus_per_node = 8\nwat = 1\n"),
            "c.toml: [[nodes]] 1: unknown key \"wat\" (known: nodes, gpus_per_node, model, name, "
            "cpus, memory, "
            "nvlink, numa)");
  EXPECT_NE(err("[[nodes]\n").find("c.toml:1:"), std::string::npos);
}

}  // namespace
}  // namespace corral::sim
