#include "agent/exec/internal/spawn.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "core/check.h"

namespace corral::agent::spawn {
namespace {

// Everything the child of the credential-changing launch needs, prepared by the parent: the
// child shares the parent's memory (CLONE_VM | CLONE_VFORK) and must not allocate.
struct ChildArgs {
  const char* path;
  char* const* argv;
  char* const* envp;
  const char* cwd;
  int stdin_fd;
  int stdout_fd;
  int stderr_fd;
  const char* tty_path;  // null: none
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
  const gid_t* groups;
  size_t ngroups;
  const int* cgroup_fds;  // cgroup.procs files to join
  size_t ncgroup_fds;
  const cpu_set_t* cpus;  // null: keep the agent's affinity
  sigset_t parent_mask;
  // Written by the child when a step fails (the parent reads them once the child is gone).
  const char* failed_step;
  int failed_errno;
};

[[noreturn]] void ChildFail(ChildArgs* a, const char* step) {
  a->failed_step = step;
  a->failed_errno = errno;
  _exit(127);
}

// Runs in the child of clone(CLONE_VM | CLONE_VFORK): only system calls, no allocation, and
// the set*id calls as raw system calls (glibc's wrappers would signal every thread of the
// parent, whose memory this child shares). Signals are blocked on entry.
int ChildMain(void* arg) {
  auto* a = static_cast<ChildArgs*>(arg);
  // Reset every disposition (handlers belong to the parent; ignored signals must not leak).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);  // errors: kill/stop
  if (setsid() < 0) ChildFail(a, "setsid");
  for (size_t i = 0; i < a->ncgroup_fds; ++i) {
    if (write(a->cgroup_fds[i], "0", 1) != 1) ChildFail(a, "cgroup");
  }
  if (a->cpus != nullptr && syscall(SYS_sched_setaffinity, 0, sizeof(cpu_set_t), a->cpus) < 0) {
    ChildFail(a, "sched_setaffinity");
  }
  if (dup2(a->stdin_fd, 0) < 0) ChildFail(a, "dup2 stdin");
  if (dup2(a->stdout_fd, 1) < 0) ChildFail(a, "dup2 stdout");
  if (dup2(a->stderr_fd, 2) < 0) ChildFail(a, "dup2 stderr");
  if (close_range(3, ~0U, 0) < 0) ChildFail(a, "close_range");
  if ((a->uid || a->gid) && syscall(SYS_setgroups, a->ngroups, a->groups) < 0)
    ChildFail(a, "setgroups");
  if (a->gid && syscall(SYS_setresgid, *a->gid, *a->gid, *a->gid) < 0) ChildFail(a, "setgid");
  if (a->uid && syscall(SYS_setresuid, *a->uid, *a->uid, *a->uid) < 0) ChildFail(a, "setuid");
  // The terminal, opened as the user (it is theirs), becomes the session's controlling one.
  if (a->tty_path != nullptr) {
    int tty = open(a->tty_path, O_RDWR);
    if (tty < 0) ChildFail(a, "open terminal");
    if (ioctl(tty, TIOCSCTTY, 0) < 0) ChildFail(a, "TIOCSCTTY");
    for (int fd = 0; fd <= 2; ++fd) {
      if (dup2(tty, fd) < 0) ChildFail(a, "dup2 terminal");
    }
    if (tty > 2) close(tty);
  }
  // After dropping privileges, so that the user's own permissions decide.
  if (chdir(a->cwd) < 0) ChildFail(a, "chdir");
  sigset_t none;
  sigemptyset(&none);
  if (sigprocmask(SIG_SETMASK, &none, nullptr) < 0) ChildFail(a, "sigprocmask");
  execve(a->path, a->argv, a->envp);
  ChildFail(a, "execve");
}

// Holds `char*` arrays over a vector of strings for exec.
std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const std::string& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

std::string IdsText(const Credentials& c) {
  std::string s;
  if (c.uid) s += "uid " + std::to_string(*c.uid);
  if (c.gid) s += std::string(s.empty() ? "" : " ") + "gid " + std::to_string(*c.gid);
  return s;
}

}  // namespace

FsIdentity::FsIdentity(std::optional<uid_t> uid, std::optional<gid_t> gid,
                       const std::vector<gid_t>& groups)
    : old_uid_(static_cast<uid_t>(setfsuid(static_cast<uid_t>(-1)))),
      old_gid_(static_cast<gid_t>(setfsgid(static_cast<gid_t>(-1)))) {
  int n = getgroups(0, nullptr);
  if (n < 0) return;
  old_groups_.resize(static_cast<size_t>(n));
  n = getgroups(n, old_groups_.data());
  if (n < 0) return;
  old_groups_.resize(static_cast<size_t>(n));
  if (syscall(SYS_setgroups, groups.size(), groups.data()) != 0) return;
  groups_set_ = true;
  // setfsuid/setfsgid return the previous value and cannot report failure: read back with
  // an invalid id (-1), which changes nothing, to check.
  if (gid) {
    setfsgid(*gid);
    if (static_cast<gid_t>(setfsgid(static_cast<gid_t>(-1))) != *gid) return;
  }
  if (uid) {
    setfsuid(*uid);
    if (static_cast<uid_t>(setfsuid(static_cast<uid_t>(-1))) != *uid) return;
  }
  ok_ = true;
}

FsIdentity::~FsIdentity() {
  setfsuid(old_uid_);
  setfsgid(old_gid_);
  if (groups_set_) {
    CORRAL_CHECK(syscall(SYS_setgroups, old_groups_.size(), old_groups_.data()) == 0)
        << "process supervisor: cannot restore the agent's groups: " << ErrnoText(errno);
  }
}

std::string ErrnoText(int err) {
  char buf[128];
  // GNU strerror_r returns a pointer to the text (maybe `buf`, maybe a static string).
  return strerror_r(err, buf, sizeof buf);
}

std::string JobPrefix(JobId job) { return "job " + job.ToString(); }

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

int OpenAs(const std::string& path, int flags, const Credentials& creds) {
  std::optional<FsIdentity> identity;
  if (creds.uid || creds.gid) {
    identity.emplace(creds.uid, creds.gid, creds.groups);
    if (!identity->ok()) return -EPERM;
  }
  int fd = open(path.c_str(), flags);
  return fd >= 0 ? fd : -errno;
}

Status KeepAbove2(Fd& fd) {
  if (fd.get() > 2) return {};
  Fd moved(fcntl(fd.get(), F_DUPFD_CLOEXEC, 3));
  if (moved.get() < 0) return Internal("fcntl(F_DUPFD_CLOEXEC): " + ErrnoText(errno));
  fd = std::move(moved);
  return {};
}

Result<Credentials> ResolveCredentials(JobId job, std::optional<uid_t> uid,
                                       std::optional<gid_t> gid) {
  Credentials c;
  c.uid = uid;
  c.gid = gid;
  if (!uid) {
    if (gid) c.groups = {*gid};
    return c;
  }
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(4096);
  int rc;
  while ((rc = getpwuid_r(*uid, &pw, buf.data(), buf.size(), &found)) == ERANGE) {
    buf.resize(buf.size() * 2);
  }
  if (rc != 0 || found == nullptr) {
    if (!gid) {
      return InvalidArgument(JobPrefix(job) + ": uid " + std::to_string(*uid) +
                             " has no passwd entry and no gid was given");
    }
    c.groups = {*gid};
    return c;
  }
  c.name = pw.pw_name;
  c.home = pw.pw_dir;
  int n = 32;
  c.groups.resize(n);
  while (getgrouplist(pw.pw_name, pw.pw_gid, c.groups.data(), &n) < 0) c.groups.resize(n);
  c.groups.resize(n);
  if (!c.gid) c.gid = pw.pw_gid;
  // Whoever sent the launch, a user's job runs only with a group of that user.
  if (std::find(c.groups.begin(), c.groups.end(), *c.gid) == c.groups.end()) {
    return MakeError(
        ErrorCode::kPermissionDenied,
        JobPrefix(job) + ": gid " + std::to_string(*c.gid) + " is not a group of user " + c.name);
  }
  return c;
}

Result<Credentials> ResolveCredentials(const ProcessSpec& spec) {
  return ResolveCredentials(spec.job, spec.uid, spec.gid);
}

// Opens the output files; returns {stdout, stderr} (the same descriptor twice when they
// share a file).
Result<std::pair<Fd, Fd>> OpenOutputs(const ProcessSpec& spec, int cwd_fd,
                                      const Credentials& creds) {
  std::optional<FsIdentity> identity;
  if (creds.uid || creds.gid) {
    identity.emplace(creds.uid, creds.gid, creds.groups);
    if (!identity->ok()) {
      return MakeError(ErrorCode::kPermissionDenied,
                       JobPrefix(spec.job) + ": cannot open output files as " + IdsText(creds) +
                           " (the agent is not root)");
    }
  }
  int flags = O_CREAT | O_WRONLY | O_CLOEXEC | O_NOCTTY | (spec.append ? O_APPEND : O_TRUNC);
  auto open_one = [&](const std::string& path) -> Result<Fd> {
    if (path.empty()) {
      Fd fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
      if (fd.get() < 0) return Internal(JobPrefix(spec.job) + ": /dev/null: " + ErrnoText(errno));
      return fd;
    }
    // Relative paths are relative to the job's working directory.
    Fd fd(openat(cwd_fd, path.c_str(), flags, 0644));
    if (fd.get() < 0) {
      int err = errno;
      return InvalidArgument(JobPrefix(spec.job) + ": cannot open output file " + Quoted(path) +
                             ": " + ErrnoText(err));
    }
    return fd;
  };
  if (spec.stdout_fd >= 0) {
    auto copy = [&](int fd) -> Result<Fd> {
      Fd c(fcntl(fd, F_DUPFD_CLOEXEC, 3));
      if (c.get() < 0) return Internal(JobPrefix(spec.job) + ": dup: " + ErrnoText(errno));
      return c;
    };
    CORRAL_ASSIGN_OR_RETURN(Fd out, copy(spec.stdout_fd));
    CORRAL_ASSIGN_OR_RETURN(Fd err, copy(spec.stderr_fd >= 0 ? spec.stderr_fd : spec.stdout_fd));
    return std::make_pair(std::move(out), std::move(err));
  }
  CORRAL_ASSIGN_OR_RETURN(Fd out, open_one(spec.stdout_path));
  if (spec.stderr_path.empty() || spec.stderr_path == spec.stdout_path) {
    Fd err(fcntl(out.get(), F_DUPFD_CLOEXEC, 3));
    if (err.get() < 0) return Internal(JobPrefix(spec.job) + ": dup: " + ErrnoText(errno));
    return std::make_pair(std::move(out), std::move(err));
  }
  CORRAL_ASSIGN_OR_RETURN(Fd err, open_one(spec.stderr_path));
  return std::make_pair(std::move(out), std::move(err));
}

// posix_spawn: the fast path, when the credentials stay the agent's.
Result<int> SpawnPlain(const ProcessSpec& spec, int stdin_fd, int out_fd, int err_fd) {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_init(&actions);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
  std::vector<char*> argv = CStrings(spec.argv);
  std::vector<char*> envp = CStrings(spec.env);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Internal(JobPrefix(spec.job) + ": cannot start " + Quoted(spec.argv[0]) + ": " +
                    ErrnoText(rc));
  }
  return pid;
}

