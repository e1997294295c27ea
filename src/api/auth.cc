#include "api/auth.h"

#include <munge.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/strings.h"

namespace corral::api {
namespace {

// The payload of a MUNGE credential bound to an audience.
constexpr std::string_view kMungeAudiencePrefix = "corral-aud=";

tl::unexpected<Error> Unauthenticated(std::string message) {
  return MakeError(ErrorCode::kUnauthenticated, std::move(message));
}

// The scheme (lower case) and credential of an Authorization header.
struct Authorization {
  std::string scheme;
  std::string credential;
};

Result<Authorization> ParseAuthorization(const std::string& value) {
  if (value.empty()) return Unauthenticated("missing Authorization header");
  size_t space = value.find(' ');
  Authorization out;
  out.scheme = Lower(std::string_view(value).substr(0, space));
  std::string_view credential =
      space == std::string::npos ? std::string_view() : std::string_view(value).substr(space + 1);
  while (!credential.empty() && credential.front() == ' ') credential.remove_prefix(1);
  if (credential.empty()) return Unauthenticated("empty " + out.scheme + " credential");
  out.credential = credential;
  if (out.scheme != "bearer" && out.scheme != "munge") {
    return Unauthenticated("unsupported Authorization scheme \"" + value.substr(0, space) +
                           "\" (expected Bearer or Munge)");
  }
  return out;
}

Result<std::string> EncodeMunge(const std::string& socket, std::string_view payload) {
  munge_ctx_t ctx = munge_ctx_create();
  if (ctx == nullptr) return Internal("munge: cannot create a context");
  munge_err_t err = EMUNGE_SUCCESS;
  if (!socket.empty()) err = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket.c_str());
  char* cred = nullptr;
  if (err == EMUNGE_SUCCESS) {
    err = munge_encode(&cred, ctx, payload.empty() ? nullptr : payload.data(),
                       static_cast<int>(payload.size()));
  }
  if (err != EMUNGE_SUCCESS) {
    const char* detail = munge_ctx_strerror(ctx);
    std::string message = "munge: cannot encode a credential with munged at " +
                          (socket.empty() ? std::string("the default socket") : socket) + ": " +
                          (detail ? detail : munge_strerror(err));
    munge_ctx_destroy(ctx);
    if (cred != nullptr) std::free(cred);
    return Unavailable(std::move(message));
  }
  munge_ctx_destroy(ctx);
  std::string header = std::string("Munge ") + cred;
  std::free(cred);
  return header;
}

class StandardAuthenticator final : public Authenticator {
 public:
  StandardAuthenticator(JwtKey key, std::string munge_socket, std::vector<std::string> admins)
      : key_(std::move(key)), munge_socket_(std::move(munge_socket)), admins_(std::move(admins)) {}

  Result<Identity> Authenticate(const HttpRequest& request, Timestamp now) const override {
    CORRAL_ASSIGN_OR_RETURN(Authorization auth,
                            ParseAuthorization(request.header("authorization")));
    if (auth.scheme == "bearer") {
      CORRAL_ASSIGN_OR_RETURN(Identity id, key_.Verify(auth.credential, now));
      // The role is trusted as signed; an administrator's user token is raised to admin.
      if (id.role == Role::kUser && IsAdmin(id.user, id.uid)) id.role = Role::kAdmin;
      // An agent is not a Unix user: no uid check may take it for root.
      if (id.role == Role::kAgent) id.uid = id.gid = kNoUnixId;
      return id;
    }
    if (munge_socket_.empty()) return Unauthenticated("munge authentication is not enabled");
    CORRAL_ASSIGN_OR_RETURN(Identity id, DecodeMungeCredential(auth.credential, munge_socket_, "",
                                                               SystemUserDirectory()));
    if (IsAdmin(id.user, id.uid)) id.role = Role::kAdmin;
    return id;
  }

 private:
  bool IsAdmin(const std::string& user, uint32_t uid) const {
    return uid == 0 || std::find(admins_.begin(), admins_.end(), user) != admins_.end();
  }

  JwtKey key_;
  std::string munge_socket_;
  std::vector<std::string> admins_;
};

class ControllerAuthenticator final : public Authenticator {
 public:
  explicit ControllerAuthenticator(ControllerAuthOptions o)
      : o_(std::move(o)), users_(o_.users != nullptr ? o_.users : &SystemUserDirectory()) {}

