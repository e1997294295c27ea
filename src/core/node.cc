#include "core/node.h"

#include <cctype>

namespace corral {

std::string_view NodeStateName(NodeState s) {
  switch (s) {
    case NodeState::kUnknown: return "UNKNOWN";
    case NodeState::kIdle: return "IDLE";
    case NodeState::kMixed: return "MIXED";
    case NodeState::kAllocated: return "ALLOCATED";
    case NodeState::kDraining: return "DRAINING";
    case NodeState::kDrained: return "DRAINED";
    case NodeState::kDown: return "DOWN";
    case NodeState::kPoweredDown: return "POWERED_DOWN";
  }
  return "UNKNOWN";
}

std::string_view NodeStateSinfoName(NodeState s) {
  switch (s) {
    case NodeState::kUnknown: return "unk";
    case NodeState::kIdle: return "idle";
    case NodeState::kMixed: return "mix";
    case NodeState::kAllocated: return "alloc";
    case NodeState::kDraining: return "drng";
    case NodeState::kDrained: return "drain";
    case NodeState::kDown: return "down";
    case NodeState::kPoweredDown: return "idle~";
  }
  return "unk";
}

Result<NodeState> ParseNodeState(std::string_view text) {
  std::string upper;
  for (char c : text) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (NodeState s : {NodeState::kUnknown, NodeState::kIdle, NodeState::kMixed,
                      NodeState::kAllocated, NodeState::kDraining, NodeState::kDrained,
                      NodeState::kDown, NodeState::kPoweredDown}) {
    if (upper == NodeStateName(s)) return s;
  }
  if (upper == "MIX") return NodeState::kMixed;
  if (upper == "ALLOC") return NodeState::kAllocated;
  if (upper == "DRAIN") return NodeState::kDrained;
  return InvalidArgument("unknown node state \"" + std::string(text) + "\"");
}

NodeState DeriveNodeState(const Node& node, const NodeUsage& usage) {
  if (!node.registered) return NodeState::kUnknown;
  if (node.powered_down) return NodeState::kPoweredDown;
  if (!node.responding) return NodeState::kDown;
  bool busy = usage.jobs > 0;
  if (node.drain) return busy ? NodeState::kDraining : NodeState::kDrained;
  if (!busy) return NodeState::kIdle;
  const auto& inv = node.inventory;
  bool all_cpus = inv.cpus > 0 && usage.cpus >= inv.cpus;
  bool all_gpus = !inv.gpus.empty() && usage.gpus.size() >= inv.gpus.size();
  if (usage.exclusive || all_cpus || all_gpus) return NodeState::kAllocated;
  return NodeState::kMixed;
}

}  // namespace corral
