#include "api/identity.h"

namespace corral::api {

std::string_view RoleName(Role r) {
  switch (r) {
    case Role::kUser:
      return "user";
    case Role::kAdmin:
      return "admin";
    case Role::kAgent:
      return "agent";
    case Role::kController:
      return "controller";
    case Role::kOperator:
      return "operator";
    case Role::kJob:
      return "job";
    case Role::kMetrics:
      return "metrics";
  }
  return "user";
}

Result<Role> ParseRole(std::string_view s) {
  for (Role r : {Role::kUser, Role::kAdmin, Role::kAgent, Role::kController, Role::kOperator,
                 Role::kJob, Role::kMetrics}) {
    if (RoleName(r) == s) return r;
  }
  // Quote the name only when it is short and printable: it may come from a token.
  bool printable = s.size() <= 32;
  for (char c : s) printable = printable && c > ' ' && c < 0x7f && c != '"';
  return InvalidArgument("unknown role \"" + (printable ? std::string(s) : std::string("?")) +
                         "\" (expected user, operator, admin, agent, controller, job or metrics)");
}

bool IsUserRole(Role r) { return r == Role::kUser || r == Role::kOperator || r == Role::kAdmin; }

Status CheckNodeName(std::string_view name) {
  if (name.empty() || name.size() > 64) {
    return InvalidArgument("node name must be 1-64 characters");
  }
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(name.front())) {
    return InvalidArgument("node name must start with a letter or digit");
  }
  for (char c : name) {
    if (!alnum(c) && c != '.' && c != '_' && c != '-') {
      return InvalidArgument("node name must be letters, digits, '.', '_' and '-'");
    }
  }
  if (name == kControllerAudience || name == kJobAudience) {
    return InvalidArgument("node name \"" + std::string(name) + "\" is reserved");
  }
  return {};
}

}  // namespace corral::api
