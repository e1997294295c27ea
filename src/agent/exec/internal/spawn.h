// How the process supervisor starts one process: the job user's credentials, its output files
// opened with that user's file-system identity, and the spawn — posix_spawn on the fast path,
// clone(CLONE_VM | CLONE_VFORK) + setgroups/setgid/setuid + exec when the ids change, cgroups
// are joined or CPUs bound (see process_supervisor.h). Internal to agent/exec.
//
// Thread-safety: thread-safe (the file-system identity is switched per thread).
#pragma once

#include <unistd.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "agent/exec/process.h"
#include "core/ids.h"
#include "core/result.h"

namespace corral::agent::spawn {

// errno's text.
std::string ErrnoText(int err);
// "job 42".
std::string JobPrefix(JobId job);
// "\"s\"".
std::string Quoted(std::string_view s);

// Closes a file descriptor on scope exit.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  int get() const { return fd_; }
  int Release() { return std::exchange(fd_, -1); }
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Switches the calling thread's file-system identity (fsuid, fsgid and supplementary groups)
// so that files are opened, and paths walked, with the job user's permissions, and files are
// created owned by that user. Linux keeps credentials per thread; glibc's setfsuid/setfsgid
// are plain system calls, and setgroups is made one here (glibc's wrapper would apply it to
// every thread of the agent). Opening as root and fchown()ing afterwards would let a job
// truncate any root-writable file by making its output path a symlink. Restores the agent's
// identity on destruction (a failure there aborts: the thread's credentials would be wrong).
class FsIdentity {
 public:
  FsIdentity(std::optional<uid_t> uid, std::optional<gid_t> gid, const std::vector<gid_t>& groups);
  ~FsIdentity();
  FsIdentity(const FsIdentity&) = delete;
  FsIdentity& operator=(const FsIdentity&) = delete;
  // Whether the identity was switched (the agent is root, or the ids are its own).
  bool ok() const { return ok_; }

 private:
  uid_t old_uid_;
  gid_t old_gid_;
  std::vector<gid_t> old_groups_;
  bool groups_set_ = false;
  bool ok_ = false;
};

// The job's credentials, resolved in the parent (NSS lookups are not safe in the child).
struct Credentials {
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
  std::vector<gid_t> groups;
  std::string name;  // from the passwd entry ("" without one)
  std::string home;
};

// `uid`/`gid` (the passwd entry's group when no gid is given) and the user's groups, its
// primary one included. Returns kInvalidArgument when the uid has no passwd entry and no gid
// is given, kPermissionDenied when `gid` is not one of the user's groups (a uid without a
// passwd entry has no groups to check: it gets `gid` alone).
Result<Credentials> ResolveCredentials(JobId job, std::optional<uid_t> uid,
                                       std::optional<gid_t> gid);
Result<Credentials> ResolveCredentials(const ProcessSpec& spec);

// open(path, flags) with `creds`' file-system identity (the agent's own when they are empty).
// Returns the descriptor, or -errno.
int OpenAs(const std::string& path, int flags, const Credentials& creds);

// Moves `fd` above 2, so that dup2 onto 0, 1 and 2 in the child never meets itself or an
// already replaced descriptor (the agent may run with 0-2 closed). Returns kInternal.
Status KeepAbove2(Fd& fd);

// Opens the output files as `creds`; returns {stdout, stderr} (the same open file twice when
// they share one). Returns kPermissionDenied when ids cannot be switched, kInvalidArgument
// naming a file that cannot be opened, kInternal.
Result<std::pair<Fd, Fd>> OpenOutputs(const ProcessSpec& spec, int cwd_fd,
                                      const Credentials& creds);

// posix_spawn: the fast path, when the credentials stay the agent's. Returns the pid, or
// kInternal.
Result<int> SpawnPlain(const ProcessSpec& spec, int stdin_fd, int out_fd, int err_fd);

// clone(CLONE_VM | CLONE_VFORK) + setgroups/setgid/setuid + exec: as fast as posix_spawn (no
// page-table copy of the agent), with each step's failure reported by name. Returns the pid,
// or kInternal naming the step that failed in the child.
Result<int> SpawnAsUser(const ProcessSpec& spec, const Credentials& creds, int stdin_fd, int out_fd,
                        int err_fd);

}  // namespace corral::agent::spawn
