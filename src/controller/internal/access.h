// Access: who may do what to jobs and nodes. Administrators (the admin role, the controller
// itself, or a user principal with uid 0 or named in `[auth] admin_users`) may do anything; a
// user acts on their own jobs. Node agents and job credentials are never administrators.
//
// Immutable after construction; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "api/auth.h"
#include "core/job.h"
#include "core/result.h"

namespace corral::controller::internal {

class Access {
 public:
  explicit Access(std::vector<std::string> admins) : admins_(std::move(admins)) {}

  bool IsAdmin(const api::Identity& who) const;
  // Returns kPermissionDenied naming the owner when `who` is neither `job`'s owner nor an
  // administrator.
  Status CheckOwner(const api::Identity& who, const Job& job) const;
  // Returns kPermissionDenied ("<action>: <user> is not an administrator") when `who` is not
  // an administrator.
  Status RequireAdmin(const api::Identity& who, const std::string& action) const;

 private:
  std::vector<std::string> admins_;
};

}  // namespace corral::controller::internal
