// Outputs: what the controller's changes leave for its caller (controller.h): the store
// writes, the commands for agents, and whether a scheduling pass is due.
//
// The Controller owns it; the collaborators that record changes append to it (each writes
// only its own records: jobs by JobTable, nodes by NodeTable, ...); only the Controller takes
// from it (`TakeWrites`, `TakeOutbox`). Not thread-safe; state thread only.
#pragma once

#include <utility>
#include <vector>

#include "controller/agent_transport.h"
#include "core/node.h"
#include "store/store.h"

namespace corral::controller::internal {

// Where the agent of `node` listens.
inline AgentAddress AddressOf(const Node& node) {
  return {node.inventory.name, node.inventory.address};
}

struct Outputs {
  store::WriteBatch writes;
  std::vector<OutgoingCommand> outbox;
  bool sched_dirty = true;  // something changed that a scheduling pass should see

  // Queues `request` for the agent of `to`.
  void Send(const Node& to, AgentRequest request) {
    outbox.push_back({AddressOf(to), std::move(request)});
  }
  void MarkDirty() { sched_dirty = true; }
};

}  // namespace corral::controller::internal
