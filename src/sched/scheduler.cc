#include "sched/scheduler.h"

#include <memory>
#include <utility>

#include "sched/internal/admission.h"
#include "sched/internal/config_index.h"
#include "sched/internal/node_cache.h"
#include "sched/internal/pass.h"

namespace corral::sched {

Scheduler::Scheduler(SchedulerConfig config, SchedulerOptions options)
    : config_(std::move(config)),
      options_(std::move(options)),
      index_(std::make_unique<internal::ConfigIndex>(config_)) {}

Scheduler::~Scheduler() = default;

Result<std::unique_ptr<Scheduler>> Scheduler::Create(SchedulerConfig config,
                                                     SchedulerOptions options) {
  CORRAL_RETURN_IF_ERROR(ValidateSchedulerConfig(config));
  return std::make_unique<Scheduler>(std::move(config), std::move(options));
}

void Scheduler::Reconfigure(SchedulerConfig config) {
  config_ = std::move(config);
  index_ = std::make_unique<internal::ConfigIndex>(config_);
  node_cache_.reset();  // derived from the partitions and the nodes: rebuilt at the next pass
}

Plan Scheduler::Decide(const ClusterSnapshot& snapshot, Timestamp now) {
  Plan plan;
  if (node_cache_ == nullptr) node_cache_ = std::make_unique<internal::NodeCache>();
  internal::Pass pass(config_, options_, *index_, snapshot, now, node_cache_.get());
  pass.Run(&plan);
  return plan;
}

Status Scheduler::ValidateSubmission(const PendingJobView& job,
                                     const ClusterSnapshot& snapshot) const {
  return internal::ValidateSubmission(config_, *index_, job, snapshot);
}

std::vector<PriorityFactors> Scheduler::Priorities(const ClusterSnapshot& snapshot,
                                                   Timestamp now) const {
  internal::Pass pass(config_, options_, *index_, snapshot, now, /*cache=*/nullptr);
  return pass.Priorities();
}

}  // namespace corral::sched
