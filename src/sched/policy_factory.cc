#include "sched/policy_factory.h"

#include <string>

#include "sched/first_fit_policy.h"
#include "sched/las_policy.h"
#include "sched/scheduler.h"
#include "sched/sjf_policy.h"

namespace corral::sched {
namespace {

// Submit order: every weight zero, so jobs order by tier, -nice, submit time, JobId.
SchedulerConfig SubmitOrder(SchedulerConfig c) {
  c.priority.weight_age = 0;
  c.priority.weight_fairshare = 0;
  c.priority.weight_job_size = 0;
  c.priority.weight_partition = 0;
  c.priority.weight_qos = 0;
  c.preemption.enabled = false;
  return c;
}

Result<std::unique_ptr<Policy>> MakeFifo(const SchedulerConfig& config) {
  SchedulerConfig c = SubmitOrder(config);
  c.backfill.enabled = false;
  CORRAL_ASSIGN_OR_RETURN(auto s,
                          Scheduler::Create(std::move(c), SchedulerOptions{.strict_order = true}));
  return std::unique_ptr<Policy>(std::move(s));
}

Result<std::unique_ptr<Policy>> MakeBackfill(const SchedulerConfig& config) {
  SchedulerConfig c = SubmitOrder(config);
  c.backfill.enabled = true;
  c.backfill.reservations = 1;  // EASY: only the first blocked job holds a reservation
  CORRAL_ASSIGN_OR_RETURN(auto s, Scheduler::Create(std::move(c)));
  return std::unique_ptr<Policy>(std::move(s));
}

Result<std::unique_ptr<Policy>> MakeDefault(const SchedulerConfig& config) {
  CORRAL_ASSIGN_OR_RETURN(auto s, Scheduler::Create(config));
  return std::unique_ptr<Policy>(std::move(s));
}

Result<std::unique_ptr<Policy>> MakeFirstFit(const SchedulerConfig&) {
  return std::unique_ptr<Policy>(std::make_unique<FirstFitPolicy>());
}

struct Entry {
  std::string_view name;
  std::string_view description;
  Result<std::unique_ptr<Policy>> (*make)(const SchedulerConfig&);
};

// The registry. Add new policies here (one line each).
constexpr Entry kPolicies[] = {
    {"fifo", "strict submit order, no backfill", &MakeFifo},
    {"backfill", "submit order with EASY backfill", &MakeBackfill},
    {"default", "multifactor priority, fair share, limits, preemption, backfill, topology",
     &MakeDefault},
    {"first_fit", "the placeholder first-fit policy (nice, then JobId)", &MakeFirstFit},
    {"las", "preemptive least attained GPU-service, multi-level queues (Tiresias-style)",
     &MakeLasPolicy},
    {"sjf", "oracle shortest-job-first on known run times (simulator bound)", &MakeSjfPolicy},
};

}  // namespace

std::vector<PolicyInfo> RegisteredPolicies() {
  std::vector<PolicyInfo> out;
  for (const Entry& e : kPolicies) out.push_back({e.name, e.description});
  return out;
}

bool IsRegisteredPolicy(std::string_view name) {
  for (const Entry& e : kPolicies) {
    if (e.name == name) return true;
  }
  return false;
}

Result<std::unique_ptr<Policy>> MakePolicy(std::string_view name, const SchedulerConfig& config) {
  for (const Entry& e : kPolicies) {
    if (e.name == name) return e.make(config);
  }
  std::string known;
  for (const Entry& e : kPolicies) known += (known.empty() ? "" : ", ") + std::string(e.name);
  return MakeError(ErrorCode::kNotFound,
                   "no such policy \"" + std::string(name) + "\" (known: " + known + ")");
}

}  // namespace corral::sched
