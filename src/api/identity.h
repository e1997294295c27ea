// Who is calling: the principal an authenticated request acts for (DESIGN.md, "Trust").
//
// Every credential names exactly one principal of one kind (`Role`):
//  - kUser, kOperator, kAdmin: a Unix user. Which of the three is decided by the configuration
//    (api/access.h, `RoleResolver`) when the request is authenticated, never by the credential.
//  - kAgent: a node agent, bound to exactly one node (`node`). Never an admin.
//  - kController: the controller. At an agent, valid for the one node named in `node`.
//  - kJob: a job credential minted at launch (api/credentials.h): acts on that job only
//    (`job`, `generation`), reads what its user (`user`, `uid`, `gid`) may read.
//
// Thread-safe: value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/ids.h"
#include "core/result.h"

namespace corral::api {

// kMetrics: a scraper (Prometheus) that may read /metrics and /metrics/targets and nothing else
// (`corral token --role metrics`; docs/metrics.md).
enum class Role { kUser, kAdmin, kAgent, kController, kOperator, kJob, kMetrics };
// "user", "admin", "agent", "controller", "operator", "job", "metrics".
std::string_view RoleName(Role r);
// Returns kInvalidArgument for any other name.
Result<Role> ParseRole(std::string_view s);

// True for the roles of a Unix user (kUser, kOperator, kAdmin).
bool IsUserRole(Role r);

// Reserved audiences: no node may be named after one (a node's name is the audience of the
// controller's calls to it, and the subject of its certificate).
inline constexpr std::string_view kControllerAudience = "corral-controller";
inline constexpr std::string_view kJobAudience = "corral-job";

// A node name usable as a token audience and a certificate's CN and DNS name: 1-64 characters
// of letters, digits, '.', '_' and '-', starting with a letter or digit, and not a reserved
// audience. Returns kInvalidArgument naming the problem otherwise.
Status CheckNodeName(std::string_view name);

// The uid and gid that node and controller principals carry: not a Unix user. Never 0 (so
// that no `uid == 0` check can take an agent for root) and never (uid_t)-1 (which `setresuid`
// reads as "leave unchanged").
inline constexpr uint32_t kNoUnixId = 0xFFFFFFFEu;

struct Identity {
  std::string user;
  uint32_t uid = 0;
  uint32_t gid = 0;
  Role role = Role::kUser;
  // kAgent: the agent's node. kController at an agent: the node the call is valid for.
  std::string node;
  // kJob: the job and run the credential was minted for.
  JobId job{};
  Generation generation{};
  bool operator==(const Identity&) const = default;
};

}  // namespace corral::api
