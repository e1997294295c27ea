#include "agent/exec/process_supervisor.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "agent/exec/process_deadlines.h"
#include "core/check.h"
#include "core/log.h"

namespace corral::agent {
namespace {

constexpr MonoTime kNever = ProcessDeadlines::kNever;
// epoll key of the wakeup eventfd; jobs use serials from 1.
constexpr uint64_t kWakeKey = 0;

std::string ErrnoText(int err) {
  char buf[128];
  // GNU strerror_r returns a pointer to the text (maybe `buf`, maybe a static string).
  return strerror_r(err, buf, sizeof buf);
}

std::string JobPrefix(JobId job) { return "job " + job.ToString(); }

std::string ProcessPrefix(JobId job, uint32_t step, uint32_t task) {
  if (step == kBatchStepId) return JobPrefix(job);
  return JobPrefix(job) + " step " + std::to_string(step) + " task " + std::to_string(task);
}

// A process's key: (job, generation, step, task). Runs of one job (a requeued job started
// again while its previous run is still being killed) are kept apart.
using ProcessKey = std::tuple<JobId, Generation, uint32_t, uint32_t>;

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

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
// so that output files are opened with the job user's permissions and created owned by that
// user. Linux keeps credentials per thread; glibc's setfsuid/setfsgid are plain system calls,
// and setgroups is made one here (glibc's wrapper would apply it to every thread of the
// agent). Opening as root and fchown()ing afterwards would let a job truncate any
// root-writable file by making its output path a symlink. Restores the agent's identity on
// destruction (a failure there aborts: the thread's credentials would be wrong).
class FsIdentity {
 public:
  FsIdentity(std::optional<uid_t> uid, std::optional<gid_t> gid, const std::vector<gid_t>& groups)
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
  ~FsIdentity() {
    setfsuid(old_uid_);
    setfsgid(old_gid_);
    if (groups_set_) {
      CORRAL_CHECK(syscall(SYS_setgroups, old_groups_.size(), old_groups_.data()) == 0)
          << "process supervisor: cannot restore the agent's groups: " << ErrnoText(errno);
    }
  }
  FsIdentity(const FsIdentity&) = delete;
  FsIdentity& operator=(const FsIdentity&) = delete;
  bool ok() const { return ok_; }

 private:
  uid_t old_uid_;
  gid_t old_gid_;
  std::vector<gid_t> old_groups_;
  bool groups_set_ = false;
  bool ok_ = false;
};

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

// The job's credentials, resolved in the parent (NSS lookups are not safe in the child).
struct Credentials {
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
  std::vector<gid_t> groups;
};

std::string IdsText(const Credentials& c) {
  std::string s;
  if (c.uid) s += "uid " + std::to_string(*c.uid);
  if (c.gid) s += std::string(s.empty() ? "" : " ") + "gid " + std::to_string(*c.gid);
  return s;
}

// Moves `fd` above 2, so that dup2 onto 0, 1 and 2 in the child never meets itself or an
// already replaced descriptor (the agent may run with 0-2 closed).
Status KeepAbove2(Fd& fd) {
  if (fd.get() > 2) return {};
  Fd moved(fcntl(fd.get(), F_DUPFD_CLOEXEC, 3));
  if (moved.get() < 0) return Internal("fcntl(F_DUPFD_CLOEXEC): " + ErrnoText(errno));
  fd = std::move(moved);
  return {};
}

Result<Credentials> ResolveCredentials(const ProcessSpec& spec) {
  Credentials c;
  c.uid = spec.uid;
  c.gid = spec.gid;
  std::string name;
  if (spec.uid) {
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(4096);
    int rc;
    while ((rc = getpwuid_r(*spec.uid, &pw, buf.data(), buf.size(), &found)) == ERANGE) {
      buf.resize(buf.size() * 2);
    }
    if (rc == 0 && found != nullptr) {
      name = pw.pw_name;
      if (!c.gid) c.gid = pw.pw_gid;
    } else if (!c.gid) {
      return InvalidArgument(JobPrefix(spec.job) + ": uid " + std::to_string(*spec.uid) +
                             " has no passwd entry and no gid was given");
    }
  }
  if (!name.empty()) {
    int n = 32;
    c.groups.resize(n);
    while (getgrouplist(name.c_str(), *c.gid, c.groups.data(), &n) < 0) c.groups.resize(n);
    c.groups.resize(n);
  } else if (c.gid) {
    c.groups = {*c.gid};
  }
  return c;
}

}  // namespace

struct ProcessSupervisor::Impl {
  struct Entry {
    JobId job;
    Generation generation;
    uint32_t step = kBatchStepId;
    uint32_t task = 0;
    int pid = 0;
    int pidfd = -1;
    Timestamp start_time{};
    ProcessDeadlines deadlines;
  };

