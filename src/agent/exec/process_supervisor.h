// ProcessSupervisor: starts job processes and watches them until they end.
//
// Each job runs as the leader of its own session and process group, with its environment,
// working directory and output files. The supervisor enforces the time limit (the warning
// signal `before` the limit if asked, then SIGTERM to the whole group, then SIGKILL after a
// grace period), delivers signals and cancels to the whole group, kills what is left of the
// group when the leader exits, and reports each exit exactly once through the callback.
//
// Thread-safety: thread-safe. The callback runs on the supervisor's own thread; it must not
// call back into the supervisor synchronously in a way that waits for that thread.
//
// How: posix_spawn (POSIX_SPAWN_SETSID) when the credentials stay the agent's; otherwise
// clone(CLONE_VM | CLONE_VFORK) with setgroups, setgid, setuid, chdir and exec in the child,
// which reports a failing step by name. One pidfd per job and one thread that waits on all of
// them and on the deadlines (read from the injected `Clock`).
//
// Requires: SIGCHLD is not set to SIG_IGN in the agent (children would be reaped by the
// kernel), and nothing else in the process waits for any child (waitpid(-1)).
// Limits: a process that leaves the job's process group (setsid, setpgid) escapes the group
// signals; containing it is the cgroup's job.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/ids.h"
#include "core/job.h"
#include "core/result.h"
#include "core/step.h"
#include "core/time.h"

namespace corral::agent {

// A job's processes are keyed by (job, generation, step, task): its batch script is step
// `kBatchStepId` task 0 (the default); the tasks of a `corral run` step use their step id and
// rank. Runs of one job are apart: a requeued job may start again (a new generation) while
// its previous run is still being killed.
struct ProcessSpec {
  JobId job;
  Generation generation;
  uint32_t step = kBatchStepId;
  uint32_t task = 0;
  std::vector<std::string> argv;  // argv[0] is the program (an absolute path)
  std::vector<std::string> env;   // the complete environment, "NAME=value"
  std::string cwd;                // must exist
  // Output files are opened by the agent, with the job user's file-system identity when
  // `uid`/`gid` are set (so they are created owned by that user, and a path the user may not
  // write, a symlink to a root-only file say, is refused). A relative path is relative to
  // `cwd`.
  std::string stdout_path;  // expanded; created (not its directory); "" = /dev/null
  std::string stderr_path;  // "" (or stdout_path) = the same open file as stdout
  bool append = false;      // open outputs with O_APPEND instead of O_TRUNC
  // When >= 0, the process gets a copy of this descriptor as its stdout (stderr) instead of
  // opening the path (a pipe the agent forwards, say). The caller keeps and closes its own.
  int stdout_fd = -1;
  int stderr_fd = -1;  // -1 with `stdout_fd` set: the same as stdout
  // Run as this user (the agent must be root), with the supplementary groups of its passwd
  // entry. Without `gid`, the passwd entry's group. When they equal the agent's own ids and
  // the agent is not root, nothing is switched (`corral dev` runs its own user's jobs).
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
  Duration time_limit = kUnlimited;  // measured from `limit_start`
  // When the time limit counts from: the job's start for a step's tasks; the epoch (the
  // default) means the process's own start. A limit already over when the process starts
  // ends it at once (after 1 ms).
  Timestamp limit_start{};
  Duration kill_grace = Seconds(30);  // between SIGTERM and SIGKILL
  SignalSpec warn;                    // sent `warn.before` the time limit (to the group; to the
                                      // leader only when `warn.batch_only`). When that time is
                                      // already past at the start: sent at once if the limit
                                      // counts from the process's start, else not at all (a
                                      // step started after its job's warning time)
  // Isolation: the child writes itself into each of these cgroup.procs files and binds itself
  // to `cpus` before it executes anything, so that nothing of the job runs outside them (the
  // step that fails is named "cgroup" or "sched_setaffinity").
  std::vector<std::string> cgroup_procs;
  std::vector<uint32_t> cpus;
  // Open the output files as `uid`/`gid` but run the process with the agent's own ids (a
  // container runtime that switches to the job's user inside the container).
  bool run_as_agent = false;
};

struct ProcessExit {
  JobId job;
  Generation generation;
  uint32_t step = kBatchStepId;
  uint32_t task = 0;
  int32_t exit_code = 0;  // WEXITSTATUS, or 0 when killed by a signal; -1 when
                          // unknown (the child was reaped behind our back)
  int32_t signal = 0;     // WTERMSIG, 0 when it exited
  bool timed_out = false;
  bool cancelled = false;
  Timestamp start_time{};
  Timestamp end_time{};
  double cpu_seconds = 0;  // user + system of the whole group that was waited for
  uint64_t max_rss_mb = 0;
};

struct RunningProcess {
  JobId job;
  Generation generation;
  int pid = 0;
  Timestamp start_time{};
  uint32_t step = kBatchStepId;
  uint32_t task = 0;
};

class ProcessSupervisor {
 public:
  using ExitCallback = std::function<void(const ProcessExit&)>;

