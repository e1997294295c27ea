// Signed tokens: HS256 JWTs (RFC 7519) and the keys that sign and verify them.
//
// A Corral token names one principal (`TokenClaims`: sub, role and the claims of that role) for
// one audience (aud), from one cluster (iss), valid from nbf to exp, issued at iat, signed with
// the key named by the header's kid. `Keyring::Verify` checks every one of them:
//  1. the token is at most 8 KiB of three base64url parts; the header is a JSON object with
//     alg "HS256" (nothing else: no "none", no RS256 with our secret as a public key), no
//     "crit", and a kid that the keyring lists;
//  2. the HMAC-SHA256 signature, compared in constant time;
//  3. the claims: iss is the cluster, aud one of the expected audiences, iat <= now + skew,
//     nbf <= now + skew, now < exp + skew, iat < exp, and exp - iat <= that audience's
//     maximum lifetime;
//  4. the key's scope: a key bound to a node signs only that node's agent tokens and the
//     controller's calls to that node, so that a node's key, if stolen, is good for nothing
//     else (a cluster key signs every kind).
// Every refusal is kUnauthenticated with a message saying which check failed; messages never
// contain a secret and quote nothing from the token but checked identifiers.
//
// Rotation without downtime (docs/security.md, "Rotating keys"): add the new key to every
// keyring that verifies, then make it the signing key, then remove the old key once the
// longest token lifetime has passed.
//
// `JwtKey` is the single key of the first release (no kid, no aud/iss/nbf); it stays for the
// callers that still use it, with the key file rules and a lifetime cap added.
//
// Thread-safe: `JwtKey` and `Keyring` are values; const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/identity.h"
#include "api/private_file.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::api {

inline constexpr size_t kMinKeyBytes = 32;

// What a token says. Timestamps are whole seconds (JWT NumericDate).
struct TokenClaims {
  std::string issuer;      // iss: the cluster's name
  std::string audience;    // aud: "corral-controller", "corral-job" or a node's name
  std::string subject;     // sub: the user, "agent:NODE" or "corral-controller"
  Timestamp issued_at{};   // iat
  Timestamp not_before{};  // nbf
  Timestamp expires_at{};  // exp
  Role role = Role::kUser;
  uint32_t uid = 0;         // user roles and kJob
  uint32_t gid = 0;         // user roles and kJob
  std::string node;         // kAgent (required) and kController (the node a call is for)
  JobId job{};              // kJob (required)
  Generation generation{};  // kJob (required)
  bool operator==(const TokenClaims&) const = default;
};

// What `Keyring::Verify` requires of a token besides its signature.
struct TokenCheck {
  struct Audience {
    std::string name;
    Duration max_lifetime = Minutes(24 * 60);  // exp - iat above it is refused
  };
  std::string issuer;                 // iss must equal it
  std::vector<Audience> audiences;    // aud must be one of them
  Duration clock_skew = Seconds(60);  // allowed on iat, nbf and exp
};

struct VerifiedToken {
  TokenClaims claims;
  std::string kid;  // the key that signed it
};

// The lifetime cap `JwtKey::Verify` applies: exp - iat (or exp - now when the token has no
// iat) above it is refused.
inline constexpr Duration kLegacyMaxTokenLifetime = Minutes(24 * 60);

// Signs and verifies HS256 JWTs with one key and no kid (the first release's tokens).
// Thread-safe.
class JwtKey {
 public:
  // Returns kInvalidArgument if the key is shorter than 32 bytes.
  static Result<JwtKey> FromBytes(std::string key);
  // Reads a key file: the key is the file's content without trailing white space. The file
  // must be private (api/private_file.h). Returns kNotFound / kPermissionDenied naming the
  // path, kFailedPrecondition when its mode or owner breaks the rule, kInvalidArgument if the
  // key is too short (or the file a directory, or over 64 KiB), kUnavailable on other errors.
  static Result<JwtKey> FromFile(const std::string& path);
  // Creates a new key file with mode 0600 holding 48 random bytes (getrandom) as base64url
  // text and a newline. Returns kAlreadyExists if it exists (never overwritten), kNotFound /
  // kPermissionDenied naming the path, kInternal without randomness, kUnavailable on other
  // write errors.
  static Result<JwtKey> CreateFile(const std::string& path);

