// Agent: the node agent. It registers the node's inventory with the controller, heartbeats,
// runs the jobs the controller launches on it (through ProcessSupervisor), and reports their
// start and exit as events until the controller acknowledges them.
//
// Fencing: a launch carries the allocation's generation; a launch older than one already seen
// for the job is refused (409), a repeated one is a no-op. Jobs are reported in heartbeats
// until their exit event is acknowledged, so the controller can tell a lost job from one whose
// exit report is on its way.
//
// Restart: launched jobs are journaled in the state directory; a restarted agent kills the
// processes a previous run left behind (their jobs were lost with it) before it registers.
//
// Shape: every rule above is `AgentCore`'s (agent_core.h: no I/O, unit-tested on a fake
// clock); `Agent` is the service around it — threads, HTTP, the process supervisor and the
// node monitor (agent.cc, launcher.h).
//
// Thread-safety: thread-safe.
#pragma once

#include <memory>
#include <string>

#include "agent/config.h"
#include "agent/gpu/gpu_backend.h"
#include "api/auth.h"
#include "core/clock.h"
#include "core/result.h"

namespace corral::agent {

class Agent {
 public:
  // `credentials` hold the node's key (or a cluster key): they mint the agent's tokens for
  // its node and verify the controller's calls for it (api/credentials.h).
  Agent(AgentConfig config, std::unique_ptr<GpuBackend> gpus, api::Credentials credentials,
        const Clock& clock);
  ~Agent();  // stops
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Cleans up after a previous run, discovers the GPUs, starts the HTTP server and the
  // registration/heartbeat and event threads. Returns kUnavailable if the port cannot be bound
  // or the GPUs cannot be discovered; kInternal if the state directory cannot be created.
  Status Start();
  // Stops the threads and the server and kills the jobs it still runs.
  void Stop();
  // "https://ADVERTISE:PORT" with a TLS certificate, else "http://...".
  std::string url() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace corral::agent