  ProcessSupervisor(const Clock& clock, ExitCallback on_exit);
  // Kills every process it still runs (SIGKILL to each group) and waits for them. These
  // exits are not reported: the callback's owner may be half destroyed by then.
  ~ProcessSupervisor();
  ProcessSupervisor(const ProcessSupervisor&) = delete;
  ProcessSupervisor& operator=(const ProcessSupervisor&) = delete;

  // Starts the process; returns once it runs.
  // Returns kAlreadyExists if this run's process of that step and task runs already (the
  // same job and generation), kInvalidArgument naming
  // the path when the working directory does not exist or an output file cannot be opened,
  // kInvalidArgument when `argv` is empty or `uid` has no passwd entry and no `gid` is given,
  // kPermissionDenied when ids must be switched and the agent is not root,
  // kResourceExhausted when no pidfd can be had (descriptor limit), kUnavailable while the
  // supervisor is being destroyed, kInternal with errno's text when the process cannot be
  // started (naming the step that failed in the child: setgroups, setgid, setuid, chdir,
  // execve). When Launch fails, nothing runs and nothing is reported.
  Status Launch(const ProcessSpec& spec);

  // Sends `signal` to the process group of each of the job's processes (its batch script and
  // its steps' tasks). Returns kNotFound if no process of `job`/`generation` runs,
  // kInvalidArgument for an invalid signal number.
  Status Signal(JobId job, Generation generation, int signal);

  // SIGCONT + SIGTERM to each of the job's process groups now, SIGKILL after the grace
  // period; the exits are reported with `cancelled = true`. Cancelling again does nothing.
  // Returns kNotFound if no such process runs.
  Status Cancel(JobId job, Generation generation);

  // Signal and Cancel of the tasks of one step only. Same errors.
  Status SignalStep(JobId job, Generation generation, uint32_t step, int signal);
  Status CancelStep(JobId job, Generation generation, uint32_t step);

  // Changes the time limit of each of the run's processes (its batch script and its steps'
  // tasks) to `limit`, counted from where each one's limit counted from at launch (see
  // `ProcessSpec::limit_start`), and moves its warning signal with it: a warning already sent
  // is not sent again unless the new limit puts its time back in the future; one whose time is
  // already past and that was not sent is sent now. A limit already over ends the processes
  // now (TERM, then KILL after the grace; reported `timed_out`). Processes already being
  // terminated (cancelled or timed out) are left as they are. The deadlines are looked at
  // again at once. Returns kNotFound if no process of `job`/`generation` runs,
  // kInvalidArgument for a limit that is not positive.
  Status SetTimeLimit(JobId job, Generation generation, Duration limit);

  // What runs (launched and not yet reported), in (job, generation, step, task) order.
  std::vector<RunningProcess> Running() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace corral::agent
