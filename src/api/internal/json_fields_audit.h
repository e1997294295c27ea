// The `Fields()` tables of the audit log's records and verdict (core/audit.h).
//
// Part of the JSON codecs (api/json_codec.h): included through json_fields.h only.
#pragma once

#include "api/internal/json_base.h"
#include "core/audit.h"

namespace corral::api::internal {

constexpr std::string_view kAuditList = "records";

template <typename V, Is<AuditRecord> S>
void Fields(V& v, S& s) {
  v("seq", s.seq);
  v("time", s.time);
  v("principal", s.principal);
  v("auth", s.auth);
  v("peer", s.peer);
  v("method", s.method);
  v("route", s.route);
  v("target", s.target);
  v("params_sha256", s.params_sha256);
  v("status", s.status);
  v("error_code", s.error_code);
  v("prev_hash", s.prev_hash);
  v("hash", s.hash);
}

template <typename V, Is<AuditVerdict> S>
void Fields(V& v, S& s) {
  v("ok", s.ok);
  v("records", s.records);
  v("head_seq", s.head_seq);
  v("first_bad_seq", s.first_bad_seq);
  v("problem", s.problem);
  v("detail", s.detail);
}

}  // namespace corral::api::internal
