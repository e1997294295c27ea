#include "api/audit_codec.h"

#include "api/internal/json_decoder.h"
#include "api/internal/json_encoder.h"

namespace corral::api {

using internal::kAuditList;
using internal::kLenient;

std::string EncodeAuditRecord(const AuditRecord& r) { return internal::Encode(r, 512); }

std::string EncodeAuditRecordList(const std::vector<AuditRecord>& records) {
  return internal::EncodeList(kAuditList, records, 512);
}

Result<std::vector<AuditRecord>> DecodeAuditRecordList(std::string_view json) {
  return internal::DecodeList<AuditRecord>(kAuditList, json);
}

std::string EncodeAuditVerdict(const AuditVerdict& v) { return internal::Encode(v, 512); }

Result<AuditVerdict> DecodeAuditVerdict(std::string_view json) {
  return internal::Decode<AuditVerdict>(json, kLenient);
}

}  // namespace corral::api
