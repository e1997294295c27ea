// JSON codecs of nodes, partitions and the agents' messages.
#include "api/internal/json_decoder.h"
#include "api/internal/json_encoder.h"
#include "api/json_codec.h"

namespace corral::api {

using internal::Decode;
using internal::DecodeList;
using internal::Encode;
using internal::EncodeList;
using internal::kJobBytes;
using internal::kLenient;
using internal::kNodeBytes;
using internal::kStrict;

using internal::kNodesList;
using internal::kPartitionsList;

std::string EncodeNodeInfo(const NodeInfo& n) { return Encode(n, kNodeBytes); }

Result<NodeInfo> DecodeNodeInfo(std::string_view json) { return Decode<NodeInfo>(json, kLenient); }

std::string EncodeNodeInfoList(const std::vector<NodeInfo>& nodes) {
  return EncodeList(kNodesList, nodes, kNodeBytes);
}

Result<std::vector<NodeInfo>> DecodeNodeInfoList(std::string_view json) {
  return DecodeList<NodeInfo>(kNodesList, json);
}

std::string EncodePartitionInfoList(const std::vector<PartitionInfo>& parts) {
  return EncodeList(kPartitionsList, parts, 512);
}

Result<std::vector<PartitionInfo>> DecodePartitionInfoList(std::string_view json) {
  return DecodeList<PartitionInfo>(kPartitionsList, json);
}

std::string EncodeDrainRequest(const DrainRequest& r) { return Encode(r); }

Result<DrainRequest> DecodeDrainRequest(std::string_view json) {
  return Decode<DrainRequest>(json, kStrict);
}

std::string EncodeRegisterRequest(const RegisterRequest& r) { return Encode(r, kNodeBytes); }

Result<RegisterRequest> DecodeRegisterRequest(std::string_view json) {
  return Decode<RegisterRequest>(json, kStrict);
}

std::string EncodeRegisterResponse(const RegisterResponse& r) { return Encode(r); }

Result<RegisterResponse> DecodeRegisterResponse(std::string_view json) {
  return Decode<RegisterResponse>(json, kLenient);
}

std::string EncodeHeartbeatRequest(const HeartbeatRequest& r) { return Encode(r); }

Result<HeartbeatRequest> DecodeHeartbeatRequest(std::string_view json) {
  return Decode<HeartbeatRequest>(json, kStrict);
}

std::string EncodeHeartbeatResponse(const HeartbeatResponse& r) { return Encode(r); }

Result<HeartbeatResponse> DecodeHeartbeatResponse(std::string_view json) {
  return Decode<HeartbeatResponse>(json, kLenient);
}

std::string EncodeJobEventsRequest(const JobEventsRequest& r) {
  return Encode(r, 64 + r.events.size() * 512);
}

Result<JobEventsRequest> DecodeJobEventsRequest(std::string_view json) {
  return Decode<JobEventsRequest>(json, kStrict);
}

std::string EncodeLaunchRequest(const LaunchRequest& r) {
  return Encode(r, kJobBytes + r.job.spec.script.size());
}

Result<LaunchRequest> DecodeLaunchRequest(std::string_view json) {
  return Decode<LaunchRequest>(json, kStrict);
}

std::string EncodeSignalRequest(const SignalRequest& r) { return Encode(r); }

Result<SignalRequest> DecodeSignalRequest(std::string_view json) {
  return Decode<SignalRequest>(json, kStrict);
}

std::string EncodeInjectRequest(const InjectRequest& r) { return Encode(r); }

Result<InjectRequest> DecodeInjectRequest(std::string_view json) {
  return Decode<InjectRequest>(json, kStrict);
}

std::string EncodeCancelRequest(const CancelRequest& r) { return Encode(r); }

Result<CancelRequest> DecodeCancelRequest(std::string_view json) {
  return Decode<CancelRequest>(json, kStrict);
}

std::string EncodeTimeLimitRequest(const TimeLimitRequest& r) { return Encode(r); }

Result<TimeLimitRequest> DecodeTimeLimitRequest(std::string_view json) {
  return Decode<TimeLimitRequest>(json, kStrict);
}

}  // namespace corral::api
