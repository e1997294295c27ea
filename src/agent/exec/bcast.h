// `sbcast` on the node: writes a file that the controller relays for a job, as the job's user
// (its file-system identity: fsuid, fsgid and groups, as the output files are opened), never
// as root. What it refuses, each with kInvalidArgument or kPermissionDenied naming the
// problem: a path that is not absolute or has an empty, "." or ".." component, a symbolic
// link on the way that is owned by neither root nor the user (as fs.protected_symlinks
// refuses, also outside sticky directories), a last component that is a symbolic link or not
// a regular file, more than `api::kMaxBcastBytes`, and an existing file without `force`
// (kAlreadyExists).
//
// Thread-safety: thread-safe (the identity is switched for the calling thread only).
#pragma once

#include <cstdint>
#include <string_view>

#include "api/job_stats.h"
#include "core/ids.h"
#include "core/result.h"

namespace corral::agent {

// Checks the form of `path` (no file-system access). Returns kInvalidArgument naming the
// problem.
Status CheckBcastPath(std::string_view path);

// Writes `data` to `options.path` as uid/gid (with the user's groups), mode `options.mode`,
// and the times of `options` when given. Returns the errors of the header, kInternal with
// errno's text when writing fails.
Status WriteFileAsUser(JobId job, uint32_t uid, uint32_t gid, const api::BcastOptions& options,
                       std::string_view data);

}  // namespace corral::agent