  Impl(const Clock& c, ExitCallback cb) : clock(c), on_exit(std::move(cb)) {}

  const Clock& clock;
  const ExitCallback on_exit;
  Fd epoll_fd;
  Fd wake_fd;
  std::thread thread;

  mutable std::mutex mu;
  bool stopping = false;                        // guarded by mu
  uint64_t next_serial = 1;                     // guarded by mu
  std::unordered_map<uint64_t, Entry> entries;  // by serial; guarded by mu
  std::map<ProcessKey, uint64_t> by_key;        // guarded by mu
  std::set<ProcessKey> launching;               // reserved by Launch; guarded by mu
  // When the thread will next look at deadlines by itself; `MonoTime::min()` while it is
  // awake (it recomputes before sleeping). Guarded by mu.
  MonoTime planned_wake = MonoTime::min();

  void Wake() {
    uint64_t one = 1;
    // EAGAIN means the counter is already non-zero, i.e. a wakeup is pending.
    [[maybe_unused]] ssize_t n = write(wake_fd.get(), &one, sizeof one);
  }

  // Wakes the thread if `deadline` comes before the time it plans to wake. Requires mu.
  void WakeIfEarlier(MonoTime deadline) {
    if (deadline < planned_wake) {
      planned_wake = MonoTime::min();
      Wake();
    }
  }

  void SignalGroup(const Entry& e, int sig) {
    if (kill(-e.pid, sig) < 0 && errno != ESRCH) {
      CORRAL_LOG(Warn) << JobPrefix(e.job) << ": kill(-" << e.pid << ", " << sig
                       << "): " << ErrnoText(errno);
    }
  }

  // SIGCONT + SIGTERM (SIGKILL follows after the grace period: `ProcessDeadlines`).
  void Terminate(const Entry& e) {
    SignalGroup(e, SIGCONT);
    SignalGroup(e, SIGTERM);
  }

  // Sends what is due at `now` and returns the earliest deadline left. Requires mu.
  MonoTime RunDeadlines(MonoTime now) {
    MonoTime next = kNever;
    for (auto& [serial, e] : entries) {
      ProcessDeadlines::Due due = e.deadlines.Take(now);
      const SignalSpec& warn = e.deadlines.warn();
      if (due.warn && warn.batch_only) {
        if (kill(e.pid, warn.signal) < 0 && errno != ESRCH) {
          CORRAL_LOG(Warn) << JobPrefix(e.job) << ": warning signal: " << ErrnoText(errno);
        }
      } else if (due.warn) {
        SignalGroup(e, warn.signal);
      }
      if (due.term) Terminate(e);
      if (due.kill) SignalGroup(e, SIGKILL);
      next = std::min(next, e.deadlines.Next());
    }
    return next;
  }

