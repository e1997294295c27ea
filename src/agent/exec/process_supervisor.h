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
// them and on the deadlines (`ProcessDeadlines`, at the times of the injected `Clock`).
//
// Requires: SIGCHLD is not set to SIG_IGN in the agent (children would be reaped by the
// kernel), and nothing else in the process waits for any child (waitpid(-1)).
// Limits: a process that leaves the job's process group (setsid, setpgid) escapes the group
// signals; containing it is the cgroup's job.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "agent/exec/process.h"
#include "core/clock.h"
#include "core/result.h"

namespace corral::agent {

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
