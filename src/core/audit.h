// Audit records: one per state-changing request to the controller, accepted or refused
// (docs/governance.md, "Audit log"). Value types shared by the store (which keeps them in the
// `audit` table, hash-chained: store/audit_chain.h), the controller (which writes them in the
// same transaction as the change they describe) and the API (`corral audit`).
//
// A record never holds a request's body, token, credential, script or environment: only the
// SHA-256 of its parameters.
//
// Thread-safe: value types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"

namespace corral {

struct AuditRecord {
  uint64_t seq = 0;            // 1, 2, 3... without gaps
  Timestamp time{};            // when the controller decided
  std::string principal;       // the verified user or node, "anonymous" when unauthenticated
  std::string auth;            // munge, jwt, job-credential, node, scrape-token, none
  std::string peer;            // the socket's address ("127.0.0.1:53412"), never a header
  std::string method;          // "POST"; "ANCHOR" for the row that stands for pruned records
  std::string route;           // the route's pattern ("/api/v1/jobs/{id}/cancel")
  std::string target;          // "job:12", "job:12.3", "node:gpu01", "" when none
  std::string params_sha256;   // hex SHA-256 of the path parameters, query and body
  int status = 0;              // the HTTP status answered
  std::string error_code;      // "" on success, else core's ErrorCode name ("PERMISSION_DENIED")
  std::string prev_hash;       // hex SHA-256 of the previous record (64 zeros for the first)
  std::string hash;            // hex SHA-256 of this record's canonical encoding
  bool operator==(const AuditRecord&) const = default;
};

// The method of the row that replaces pruned records: its `seq` and `hash` are those of the
// last pruned record, so that the chain stays verifiable from there.
inline constexpr const char* kAuditAnchorMethod = "ANCHOR";

// Filters of `corral audit`. Empty/zero = any.
struct AuditQuery {
  uint64_t after_seq = 0;  // records with seq > after_seq
  Timestamp since{};       // records at or after; epoch = no bound
  Timestamp before{};      // records before (anchors too); epoch = no bound
  std::string user;        // principal
  std::string job;         // target "job:J" (and its steps "job:J.S")
  std::string node;        // target "node:N"
  size_t limit = 0;        // the last `limit` matching records; 0 = all
  bool include_anchor = false;
  // With `limit`: the first `limit` matching records after `after_seq` instead of the last
  // (reading the log forward a page at a time: `corral audit verify`).
  bool oldest_first = false;
};

// The result of checking the chain (`corral audit verify`).
struct AuditVerdict {
  bool ok = true;
  uint64_t records = 0;         // records checked
  uint64_t head_seq = 0;        // the controller's last written record
  uint64_t first_bad_seq = 0;   // when !ok
  std::string problem;          // "missing", "changed", "reordered"
  std::string detail;           // one sentence naming what is wrong
};

// Whether `r` matches `q`'s filters (not `after_seq`, `limit`).
bool MatchesAuditQuery(const AuditRecord& r, const AuditQuery& q);

}  // namespace corral
