#include "controller/job_credentials.h"

#include <mutex>

namespace corral::controller {

JobCredentials::JobCredentials(std::shared_ptr<const api::Credentials> credentials, Duration grace)
    : credentials_(std::move(credentials)), grace_(grace) {}

Result<std::string> JobCredentials::Mint(const Job& job, Timestamp now) {
  api::JobGrant grant{.job = job.id,
                      .generation = job.allocation.generation,
                      .user = job.spec.user,
                      .uid = job.spec.uid,
                      .gid = job.spec.gid};
  // A limit (from the start) ends the credential; none, or one too large to add ("UNLIMITED"),
  // leaves it to the lifetime cap.
  if (job.time_limit > Duration(0) && job.start_time != Timestamp{} &&
      job.time_limit < Timestamp::max() - job.start_time) {
    grant.ends_at = job.start_time + job.time_limit;
  }
  CORRAL_ASSIGN_OR_RETURN(std::string token, credentials_->MintJobCredential(grant, now, grace_));
  std::unique_lock lock(mu_);
  live_[job.id] = job.allocation.generation;
  return token;
}

void JobCredentials::Ended(JobId job) {
  std::unique_lock lock(mu_);
  live_.erase(job);
}

void JobCredentials::Stopped(JobId job, Generation generation) {
  std::unique_lock lock(mu_);
  if (auto it = live_.find(job); it != live_.end() && it->second == generation) live_.erase(it);
}

void JobCredentials::Replace(std::map<JobId, Generation> running) {
  std::unique_lock lock(mu_);
  live_ = std::move(running);
}

bool JobCredentials::Alive(JobId job, Generation generation) const {
  std::shared_lock lock(mu_);
  auto it = live_.find(job);
  return it != live_.end() && it->second == generation;
}

api::JobLiveness JobCredentials::Liveness(std::shared_ptr<const JobCredentials> self) {
  return [self = std::move(self)](JobId job, Generation generation) {
    return self->Alive(job, generation);
  };
}

}  // namespace corral::controller
