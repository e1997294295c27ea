#include "agent/exec/process_supervisor.h"

#include <fcntl.h>
#include <signal.h>
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "agent/exec/internal/spawn.h"
#include "agent/exec/process_deadlines.h"
#include "core/check.h"
#include "core/log.h"

namespace corral::agent {
namespace {

using spawn::Credentials;
using spawn::ErrnoText;
using spawn::Fd;
using spawn::JobPrefix;
using spawn::Quoted;

constexpr MonoTime kNever = ProcessDeadlines::kNever;
// epoll key of the wakeup eventfd; jobs use serials from 1.
constexpr uint64_t kWakeKey = 0;

std::string ProcessPrefix(JobId job, uint32_t step, uint32_t task) {
  if (step == kBatchStepId) return JobPrefix(job);
  return JobPrefix(job) + " step " + std::to_string(step) + " task " + std::to_string(task);
}

// A process's key: (job, generation, step, task). Runs of one job (a requeued job started
// again while its previous run is still being killed) are kept apart.
using ProcessKey = std::tuple<JobId, Generation, uint32_t, uint32_t>;

tl::unexpected<Error> NoSuchProcess(JobId job, Generation generation) {
  return NotFound(JobPrefix(job) + "." + generation.ToString() + ": no such process");
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

  // The processes of run (`job`, `generation`) of step `step` (kAllSteps: every one), in
  // key order. Requires mu.
  std::vector<Entry*> Processes(JobId job, Generation generation, uint32_t step) {
    std::vector<Entry*> out;
    for (auto it = by_key.lower_bound(ProcessKey{job, generation, 0, 0});
         it != by_key.end() && std::get<0>(it->first) == job &&
         std::get<1>(it->first) == generation;
         ++it) {
      Entry& e = entries.at(it->second);
      if (step == kAllSteps || e.step == step) out.push_back(&e);
    }
    return out;
  }

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

  // Switch credentials only when they differ from the agent's own, so that a non-root agent
  // (`corral dev`) can run its own user's jobs through the fast path.
  bool as_root = geteuid() == 0;
  bool switch_ids = (spec.uid && (as_root || *spec.uid != geteuid())) ||
                    (spec.gid && (as_root || *spec.gid != getegid()));
  Credentials creds;
  if (switch_ids) {
    CORRAL_ASSIGN_OR_RETURN(creds, spawn::ResolveCredentials(spec));
  }
  // Opened as the user, so that output files are never created in a directory the user
  // could not reach by its path.
  Fd cwd(spawn::OpenAs(spec.cwd, O_PATH | O_DIRECTORY | O_CLOEXEC, creds));
  if (cwd.get() < 0) {
    return InvalidArgument(prefix + ": working directory " + Quoted(spec.cwd) + ": " +
                           ErrnoText(-cwd.get()));
  }
  CORRAL_ASSIGN_OR_RETURN(auto outputs, spawn::OpenOutputs(spec, cwd.get(), creds));
  if (spec.run_as_agent) {
    creds = Credentials();
    switch_ids = false;
  }
  Fd devnull(open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (devnull.get() < 0) return Internal(prefix + ": /dev/null: " + ErrnoText(errno));
  for (Fd* fd : {&devnull, &outputs.first, &outputs.second}) {
    if (Status s = spawn::KeepAbove2(*fd); !s.has_value()) return Annotate(s.error(), prefix);
  }

  // The clone path also joins cgroups, binds CPUs and takes a controlling terminal before
  // exec, which posix_spawn cannot.
  Result<int> pid =
      switch_ids || !spec.cgroup_procs.empty() || !spec.cpus.empty() || !spec.tty_path.empty()
          ? spawn::SpawnAsUser(spec, creds, devnull.get(), outputs.first.get(),
                               outputs.second.get())
          : spawn::SpawnPlain(spec, devnull.get(), outputs.first.get(), outputs.second.get());
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
  std::vector<Impl::Entry*> processes = im.Processes(job, generation, step);
  for (const Impl::Entry* e : processes) {
    if (kill(-e->pid, signal) < 0) {
      int err = errno;
      if (err == EINVAL) {
        return InvalidArgument(JobPrefix(job) + ": invalid signal " + std::to_string(signal));
      }
      if (err != ESRCH) return Internal(JobPrefix(job) + ": kill: " + ErrnoText(err));
    }
  }
  if (processes.empty()) return NoSuchProcess(job, generation);
  return {};
}

Status ProcessSupervisor::CancelStep(JobId job, Generation generation, uint32_t step) {
  Impl& im = *impl_;
  std::lock_guard lock(im.mu);
  MonoTime now = im.clock.MonotonicNow();
  std::vector<Impl::Entry*> processes = im.Processes(job, generation, step);
  for (Impl::Entry* e : processes) {
    if (!e->deadlines.Cancel(now)) continue;  // cancelling again does nothing
    im.Terminate(*e);
    im.WakeIfEarlier(e->deadlines.Next());
  }
  if (processes.empty()) return NoSuchProcess(job, generation);
  return {};
}

Status ProcessSupervisor::SetTimeLimit(JobId job, Generation generation, Duration limit) {
  if (limit.count() <= 0) {
    return InvalidArgument(JobPrefix(job) + ": time limit must be positive");
  }
  Impl& im = *impl_;
  std::lock_guard lock(im.mu);
  MonoTime now = im.clock.MonotonicNow();
  std::vector<Impl::Entry*> processes = im.Processes(job, generation, kAllSteps);
  for (Impl::Entry* e : processes) {
    e->deadlines.SetLimit(limit, now);  // left as they are when already terminating
  }
  if (processes.empty()) return NoSuchProcess(job, generation);
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
