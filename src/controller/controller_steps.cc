// Controller: job steps (`corral run` inside an allocation); the steps themselves are the
// step tracker's (internal/step_tracker.h). See controller.h.
#include "controller/controller.h"
#include "controller/internal/controller_state.h"
#include "controller/internal/request_limits.h"

namespace corral::controller {

using internal::JobEntry;

Result<api::StepInfo> Controller::CreateStep(const api::Identity& who, JobId id, StepSpec spec) {
  CORRAL_ASSIGN_OR_RETURN(JobEntry * e, s_->jobs.Get(id));
  CORRAL_RETURN_IF_ERROR(internal::AuthorizeJob(who, api::Action::kCreateStep, e->job));
  CORRAL_RETURN_IF_ERROR(internal::CheckStepSizes(spec));
  CORRAL_RETURN_IF_ERROR(internal::CheckRunning(e->job));
  if (e->cancel_requested) return FailedPrecondition("job " + id.ToString() + ": being cancelled");
  if (e->job.allocation.suspended) {
    return FailedPrecondition("job " + id.ToString() + ": suspended");
  }
  return s_->steps.Create(*e, std::move(spec));
}

Result<api::StepInfo> Controller::GetStep(JobId id, uint32_t step) const {
  const internal::StepEntry* s = s_->steps.Find(id, step);
  if (s != nullptr) return s->info;
  CORRAL_RETURN_IF_ERROR(s_->jobs.Get(id));
  return NotFound("job " + id.ToString() + " step " + std::to_string(step) + ": no such step");
}

Result<std::vector<api::StepInfo>> Controller::ListSteps(JobId id) const {
  CORRAL_RETURN_IF_ERROR(s_->jobs.Get(id));
  return s_->steps.List(id);
}

Status Controller::CancelStep(const api::Identity& who, JobId id, uint32_t step) {
  CORRAL_ASSIGN_OR_RETURN(JobEntry * e, s_->jobs.Get(id));
  CORRAL_RETURN_IF_ERROR(internal::AuthorizeJob(who, api::Action::kCreateStep, e->job));
  return s_->steps.Cancel(id, step);
}

std::vector<std::pair<JobId, uint32_t>> Controller::TakeFinishedSteps() {
  return s_->steps.TakeFinished();
}

void Controller::OnStepLaunchFailed(JobId job, Generation generation, uint32_t step,
                                    const std::string& node, const Error& error) {
  s_->steps.OnLaunchFailed(job, generation, step, node, error);
}

}  // namespace corral::controller
