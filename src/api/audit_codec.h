// JSON codecs of the audit log (core/audit.h): GET /api/v1/audit answers {"records": [...]},
// GET /api/v1/audit/verify an `AuditVerdict`; `corral audit --json` prints one record per line.
// Conventions as api/json_codec.h.
//
// Thread-safe (pure functions).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/audit.h"
#include "core/result.h"

namespace corral::api {

std::string EncodeAuditRecord(const AuditRecord& r);  // one JSON object, one line
std::string EncodeAuditRecordList(const std::vector<AuditRecord>& records);
Result<std::vector<AuditRecord>> DecodeAuditRecordList(std::string_view json);
std::string EncodeAuditVerdict(const AuditVerdict& v);
Result<AuditVerdict> DecodeAuditVerdict(std::string_view json);

}  // namespace corral::api
