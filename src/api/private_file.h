// Files that hold secrets: token keys and keyrings, certificate private keys.
//
// The rule (docs/security.md, "What an operator must protect"): a secret file is a regular file
// owned by the user that reads it (or by root) that neither its group nor others can read or
// write. A file that breaks the rule is refused when it is read, with an error that names the
// path, its mode or owner, and the fix, so that a key left readable by mistake cannot be used
// by a daemon that would otherwise keep running with it. Checks are made on the opened file
// descriptor (`fstat`), so that the file checked is the file read.
//
// Writes are atomic: the content goes to a 0600 temporary file in the same directory, which is
// synced and then linked (a new file) or renamed (a replacement) into place, so that a reader
// never sees half a key and a crash never leaves a truncated one.
//
// Thread-safe: functions of the file system only.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <sys/types.h>

#include "core/result.h"

namespace corral::api {

inline constexpr size_t kMaxPrivateFileBytes = 64 * 1024;
// The largest TOML configuration a daemon reads (`ReadPublicFile`).
inline constexpr size_t kMaxConfigBytes = 4 * 1024 * 1024;

// Reads the secret file at `path`; `what` names it in errors ("jwt key file",
// "certificate key file"). Returns kNotFound / kPermissionDenied naming the path when it cannot
// be opened, kInvalidArgument when it is not a regular file or is over `max_bytes`,
// kFailedPrecondition when its group or others may read or write it, or when it is owned by
// neither the effective user nor root (the message names the path, the mode or owner, and
// the fix), kUnavailable on other read errors.
Result<std::string> ReadPrivateFile(const std::string& path, std::string_view what,
                                    size_t max_bytes = kMaxPrivateFileBytes);

// Reads a file that holds no secret (a certificate), at most `max_bytes`, whatever its mode.
// Errors as `ReadPrivateFile` without the mode and owner checks.
Result<std::string> ReadPublicFile(const std::string& path, std::string_view what,
                                   size_t max_bytes = kMaxPrivateFileBytes);

// The same checks without reading, for a loader that opens the file itself (OpenSSL's
// `SSL_CTX_use_PrivateKey_file`). Prefer `ReadPrivateFile`: a check by path leaves a window in
// which the file can be replaced. Same errors.
Status CheckPrivateFile(const std::string& path, std::string_view what);

enum class WriteMode {
  kCreateNew,  // kAlreadyExists if `path` exists; it is never overwritten
  kReplace,    // atomically replaces what is there
};

// Writes `content` to `path` with permissions `perms` (0600 for secrets, 0644 for
// certificates), atomically (see above). Returns kAlreadyExists (kCreateNew and `path`
// exists), kNotFound / kPermissionDenied naming the path when its directory is missing or
// not writable, kUnavailable on other write errors.
Status WriteFileAtomically(const std::string& path, std::string_view content, WriteMode mode,
                           mode_t perms, std::string_view what);

// An errno from opening, reading or writing `path` as a Result error naming the path:
// ENOENT/ENOTDIR -> kNotFound, EACCES/EPERM -> kPermissionDenied, EEXIST -> kAlreadyExists,
// EISDIR -> kInvalidArgument, anything else kUnavailable.
tl::unexpected<Error> FileError(int err, std::string_view what, const std::string& path,
                                std::string_view action);

}  // namespace corral::api
