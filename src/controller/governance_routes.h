// The routes of accounts, users and QOS as data (docs/governance.md; api/governance_codec.h
// lists them): GET a list or one record, POST to create, PUT to replace, DELETE. Registered
// through the route table by service_routes.cc; the rows' actions decide who may (reads:
// kReadCluster; accounts and users: kManageAccounts; QOS: kConfigure), and every change is
// audited with the change, in one batch (controller/audit_log.h).
//
// Thread-safe: handlers run on the HTTP threads and call the state thread.
#pragma once

#include <string_view>

#include "api/http.h"
#include "api/identity.h"

namespace corral::controller {

class ControllerService;

// `kind` is "accounts", "users" or "qos"; `method` the route's. The record's name is the
// request's {name} parameter for GET, PUT and DELETE of one record. A PUT or POST body that
// names another record is kInvalidArgument; a PUT body without a name takes the path's.
api::HttpResponse ServeGovernance(ControllerService& service, std::string_view kind,
                                  std::string_view method, const api::HttpRequest& req,
                                  const api::Identity& who);

// POST /api/v1/accounts/{name}/coordinators ({"users": [...]}) and DELETE
// /api/v1/accounts/{name}/coordinators/{user}: answer the account as stored (issue 16 item 2).
api::HttpResponse ServeCoordinators(ControllerService& service, std::string_view method,
                                    const api::HttpRequest& req, const api::Identity& who);

}  // namespace corral::controller
