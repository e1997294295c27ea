// JSON codecs of small ad-hoc answers; the messages' codecs are split by family into
// json_codec_jobs.cc, json_codec_nodes.cc and json_codec_steps.cc.
#include "api/json_codec.h"

#include "api/internal/json_decoder.h"
#include "api/internal/json_encoder.h"

namespace corral::api {

using internal::Encoder;
using internal::kStrict;

std::string EncodeStringMap(const std::vector<std::pair<std::string, std::string>>& kv) {
  Encoder e(64);
  e.Object([&] {
    for (const auto& [k, v] : kv) {
      e.Key(k);
      e.String(v);
    }
  });
  return e.Take();
}

Result<std::vector<std::pair<std::string, std::string>>> DecodeStringMap(std::string_view json) {
  internal::Value root;
  CORRAL_RETURN_IF_ERROR(internal::ParseJson(json, &root));
  std::vector<std::pair<std::string, std::string>> out;
  CORRAL_RETURN_IF_ERROR(internal::Decoder(kStrict).ReadStringPairs(root, &out));
  return out;
}

}  // namespace corral::api
