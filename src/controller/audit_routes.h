// The audit log's read routes (docs/governance.md, "Audit log"): GET /api/v1/audit and
// GET /api/v1/audit/verify, registered through the route table by service_routes.cc (their
// rows ask for kReadAudit: admins and operators). Both only read.
//
// Thread-safe: handlers run on the HTTP threads and read the store.
#pragma once

#include "api/http.h"

namespace corral::controller {

class ControllerService;

// ?since=UNIX_SECONDS&user=U&job=J&node=N&limit=N -> {"records": [...]} by seq.
api::HttpResponse AuditListResponse(ControllerService& service, const api::HttpRequest& req);
// The verdict on the whole stored chain (core/audit.h `AuditVerdict`); 200 either way.
api::HttpResponse AuditVerifyResponse(ControllerService& service);

}  // namespace corral::controller
