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
#include "api/identity.h"
#include "api/token.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::api {

// Thread-safe.
class Authenticator {
 public:
  virtual ~Authenticator() = default;
  // Returns the caller's identity, or kUnauthenticated saying what is missing or wrong
  // (no Authorization header, bad signature, expired token, undecodable or replayed
  // credential), or kUnavailable when munged cannot be reached to decode a credential.
  virtual Result<Identity> Authenticate(const HttpRequest& request, Timestamp now) const = 0;
};

// Accepts `Bearer` JWTs signed with `key`, and `Munge` credentials when `munge_socket` is
// non-empty. Users named in `admins` (and uid 0) get Role::kAdmin: a MUNGE caller always, a
// JWT whose signed role is "user" too; other signed roles are kept as they are, except that an
// agent's uid and gid are `kNoUnixId` (an agent is never root).
std::unique_ptr<Authenticator> MakeAuthenticator(JwtKey key, std::string munge_socket,
                                                 std::vector<std::string> admins);

// Client side: the value of the Authorization header for `identity`.
// With a key: "Bearer <jwt>" valid for `ttl`.
std::string BearerHeader(const JwtKey& key, const Identity& identity, Timestamp now,
                         Duration ttl = Seconds(300));
// With MUNGE: "Munge <credential>" from the munged at `socket` ("" = the default socket).
// A credential can be decoded only once (munged refuses replays): make one per request.
// Returns kUnavailable when munged cannot be reached (or refuses to encode).
Result<std::string> MungeHeader(const std::string& socket = "");

// The identity of the calling process (getuid/getgid and the user name from the passwd file,
// or the uid as text when there is none), with Role::kUser.
Identity CurrentProcessIdentity();

}  // namespace corral::api
