#include "controller/internal/access.h"

#include <algorithm>

namespace corral::controller::internal {

bool Access::IsAdmin(const api::Identity& who) const {
  // Node agents and job credentials are never administrators, whatever their uid or user.
  if (who.role == api::Role::kController) return true;
  if (!api::IsUserRole(who.role)) return false;
  return who.role == api::Role::kAdmin || who.uid == 0 ||
         std::find(admins_.begin(), admins_.end(), who.user) != admins_.end();
}

Status Access::CheckOwner(const api::Identity& who, const Job& job) const {
  if (IsAdmin(who) || who.user == job.spec.user) return {};
  return MakeError(ErrorCode::kPermissionDenied, "job " + job.id.ToString() + ": owned by " +
                                                     job.spec.user + ", not " + who.user);
}

Status Access::RequireAdmin(const api::Identity& who, const std::string& action) const {
  if (IsAdmin(who)) return {};
  return MakeError(ErrorCode::kPermissionDenied,
                   action + ": " + who.user + " is not an administrator");
}

}  // namespace corral::controller::internal
