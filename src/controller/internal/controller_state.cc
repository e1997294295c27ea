#include "controller/internal/controller_state.h"

#include "core/check.h"

namespace corral::controller::internal {
namespace {

// `config` with the partitions of `partitions` (their host lists expanded).
sched::SchedulerConfig WithPartitions(sched::SchedulerConfig config, const Partitions& partitions) {
  config.partitions = partitions.all();
  return config;
}

std::unique_ptr<sched::Scheduler> MakeEngine(const sched::SchedulerConfig& config) {
  auto engine = sched::Scheduler::Create(config);
  CORRAL_CHECK(engine.has_value()) << "invalid scheduler config: " << engine.error().message;
  return std::move(*engine);
}

}  // namespace

ControllerState::ControllerState(ControllerConfig config_in, sched::SchedulerConfig sched_in,
                                 std::unique_ptr<sched::Policy> policy_in, const Clock& clock_in)
    : config(std::move(config_in)),
      clock(clock_in),
      partitions(sched_in.partitions),
      sched_config(WithPartitions(std::move(sched_in), partitions)),
      policy(std::move(policy_in)),
      engine(MakeEngine(sched_config)) {
  CORRAL_CHECK(policy != nullptr) << "a scheduling policy is required";
  last_pass = clock.MonotonicNow();
}

}  // namespace corral::controller::internal
