// JobCredentials: the credential a job's processes hold instead of their user's
// (docs/security.md, "Job credentials"; api/credentials.h).
//
// The controller mints one when it sends a run's launch (or a step's) to an agent, for the
// job's id, its run (generation), its user, uid and gid, expiring when the job's time limit
// plus `grace` ends. It records the run as live; the controller's authenticator asks `Alive`
// for every request made with a job credential, so the credential is refused as soon as the
// job no longer runs with that generation: when it ends (`Ended`), when it is requeued
// (`Stopped`: a requeue always gives the job a new generation), and when it is relaunched (a
// relaunch records the new generation at once); `Replace`, the state thread's periodic
// resync, is the backstop.
//
// Thread-safety: thread-safe. `Mint`, `Ended` and `Replace` are called by the state thread,
// `Alive` by any handler thread (a shared lock over a map of running jobs).
#pragma once

#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "api/credentials.h"
#include "core/job.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::controller {

class JobCredentials {
 public:
  JobCredentials(std::shared_ptr<const api::Credentials> credentials, Duration grace);

  // The credential of `job`'s current run (`job.allocation.generation`), which is recorded as
  // live. Returns `Credentials::MintJobCredential`'s errors.
  Result<std::string> Mint(const Job& job, Timestamp now);
  // Job `job` runs no more: its credentials are refused from now on.
  void Ended(JobId job);
  // Job `job`'s run `generation` stopped (it ended or was requeued): its credentials are
  // refused from now on; a newer run's (already minted) are not.
  void Stopped(JobId job, Generation generation);
  // The running jobs and their runs, as the state knows them (after recovery, and
  // periodically): every other recorded run is forgotten.
  void Replace(std::map<JobId, Generation> running);
  // True while `job` runs with `generation`.
  bool Alive(JobId job, Generation generation) const;
  // A hook for `api::ControllerAuthOptions::job_alive` that keeps this object alive.
  static api::JobLiveness Liveness(std::shared_ptr<const JobCredentials> self);

  const api::Credentials& credentials() const { return *credentials_; }

 private:
  std::shared_ptr<const api::Credentials> credentials_;
  Duration grace_;
  mutable std::shared_mutex mu_;
  std::map<JobId, Generation> live_;  // guarded by mu_
};

}  // namespace corral::controller