  Result<Identity> Authenticate(const HttpRequest& request, Timestamp now) const override {
    CORRAL_ASSIGN_OR_RETURN(Authorization auth,
                            ParseAuthorization(request.header("authorization")));
    Identity id;
    if (auth.scheme == "bearer") {
      CORRAL_ASSIGN_OR_RETURN(
          id, o_.credentials.VerifyAtController(auth.credential, now, o_.job_alive));
    } else {
      if (o_.munge_socket.empty()) return Unauthenticated("munge authentication is not enabled");
      CORRAL_ASSIGN_OR_RETURN(id, DecodeMungeCredential(auth.credential, o_.munge_socket,
                                                        kControllerAudience, *users_));
    }
    if (IsUserRole(id.role)) id.role = o_.roles.RoleOf(id.user, id.uid, id.gid);
    return id;
  }

 private:
  ControllerAuthOptions o_;
  const UserDirectory* users_;
};

class AgentAuthenticator final : public Authenticator {
 public:
  AgentAuthenticator(Credentials credentials, std::string node)
      : credentials_(std::move(credentials)), node_(std::move(node)) {}

  Result<Identity> Authenticate(const HttpRequest& request, Timestamp now) const override {
    CORRAL_ASSIGN_OR_RETURN(Authorization auth,
                            ParseAuthorization(request.header("authorization")));
    if (auth.scheme != "bearer") {
      return Unauthenticated("an agent accepts only the controller's Bearer tokens");
    }
    return credentials_.VerifyAtAgent(auth.credential, node_, now);
  }

 private:
  Credentials credentials_;
  std::string node_;
};

}  // namespace

Result<Identity> DecodeMungeCredential(const std::string& credential, const std::string& socket,
                                       std::string_view audience, const UserDirectory& users) {
  munge_ctx_t ctx = munge_ctx_create();
  if (ctx == nullptr) return Internal("munge: cannot create a context");
  munge_err_t err = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket.c_str());
  uid_t uid = 0;
  gid_t gid = 0;
  void* payload = nullptr;
  int payload_len = 0;
  if (err == EMUNGE_SUCCESS) {
    err = munge_decode(credential.c_str(), ctx, &payload, &payload_len, &uid, &gid);
  }
  std::string detail;
  if (err != EMUNGE_SUCCESS) {
    detail = munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(err);
  }
  std::string data;
  if (payload != nullptr) {
    data.assign(static_cast<const char*>(payload), static_cast<size_t>(std::max(payload_len, 0)));
    std::free(payload);
  }
  munge_ctx_destroy(ctx);
  if (err == EMUNGE_SOCKET) {
    return Unavailable("munge: cannot reach munged at " + socket + ": " + detail);
  }
  // Replayed, expired, rewound, forged or from another key: munged says which.
  if (err != EMUNGE_SUCCESS) return Unauthenticated("munge: credential rejected: " + detail);
  if (!audience.empty() && data != std::string(kMungeAudiencePrefix) + std::string(audience)) {
    return Unauthenticated("munge: credential is not meant for \"" + std::string(audience) + "\"");
  }
  std::optional<std::string> name = users.UserName(uid);
  if (!name) {
    return Unauthenticated("munge: uid " + std::to_string(uid) + " has no passwd entry");
  }
  return Identity{.user = *name, .uid = uid, .gid = gid, .role = Role::kUser};
}

std::unique_ptr<Authenticator> MakeAuthenticator(JwtKey key, std::string munge_socket,
                                                 std::vector<std::string> admins) {
  return std::make_unique<StandardAuthenticator>(std::move(key), std::move(munge_socket),
                                                 std::move(admins));
}

std::unique_ptr<Authenticator> MakeControllerAuthenticator(ControllerAuthOptions options) {
  return std::make_unique<ControllerAuthenticator>(std::move(options));
}

std::unique_ptr<Authenticator> MakeAgentAuthenticator(Credentials credentials, std::string node) {
  return std::make_unique<AgentAuthenticator>(std::move(credentials), std::move(node));
}

std::string BearerHeader(const JwtKey& key, const Identity& identity, Timestamp now, Duration ttl) {
  return "Bearer " + key.Sign(identity, now, ttl);
}

Result<std::string> MungeHeader(const std::string& socket) { return EncodeMunge(socket, ""); }

Result<std::string> MungeHeaderFor(std::string_view audience, const std::string& socket) {
  return EncodeMunge(socket, std::string(kMungeAudiencePrefix) + std::string(audience));
}

Identity CurrentProcessIdentity() {
  Identity id;
  id.uid = getuid();
  id.gid = getgid();
  id.user = SystemUserDirectory().UserName(id.uid).value_or(std::to_string(id.uid));
  id.role = Role::kUser;
  return id;
}

}  // namespace corral::api
