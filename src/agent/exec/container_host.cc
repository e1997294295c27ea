#include "agent/exec/container_host.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "agent/exec/internal/spawn.h"
#include "core/log.h"
#include "core/strings.h"

namespace corral::agent {
namespace {

using spawn::ErrnoText;
using spawn::Fd;

std::string FdPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// Whether `path` is `prefix` or under it, component by component.
bool Under(const std::string& path, std::string prefix) {
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  if (prefix == "/") return true;
  return path == prefix || path.rfind(prefix + "/", 0) == 0;
}

// Whether `path` is under one of `prefixes`, as written or as they resolve now.
bool UnderAny(const std::string& path, const std::vector<std::string>& prefixes) {
  for (const std::string& p : prefixes) {
    if (Under(path, p)) return true;
    char buf[PATH_MAX];
    if (realpath(p.c_str(), buf) != nullptr && Under(path, buf)) return true;
  }
  return false;
}

// Whether /etc/subuid or /etc/subgid (`file`) gives `user` a range.
bool HasRange(const std::string& file, const ContainerUser& user) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    std::string owner = line.substr(0, line.find(':'));
    if (!owner.empty() && ((!user.name.empty() && owner == user.name) ||
                           (user.uid && owner == std::to_string(*user.uid)))) {
      return true;
    }
  }
  return false;
}

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  for (const std::string& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Runs `argv` with `env` (as `uid`/`gid`/`groups` when given) and waits; output discarded.
void RunQuietly(const ContainerCleanup& c) {
  std::vector<char*> argv = CStrings(c.argv);
  std::vector<char*> envp = CStrings(c.env);
  pid_t pid = -1;
  if (!c.uid) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&fa);
  } else {
    std::vector<gid_t> groups(c.groups.begin(), c.groups.end());
    gid_t gid = c.gid.value_or(*c.uid);
    uid_t uid = *c.uid;
    pid = fork();
    if (pid == 0) {
      // Only system calls: the agent has other threads. set*id as raw calls (glibc's would
      // signal threads this child does not have).
      int null = open("/dev/null", O_RDWR);
      if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
          syscall(SYS_setgroups, groups.size(), groups.data()) != 0 ||
          syscall(SYS_setresgid, gid, gid, gid) != 0 ||
          syscall(SYS_setresuid, uid, uid, uid) != 0) {
        _exit(127);
      }
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
  }
  if (pid <= 0) {
    CORRAL_LOG(Warn) << "container clean-up: cannot run " << c.argv[0];
    return;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

// Unmounts and removes a private directory's entries, then the directory: rmdir and unlink
// only, so that nothing under a mount that is still there is ever touched.
void RemoveContainerDir(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> entries;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") entries.push_back(dir + "/" + n);
  }
  closedir(d);
  for (const std::string& path : entries) {
    while (umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) == 0) {
    }
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) continue;
    int rc = S_ISDIR(st.st_mode) ? rmdir(path.c_str()) : unlink(path.c_str());
    if (rc != 0) CORRAL_LOG(Warn) << "container clean-up: " << path << ": " << ErrnoText(errno);
  }
  if (rmdir(dir.c_str()) != 0 && errno != ENOENT) {
    CORRAL_LOG(Warn) << "container clean-up: " << dir << ": " << ErrnoText(errno);
  }
}

// Opens `m.source` as `user` (O_PATH, no magic links) and checks it may be read. Requires the
// caller to hold nothing the user's identity could not use.
Result<Fd> OpenAsUser(const BindMount& m, const ContainerUser& user, const std::string& what) {
  std::vector<gid_t> groups(user.groups.begin(), user.groups.end());
  std::optional<spawn::FsIdentity> identity;
  if (user.uid || user.gid) {
    identity.emplace(user.uid, user.gid, groups);
    if (!identity->ok()) {
      return MakeError(ErrorCode::kPermissionDenied,
                       what + ": cannot check it as the job's user (the agent is not root)");
    }
  }
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_NO_MAGICLINKS;
  Fd fd(static_cast<int>(syscall(SYS_openat2, AT_FDCWD, m.source.c_str(), &how, sizeof how)));
  if (fd.get() < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      return InvalidArgument(what + ": no such file or directory");
    if (err == EACCES || err == EPERM || err == ELOOP || err == EXDEV)
      return MakeError(ErrorCode::kPermissionDenied,
                       what + ": the job's user cannot reach it (" + ErrnoText(err) + ")");
    return Internal(what + ": " + ErrnoText(err));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return Internal(what + ": " + ErrnoText(errno));
  // Requested mounts must be readable; the job's own directories need only be entered.
  int mode = S_ISDIR(st.st_mode) ? X_OK : R_OK;
  if (m.origin == BindMount::Origin::kRequested) mode |= R_OK;
  if (faccessat(AT_FDCWD, FdPath(fd.get()).c_str(), mode, AT_EACCESS) != 0) {
    return MakeError(ErrorCode::kPermissionDenied,
                     what + ": the job's user may not " + (mode & R_OK ? "read" : "enter") + " it");
  }
  return fd;
}

}  // namespace

Result<ContainerUser> LookUpContainerUser(std::optional<uint32_t> uid,
                                          std::optional<uint32_t> gid) {
  CORRAL_ASSIGN_OR_RETURN(spawn::Credentials c, spawn::ResolveCredentials(JobId(), uid, gid));
  ContainerUser u;
  u.uid = c.uid;
  u.gid = c.gid;
  u.groups.assign(c.groups.begin(), c.groups.end());
  u.name = c.name;
  u.home = c.home;
  return u;
}

