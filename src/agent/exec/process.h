// The process supervisor's value types: what to run (`ProcessSpec`), how it ended
// (`ProcessExit`) and what runs (`RunningProcess`). Apart from process_supervisor.h so that
// the agent's core can take exits as input without the supervisor's machinery.
//
// Value types; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/job.h"
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
  // A terminal (srun --pty): the process opens this pseudo-terminal slave (which the agent has
  // given to the job's user) after it has become that user, makes it its controlling terminal
  // (it leads a new session) and takes it as stdin, stdout and stderr, in place of the above.
  std::string tty_path;
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

}  // namespace corral::agent