  // Reaps the job of `serial` if its leader has exited: first SIGKILL to what is left of its
  // group (the zombie leader still holds the group id, so it cannot have been reused), then
  // the wait. Requires mu.
  void Reap(uint64_t serial, std::vector<ProcessExit>* exits) {
    auto it = entries.find(serial);
    if (it == entries.end()) return;  // a stale event of a job already reaped
    Entry& e = it->second;
    siginfo_t info{};
    rusage ru{};
    // Peek first: the group must be killed while the zombie leader still pins its id.
    bool lost = false;  // reaped by someone else: SIGCHLD ignored, or a waitpid(-1) elsewhere
    if (syscall(SYS_waitid, P_PIDFD, e.pidfd, &info, WEXITED | WNOHANG | WNOWAIT, nullptr) < 0) {
      CORRAL_LOG(Error) << JobPrefix(e.job) << ": waitid: " << ErrnoText(errno)
                        << "; reporting an unknown exit status";
      lost = true;
    } else if (info.si_pid == 0) {
      return;  // not exited yet
    }
    SignalGroup(e, SIGKILL);
    if (!lost) {
      info = {};
      if (syscall(SYS_waitid, P_PIDFD, e.pidfd, &info, WEXITED | WNOHANG, &ru) < 0 ||
          info.si_pid == 0) {
        CORRAL_LOG(Error) << JobPrefix(e.job) << ": waitid: " << ErrnoText(errno)
                          << "; reporting an unknown exit status";
        lost = true;
      }
    }
    ProcessExit x;
    x.job = e.job;
    x.generation = e.generation;
    x.step = e.step;
    x.task = e.task;
    if (lost) {
      x.exit_code = -1;
    } else if (info.si_code == CLD_EXITED) {
      x.exit_code = info.si_status;
    } else {
      x.signal = info.si_status;
    }
    x.timed_out = e.deadlines.timed_out();
    x.cancelled = e.deadlines.cancelled();
    x.start_time = e.start_time;
    x.end_time = clock.Now();
    x.cpu_seconds = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                    static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    x.max_rss_mb = (static_cast<uint64_t>(ru.ru_maxrss) + 1023) / 1024;  // KiB
    exits->push_back(x);
    // Removed explicitly: close() alone leaves the registration in place while a child being
    // spawned right now holds a copy of the descriptor table, and the reaped pidfd would then
    // report EPOLLHUP forever.
    epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, e.pidfd, nullptr);
    close(e.pidfd);
    by_key.erase(ProcessKey{e.job, e.generation, e.step, e.task});
    entries.erase(it);
  }

  void Loop() {
    epoll_event events[64];
    std::vector<ProcessExit> exits;
    while (true) {
      timespec timeout{};
      timespec* timeout_ptr = nullptr;
      {
        std::lock_guard lock(mu);
        if (stopping) return;
        MonoTime now = clock.MonotonicNow();
        MonoTime next = RunDeadlines(now);
        planned_wake = next;
        if (next != kNever) {
          auto us = std::max<int64_t>(0, (next - now).count());
          timeout.tv_sec = us / 1'000'000;
          timeout.tv_nsec = (us % 1'000'000) * 1000;
          timeout_ptr = &timeout;
        }
      }
      int n = epoll_pwait2(epoll_fd.get(), events, std::size(events), timeout_ptr, nullptr);
      if (n < 0) {
        if (errno != EINTR) {
          CORRAL_LOG(Error) << "process supervisor: epoll: " << ErrnoText(errno);
        }
        n = 0;
      }
      exits.clear();
      {
        std::lock_guard lock(mu);
        planned_wake = MonoTime::min();
        for (int i = 0; i < n; ++i) {
          if (events[i].data.u64 == kWakeKey) {
            uint64_t count;
            [[maybe_unused]] ssize_t r = read(wake_fd.get(), &count, sizeof count);
          } else {
            Reap(events[i].data.u64, &exits);
          }
        }
      }
      for (const ProcessExit& x : exits) on_exit(x);
    }
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
  Result<int> SpawnAsUser(const ProcessSpec& spec, const Credentials& creds, int stdin_fd,
                          int out_fd, int err_fd) {
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
};

ProcessSupervisor::ProcessSupervisor(const Clock& clock, ExitCallback on_exit)
    : impl_(std::make_unique<Impl>(clock, std::move(on_exit))) {
  impl_->epoll_fd = Fd(epoll_create1(EPOLL_CLOEXEC));
  impl_->wake_fd = Fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  CORRAL_CHECK(impl_->epoll_fd.get() >= 0 && impl_->wake_fd.get() >= 0)
      << "process supervisor: epoll/eventfd: " << ErrnoText(errno);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeKey;
  CORRAL_CHECK(epoll_ctl(impl_->epoll_fd.get(), EPOLL_CTL_ADD, impl_->wake_fd.get(), &ev) == 0)
      << "process supervisor: epoll_ctl: " << ErrnoText(errno);
  impl_->thread = std::thread([this] { impl_->Loop(); });
}

ProcessSupervisor::~ProcessSupervisor() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->Wake();
  impl_->thread.join();
  // The thread is gone: kill and reap what is left, without reporting it.
  for (auto& [serial, e] : impl_->entries) impl_->SignalGroup(e, SIGKILL);
  for (auto& [serial, e] : impl_->entries) {
    siginfo_t info{};
    while (syscall(SYS_waitid, P_PIDFD, e.pidfd, &info, WEXITED, nullptr) < 0 && errno == EINTR) {
    }
    close(e.pidfd);
  }
}

Status ProcessSupervisor::Launch(const ProcessSpec& spec) {
  Impl& im = *impl_;
  const std::string prefix = ProcessPrefix(spec.job, spec.step, spec.task);
  const ProcessKey key{spec.job, spec.generation, spec.step, spec.task};
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return InvalidArgument(prefix + ": no program to run");
  }
  {
    std::lock_guard lock(im.mu);
    if (im.stopping) return Unavailable(prefix + ": the process supervisor is stopping");
    if (im.by_key.contains(key) || im.launching.contains(key)) {
      return MakeError(ErrorCode::kAlreadyExists, prefix + ": runs already");
    }
    im.launching.insert(key);
  }
  // Releases the reservation on every path that does not end in a running job.
  struct Unreserve {
    Impl& im;
    ProcessKey key;
    bool active = true;
    ~Unreserve() {
      if (!active) return;
      std::lock_guard lock(im.mu);
      im.launching.erase(key);
    }
  } unreserve{im, key};

