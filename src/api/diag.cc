#include "api/diag.h"

#include "api/internal/json_decoder.h"
#include "api/internal/json_encoder.h"

namespace corral::api {

std::string EncodeDiagInfo(const DiagInfo& d) {
  return internal::Encode(d, 1024 + (d.routes.size() + d.users.size()) * 128);
}

Result<DiagInfo> DecodeDiagInfo(std::string_view json) {
  return internal::Decode<DiagInfo>(json, internal::kLenient);
}

}  // namespace corral::api
