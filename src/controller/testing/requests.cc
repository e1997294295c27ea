#include "controller/testing/requests.h"

namespace corral::controller::testing {

Result<UnixIds> TestUserIds(const std::string& user) {
  if (user == "alice") return UnixIds{.uid = 1000, .gid = 1000};
  if (user == "bob") return UnixIds{.uid = 1001, .gid = 1001};
  if (user == "mallory") return UnixIds{.uid = 1002, .gid = 1002};
  if (user == "olga") return UnixIds{.uid = 1500, .gid = 1500};
  return NotFound("no such user \"" + user + "\"");
}

api::RegisterRequest NodeRegistration(const std::string& name, uint32_t gpus, std::string address,
                                      std::vector<api::RunningJobRef> running,
                                      const std::string& model) {
  api::RegisterRequest req;
  req.inventory.name = name;
  req.inventory.address = address.empty() ? "http://127.0.0.1:1/" + name : std::move(address);
  req.inventory.cpus = 16;
  req.inventory.memory_mb = 64000;
  for (uint32_t i = 0; i < gpus; ++i) req.inventory.gpus.push_back({.index = i, .model = model});
  req.running = std::move(running);
  return req;
}

JobSpec BatchJob(uint32_t gpus_per_node, uint32_t nodes, const std::string& command) {
  JobSpec s;
  s.script = "#!/bin/sh\n" + command + "\n";
  s.working_dir = "/tmp";
  s.resources.nodes = nodes;
  s.resources.ntasks = nodes;
  s.resources.gpus_per_node = gpus_per_node;
  return s;
}

StepSpec StepRun(std::vector<std::string> argv) {
  StepSpec s;
  s.argv = std::move(argv);
  return s;
}

api::JobEventsRequest JobExit(const std::string& node, const Job& j, int exit_code, int signal,
                              bool timed_out) {
  api::JobEvent ev{.type = api::JobEventType::kExited,
                   .job = j.id,
                   .generation = j.allocation.generation,
                   .exit_code = exit_code,
                   .signal = signal,
                   .timed_out = timed_out};
  return {.node = node, .events = {ev}};
}

api::JobEventsRequest TaskExit(const std::string& node, const Job& j, uint32_t step, uint32_t task,
                               int exit_code, int signal) {
  api::JobEvent ev{.type = api::JobEventType::kTaskExited,
                   .job = j.id,
                   .generation = j.allocation.generation,
                   .exit_code = exit_code,
                   .signal = signal,
                   .step = step,
                   .task = task};
  return {.node = node, .events = {ev}};
}

}  // namespace corral::controller::testing
