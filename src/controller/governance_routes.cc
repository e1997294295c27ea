#include "controller/governance_routes.h"

#include <string>
#include <utility>

#include "api/governance_codec.h"
#include "api/http_status.h"
#include "controller/controller.h"
#include "controller/service.h"

namespace corral::controller {
namespace {

api::HttpResponse Json(int status, std::string body) {
  api::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

// The verbs of one kind of record: its codec and the controller's calls.
template <typename Record>
struct Verbs {
  std::string (*encode)(const Record&);
  std::string (*encode_list)(const std::vector<Record>&);
  Result<Record> (*decode)(std::string_view);
  std::string& (*name)(Record&);
  std::vector<Record> (Controller::*list)() const;
  Result<Record> (Controller::*get)(const std::string&) const;
  Result<Record> (Controller::*put)(const api::Identity&, Record, bool);
  Status (Controller::*del)(const api::Identity&, const std::string&);
};

template <typename Record>
api::HttpResponse Serve(ControllerService& service, const Verbs<Record>& v, std::string_view method,
                        const api::HttpRequest& req, const api::Identity& who) {
  auto param = req.params.find("name");
  const std::string path_name = param == req.params.end() ? "" : param->second;
  if (method == "GET" && path_name.empty()) {
    auto r = service.Call<std::vector<Record>>(
        [&v](Controller& c) -> Result<std::vector<Record>> { return (c.*v.list)(); });
    if (!r) return api::ErrorResponse(r.error());
    return Json(200, v.encode_list(*r));
  }
  if (method == "GET") {
    auto r = service.Call<Record>([&](Controller& c) { return (c.*v.get)(path_name); });
    if (!r) return api::ErrorResponse(r.error());
    return Json(200, v.encode(*r));
  }
  if (method == "DELETE") {
    Status s = service.CallStatus([&](Controller& c) { return (c.*v.del)(who, path_name); });
    if (!s) return api::ErrorResponse(s.error());
    return Json(200, R"({"status":"ok"})");
  }
  Result<Record> record = v.decode(req.body);
  if (!record) return api::ErrorResponse(record.error());
  std::string& name = v.name(*record);
  const bool create = method == "POST";
  if (!create) {
    if (name.empty()) name = path_name;
    if (name != path_name) {
      return api::ErrorResponse(
          Error{ErrorCode::kInvalidArgument, "name: \"" + name + "\" differs from the path's \"" +
                                                 path_name + "\" (records are not renamed)"});
    }
  }
  auto r = service.Call<Record>([&, rec = std::move(*record)](Controller& c) mutable {
    return (c.*v.put)(who, std::move(rec), create);
  });
  if (!r) return api::ErrorResponse(r.error());
  return Json(create ? 201 : 200, v.encode(*r));
}

const Verbs<AccountConfig> kAccountVerbs{
    api::EncodeAccount,        api::EncodeAccountList,
    api::DecodeAccountRequest, [](AccountConfig& a) -> std::string& { return a.name; },
    &Controller::ListAccounts, &Controller::GetAccount,
    &Controller::PutAccount,   &Controller::DeleteAccount};
const Verbs<api::UserInfo> kUserVerbs{
    api::EncodeUser,        api::EncodeUserList,
    api::DecodeUserRequest, [](api::UserInfo& u) -> std::string& { return u.user.name; },
    &Controller::ListUsers, &Controller::GetUser,
    &Controller::PutUser,   &Controller::DeleteUser};
const Verbs<QosConfig> kQosVerbs{
    api::EncodeQos,        api::EncodeQosList,
    api::DecodeQosRequest, [](QosConfig& q) -> std::string& { return q.name; },
    &Controller::ListQos,  &Controller::GetQos,
    &Controller::PutQos,   &Controller::DeleteQos};

}  // namespace

// Account coordinators (issue 16 item 2).
api::HttpResponse ServeCoordinators(ControllerService& service, std::string_view method,
                                    const api::HttpRequest& req, const api::Identity& who) {
  auto param = [&req](const char* name) {
    auto it = req.params.find(name);
    return it == req.params.end() ? std::string() : it->second;
  };
  const std::string account = param("name");
  Result<AccountConfig> r = [&]() -> Result<AccountConfig> {
    if (method == "DELETE") {
      const std::string user = param("user");
      return service.Call<AccountConfig>(
          [&](Controller& c) { return c.RemoveCoordinator(who, account, user); });
    }
    CORRAL_ASSIGN_OR_RETURN(api::CoordinatorRequest body, api::DecodeCoordinatorRequest(req.body));
    return service.Call<AccountConfig>(
        [&](Controller& c) { return c.AddCoordinators(who, account, body.users); });
  }();
  if (!r) return api::ErrorResponse(r.error());
  return Json(200, api::EncodeAccount(*r));
}

api::HttpResponse ServeGovernance(ControllerService& service, std::string_view kind,
                                  std::string_view method, const api::HttpRequest& req,
                                  const api::Identity& who) {
  if (kind == "accounts") return Serve(service, kAccountVerbs, method, req, who);
  if (kind == "users") return Serve(service, kUserVerbs, method, req, who);
  return Serve(service, kQosVerbs, method, req, who);
}

}  // namespace corral::controller