// clone(CLONE_VM | CLONE_VFORK) + setgroups/setgid/setuid + exec: as fast as posix_spawn
// (no page-table copy of the agent), with each step's failure reported by name.
Result<int> SpawnAsUser(const ProcessSpec& spec, const Credentials& creds, int stdin_fd, int out_fd,
                        int err_fd) {
  std::vector<char*> argv = CStrings(spec.argv);
  std::vector<char*> envp = CStrings(spec.env);
  ChildArgs args{};
  args.path = argv[0];
  args.argv = argv.data();
  args.envp = envp.data();
  args.cwd = spec.cwd.c_str();
  args.stdin_fd = stdin_fd;
  args.stdout_fd = out_fd;
  args.stderr_fd = err_fd;
  args.tty_path = spec.tty_path.empty() ? nullptr : spec.tty_path.c_str();
  args.uid = creds.uid;
  args.gid = creds.gid;
  args.groups = creds.groups.data();
  args.ngroups = creds.groups.size();
  std::vector<Fd> cgroup_fds;
  std::vector<int> raw_fds;
  for (const std::string& path : spec.cgroup_procs) {
    Fd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (fd.get() < 0)
      return Internal(JobPrefix(spec.job) + ": cgroup " + Quoted(path) + ": " + ErrnoText(errno));
    raw_fds.push_back(fd.get());
    cgroup_fds.push_back(std::move(fd));
  }
  args.cgroup_fds = raw_fds.data();
  args.ncgroup_fds = raw_fds.size();
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (uint32_t c : spec.cpus) {
    if (c < CPU_SETSIZE) CPU_SET(c, &cpus);
  }
  args.cpus = spec.cpus.empty() ? nullptr : &cpus;
  constexpr size_t kStackSize = 64 * 1024;
  void* stack = mmap(nullptr, kStackSize, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    return Internal(JobPrefix(spec.job) + ": mmap child stack: " + ErrnoText(errno));
  }
  // No handler of the parent may run in the child, which shares its memory.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &args.parent_mask);
  pid_t pid = clone(ChildMain, static_cast<char*>(stack) + kStackSize,
                    CLONE_VM | CLONE_VFORK | SIGCHLD, &args);
  int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &args.parent_mask, nullptr);
  munmap(stack, kStackSize);
  if (pid < 0) {
    return Internal(JobPrefix(spec.job) + ": clone: " + ErrnoText(clone_errno));
  }
  if (args.failed_step != nullptr) {
    // The child has exited (CLONE_VFORK returns after exec or exit): reap it.
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::string what = args.failed_step;
    if (what == "execve") what += " " + Quoted(spec.argv[0]);
    if (what == "chdir") what += " " + Quoted(spec.cwd);
    return Internal(JobPrefix(spec.job) + ": " + what + ": " + ErrnoText(args.failed_errno));
  }
  return pid;
}

}  // namespace corral::agent::spawn
