#include "controller/internal/access.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>

namespace corral::controller::internal {

Result<UnixIds> SystemUserIds(const std::string& user) {
  long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(hint > 0 ? static_cast<size_t>(hint) : 16384);
  passwd pw{};
  passwd* found = nullptr;
  while (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) == ERANGE &&
         buf.size() < (1u << 20)) {
    buf.resize(buf.size() * 2);
  }
  if (found == nullptr) return NotFound("no such user \"" + user + "\" in the passwd database");
  return UnixIds{.uid = found->pw_uid, .gid = found->pw_gid};
}

api::Resource JobResource(const Job& job) {
  return api::Resource{.job = job.id,
                       .job_user = job.spec.user,
                       .generation = job.allocation.generation,
                       .node = {}};
}

Status AuthorizeJob(const api::Identity& who, api::Action action, const Job& job,
                    bool coordinator) {
  api::Resource target = JobResource(job);
  target.coordinator = coordinator;
  return api::Authorize(who, action, target);
}

bool IsAdministrator(const api::Identity& who) {
  return who.role == api::Role::kAdmin || (who.role == api::Role::kController && who.node.empty());
}

bool IsPrivileged(const api::Identity& who) {
  return IsAdministrator(who) || who.role == api::Role::kOperator;
}

bool SeesPrivate(const api::Identity& who, const std::string& job_user) {
  return api::Authorize(who, api::Action::kReadJobPrivate, {.job_user = job_user}).has_value();
}

bool SeesJob(const api::Identity& who, const std::string& job_user, const PrivacyConfig& privacy) {
  if (!api::Authorize(who, api::Action::kReadJob, {.job_user = job_user})) return false;
  return !privacy.jobs || SeesPrivate(who, job_user);
}

void Redact(const api::Identity& who, const PrivacyConfig& privacy, api::JobInfo& info) {
  const std::string& user = info.job.spec.user;
  if (SeesPrivate(who, user)) return;
  JobSpec& spec = info.job.spec;
  spec.script.clear();
  spec.environment.clear();
  spec.script_args.clear();
  spec.command.clear();
  spec.container.env.clear();
  if (privacy.usage) info.job.usage = {};
}

void Redact(const api::Identity& who, const std::string& job_user, api::StepInfo& step) {
  if (!SeesPrivate(who, job_user)) step.argv.clear();
}

void Filter(const api::Identity& who, const PrivacyConfig& privacy,
            std::vector<api::JobInfo>& jobs) {
  std::erase_if(jobs,
                [&](const api::JobInfo& j) { return !SeesJob(who, j.job.spec.user, privacy); });
  for (api::JobInfo& j : jobs) Redact(who, privacy, j);
}

}  // namespace corral::controller::internal
