// Authentication for the HTTP API: who is calling, and in which role.
//
// Mechanisms (DESIGN.md, "Identity" and "Trust"):
//  - MUNGE: the client encodes a credential with the local munged; the controller decodes it
//    and learns the caller's uid/gid from munged (never from the request) and the user's name
//    from the passwd database. munged refuses a credential decoded twice (replay). The HPC
//    standard on real clusters.
//  - JWT (HS256, api/token.h and api/credentials.h): tokens bound to an audience, an issuer
//    and a lifetime, signed with a keyring key (kid). Users' REST clients and the web page,
//    node agents, the controller's calls to agents, and job credentials.
//  - TLS client certificates (api/pki.h): the node agents' and the controller's.
// Authentication is never off by default.
//
// Requests carry `Authorization: Bearer <jwt>` or `Authorization: Munge <credential>`.
//
// `MakeControllerAuthenticator` and `MakeAgentAuthenticator` are the authenticators of issue
// 15; `MakeAuthenticator` over one `JwtKey` is the first release's, kept until every caller
// has moved.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/access.h"
#include "api/credentials.h"
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

// The first release's authenticator: accepts `Bearer` JWTs signed with `key`
// (`JwtKey::Verify`), and `Munge` credentials when `munge_socket` is non-empty. Users named in
// `admins` (and uid 0) get Role::kAdmin: a MUNGE caller always, a JWT whose signed role is
// "user" too; other signed roles are kept as they are, except that an agent's uid and gid are
// `kNoUnixId` (an agent is never root).
std::unique_ptr<Authenticator> MakeAuthenticator(JwtKey key, std::string munge_socket,
                                                 std::vector<std::string> admins);

struct ControllerAuthOptions {
  Credentials credentials;
  RoleResolver roles;
  // The munged socket whose credentials are accepted ("": MUNGE is not accepted). A
  // credential must have been encoded for `kControllerAudience` (`MungeHeaderFor`).
  std::string munge_socket;
  // Job credentials are accepted only with it (api/credentials.h).
  JobLiveness job_alive;
  // Where MUNGE uids get their names and `roles` its groups; nullptr: the host's.
  const UserDirectory* users = nullptr;
};

// The controller's: `Bearer` user tokens (role from `roles`), agent tokens (kAgent bound to
// their node) and job credentials (`Credentials::VerifyAtController`); `Munge` credentials
// (role from `roles`). A MUNGE uid with no passwd entry is refused.
std::unique_ptr<Authenticator> MakeControllerAuthenticator(ControllerAuthOptions options);

// Node `node`'s agent's: only the controller's `Bearer` tokens for this node
// (`Credentials::VerifyAtAgent`).
std::unique_ptr<Authenticator> MakeAgentAuthenticator(Credentials credentials, std::string node);

// Client side: the value of the Authorization header for `identity`.
// With a key: "Bearer <jwt>" valid for `ttl`.
std::string BearerHeader(const JwtKey& key, const Identity& identity, Timestamp now,
                         Duration ttl = Seconds(300));
// With MUNGE: "Munge <credential>" from the munged at `socket` ("" = the default socket).
// A credential can be decoded only once (munged refuses replays): make one per request.
// Returns kUnavailable when munged cannot be reached (or refuses to encode).
Result<std::string> MungeHeader(const std::string& socket = "");
// The same, bound to `audience` (the credential's payload names it; a service that expects
// another audience refuses it), e.g. `kControllerAudience`.
Result<std::string> MungeHeaderFor(std::string_view audience, const std::string& socket = "");

// Decodes `credential` with the munged at `socket`: uid and gid are munged's, the user name
// `users`'s. When `audience` is non-empty the payload must name it. Returns kUnavailable when
// munged cannot be reached, kUnauthenticated for a credential munged refuses (forged,
// expired, replayed, another key), one for another audience, or a uid with no passwd entry.
// The identity has Role::kUser.
Result<Identity> DecodeMungeCredential(const std::string& credential, const std::string& socket,
                                       std::string_view audience, const UserDirectory& users);

// The identity of the calling process (getuid/getgid and the user name from the passwd file,
// or the uid as text when there is none), with Role::kUser.
Identity CurrentProcessIdentity();

}  // namespace corral::api
