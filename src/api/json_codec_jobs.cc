// JSON codecs of jobs: specs, records and lists, submit answers, `why`, priorities.
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

using internal::kJobsList;
using internal::kPrioritiesList;

std::string EncodeJobSpec(const JobSpec& spec) {
  return Encode(spec, 1024 + spec.script.size() + spec.environment.size() * 64);
}

Result<JobSpec> DecodeJobSpec(std::string_view json) { return Decode<JobSpec>(json, kStrict); }

std::string EncodeSubmitResponse(const SubmitResponse& r) {
  return Encode(r, 32 + r.task_ids.size() * 8);
}

Result<SubmitResponse> DecodeSubmitResponse(std::string_view json) {
  return Decode<SubmitResponse>(json, kLenient);
}

std::string EncodeJobInfo(const JobInfo& j) {
  return Encode(j, kJobBytes + j.job.spec.script.size());
}

Result<JobInfo> DecodeJobInfo(std::string_view json) { return Decode<JobInfo>(json, kLenient); }

std::string EncodeJobInfoList(const std::vector<JobInfo>& jobs) {
  return EncodeList(kJobsList, jobs, kJobBytes);
}

Result<std::vector<JobInfo>> DecodeJobInfoList(std::string_view json) {
  return DecodeList<JobInfo>(kJobsList, json);
}

std::string EncodeJobTimeline(const JobTimeline& t) { return Encode(t, 768); }

Result<JobTimeline> DecodeJobTimeline(std::string_view json) {
  return Decode<JobTimeline>(json, kLenient);
}

std::string EncodeGpuStatsInfo(const GpuStatsInfo& s) {
  size_t buckets = 0;
  for (const auto& g : s.gpus) buckets += g.buckets.size();
  return Encode(s, 256 + s.gpus.size() * 384 + buckets * 160);
}

Result<GpuStatsInfo> DecodeGpuStatsInfo(std::string_view json) {
  return Decode<GpuStatsInfo>(json, kLenient);
}

std::string EncodeWasteReport(const WasteReport& r) {
  return Encode(r, 128 + (r.users.size() + r.accounts.size()) * 128);
}

Result<WasteReport> DecodeWasteReport(std::string_view json) {
  return Decode<WasteReport>(json, kLenient);
}

std::string EncodeWhyInfo(const WhyInfo& w) { return Encode(w, 512 + w.blockers.size() * 256); }

Result<WhyInfo> DecodeWhyInfo(std::string_view json) { return Decode<WhyInfo>(json, kLenient); }

std::string EncodePriorityList(const std::vector<PriorityInfo>& list) {
  return EncodeList(kPrioritiesList, list, 384);
}

Result<std::vector<PriorityInfo>> DecodePriorityList(std::string_view json) {
  return DecodeList<PriorityInfo>(kPrioritiesList, json);
}

}  // namespace corral::api
