// AgentTransport: how the controller pushes commands to node agents.
//
// Sends are asynchronous: the state thread hands a command over and goes on. The transport
// delivers it (retrying while the agent is unreachable, in order per node) and reports the
// agent's answer back through `AgentReplies`, which the controller service posts onto the
// state thread. Commands are only handed over after the change that caused them is durable.
#pragma once

#include <functional>
#include <string>
#include <variant>

#include "api/messages.h"
#include "core/result.h"

namespace corral::controller {

// Where a command goes.
struct AgentAddress {
  std::string node;  // node name
  std::string url;   // the agent's API base URL
};

// One request of the agent API: what the controller asks of an agent. A value type, as
// `store::WriteBatch::Op` is.
using AgentRequest =
    std::variant<api::LaunchRequest, api::SignalRequest, api::CancelRequest, api::StepLaunchRequest,
                 api::StepSignalRequest, api::TimeLimitRequest>;

// A command for an agent, released after the batch that caused it is durable
// (`Controller::TakeOutbox`).
struct OutgoingCommand {
  AgentAddress to;
  AgentRequest request;
};

// Callbacks the transport calls (from its own threads) with the agent's answers.
struct AgentReplies {
  // The agent accepted a launch (it runs the job or reports why it could not as an event).
  std::function<void(JobId, Generation)> launch_accepted;
  // The agent refused a launch (stale generation, malformed) or it could not be delivered
  // before the transport gave up.
  std::function<void(JobId, Generation, Error)> launch_failed;
  // The agent of `node` refused a step's launch, or it could not be delivered.
  std::function<void(JobId, Generation, uint32_t step, std::string node, Error)> step_launch_failed;
};

// Thread-safe.
class AgentTransport {
 public:
  virtual ~AgentTransport() = default;
  // Queues `request` for the agent at `to`: a launch, a signal, a cancel, a step's launch or
  // signal, or a running job's new time limit for its processes on that node.
  virtual void Send(const AgentAddress& to, const AgentRequest& request) = 0;
  // Drops queued commands for `node` (it re-registered under a new address, or went down).
  virtual void Forget(const std::string& node) = 0;
};

}  // namespace corral::controller
