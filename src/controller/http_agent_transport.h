// HttpAgentTransport: delivers commands to agents over their HTTP API, in order per node,
// from a small pool of sender threads, retrying while an agent is unreachable.
//
// Thread-safety: thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "api/http.h"
#include "controller/agent_transport.h"
#include "core/clock.h"

namespace corral::controller {

struct HttpAgentTransportOptions {
  size_t threads = 4;
  Duration give_up_after = Seconds(30);        // a launch undeliverable this long fails
  // The Authorization header of each request to node NODE's agent (valid for that node only).
  std::function<std::string(const std::string& node)> authorization;
  // TLS to https:// agents: the CA that verifies them, the controller's certificate and key.
  api::HttpClientOptions client;
};

class HttpAgentTransport final : public AgentTransport {
 public:
  HttpAgentTransport(const Clock& clock, AgentReplies replies, HttpAgentTransportOptions options);
  ~HttpAgentTransport() override;  // drops what is still queued and joins the threads

  void Send(const AgentAddress& to, const AgentRequest& request) override;
  void Forget(const std::string& node) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace corral::controller
