// What the agent needs around a job's launch for distributed jobs and checkpoints: the job's
// rendezvous port, its checkpoint directory, and a step program looked up in PATH.
//
// Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/result.h"

namespace corral::agent {

// The first port from `candidate` on (wrapping within [lo, hi]) that can be bound on every
// address of this machine, as torch's TCPStore binds it (SO_REUSEADDR). Requires:
// lo <= candidate <= hi. Returns kResourceExhausted when every port of the range is taken.
Result<uint32_t> PickFreePort(uint32_t candidate, uint32_t lo, uint32_t hi);

// `mkdir -p path` (mode 0700 for what it creates), done with the credentials of `uid`/`gid`
// and the user's supplementary groups when the agent is root and they differ from its own,
// so that the directories belong to the job's user and a path through a directory the user
// controls cannot make the agent create anything elsewhere. An existing directory is fine.
// Returns kInvalidArgument naming the path and the reason when it cannot be created.
Status MakeDirectoriesAs(const std::string& path, std::optional<uint32_t> uid,
                         std::optional<uint32_t> gid);

// The program a step runs: `program` itself when it holds a '/' (relative to `cwd`), else the
// first executable regular file of that name in the directories of `path_var`, looked up
// with the file-system identity of `uid`/`gid` when the agent is root (so that a directory
// the user cannot search hides its programs, as it would from the user). Returns kNotFound
// naming the program, ResolveCredentials' errors for the ids.
Result<std::string> ResolveProgram(const std::string& program, const std::string& path_var,
                                   const std::string& cwd, std::optional<uint32_t> uid = {},
                                   std::optional<uint32_t> gid = {});

}  // namespace corral::agent
