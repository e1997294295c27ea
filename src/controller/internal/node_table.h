// NodeTable: every node that ever registered, by name and by id, with what is allocated on
// each, when it last heartbeated, and the node id counter.
//
// It owns the node map and the node records in the write batch: it alone adds nodes and
// keeps their usage (`AddJob`, `RemoveJob`); callers change a node's other fields through its
// methods or directly, and record it with `Put`.
//
// Not thread-safe; state thread only.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "controller/internal/outputs.h"
#include "core/job.h"
#include "core/node.h"
#include "core/result.h"

namespace corral::controller::internal {

// The reason of a node that stopped heartbeating (cleared when it responds again).
inline constexpr std::string_view kNotResponding = "Not responding";

struct NodeEntry {
  Node node;
  MonoTime last_heartbeat{};
  NodeUsage usage;
  std::set<JobId> jobs;  // running jobs holding part of this node
};

class NodeTable {
 public:
  explicit NodeTable(Outputs& out) : out_(out) {}
  NodeTable(const NodeTable&) = delete;
  NodeTable& operator=(const NodeTable&) = delete;

  // --- Recovery ---

  // Adds stored node `node`, giving it until one node timeout after `now` to heartbeat.
  void Restore(const Node& node, MonoTime now);
  // Moves the id counter to the stored "next_node_id" when it is ahead.
  void RestoreCounter(const std::map<std::string, std::string>& meta);

  // --- Lookups ---

  NodeEntry* Find(const std::string& name);
  const NodeEntry* Find(const std::string& name) const;
  // Returns kNotFound ("node "x": no such node") for an unknown node.
  Result<NodeEntry*> Get(const std::string& name);
  Result<const NodeEntry*> Get(const std::string& name) const;
  size_t size() const { return nodes_.size(); }
  // By name.
  const std::map<std::string, NodeEntry>& all() const { return nodes_; }
  // Changes whenever a node's inventory or registration may have changed (what
  // `SnapshotBuilder::ForSubmission` keeps between submissions).
  uint64_t capacity_version() const { return capacity_version_; }
  // Node names by id (the order nodes first registered in).
  const std::map<NodeId, std::string>& names_by_id() const { return names_; }

  // Registered, responding nodes whose last heartbeat is more than `timeout` before `now`,
  // by name. Looks at every node only when the earliest heartbeat may have expired (the
  // state thread asks at each of its iterations: with 10,000 nodes heartbeating, a scan each
  // time cost more than the heartbeats themselves).
  std::vector<std::string> Expired(MonoTime now, Duration timeout);
  // When the first registered, responding node expires (`timeout` after its last
  // heartbeat, plus a millisecond), or MonoTime::max(); after heartbeats, possibly earlier
  // (the bound below), until `Expired` scans: never later.
  MonoTime NextExpiry(Duration timeout) const;

  // --- Changes ---

  // Returns kInvalidArgument naming the field for an inventory that cannot be registered: a
  // bad node name, an address that is not http://, no CPUs, GPU indices duplicated or out of
  // range.
  static Status ValidateInventory(const NodeInventory& inventory);
  // Registers node `inventory.name` (a new one gets the next id, recorded) and marks it
  // registered, responding and heard from now. Requires: `ValidateInventory` passed. The
  // caller records it (`Put`) once it has reconciled its jobs.
  NodeEntry& Register(const NodeInventory& inventory, Timestamp now, MonoTime mono_now);
  // A heartbeat of `n` at `now`. Returns true when `n` was DOWN and responds again (then its
  // record changed: the caller records it).
  bool Heartbeat(NodeEntry& n, Timestamp now, MonoTime mono_now);
  // `n` stopped heartbeating: DOWN, "Not responding". Recorded.
  void MarkNotResponding(NodeEntry& n, Timestamp now);
  // Drains `n` (no new jobs) because of `reason`, or ends its drain. Not recorded.
  static void SetDrain(NodeEntry& n, std::string reason, Timestamp now);
  static void ClearDrain(NodeEntry& n);
  // Job `job` holds `alloc` of `n` (an `exclusive` job holds all of it) / no longer does.
  static void AddJob(NodeEntry& n, JobId job, const NodeAllocation& alloc, bool exclusive);
  static void RemoveJob(NodeEntry& n, JobId job, const NodeAllocation& alloc, bool exclusive);
  // Records the node.
  void Put(const NodeEntry& n) { out_.writes.PutNode(n.node); }

 private:
  Outputs& out_;
  std::map<std::string, NodeEntry> nodes_;  // by name
  std::map<NodeId, std::string> names_;     // id -> name
  uint32_t next_node_id_ = 1;
  // At most the earliest last heartbeat of a registered, responding node (MonoTime::max():
  // none): heartbeats only move a node's later, so this bound holds until `Expired` scans
  // and sets it to the true earliest (the expired ones included: they stay until marked).
  MonoTime earliest_heartbeat_ = MonoTime::max();
  uint64_t capacity_version_ = 0;
};

}  // namespace corral::controller::internal
