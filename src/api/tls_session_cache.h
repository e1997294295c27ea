// TlsSessionCache: a TLS session shared by one user's client processes, so that a command-line
// call resumes the session an earlier call made instead of a full handshake (an ECDHE exchange,
// the server's ECDSA signature and the certificate chain verified: most of a `corral submit`'s
// cost over plain HTTP).
//
// One file per user, `tls-sessions` in a directory of that user (the CLI's: $XDG_RUNTIME_DIR/
// corral, else ~/.corral; docs/security.md, "The CLI's TLS session cache"). It holds, per
// controller URL and CA (the SHA-256 of both: a session made against one CA is never offered
// when another is configured), one serialized TLS 1.3 session (a ticket) and when it expires.
// A session is as secret as a key: whoever holds it can act as the server that issued it to
// this user. So the file is read only when it is a regular file owned by the effective user
// with no group or other permission bits, in a directory owned by that user that neither
// group nor others may write; anything else is refused with an error naming the file (the
// caller then goes without the cache). A corrupt file or an entry past its expiry reads as
// no entry, and the next `Store` replaces the file. Writes are atomic (a 0600 temporary file
// renamed over the old one); concurrent writers may lose each other's entries, never corrupt
// the file.
//
// Resumption changes nothing about who the caller is: the server was verified against the CA
// in the handshake that made the session (and only that server holds the ticket's keys), and
// every request still carries the caller's own credential.
//
// Thread-safe: functions of the file system only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "api/http.h"
#include "core/result.h"

namespace corral::api {

class TlsSessionCache {
 public:
  // The cache in directory `dir` (created 0700 by `Store` when missing).
  explicit TlsSessionCache(std::string dir);

  // The key of a controller: its base URL and the PEM of the CA the client verifies it with.
  static std::string Key(std::string_view url, std::string_view ca_pem);

  // The session stored under `key`, unless it expires before `now_unix_s` (then nullopt, as
  // for no file, no entry or a file that does not parse). Returns kFailedPrecondition naming
  // the file when it or its directory is not the effective user's own and private (the mode or
  // owner, and the fix), kInvalidArgument when it is no regular file or over 64 KiB.
  Result<std::optional<TlsSessionTicket>> Load(const std::string& key, int64_t now_unix_s) const;

  // Stores `ticket` under `key`, with the other entries of a readable file that have not
  // expired at `now_unix_s` (at most 16 in all, the soonest to expire dropped first).
  // Returns kFailedPrecondition when the directory is not the user's own and private,
  // kNotFound / kPermissionDenied / kUnavailable naming the path when it cannot be written.
  Status Store(const std::string& key, const TlsSessionTicket& ticket, int64_t now_unix_s) const;

  const std::string& path() const { return path_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::string path_;
};

// The rule of the cache's directory, for other per-user files kept in it (the CLI's connection
// holder socket, api/connection_holder.h): `dir` is a directory, not a symbolic link, owned by
// the effective user, that neither its group nor others may write. Returns kNotFound naming
// it when it is missing, kInvalidArgument when it is no directory, kFailedPrecondition naming
// the owner or mode and the fix; `what` names it in the messages.
Status CheckPrivateUserDir(const std::string& dir, std::string_view what);

}  // namespace corral::api