  Fd cwd(open(spec.cwd.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (cwd.get() < 0) {
    return InvalidArgument(prefix + ": working directory " + Quoted(spec.cwd) + ": " +
                           ErrnoText(errno));
  }
  // Switch credentials only when they differ from the agent's own, so that a non-root agent
  // (`corral dev`) can run its own user's jobs through the fast path.
  bool as_root = geteuid() == 0;
  bool switch_ids = (spec.uid && (as_root || *spec.uid != geteuid())) ||
                    (spec.gid && (as_root || *spec.gid != getegid()));
  Credentials creds;
  if (switch_ids) {
    CORRAL_ASSIGN_OR_RETURN(creds, ResolveCredentials(spec));
  }
  CORRAL_ASSIGN_OR_RETURN(auto outputs, im.OpenOutputs(spec, cwd.get(), creds));
  if (spec.run_as_agent) {
    creds = Credentials();
    switch_ids = false;
  }
  Fd devnull(open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (devnull.get() < 0) return Internal(prefix + ": /dev/null: " + ErrnoText(errno));
  for (Fd* fd : {&devnull, &outputs.first, &outputs.second}) {
    if (Status s = KeepAbove2(*fd); !s.has_value()) return Annotate(s.error(), prefix);
  }

  // The clone path also joins cgroups and binds CPUs before exec, which posix_spawn cannot.
  Result<int> pid =
      switch_ids || !spec.cgroup_procs.empty() || !spec.cpus.empty()
          ? im.SpawnAsUser(spec, creds, devnull.get(), outputs.first.get(), outputs.second.get())
          : im.SpawnPlain(spec, devnull.get(), outputs.first.get(), outputs.second.get());
  if (!pid.has_value()) return tl::unexpected(pid.error());
  Timestamp start_time = im.clock.Now();
  MonoTime start_mono = im.clock.MonotonicNow();

  // Undoes a start that cannot be watched: nothing may run unreported.
  auto abandon = [&](int pidfd, const char* what, int err) -> Status {
    kill(-*pid, SIGKILL);
    int status;
    while (waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (pidfd >= 0) close(pidfd);
    return MakeError(err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOSPC
                         ? ErrorCode::kResourceExhausted
                         : ErrorCode::kInternal,
                     prefix + ": " + what + ": " + ErrnoText(err));
  };
  // A raw system call: glibc 2.36's <sys/pidfd.h> lacks `extern "C"` and does not link from C++.
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, *pid, 0));
  if (pidfd < 0) return abandon(-1, "pidfd_open", errno);

  Impl::Entry e{.deadlines = ProcessDeadlines(spec.time_limit, spec.limit_start, spec.kill_grace,
                                              spec.warn, start_time, start_mono)};
  e.job = spec.job;
  e.generation = spec.generation;
  e.step = spec.step;
  e.task = spec.task;
  e.pid = *pid;
  e.pidfd = pidfd;
  e.start_time = start_time;

  std::unique_lock lock(im.mu);
  uint64_t serial = im.next_serial++;
  // Registered under the lock: an exit seen at once waits for the entry, since the thread
  // reaps under the same lock.
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = serial;
  if (epoll_ctl(im.epoll_fd.get(), EPOLL_CTL_ADD, pidfd, &ev) != 0) {
    int err = errno;
    lock.unlock();
    return abandon(pidfd, "epoll_ctl", err);  // `unreserve` frees the job id
  }
  unreserve.active = false;
  im.launching.erase(key);
  MonoTime deadline = e.deadlines.Next();
  im.by_key.emplace(key, serial);
  im.entries.emplace(serial, e);
  if (deadline != kNever) im.WakeIfEarlier(deadline);
  return {};
}

// Signal/Cancel of a whole job: every step (kAllSteps), the batch script included.
Status ProcessSupervisor::Signal(JobId job, Generation generation, int signal) {
  return SignalStep(job, generation, kAllSteps, signal);
}

Status ProcessSupervisor::Cancel(JobId job, Generation generation) {
  return CancelStep(job, generation, kAllSteps);
}

Status ProcessSupervisor::SignalStep(JobId job, Generation generation, uint32_t step, int signal) {
  Impl& im = *impl_;
  std::lock_guard lock(im.mu);
  bool any = false;
  for (auto it = im.by_key.lower_bound(ProcessKey{job, generation, 0, 0});
       it != im.by_key.end() && std::get<0>(it->first) == job &&
       std::get<1>(it->first) == generation;
       ++it) {
    const Impl::Entry& e = im.entries.at(it->second);
    if (step != kAllSteps && e.step != step) continue;
    any = true;
    if (kill(-e.pid, signal) < 0) {
      int err = errno;
      if (err == EINVAL) {
        return InvalidArgument(JobPrefix(job) + ": invalid signal " + std::to_string(signal));
      }
      if (err != ESRCH) return Internal(JobPrefix(job) + ": kill: " + ErrnoText(err));
    }
  }
  if (!any) return NotFound(JobPrefix(job) + "." + generation.ToString() + ": no such process");
  return {};
}

Status ProcessSupervisor::CancelStep(JobId job, Generation generation, uint32_t step) {
  Impl& im = *impl_;
  std::lock_guard lock(im.mu);
  bool any = false;
  MonoTime now = im.clock.MonotonicNow();
  for (auto it = im.by_key.lower_bound(ProcessKey{job, generation, 0, 0});
       it != im.by_key.end() && std::get<0>(it->first) == job &&
       std::get<1>(it->first) == generation;
       ++it) {
    Impl::Entry& e = im.entries.at(it->second);
    if (step != kAllSteps && e.step != step) continue;
    any = true;
    if (!e.deadlines.Cancel(now)) continue;  // cancelling again does nothing
    im.Terminate(e);
    im.WakeIfEarlier(e.deadlines.Next());
  }
  if (!any) return NotFound(JobPrefix(job) + "." + generation.ToString() + ": no such process");
  return {};
}

Status ProcessSupervisor::SetTimeLimit(JobId job, Generation generation, Duration limit) {
  if (limit.count() <= 0) {
    return InvalidArgument(JobPrefix(job) + ": time limit must be positive");
  }
  Impl& im = *impl_;
  std::lock_guard lock(im.mu);
  bool any = false;
  MonoTime now = im.clock.MonotonicNow();
  for (auto it = im.by_key.lower_bound(ProcessKey{job, generation, 0, 0});
       it != im.by_key.end() && std::get<0>(it->first) == job &&
       std::get<1>(it->first) == generation;
       ++it) {
    Impl::Entry& e = im.entries.at(it->second);
    any = true;
    e.deadlines.SetLimit(limit, now);  // left as they are when already terminating
  }
  if (!any) return NotFound(JobPrefix(job) + "." + generation.ToString() + ": no such process");
  im.planned_wake = MonoTime::min();
  im.Wake();
  return {};
}

std::vector<RunningProcess> ProcessSupervisor::Running() const {
  Impl& im = *impl_;
  std::lock_guard lock(im.mu);
  std::vector<RunningProcess> out;
  out.reserve(im.by_key.size());
  for (const auto& [key, serial] : im.by_key) {
    const Impl::Entry& e = im.entries.at(serial);
    out.push_back(RunningProcess{e.job, e.generation, e.pid, e.start_time, e.step, e.task});
  }
  return out;
}

}  // namespace corral::agent
