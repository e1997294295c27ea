// JSON codecs of the usage and fair-share reports (api/report_messages.h). Conventions as
// api/json_codec.h (decoders are lenient: unknown keys are ignored).
//
// Thread-safe (pure functions).
#pragma once

#include <string>
#include <string_view>

#include "api/report_messages.h"
#include "core/result.h"

namespace corral::api {

std::string EncodeUsageReport(const UsageReport& r);
Result<UsageReport> DecodeUsageReport(std::string_view json);
std::string EncodeShareReport(const ShareReport& r);
Result<ShareReport> DecodeShareReport(std::string_view json);
std::string EncodePriorityWeights(const PriorityWeights& w);
Result<PriorityWeights> DecodePriorityWeights(std::string_view json);

}  // namespace corral::api
