#include "controller/internal/node_table.h"

#include <variant>

#include <gtest/gtest.h>

#include "controller/testing/requests.h"

namespace corral::controller::internal {
namespace {

const Timestamp kT0 = Timestamp(Seconds(1'700'000'000));
const MonoTime kM0 = MonoTime(Seconds(100));

NodeInventory Inventory(const std::string& name, uint32_t gpus = 2) {
  return testing::NodeRegistration(name, gpus, "http://10.0.0.1:6901").inventory;
}

TEST(NodeTableTest, InventoriesAreValidatedFieldByField) {
  auto message = [](NodeInventory inv) {
    auto s = NodeTable::ValidateInventory(inv);
    EXPECT_FALSE(s.has_value());
    return s ? std::string() : s.error().message;
  };
  EXPECT_TRUE(NodeTable::ValidateInventory(Inventory("node-01.a_b")).has_value());
  NodeInventory inv = Inventory("bad name");
  EXPECT_EQ(message(inv), "inventory.name: \"bad name\" is not a valid node name");
  inv = Inventory("n1");
  inv.address = "ftp://x";
  EXPECT_EQ(message(inv), "inventory.address: \"ftp://x\" is not an http:// or https:// URL");
  inv = Inventory("n1");
  inv.cpus = 0;
  EXPECT_EQ(message(inv), "inventory.cpus: must be at least 1");
  inv = Inventory("n1");
  inv.gpus.push_back({.index = 1});
  EXPECT_EQ(message(inv), "inventory.gpus: index 1 is duplicated or out of range");
}

TEST(NodeTableTest, RegistrationGivesIdsOnceAndBringsANodeBack) {
  Outputs out;
  NodeTable nodes(out);
  NodeEntry& a = nodes.Register(Inventory("a"), kT0, kM0);
  NodeEntry& b = nodes.Register(Inventory("b"), kT0, kM0);
  EXPECT_EQ(a.node.id, NodeId(1));
  EXPECT_EQ(b.node.id, NodeId(2));
  EXPECT_TRUE(a.node.registered && a.node.responding);
  ASSERT_EQ(out.writes.size(), 2u) << "the id counter, twice; the nodes are the caller's to put";
  EXPECT_EQ(std::get<store::WriteBatch::PutMetaOp>(out.writes.ops()[1]).value, "3");
  // Down, then registering again: same id, reason cleared.
  nodes.MarkNotResponding(a, kT0 + Seconds(9));
  EXPECT_FALSE(a.node.responding);
  EXPECT_EQ(a.node.reason, "Not responding");
  EXPECT_EQ(nodes.Register(Inventory("a", 4), kT0, kM0).node.id, NodeId(1));
  EXPECT_TRUE(a.node.responding);
  EXPECT_EQ(a.node.reason, "");
  EXPECT_EQ(a.node.inventory.gpus.size(), 4u);
  EXPECT_EQ(nodes.names_by_id(),
            (std::map<NodeId, std::string>{{NodeId(1), "a"}, {NodeId(2), "b"}}));
  auto missing = nodes.Get("zz");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message, "node \"zz\": no such node");
}

TEST(NodeTableTest, HeartbeatsKeepNodesAliveAndSayWhenOneComesBack) {
  Outputs out;
  NodeTable nodes(out);
  NodeEntry& a = nodes.Register(Inventory("a"), kT0, kM0);
  nodes.Register(Inventory("b"), kT0, kM0 + Seconds(3));
  EXPECT_TRUE(nodes.Expired(kM0 + Seconds(5), Seconds(5)).empty());
  EXPECT_EQ(nodes.Expired(kM0 + Seconds(6), Seconds(5)), (std::vector<std::string>{"a"}));
  EXPECT_EQ(nodes.NextExpiry(Seconds(5)), kM0 + Seconds(5) + Millis(1));
  EXPECT_FALSE(nodes.Heartbeat(a, kT0 + Seconds(4), kM0 + Seconds(4)));
  // Until the next scan, the next expiry may be early (never late); a scan makes it exact.
  EXPECT_LE(nodes.NextExpiry(Seconds(5)), kM0 + Seconds(8) + Millis(1));
  EXPECT_TRUE(nodes.Expired(kM0 + Seconds(6), Seconds(5)).empty());
  EXPECT_EQ(nodes.NextExpiry(Seconds(5)), kM0 + Seconds(8) + Millis(1));
  EXPECT_TRUE(nodes.Expired(kM0 + Seconds(7), Seconds(5)).empty());
  nodes.MarkNotResponding(a, kT0 + Seconds(10));
  EXPECT_TRUE(nodes.Expired(kM0 + Seconds(60), Seconds(5)) == std::vector<std::string>{"b"})
      << "a node already DOWN does not expire again";
  EXPECT_TRUE(nodes.Heartbeat(a, kT0 + Seconds(11), kM0 + Seconds(11)));
  EXPECT_TRUE(a.node.responding);
  EXPECT_EQ(a.node.reason, "");
}

// The state thread asks at every iteration; the scan runs only when the earliest heartbeat
// may have expired, and a silent node among busy ones is still found on time.
TEST(NodeTableTest, ASilentNodeExpiresOnTimeAmongHeartbeatingOnes) {
  Outputs out;
  NodeTable nodes(out);
  nodes.Register(Inventory("quiet"), kT0, kM0);
  NodeEntry& busy = nodes.Register(Inventory("busy"), kT0, kM0);
  for (int s = 1; s <= 5; ++s) {
    nodes.Heartbeat(busy, kT0 + Seconds(s), kM0 + Seconds(s));
    EXPECT_TRUE(nodes.Expired(kM0 + Seconds(s), Seconds(5)).empty()) << s;
  }
  EXPECT_EQ(nodes.NextExpiry(Seconds(5)), kM0 + Seconds(5) + Millis(1));
  EXPECT_EQ(nodes.Expired(kM0 + Seconds(5) + Millis(1), Seconds(5)),
            (std::vector<std::string>{"quiet"}));
  nodes.MarkNotResponding(*nodes.Find("quiet"), kT0 + Seconds(6));
  EXPECT_TRUE(nodes.Expired(kM0 + Seconds(6), Seconds(5)).empty());
  EXPECT_EQ(nodes.NextExpiry(Seconds(5)), kM0 + Seconds(10) + Millis(1));
  EXPECT_EQ(nodes.Expired(kM0 + Seconds(11), Seconds(5)), (std::vector<std::string>{"busy"}));
}

TEST(NodeTableTest, UsageFollowsTheJobsOnANode) {
  Outputs out;
  NodeTable nodes(out);
  NodeEntry& a = nodes.Register(Inventory("a", 4), kT0, kM0);
  NodeAllocation first{.node_name = "a", .cpus = 2, .mem_mb = 100, .gpus = GpuSet(0b11)};
  NodeAllocation second{.node_name = "a", .cpus = 1, .mem_mb = 50, .gpus = GpuSet(0b100)};
  NodeTable::AddJob(a, JobId(1), first, /*exclusive=*/false);
  NodeTable::AddJob(a, JobId(2), second, /*exclusive=*/true);
  EXPECT_EQ(a.usage.cpus, 3u);
  EXPECT_EQ(a.usage.mem_mb, 150u);
  EXPECT_EQ(a.usage.gpus, GpuSet(0b111));
  EXPECT_EQ(a.usage.jobs, 2u);
  EXPECT_TRUE(a.usage.exclusive);
  NodeTable::RemoveJob(a, JobId(2), second, true);
  NodeTable::RemoveJob(a, JobId(2), second, true);  // not there any more: nothing changes
  EXPECT_EQ(a.usage.cpus, 2u);
  EXPECT_EQ(a.usage.gpus, GpuSet(0b11));
  EXPECT_EQ(a.usage.jobs, 1u);
  EXPECT_FALSE(a.usage.exclusive);
  EXPECT_EQ(a.jobs, (std::set<JobId>{JobId(1)}));
}

TEST(NodeTableTest, RestoredNodesKeepTheirIdsAndGetOneTimeoutOfGrace) {
  Outputs out;
  NodeTable nodes(out);
  Node stored;
  stored.id = NodeId(7);
  stored.inventory = Inventory("g7");
  stored.registered = true;
  stored.responding = true;
  nodes.Restore(stored, kM0);
  EXPECT_EQ(nodes.Find("g7")->last_heartbeat, kM0);
  nodes.RestoreCounter({{"next_node_id", "5"}});
  EXPECT_EQ(nodes.Register(Inventory("new"), kT0, kM0).node.id, NodeId(8));
  nodes.RestoreCounter({{"next_node_id", "20"}});
  EXPECT_EQ(nodes.Register(Inventory("newer"), kT0, kM0).node.id, NodeId(20));
  EXPECT_TRUE(out.writes.size() == 2u);
}

}  // namespace
}  // namespace corral::controller::internal
