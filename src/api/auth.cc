#include "api/auth.h"

#include <munge.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace corral::api {
namespace {

tl::unexpected<Error> Unauthenticated(std::string message) {
  return MakeError(ErrorCode::kUnauthenticated, std::move(message));
}

std::string UserName(uid_t uid) {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::string buf(size > 0 ? static_cast<size_t>(size) : 16384, '\0');
  passwd pw{};
  passwd* result = nullptr;
  while (true) {
    int rc = getpwuid_r(uid, &pw, buf.data(), buf.size(), &result);
    if (rc == ERANGE && buf.size() < (1u << 20)) {
      buf.resize(buf.size() * 2);
      continue;
    }
    break;
  }
  if (result == nullptr || pw.pw_name == nullptr || pw.pw_name[0] == '\0') {
    return std::to_string(uid);
  }
  return pw.pw_name;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Authenticator

namespace {

class StandardAuthenticator final : public Authenticator {
 public:
  StandardAuthenticator(JwtKey key, std::string munge_socket, std::vector<std::string> admins)
      : key_(std::move(key)), munge_socket_(std::move(munge_socket)), admins_(std::move(admins)) {}

  Result<Identity> Authenticate(const HttpRequest& request, Timestamp now) const override {
    std::string value = request.header("authorization");
    if (value.empty()) return Unauthenticated("missing Authorization header");
    size_t space = value.find(' ');
    std::string scheme = value.substr(0, space);
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string_view credential =
        space == std::string::npos ? std::string_view() : std::string_view(value).substr(space + 1);
    while (!credential.empty() && credential.front() == ' ') credential.remove_prefix(1);
    if (credential.empty()) return Unauthenticated("empty " + scheme + " credential");
    if (scheme == "bearer") {
      CORRAL_ASSIGN_OR_RETURN(Identity id, key_.Verify(credential, now));
      // The role is trusted as signed; an administrator's user token is raised to admin.
      if (id.role == Role::kUser && IsAdmin(id.user, id.uid)) id.role = Role::kAdmin;
      // An agent is not a Unix user: no uid check may take it for root.
      if (id.role == Role::kAgent) id.uid = id.gid = kNoUnixId;
      return id;
    }
    if (scheme == "munge") return DecodeMunge(std::string(credential));
    return Unauthenticated("unsupported Authorization scheme \"" + value.substr(0, space) +
                           "\" (expected Bearer or Munge)");
  }

 private:
  bool IsAdmin(const std::string& user, uint32_t uid) const {
    return uid == 0 || std::find(admins_.begin(), admins_.end(), user) != admins_.end();
  }

  Result<Identity> DecodeMunge(const std::string& credential) const {
    if (munge_socket_.empty()) return Unauthenticated("munge authentication is not enabled");
    munge_ctx_t ctx = munge_ctx_create();
    if (ctx == nullptr) return Internal("munge: cannot create a context");
    munge_err_t err = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munge_socket_.c_str());
    uid_t uid = 0;
    gid_t gid = 0;
    if (err == EMUNGE_SUCCESS)
      err = munge_decode(credential.c_str(), ctx, nullptr, nullptr, &uid, &gid);
    std::string detail = err == EMUNGE_SUCCESS ? ""
                                               : (munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx)
                                                                          : munge_strerror(err));
    munge_ctx_destroy(ctx);
    if (err == EMUNGE_SOCKET) {
      return Unavailable("munge: cannot reach munged at " + munge_socket_ + ": " + detail);
    }
    if (err != EMUNGE_SUCCESS) return Unauthenticated("munge: credential rejected: " + detail);
    Identity id;
    id.uid = uid;
    id.gid = gid;
    id.user = UserName(uid);
    id.role = IsAdmin(id.user, id.uid) ? Role::kAdmin : Role::kUser;
    return id;
  }

  JwtKey key_;
  std::string munge_socket_;
  std::vector<std::string> admins_;
};

}  // namespace

std::unique_ptr<Authenticator> MakeAuthenticator(JwtKey key, std::string munge_socket,
                                                 std::vector<std::string> admins) {
  return std::make_unique<StandardAuthenticator>(std::move(key), std::move(munge_socket),
                                                 std::move(admins));
}

std::string BearerHeader(const JwtKey& key, const Identity& identity, Timestamp now, Duration ttl) {
  return "Bearer " + key.Sign(identity, now, ttl);
}

Result<std::string> MungeHeader(const std::string& socket) {
  munge_ctx_t ctx = munge_ctx_create();
  if (ctx == nullptr) return Internal("munge: cannot create a context");
  munge_err_t err = EMUNGE_SUCCESS;
  if (!socket.empty()) err = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket.c_str());
  char* cred = nullptr;
  if (err == EMUNGE_SUCCESS) err = munge_encode(&cred, ctx, nullptr, 0);
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

Identity CurrentProcessIdentity() {
  Identity id;
  id.uid = getuid();
  id.gid = getgid();
  id.user = UserName(id.uid);
  id.role = Role::kUser;
  return id;
}

}  // namespace corral::api
