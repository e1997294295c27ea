// JSON codecs of the API messages (messages.h), split by message family into
// json_codec_jobs.cc, json_codec_nodes.cc and json_codec_steps.cc over the machinery of
// api/internal/json_*.h: one `Fields()` table per message (json_fields_*.h) drives both the
// encoder and the decoder. nlohmann/json is included only in internal/json_dom.cc.
//
// Conventions: snake_case field names; durations as integer seconds, or "UNLIMITED"; time
// limits may also be given as a Slurm duration string ("1:00:00"); timestamps as RFC 3339 UTC
// strings ("2026-11-29T16:51:03.000123Z") or null when unset; memory in MB (`*_mb`); GPU
// sets as arrays of indices; job states by Slurm name ("PENDING").
//
// Decoding is strict for what the controller and agents accept (`Decode*` of requests):
// malformed JSON, an unknown field, a wrong type or an out-of-range number gives
// kInvalidArgument naming the field path and the reason, e.g.
//   field "resources.gpus": expected a non-negative integer, got -1
//   unknown field "resources.gpu"
// Decoding of responses ignores unknown fields, so that older clients read newer servers.
//
// Thread-safe (pure functions).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/messages.h"
#include "core/job.h"
#include "core/result.h"

namespace corral::api {

std::string EncodeJobSpec(const JobSpec& spec);
Result<JobSpec> DecodeJobSpec(std::string_view json);

std::string EncodeSubmitResponse(const SubmitResponse& r);
Result<SubmitResponse> DecodeSubmitResponse(std::string_view json);

std::string EncodeJobInfo(const JobInfo& j);
Result<JobInfo> DecodeJobInfo(std::string_view json);
// {"jobs": [...]}
std::string EncodeJobInfoList(const std::vector<JobInfo>& jobs);
Result<std::vector<JobInfo>> DecodeJobInfoList(std::string_view json);

// A job's timeline (lenient: an answer).
std::string EncodeJobTimeline(const JobTimeline& t);
Result<JobTimeline> DecodeJobTimeline(std::string_view json);

// Per-job GPU statistics and the GPU-waste report (lenient: answers).
std::string EncodeGpuStatsInfo(const GpuStatsInfo& s);
Result<GpuStatsInfo> DecodeGpuStatsInfo(std::string_view json);
std::string EncodeWasteReport(const WasteReport& r);
Result<WasteReport> DecodeWasteReport(std::string_view json);

std::string EncodeNodeInfo(const NodeInfo& n);
Result<NodeInfo> DecodeNodeInfo(std::string_view json);
// {"nodes": [...]}
std::string EncodeNodeInfoList(const std::vector<NodeInfo>& nodes);
Result<std::vector<NodeInfo>> DecodeNodeInfoList(std::string_view json);

// {"partitions": [...]}
std::string EncodePartitionInfoList(const std::vector<PartitionInfo>& parts);
Result<std::vector<PartitionInfo>> DecodePartitionInfoList(std::string_view json);

std::string EncodeDrainRequest(const DrainRequest& r);
Result<DrainRequest> DecodeDrainRequest(std::string_view json);

std::string EncodeRegisterRequest(const RegisterRequest& r);
Result<RegisterRequest> DecodeRegisterRequest(std::string_view json);
std::string EncodeRegisterResponse(const RegisterResponse& r);
Result<RegisterResponse> DecodeRegisterResponse(std::string_view json);

std::string EncodeHeartbeatRequest(const HeartbeatRequest& r);
Result<HeartbeatRequest> DecodeHeartbeatRequest(std::string_view json);
std::string EncodeHeartbeatResponse(const HeartbeatResponse& r);
Result<HeartbeatResponse> DecodeHeartbeatResponse(std::string_view json);

std::string EncodeJobEventsRequest(const JobEventsRequest& r);
Result<JobEventsRequest> DecodeJobEventsRequest(std::string_view json);

std::string EncodeLaunchRequest(const LaunchRequest& r);
Result<LaunchRequest> DecodeLaunchRequest(std::string_view json);
std::string EncodeSignalRequest(const SignalRequest& r);
Result<SignalRequest> DecodeSignalRequest(std::string_view json);
std::string EncodeInjectRequest(const InjectRequest& r);
Result<InjectRequest> DecodeInjectRequest(std::string_view json);
std::string EncodeCancelRequest(const CancelRequest& r);
Result<CancelRequest> DecodeCancelRequest(std::string_view json);
std::string EncodeTimeLimitRequest(const TimeLimitRequest& r);
Result<TimeLimitRequest> DecodeTimeLimitRequest(std::string_view json);

// Steps (`corral run`): the request is strict, the answers lenient.
std::string EncodeStepSpec(const StepSpec& spec);
Result<StepSpec> DecodeStepSpec(std::string_view json);
std::string EncodeStepInfo(const StepInfo& s);
Result<StepInfo> DecodeStepInfo(std::string_view json);
// {"steps": [...]}
std::string EncodeStepInfoList(const std::vector<StepInfo>& steps);
Result<std::vector<StepInfo>> DecodeStepInfoList(std::string_view json);
std::string EncodeStepLaunchRequest(const StepLaunchRequest& r);
Result<StepLaunchRequest> DecodeStepLaunchRequest(std::string_view json);
std::string EncodeStepSignalRequest(const StepSignalRequest& r);
Result<StepSignalRequest> DecodeStepSignalRequest(std::string_view json);

// {"key": "value", ...} for small ad-hoc answers ({"ok": "true"}); strings only.
std::string EncodeStringMap(const std::vector<std::pair<std::string, std::string>>& kv);
Result<std::vector<std::pair<std::string, std::string>>> DecodeStringMap(std::string_view json);

// `corral why` and `corral priority` (answers: lenient).
std::string EncodeWhyInfo(const WhyInfo& w);
Result<WhyInfo> DecodeWhyInfo(std::string_view json);
// {"priorities": [...]}
std::string EncodePriorityList(const std::vector<PriorityInfo>& list);
Result<std::vector<PriorityInfo>> DecodePriorityList(std::string_view json);

}  // namespace corral::api
