// A job's path through the system (issue 12): when each step of its submission, start and end
// happened, in microseconds, and whose clock read it. Kept with the job (stored with its record)
// and shown by `corral show --timeline` (GET /api/v1/jobs/{id}/timeline; docs/latency.md).
//
// The controller reads its clock for its own marks; the batch host's agent reads its clock for
// the marks of the launch and the exit and sends them with its reports (`AgentTrace`). On one
// machine both clocks are one; across machines the difference between a controller mark and an
// agent mark includes the clocks' offset.
//
// A trace covers the job's latest run: a requeue's new start clears the run's marks
// (`ClearRun`), keeping the submission's. An unset mark is the epoch (`Timestamp{}`).
//
// Value types; copyable and comparable.
#pragma once

#include <array>
#include <string_view>

#include "core/time.h"

namespace corral {

// The marks the batch host's agent reads (its clock).
struct AgentTrace {
  Timestamp launch_received{};  // the launch request reached the agent's handler
  Timestamp cgroup_ready{};     // the job's cgroup (and device rules) made
  Timestamp spawned{};          // the agent starts the process (outputs, credentials, clone)
  Timestamp exec{};             // the process has executed the script (the spawn returned)
  Timestamp exited{};           // the agent reaped the batch script's process
  bool operator==(const AgentTrace&) const = default;
};

struct JobTrace {
  Timestamp submitted{};      // the submission reached the controller's handler
  Timestamp committed{};      // the submission was durable in the store
  Timestamp scheduled{};      // a scheduling pass placed the run
  Timestamp launch_sent{};    // the launch request left for the batch host (after its commit)
  AgentTrace agent;
  Timestamp reported{};       // the agent's exit report reached the controller
  Timestamp end_committed{};  // the job's end was durable in the store (memory only: see below)
  bool operator==(const JobTrace&) const = default;

  // Forgets the marks of the previous run (a requeued job starts again).
  void ClearRun() {
    Timestamp submitted_at = submitted, committed_at = committed;
    *this = JobTrace{};
    submitted = submitted_at;
    committed = committed_at;
  }
  // Takes the marks `a` has (a report carries some of them).
  void Merge(const AgentTrace& a) {
    auto take = [](Timestamp& to, Timestamp from) {
      if (from != Timestamp{}) to = from;
    };
    take(agent.launch_received, a.launch_received);
    take(agent.cgroup_ready, a.cgroup_ready);
    take(agent.spawned, a.spawned);
    take(agent.exec, a.exec);
    take(agent.exited, a.exited);
  }
};

// The marks in path order, with their names (as the API and `corral show --timeline` show
// them) and whose clock reads them.
struct TraceMark {
  std::string_view name;
  bool agent_clock = false;
  Timestamp JobTrace::* controller_field = nullptr;  // one of the two is set
  Timestamp AgentTrace::* agent_field = nullptr;
  Timestamp Of(const JobTrace& t) const {
    return agent_clock ? t.agent.*agent_field : t.*controller_field;
  }
};
inline constexpr std::array<TraceMark, 11> kTraceMarks = {{
    {"submitted", false, &JobTrace::submitted, nullptr},
    {"committed", false, &JobTrace::committed, nullptr},
    {"scheduled", false, &JobTrace::scheduled, nullptr},
    {"launch_sent", false, &JobTrace::launch_sent, nullptr},
    {"launch_received", true, nullptr, &AgentTrace::launch_received},
    {"cgroup_ready", true, nullptr, &AgentTrace::cgroup_ready},
    {"spawned", true, nullptr, &AgentTrace::spawned},
    {"exec", true, nullptr, &AgentTrace::exec},
    {"exited", true, nullptr, &AgentTrace::exited},
    {"reported", false, &JobTrace::reported, nullptr},
    {"end_committed", false, &JobTrace::end_committed, nullptr},
}};

}  // namespace corral
