// JSON codecs of job steps (`corral run`).
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

using internal::kStepsList;

std::string EncodeStepSpec(const StepSpec& spec) {
  return Encode(spec, 512 + spec.environment.size() * 64);
}

Result<StepSpec> DecodeStepSpec(std::string_view json) { return Decode<StepSpec>(json, kStrict); }

std::string EncodeStepInfo(const StepInfo& s) { return Encode(s, 512 + s.tasks.size() * 128); }

Result<StepInfo> DecodeStepInfo(std::string_view json) { return Decode<StepInfo>(json, kLenient); }

std::string EncodeStepInfoList(const std::vector<StepInfo>& steps) {
  return EncodeList(kStepsList, steps, 1024);
}

Result<std::vector<StepInfo>> DecodeStepInfoList(std::string_view json) {
  return DecodeList<StepInfo>(kStepsList, json);
}

std::string EncodeStepLaunchRequest(const StepLaunchRequest& r) {
  return Encode(r, kJobBytes + r.job.spec.script.size() + r.spec.environment.size() * 64 +
                       r.layout.tasks.size() * 96);
}

Result<StepLaunchRequest> DecodeStepLaunchRequest(std::string_view json) {
  return Decode<StepLaunchRequest>(json, kStrict);
}

std::string EncodeStepSignalRequest(const StepSignalRequest& r) { return Encode(r); }

Result<StepSignalRequest> DecodeStepSignalRequest(std::string_view json) {
  return Decode<StepSignalRequest>(json, kStrict);
}

}  // namespace corral::api