  // A token with claims sub=user, uid, gid, role, iat=now, exp=now+ttl.
  std::string Sign(const Identity& identity, Timestamp now, Duration ttl) const;
  // Verifies alg (HS256 only), signature (constant-time), claims, expiry (`now` >= exp is
  // expired) and lifetime (`kLegacyMaxTokenLifetime`); roles "operator" and "job" are
  // refused (they exist only in keyring tokens). Returns the identity or kUnauthenticated
  // saying which check failed.
  Result<Identity> Verify(std::string_view token, Timestamp now) const;

 private:
  friend class Keyring;
  explicit JwtKey(std::string key) : key_(std::move(key)) {}
  std::string key_;
};

// Several keys, each with a kid and a scope (the whole cluster, or one node). Signs with the
// signing key of the scope a token needs; verifies with any listed key whose scope allows the
// token. Thread-safe (a value).
//
// The keyring file (mode 0600; api/private_file.h) is text, one entry per line; blank lines
// and lines starting with '#' are ignored:
//   key KID SECRET              a cluster key (signs and verifies every kind of token)
//   key KID SECRET node=NAME    a key of node NAME (its agent tokens, the controller's calls)
//   sign KID                    KID signs new tokens of its scope (at most one per scope)
// KID is 1-64 characters of [A-Za-z0-9._:-]; SECRET is at least 32 characters without white
// space (its bytes are the HMAC key). A file with one word and nothing else is a key file of
// the first release: one cluster key whose kid is its fingerprint (`Fingerprint`).
class Keyring {
 public:
  struct Entry {
    std::string kid;
    std::string secret;
    std::string node;  // empty: a cluster key
    bool signing = false;
    bool operator==(const Entry&) const = default;
  };

  Keyring() = default;
  // A keyring of one cluster key that signs, with kid `Fingerprint(key)`.
  static Keyring FromKey(const JwtKey& key);
  // Parses the text of a keyring file; `origin` (a path) prefixes errors, which name the line.
  // Returns kInvalidArgument for a bad line, a bad or repeated kid, a short secret, a sign
  // line naming an unknown kid or a second signing key of one scope, or no key at all.
  static Result<Keyring> Parse(std::string_view text, std::string_view origin = "keyring");
  // Reads and parses a keyring file (or a first-release key file). Errors as
  // `ReadPrivateFile` and `Parse`.
  static Result<Keyring> FromFile(const std::string& path);
  // Creates a new keyring file (mode 0600, never overwriting) with one new cluster key `kid`
  // that signs. Returns kAlreadyExists if `path` exists, kInvalidArgument for a bad kid,
  // kInternal without randomness, other errors as `WriteFileAtomically`.
  static Result<Keyring> CreateFile(const std::string& path, std::string kid);

  // 48 random bytes (getrandom) as base64url text: a new secret. kInternal without randomness.
  static Result<std::string> GenerateSecret();
  // The kid a first-release key gets: "k" and the first 16 hex digits of SHA-256(secret).
  static std::string Fingerprint(std::string_view secret);

  // Adds a key that verifies (and does not sign). `node` empty: a cluster key. Returns
  // kAlreadyExists for a listed kid, kInvalidArgument for a bad kid, node name or secret.
  Status Add(std::string kid, std::string secret, std::string node = "");
  // Makes `kid` the signing key of its scope (the previous one keeps verifying). kNotFound.
  Status SetSigning(std::string_view kid);
  // Removes `kid`: tokens it signed are refused from now on. kNotFound; kFailedPrecondition
  // for a signing key (switch signing first).
  Status Remove(std::string_view kid);

  // The text of the keyring file (`Parse` reads it back).
  std::string Serialize() const;
  // Writes `Serialize()` to `path` with mode 0600. Errors as `WriteFileAtomically`.
  Status WriteFile(const std::string& path, WriteMode mode) const;

  // Signs `claims` (times rounded down to seconds) with the signing key of their scope: the
  // node's key for an agent token or a controller call to a node when this keyring has one
  // for that node, else the cluster key. Returns kFailedPrecondition when there is no such
  // key, kInvalidArgument when a string claim is not valid UTF-8 or a time is out of range.
  Result<std::string> Sign(const TokenClaims& claims) const;
  // Verifies `token` as the header describes. Returns the claims and kid, or
  // kUnauthenticated saying which check failed.
  Result<VerifiedToken> Verify(std::string_view token, const TokenCheck& check,
                               Timestamp now) const;

  const std::vector<Entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

 private:
  const Entry* Find(std::string_view kid) const;
  const Entry* SigningKeyFor(const TokenClaims& claims) const;

  std::vector<Entry> entries_;
};

// True for a kid of the keyring file format.
bool IsValidKid(std::string_view kid);

}  // namespace corral::api
