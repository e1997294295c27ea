#include "core/node.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

Node MakeNode() {
  Node n;
  n.registered = true;
  n.responding = true;
  n.inventory.cpus = 8;
  n.inventory.gpus.resize(4);
  return n;
}

TEST(NodeStateTest, DerivedFromAdminStateAndUsage) {
  Node n = MakeNode();
  NodeUsage idle;
  EXPECT_EQ(DeriveNodeState(n, idle), NodeState::kIdle);
  NodeUsage some{.cpus = 2, .mem_mb = 0, .gpus = GpuSet::FirstN(1), .jobs = 1, .exclusive = false};
  EXPECT_EQ(DeriveNodeState(n, some), NodeState::kMixed);
  NodeUsage all_gpus{.cpus = 2, .mem_mb = 0, .gpus = GpuSet::FirstN(4), .jobs = 2, .exclusive = false};
  EXPECT_EQ(DeriveNodeState(n, all_gpus), NodeState::kAllocated);
  n.drain = true;
  EXPECT_EQ(DeriveNodeState(n, some), NodeState::kDraining);
  EXPECT_EQ(DeriveNodeState(n, idle), NodeState::kDrained);
  n.responding = false;
  EXPECT_EQ(DeriveNodeState(n, idle), NodeState::kDown);
  n.registered = false;
  EXPECT_EQ(DeriveNodeState(n, idle), NodeState::kUnknown);
}

}  // namespace
}  // namespace corral
