// Authentication for the HTTP API: who is calling, and in which role.
//
// Two mechanisms (DESIGN.md, "Identity"):
//  - MUNGE: the client encodes a credential with the local munged; the controller decodes it
//    and learns the caller's uid/gid. The HPC standard on real clusters.
//  - JWT (HS256): a token signed with a shared key. `corral dev` generates a key in its state
//    directory (mode 0600) and clients that can read it mint short-lived tokens for their own
//    user; agents and the controller use role tokens. REST clients and the web page use
//    tokens an admin issues.
// Authentication is never off by default.
//
// Requests carry `Authorization: Bearer <jwt>` or `Authorization: Munge <credential>`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/http.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::api {

enum class Role { kUser, kAdmin, kAgent, kController };
std::string_view RoleName(Role r);  // "user", "admin", "agent", "controller"
Result<Role> ParseRole(std::string_view s);

struct Identity {
  std::string user;
  uint32_t uid = 0;
  uint32_t gid = 0;
  Role role = Role::kUser;
  bool operator==(const Identity&) const = default;
};

// Thread-safe.
class Authenticator {
 public:
  virtual ~Authenticator() = default;
  // Returns the caller's identity, or kUnauthenticated saying what is missing or wrong
  // (no Authorization header, bad signature, expired token, undecodable credential).
  virtual Result<Identity> Authenticate(const HttpRequest& request, Timestamp now) const = 0;
};

// Signs and verifies HS256 JWTs with one key. Thread-safe.
class JwtKey {
 public:
  // Returns kInvalidArgument if the key is shorter than 32 bytes.
  static Result<JwtKey> FromBytes(std::string key);
  // Reads a key file; returns kNotFound / kPermissionDenied naming the path, or
  // kInvalidArgument if the file is too short.
  static Result<JwtKey> FromFile(const std::string& path);
  // Creates a new random key file with mode 0600 (fails with kAlreadyExists if it exists).
  static Result<JwtKey> CreateFile(const std::string& path);

  // A token with claims sub=user, uid, gid, role, iat=now, exp=now+ttl.
  std::string Sign(const Identity& identity, Timestamp now, Duration ttl) const;
  // Verifies signature and expiry; returns the identity or kUnauthenticated.
  Result<Identity> Verify(std::string_view token, Timestamp now) const;

 private:
  explicit JwtKey(std::string key) : key_(std::move(key)) {}
  std::string key_;
};

// Accepts `Bearer` JWTs signed with `key`, and `Munge` credentials when `munge_socket` is
// non-empty. Users named in `admins` (and uid 0) get Role::kAdmin.
std::unique_ptr<Authenticator> MakeAuthenticator(JwtKey key, std::string munge_socket,
                                                 std::vector<std::string> admins);

// Client side: the value of the Authorization header for `identity`.
// With a key: "Bearer <jwt>" valid for `ttl`. Returns the error of signing.
std::string BearerHeader(const JwtKey& key, const Identity& identity, Timestamp now,
                         Duration ttl = Seconds(300));
// With MUNGE: "Munge <credential>" from the munged at `socket` ("" = the default socket).
// Returns kUnavailable when munged cannot be reached.
Result<std::string> MungeHeader(const std::string& socket = "");

// The identity of the calling process (getuid/getgid and the user name from the passwd file).
Identity CurrentProcessIdentity();

}  // namespace corral::api
