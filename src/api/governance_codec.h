// The governance records of the API (docs/governance.md): accounts, users with their
// associations, and QOS, as core/governance.h defines them, and their JSON codecs. The
// controller also keeps each record in the store in this JSON form (store::GovernanceRecord).
//
//   GET    /api/v1/accounts            -> {"accounts": [AccountConfig]}
//   GET    /api/v1/accounts/{name}     -> AccountConfig
//   POST   /api/v1/accounts            AccountConfig (create)         -> AccountConfig
//   PUT    /api/v1/accounts/{name}     AccountConfig (replace)        -> AccountConfig
//   DELETE /api/v1/accounts/{name}
//   ... the same for /api/v1/users (UserInfo) and /api/v1/qos (QosConfig).
//
// Conventions as api/json_codec.h: requests are decoded strictly (an unknown field or a value
// out of range is kInvalidArgument naming the field), answers leniently. Absent fields take
// their default: a limit that is absent or null is no limit. Durations (`max_wall`,
// `max_time`, `grace_time`) are seconds or a Slurm time ("2-00:00:00").
//
// Thread-safe (pure functions).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/governance.h"
#include "core/result.h"

namespace corral::api {

// A user as the API shows it: its settings and its associations, the accounts it may submit
// with (each such account lists the user in its `users`).
struct UserInfo {
  UserConfig user;
  std::vector<std::string> accounts;  // sorted
  bool operator==(const UserInfo&) const = default;
};

std::string EncodeAccount(const AccountConfig& a);
Result<AccountConfig> DecodeAccountRequest(std::string_view json);  // strict
Result<AccountConfig> DecodeAccount(std::string_view json);         // lenient
std::string EncodeAccountList(const std::vector<AccountConfig>& accounts);
Result<std::vector<AccountConfig>> DecodeAccountList(std::string_view json);

std::string EncodeUser(const UserInfo& u);
Result<UserInfo> DecodeUserRequest(std::string_view json);  // strict
Result<UserInfo> DecodeUser(std::string_view json);         // lenient
std::string EncodeUserList(const std::vector<UserInfo>& users);
Result<std::vector<UserInfo>> DecodeUserList(std::string_view json);

// A user's own record without its associations (the form the controller stores).
std::string EncodeUserConfig(const UserConfig& u);
Result<UserConfig> DecodeUserConfig(std::string_view json);  // lenient

std::string EncodeQos(const QosConfig& q);
Result<QosConfig> DecodeQosRequest(std::string_view json);  // strict
Result<QosConfig> DecodeQos(std::string_view json);         // lenient
std::string EncodeQosList(const std::vector<QosConfig>& qos);
Result<std::vector<QosConfig>> DecodeQosList(std::string_view json);

// --- Account coordinators (issue 16 item 2) ---
// The body of POST /api/v1/accounts/{name}/coordinators: {"users": ["alice", ...]}.
struct CoordinatorRequest {
  std::vector<std::string> users;
  bool operator==(const CoordinatorRequest&) const = default;
};
std::string EncodeCoordinatorRequest(const CoordinatorRequest& r);
Result<CoordinatorRequest> DecodeCoordinatorRequest(std::string_view json);  // strict

}  // namespace corral::api
