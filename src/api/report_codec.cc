#include "api/report_codec.h"

#include "api/internal/json_decoder.h"
#include "api/internal/json_encoder.h"

namespace corral::api {

using internal::kLenient;

std::string EncodeUsageReport(const UsageReport& r) {
  size_t rows = r.accounts.size() + r.users.size() + r.partitions.size() + r.gpu_models.size() +
                r.jobs.size();
  return internal::Encode(r, 512 + rows * 256);
}

Result<UsageReport> DecodeUsageReport(std::string_view json) {
  return internal::Decode<UsageReport>(json, kLenient);
}

std::string EncodeShareReport(const ShareReport& r) {
  return internal::Encode(r, 64 + r.rows.size() * 200);
}

Result<ShareReport> DecodeShareReport(std::string_view json) {
  return internal::Decode<ShareReport>(json, kLenient);
}

std::string EncodePriorityWeights(const PriorityWeights& w) { return internal::Encode(w, 128); }

Result<PriorityWeights> DecodePriorityWeights(std::string_view json) {
  return internal::Decode<PriorityWeights>(json, kLenient);
}

}  // namespace corral::api
