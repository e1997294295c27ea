// Builders for controller tests: the identities, node registrations, job specs and agent
// events that the controller's tests (and tests/sim's controller equivalence test) send, and
// accessors for the commands a controller puts in its outbox.
//
// Test-only; no gtest; thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "api/auth.h"
#include "api/messages.h"
#include "controller/agent_transport.h"
#include "controller/config.h"
#include "core/job.h"

namespace corral::controller::testing {

inline const api::Identity kAlice{
    .user = "alice", .uid = 1000, .gid = 1000, .role = api::Role::kUser};
inline const api::Identity kBob{.user = "bob", .uid = 1001, .gid = 1001, .role = api::Role::kUser};
inline const api::Identity kMallory{
    .user = "mallory", .uid = 1002, .gid = 1002, .role = api::Role::kUser};
inline const api::Identity kAdmin{.user = "root", .uid = 0, .gid = 0, .role = api::Role::kAdmin};

// The uids of the test users (alice 1000, bob 1001, mallory 1002, olga 1500); kNotFound for
// any other name.
Result<UnixIds> TestUserIds(const std::string& user);

// A node's registration: 16 CPUs, 64000 MB, `gpus` GPUs of `model` (indices 0..gpus-1), at
// `address` ("http://127.0.0.1:1/<name>" when empty), running `running`.
api::RegisterRequest NodeRegistration(const std::string& name, uint32_t gpus,
                                      std::string address = "",
                                      std::vector<api::RunningJobRef> running = {},
                                      const std::string& model = "h100");

// A batch job: a two-line /bin/sh script running `command`, in /tmp, on `nodes` nodes with one
// task and `gpus_per_node` GPUs on each.
JobSpec BatchJob(uint32_t gpus_per_node = 1, uint32_t nodes = 1,
                 const std::string& command = "echo hi");

// A step running `argv`, every other field its default.
StepSpec StepRun(std::vector<std::string> argv);

// The exit of run `j`'s batch script, as `node`'s agent reports it.
api::JobEventsRequest JobExit(const std::string& node, const Job& j, int exit_code = 0,
                              int signal = 0, bool timed_out = false);

// The exit of task `task` of step `step` of run `j`, as `node`'s agent reports it.
api::JobEventsRequest TaskExit(const std::string& node, const Job& j, uint32_t step, uint32_t task,
                               int exit_code = 0, int signal = 0);

// Whether `command` carries a `Request`.
template <typename Request>
bool Is(const OutgoingCommand& command) {
  return std::holds_alternative<Request>(command.request);
}

// The `Request` that `command` carries. Requires: `Is<Request>(command)`.
template <typename Request>
const Request& As(const OutgoingCommand& command) {
  return std::get<Request>(command.request);
}

// The commands of `out` that carry a `Request`, in order.
template <typename Request>
std::vector<OutgoingCommand> CommandsOf(const std::vector<OutgoingCommand>& out) {
  std::vector<OutgoingCommand> r;
  for (const auto& c : out) {
    if (Is<Request>(c)) r.push_back(c);
  }
  return r;
}

}  // namespace corral::controller::testing
