// Access: the controller's use of the one decision table (api/access.h, `Authorize`) for
// jobs, and what of a job each caller may see (issue 15 item 6, Slurm's PrivateData).
//
//  - Job actions are decided against the job: its id, its user and its current run (so that a
//    job credential acts on its own job's current run only).
//  - Reading: every caller that may read the cluster sees a job's metadata, unless
//    `[privacy] private_data` has "jobs" (then only owners, operators, admins, the controller
//    and the job credentials of the owner's jobs do); "usage" hides other users' usage (CPU
//    time, GPU use, energy). The script, environment, arguments, command and step argv are
//    never shown to others: only to whoever may `kReadJobPrivate` (owner, operator, admin).
//
// Thread-safe: pure functions over immutable configuration.
#pragma once

#include <string>
#include <vector>

#include "api/access.h"
#include "api/identity.h"
#include "api/messages.h"
#include "controller/config.h"
#include "core/job.h"
#include "core/result.h"

namespace corral::controller::internal {

// The uid and primary gid of `user` in the passwd database (getpwnam_r; NSS, so LDAP/SSSD
// too). Returns kNotFound naming the user when it has no entry.
Result<UnixIds> SystemUserIds(const std::string& user);

// The resource of a job action: its id, user and current run.
api::Resource JobResource(const Job& job);
// `api::Authorize(who, action, JobResource(job))`; `coordinator`: `who` coordinates the job's
// account (issue 16 item 2: the caller decides it from the stored account tree).
Status AuthorizeJob(const api::Identity& who, api::Action action, const Job& job,
                    bool coordinator = false);

// Admins and the controller: may raise time limits and go past a partition's maximum.
bool IsAdministrator(const api::Identity& who);
// Admins, operators and the controller: their hold on another user's job is an administrator's
// hold (JobHeldAdmin), which the job's user cannot release; they may submit for another user.
bool IsPrivileged(const api::Identity& who);

// Whether `who` may see that a job of `job_user` exists and its metadata.
bool SeesJob(const api::Identity& who, const std::string& job_user, const PrivacyConfig& privacy);
// Whether `who` may see the job's script, environment, arguments and step argv.
bool SeesPrivate(const api::Identity& who, const std::string& job_user);

// Removes from `info` what `who` may not see of it (the caller has checked `SeesJob`).
void Redact(const api::Identity& who, const PrivacyConfig& privacy, api::JobInfo& info);
// Removes the argv of a step of a job of `job_user` when `who` may not see it.
void Redact(const api::Identity& who, const std::string& job_user, api::StepInfo& step);
// Keeps the jobs `who` may see, redacted.
void Filter(const api::Identity& who, const PrivacyConfig& privacy,
            std::vector<api::JobInfo>& jobs);

}  // namespace corral::controller::internal
