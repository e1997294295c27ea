#include "controller/internal/controller_state.h"

#include "core/check.h"
#include "sched/policy_factory.h"

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
  governance.Start(sched_config);
}

void ControllerState::Reconfigure(sched::SchedulerConfig c) {
  sched_config = WithPartitions(std::move(c), partitions);
  engine->Reconfigure(sched_config);
  if (sched::IsRegisteredPolicy(sched_config.policy)) {
    auto rebuilt = sched::MakePolicy(sched_config.policy, sched_config);
    CORRAL_CHECK(rebuilt.has_value()) << "invalid scheduler config: " << rebuilt.error().message;
    policy = std::move(*rebuilt);
  }
  validator.Reconfigured();
  out.MarkDirty();
}

}  // namespace corral::controller::internal
