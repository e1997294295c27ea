#include "api/governance_codec.h"

#include "api/internal/json_decoder.h"
#include "api/internal/json_encoder.h"

namespace corral::api {

using internal::Decode;
using internal::DecodeList;
using internal::Encode;
using internal::EncodeList;
using internal::kLenient;
using internal::kStrict;

std::string EncodeAccount(const AccountConfig& a) { return Encode(a, 512); }
Result<AccountConfig> DecodeAccountRequest(std::string_view json) {
  return Decode<AccountConfig>(json, kStrict);
}
Result<AccountConfig> DecodeAccount(std::string_view json) {
  return Decode<AccountConfig>(json, kLenient);
}
std::string EncodeAccountList(const std::vector<AccountConfig>& accounts) {
  return EncodeList(internal::kAccountsList, accounts, 512);
}
Result<std::vector<AccountConfig>> DecodeAccountList(std::string_view json) {
  return DecodeList<AccountConfig>(internal::kAccountsList, json);
}

std::string EncodeUser(const UserInfo& u) { return Encode(u, 384); }
Result<UserInfo> DecodeUserRequest(std::string_view json) {
  return Decode<UserInfo>(json, kStrict);
}
Result<UserInfo> DecodeUser(std::string_view json) { return Decode<UserInfo>(json, kLenient); }
std::string EncodeUserList(const std::vector<UserInfo>& users) {
  return EncodeList(internal::kUsersList, users, 384);
}
Result<std::vector<UserInfo>> DecodeUserList(std::string_view json) {
  return DecodeList<UserInfo>(internal::kUsersList, json);
}

std::string EncodeUserConfig(const UserConfig& u) { return Encode(u, 256); }
Result<UserConfig> DecodeUserConfig(std::string_view json) {
  return Decode<UserConfig>(json, kLenient);
}

std::string EncodeQos(const QosConfig& q) { return Encode(q, 512); }
Result<QosConfig> DecodeQosRequest(std::string_view json) {
  return Decode<QosConfig>(json, kStrict);
}
Result<QosConfig> DecodeQos(std::string_view json) { return Decode<QosConfig>(json, kLenient); }
std::string EncodeQosList(const std::vector<QosConfig>& qos) {
  return EncodeList(internal::kQosList, qos, 512);
}
Result<std::vector<QosConfig>> DecodeQosList(std::string_view json) {
  return DecodeList<QosConfig>(internal::kQosList, json);
}

// Account coordinators (issue 16 item 2).
std::string EncodeCoordinatorRequest(const CoordinatorRequest& r) { return Encode(r, 128); }
Result<CoordinatorRequest> DecodeCoordinatorRequest(std::string_view json) {
  return Decode<CoordinatorRequest>(json, kStrict);
}

}  // namespace corral::api
