// What the agent does on the host around a container (container.h builds its command): the
// job user's identity for it, the checks of its bind mounts, its private directory (the env
// file, the staged mounts) and its removal.
//
// Mounts. Every mount but the agent's own is checked as the job's user: its source is opened
// (O_PATH) with the user's file-system identity (fsuid, fsgid, groups), so every directory on
// the way must be searchable by the user and symlinks resolve with the user's permissions
// (magic links such as /proc/self/fd/N are refused); the user must be able to read it. A
// requested mount (`--container-mounts`) must then resolve under `[container]
// allow_rw_mounts` or `allow_mounts` (read-only: "ro" is added, "rw" is refused); the
// resolved path is what the runtime gets. A runtime that runs as root (podman, docker) would
// resolve the path again, as root, when it mounts it, so that a user who swapped a component
// for a symlink in between could have any directory mounted: for it the opened source itself
// is bind-mounted (through /proc/self/fd, which follows no path) onto a mount point in the
// container's private directory, and that is what the runtime mounts.
//
// The private directory is <state_dir>/containers/<name> (the agent's; mode 0700, so that
// nobody reaches a user's directory through its staged mount; 0711 for a runtime that runs as
// the user): `env` (mode 0600, the agent's, or the user's for a runtime that runs as the user)
// and one mount point per staged mount. It is removed with the container: mount points are
// unmounted (lazily) and removed with rmdir/unlink only, so nothing is ever deleted through a
// mount.
//
// Thread-safety: thread-safe (identities are switched per thread).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/exec/container.h"
#include "core/result.h"

namespace corral::agent {

// The job's user as a container sees it.
struct ContainerUser {
  std::optional<uint32_t> uid;  // unset: the agent's own (it does not switch ids)
  std::optional<uint32_t> gid;
  std::vector<uint32_t> groups;  // supplementary, the primary group included
  std::string name;              // the passwd name ("" without an entry)
  std::string home;              // "" without an entry
};

// `uid`/`gid` with the user's groups, name and home from its passwd entry. Returns
// kInvalidArgument when the uid has no passwd entry and no gid is given.
Result<ContainerUser> LookUpContainerUser(std::optional<uint32_t> uid, std::optional<uint32_t> gid);

// Whether podman runs rootless as `user` under `config.rootless` ("off", "auto", "always"):
// "auto" when the user has ranges in /etc/subuid and /etc/subgid (by name or uid). Returns
// kFailedPrecondition for "always" without them.
Result<bool> UseRootlessPodman(const ContainerConfig& config, const ContainerUser& user);

// The private directory of container `name`, made afresh: mode 0700, or 0711 when
// `user_enters` (a runtime that runs as the user reads its env file there; nothing is staged
// in such a directory). Returns kInternal.
Result<std::string> MakeContainerDir(const std::string& state_dir, const std::string& name,
                                     bool user_enters);

// Checks `mounts` (PlanMounts) as described above and resolves them; with `stage`, binds each
// checked source onto a mount point in `dir` and passes that. Returns kInvalidArgument for a
// source that does not exist, kPermissionDenied for one the user may not reach or read, or a
// requested one outside the allow-list (or "rw" under a read-only prefix), kInternal when a
// staging mount fails.
Result<std::vector<BindMount>> CheckMounts(const ContainerConfig& config,
                                           std::vector<BindMount> mounts, const ContainerUser& user,
                                           bool stage, const std::string& dir);

// Writes `lines` to `path` (created: mode 0600, owned by `owner` when given). Returns kInternal.
Status WriteEnvFile(const std::string& path, const std::vector<std::string>& lines,
                    const ContainerUser* owner);

// How a container goes when its job or task ends.
struct ContainerCleanup {
  std::vector<std::string> argv;  // `rm --force NAME` (empty: nothing to run)
  std::vector<std::string> env;   // its environment
  std::optional<uint32_t> uid;    // run as (rootless podman), else as the agent
  std::optional<uint32_t> gid;
  std::vector<uint32_t> groups;
  std::string dir;  // the private directory ("" = none)
};

// Runs `cleanup.argv` when `remove` (and waits; output discarded), then removes the private
// directory as described above. Failures are logged.
void RemoveContainer(const ContainerCleanup& cleanup, bool remove);

// Removes the private directories a previous agent run left under `state_dir`.
void RemoveStaleContainerDirs(const std::string& state_dir);

}  // namespace corral::agent
