// GpuHealthTracker: per-GPU and node health as the agents report it in every heartbeat
// (docs/agent.md, "Health checks"), and what each report changes.
//
// A GPU with a problem goes out of service (`Node::failed_gpus`, which the node table keeps
// and stores); a node-level problem drains the node. A problem is a *state* (temperature,
// power: it passes again by itself) or *latched* (an XID: it stays until the agent drops it).
// An operator returns a failed GPU to service unless a state check still fails; its latched
// problems are then ignored ("clearing") until the agent reports it has dropped them. With
// `auto_resume`, GPUs whose checks all pass again return by themselves, and a health drain
// ends.
//
// It owns the last reported problems of each node and the GPUs being cleared; it decides and
// the controller applies (the node records are the node table's). Not thread-safe; state
// thread only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/messages.h"
#include "core/gpu.h"
#include "core/node.h"
#include "core/result.h"

namespace corral::controller::internal {

// The start of the reason of a node drained by its health checks.
inline constexpr std::string_view kHealthDrainPrefix = "health: ";

// What a heartbeat's health report changes on its node.
struct HealthChange {
  GpuSet failed;         // newly failing: out of service now (its jobs are to be stopped)
  GpuSet passing;        // out of service, now passing every check (auto_resume): back in service
  std::string drain;     // not empty: drain the node with this reason
  bool undrain = false;  // the node's health drain ends (auto_resume)
  std::vector<api::GpuHealth> problems;  // the reported problems of GPUs the node has
  std::vector<uint32_t> clear_gpus;      // HeartbeatResponse::clear_gpus
};

class GpuHealthTracker {
 public:
  // Takes `request`'s report for `node` (as recorded now) and returns what changes; problems
  // of GPUs the node does not have are dropped.
  HealthChange Apply(const Node& node, const api::HeartbeatRequest& request);

  // The last reported problems of `node`'s GPUs, and its node-level problem ("" = none).
  const std::vector<api::GpuHealth>& problems(const std::string& node) const;
  const std::string& node_problem(const std::string& node) const;

  // Returns kFailedPrecondition naming the failing check when GPU `gpu` of `node` still fails
  // a state check (so it may not return to service).
  Status CheckResumable(const std::string& node, uint32_t gpu) const;
  // GPU `gpu` of `node` returns to service: its latched problems are cleared.
  void Resume(const std::string& node, uint32_t gpu);
  // Of the failed GPUs `failed` of `node`, those that may return to service (no state
  // problem), now being cleared.
  GpuSet ResumeAll(const std::string& node, GpuSet failed);

  // The reasons reported for GPU `gpu` in `problems`, joined by "; ".
  static std::string ReasonOf(const std::vector<api::GpuHealth>& problems, uint32_t gpu);

 private:
  struct NodeHealth {
    std::vector<api::GpuHealth> problems;
    std::string node_problem;
    GpuSet clearing;  // resumed GPUs whose latched problems the agent drops
  };
  std::map<std::string, NodeHealth> nodes_;
};

}  // namespace corral::controller::internal
