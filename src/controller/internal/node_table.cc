#include "controller/internal/node_table.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "core/log.h"

namespace corral::controller::internal {
namespace {

bool ValidNodeName(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      return false;
  }
  return true;
}

}  // namespace

void NodeTable::Restore(const Node& node, MonoTime now) {
  NodeEntry entry;
  entry.node = node;
  entry.last_heartbeat = now;  // one node timeout of grace to heartbeat again
  earliest_heartbeat_ = std::min(earliest_heartbeat_, now);
  ++capacity_version_;
  next_node_id_ = std::max(next_node_id_, node.id.value + 1);
  names_[node.id] = node.inventory.name;
  nodes_[node.inventory.name] = std::move(entry);
}

void NodeTable::RestoreCounter(const std::map<std::string, std::string>& meta) {
  auto it = meta.find("next_node_id");
  if (it == meta.end()) return;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  if (ec == std::errc())
    next_node_id_ = static_cast<uint32_t>(std::max<uint64_t>(next_node_id_, v));
}

NodeEntry* NodeTable::Find(const std::string& name) {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

const NodeEntry* NodeTable::Find(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

Result<NodeEntry*> NodeTable::Get(const std::string& name) {
  NodeEntry* n = Find(name);
  if (n == nullptr) return NotFound("node \"" + name + "\": no such node");
  return n;
}

Result<const NodeEntry*> NodeTable::Get(const std::string& name) const {
  const NodeEntry* n = Find(name);
  if (n == nullptr) return NotFound("node \"" + name + "\": no such node");
  return n;
}

std::vector<std::string> NodeTable::Expired(MonoTime now, Duration timeout) {
  std::vector<std::string> out;
  if (earliest_heartbeat_ == MonoTime::max() || now - earliest_heartbeat_ <= timeout) return out;
  MonoTime earliest = MonoTime::max();
  for (const auto& [name, n] : nodes_) {
    if (!n.node.registered || !n.node.responding) continue;
    if (now - n.last_heartbeat > timeout) out.push_back(name);
    earliest = std::min(earliest, n.last_heartbeat);
  }
  earliest_heartbeat_ = earliest;
  return out;
}

MonoTime NodeTable::NextExpiry(Duration timeout) const {
  if (earliest_heartbeat_ == MonoTime::max()) return MonoTime::max();
  return earliest_heartbeat_ + timeout + Millis(1);
}

Status NodeTable::ValidateInventory(const NodeInventory& inv) {
  if (!ValidNodeName(inv.name)) {
    return InvalidArgument("inventory.name: \"" + inv.name + "\" is not a valid node name");
  }
  if (inv.address.rfind("http://", 0) != 0 && inv.address.rfind("https://", 0) != 0) {
    return InvalidArgument("inventory.address: \"" + inv.address +
                           "\" is not an http:// or https:// URL");
  }
  if (inv.cpus == 0) return InvalidArgument("inventory.cpus: must be at least 1");
  GpuSet seen;
  for (const auto& g : inv.gpus) {
    if (g.index >= kMaxGpusPerNode || seen.contains(g.index)) {
      return InvalidArgument("inventory.gpus: index " + std::to_string(g.index) +
                             " is duplicated or out of range");
    }
    seen.insert(g.index);
  }
  return {};
}

NodeEntry& NodeTable::Register(const NodeInventory& inv, Timestamp now, MonoTime mono_now) {
  NodeEntry* n = Find(inv.name);
  if (n == nullptr) {
    NodeEntry entry;
    entry.node.id = NodeId(next_node_id_++);
    out_.writes.PutMeta("next_node_id", std::to_string(next_node_id_));
    names_[entry.node.id] = inv.name;
    n = &(nodes_[inv.name] = std::move(entry));
    CORRAL_LOG(Info) << "node " << inv.name << " registered: " << inv.cpus << " CPUs, "
                     << inv.gpus.size() << " GPUs, at " << inv.address;
  } else {
    CORRAL_LOG(Info) << "node " << inv.name << " re-registered at " << inv.address;
  }
  n->node.inventory = inv;
  n->node.registered = true;
  ++capacity_version_;
  n->node.responding = true;
  if (n->node.reason == kNotResponding) n->node.reason.clear();
  n->node.last_heartbeat = now;
  n->last_heartbeat = mono_now;
  earliest_heartbeat_ = std::min(earliest_heartbeat_, mono_now);
  return *n;
}

bool NodeTable::Heartbeat(NodeEntry& n, Timestamp now, MonoTime mono_now) {
  n.last_heartbeat = mono_now;
  n.node.last_heartbeat = now;
  earliest_heartbeat_ = std::min(earliest_heartbeat_, mono_now);
  if (n.node.responding) return false;
  n.node.responding = true;
  if (n.node.reason == kNotResponding) n.node.reason.clear();
  return true;
}

void NodeTable::MarkNotResponding(NodeEntry& n, Timestamp now) {
  n.node.responding = false;
  n.node.reason = std::string(kNotResponding);
  n.node.reason_time = now;
  Put(n);
}

void NodeTable::SetDrain(NodeEntry& n, std::string reason, Timestamp now) {
  n.node.drain = true;
  n.node.reason = std::move(reason);
  n.node.reason_time = now;
}

void NodeTable::ClearDrain(NodeEntry& n) {
  n.node.drain = false;
  n.node.reason.clear();
  n.node.reason_time = {};
}

void NodeTable::AddJob(NodeEntry& n, JobId job, const NodeAllocation& na, bool exclusive) {
  n.usage.cpus += na.cpus;
  n.usage.mem_mb += na.mem_mb;
  n.usage.gpus = n.usage.gpus | na.gpus;
  n.usage.jobs += 1;
  if (exclusive) n.usage.exclusive = true;
  n.jobs.insert(job);
}

void NodeTable::RemoveJob(NodeEntry& n, JobId job, const NodeAllocation& na, bool exclusive) {
  if (!n.jobs.contains(job)) return;
  n.jobs.erase(job);
  n.usage.cpus -= std::min(n.usage.cpus, na.cpus);
  n.usage.mem_mb -= std::min(n.usage.mem_mb, na.mem_mb);
  n.usage.gpus = n.usage.gpus - na.gpus;
  n.usage.jobs -= std::min<uint32_t>(n.usage.jobs, 1);
  if (exclusive) n.usage.exclusive = false;
}

}  // namespace corral::controller::internal