Result<bool> UseRootlessPodman(const ContainerConfig& config, const ContainerUser& user) {
  if (config.runtime != "podman" || config.rootless == "off" || !user.uid || *user.uid == 0)
    return false;
  bool ranges = HasRange("/etc/subuid", user) && HasRange("/etc/subgid", user);
  if (!ranges && config.rootless == "always") {
    return FailedPrecondition("user " +
                              (user.name.empty() ? std::to_string(*user.uid) : user.name) +
                              " has no range in /etc/subuid and /etc/subgid, which rootless "
                              "podman needs ([container] rootless = \"always\")");
  }
  return ranges;
}

Result<std::string> MakeContainerDir(const std::string& state_dir, const std::string& name,
                                     bool user_enters) {
  std::string base = state_dir + "/containers";
  if (mkdir(base.c_str(), 0711) != 0 && errno != EEXIST)
    return Internal("cannot create " + base + ": " + ErrnoText(errno));
  std::string dir = base + "/" + name;
  RemoveContainerDir(dir);  // a run of the same name that a crash left
  if (mkdir(dir.c_str(), 0700) != 0 || (user_enters && chmod(dir.c_str(), 0711) != 0))
    return Internal("cannot create " + dir + ": " + ErrnoText(errno));
  return dir;
}

Result<std::vector<BindMount>> CheckMounts(const ContainerConfig& config,
                                           std::vector<BindMount> mounts, const ContainerUser& user,
                                           bool stage, const std::string& dir) {
  size_t staged = 0;
  for (BindMount& m : mounts) {
    if (m.origin == BindMount::Origin::kAgent) continue;
    const std::string what = "container mount \"" + m.source + "\"";
    CORRAL_ASSIGN_OR_RETURN(Fd fd, OpenAsUser(m, user, what));
    char buf[PATH_MAX];
    ssize_t n = readlink(FdPath(fd.get()).c_str(), buf, sizeof buf - 1);
    if (n <= 0) return Internal(what + ": readlink: " + ErrnoText(errno));
    std::string resolved(buf, static_cast<size_t>(n));
    if (m.origin == BindMount::Origin::kRequested) {
      bool rw = UnderAny(resolved, config.allow_rw_mounts);
      if (resolved == "/" || (!rw && !UnderAny(resolved, config.allow_mounts))) {
        return MakeError(ErrorCode::kPermissionDenied,
                         what + " (" + resolved +
                             ") is not under a mount this node allows ([container] allow_mounts)");
      }
      bool ro = std::find(m.options.begin(), m.options.end(), "ro") != m.options.end();
      if (!rw && std::find(m.options.begin(), m.options.end(), "rw") != m.options.end()) {
        return MakeError(ErrorCode::kPermissionDenied,
                         what + " (" + resolved + ") may be mounted read-only only on this node");
      }
      if (!rw && !ro) m.options.push_back("ro");
    }
    if (!stage) {
      m.source = resolved;
      continue;
    }
    // Bind the opened source itself (the magic link follows no path), so that the runtime,
    // which resolves its sources as root, mounts exactly what was checked.
    struct stat st {};
    if (fstat(fd.get(), &st) != 0) return Internal(what + ": " + ErrnoText(errno));
    std::string point = dir + "/m" + std::to_string(staged++);
    if (S_ISDIR(st.st_mode)) {
      if (mkdir(point.c_str(), 0700) != 0) return Internal(point + ": " + ErrnoText(errno));
    } else {
      Fd f(open(point.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (f.get() < 0) return Internal(point + ": " + ErrnoText(errno));
    }
    if (mount(FdPath(fd.get()).c_str(), point.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      return Internal(what + ": cannot bind it to " + point + ": " + ErrnoText(errno));
    }
    m.source = point;
  }
  return mounts;
}

Status WriteEnvFile(const std::string& path, const std::vector<std::string>& lines,
                    const ContainerUser* owner) {
  Fd fd(open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) return Internal("cannot create " + path + ": " + ErrnoText(errno));
  if (owner != nullptr && owner->uid &&
      fchown(fd.get(), *owner->uid, owner->gid.value_or(*owner->uid)) != 0) {
    return Internal("cannot give " + path + " to the job's user: " + ErrnoText(errno));
  }
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  for (size_t off = 0; off < text.size();) {
    ssize_t w = write(fd.get(), text.data() + off, text.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return Internal("cannot write " + path + ": " + ErrnoText(errno));
    off += static_cast<size_t>(w);
  }
  return {};
}

void RemoveContainer(const ContainerCleanup& cleanup, bool remove) {
  if (remove && !cleanup.argv.empty()) RunQuietly(cleanup);
  if (!cleanup.dir.empty()) RemoveContainerDir(cleanup.dir);
}

void RemoveStaleContainerDirs(const std::string& state_dir) {
  std::string base = state_dir + "/containers";
  DIR* d = opendir(base.c_str());
  if (d == nullptr) return;
  std::vector<std::string> dirs;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") dirs.push_back(base + "/" + n);
  }
  closedir(d);
  for (const std::string& dir : dirs) RemoveContainerDir(dir);
}

}  // namespace corral::agent
