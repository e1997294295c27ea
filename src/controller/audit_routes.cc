#include "controller/audit_routes.h"

#include "api/audit_codec.h"
#include "api/http_status.h"
#include "controller/service.h"
#include "core/strings.h"

namespace corral::controller {

namespace {

api::HttpResponse Json(std::string body) {
  api::HttpResponse r;
  r.body = std::move(body);
  return r;
}

// A whole non-negative number no larger than `max`.
Result<uint64_t> Number(const std::string& key, const std::string& text, uint64_t max) {
  std::optional<uint64_t> v = ParseUint(text);
  if (!v || *v > max) {
    return InvalidArgument(key + ": expected a number up to " + std::to_string(max) + ", got \"" +
                           text + "\"");
  }
  return *v;
}

}  // namespace

api::HttpResponse AuditListResponse(ControllerService& service, const api::HttpRequest& req) {
  AuditQuery q;
  for (const auto& [key, value] : req.query) {
    if (key == "since") {
      auto secs = Number(key, value, uint64_t{1} << 40);
      if (!secs) return api::ErrorResponse(secs.error());
      q.since = Timestamp(Seconds(static_cast<int64_t>(*secs)));
    } else if (key == "limit") {
      auto n = Number(key, value, 1000000);
      if (!n) return api::ErrorResponse(n.error());
      q.limit = *n;
    } else if (key == "job") {
      auto n = Number(key, value, UINT64_MAX);
      if (!n || *n == 0) {
        return api::ErrorResponse(
            {ErrorCode::kInvalidArgument, "job: \"" + value + "\" is not a job number"});
      }
      q.job = std::to_string(*n);
    } else if (key == "user") {
      q.user = value;
    } else if (key == "node") {
      q.node = value;
    } else {
      return api::ErrorResponse({ErrorCode::kInvalidArgument,
                                 "unknown parameter \"" + key +
                                     "\" (expected since, user, job, node, limit)"});
    }
  }
  auto records = service.QueryAudit(q);
  if (!records) return api::ErrorResponse(records.error());
  return Json(api::EncodeAuditRecordList(*records));
}

api::HttpResponse AuditVerifyResponse(ControllerService& service) {
  auto verdict = service.VerifyAudit();
  if (!verdict) return api::ErrorResponse(verdict.error());
  return Json(api::EncodeAuditVerdict(*verdict));
}

}  // namespace corral::controller
