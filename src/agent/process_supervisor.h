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
#include "core/time.h"

namespace corral::agent {

struct ProcessSpec {
  JobId job;
  Generation generation;
  std::vector<std::string> argv;      // argv[0] is the program (an absolute path)
  std::vector<std::string> env;       // the complete environment, "NAME=value"
  std::string cwd;                    // must exist
  std::string stdout_path;            // already expanded; created (not its directory)
  std::string stderr_path;            // "" = the same file as stdout
  bool append = false;                // open outputs with O_APPEND instead of O_TRUNC
  std::optional<uint32_t> uid;        // run as this user (the agent must be root)
  std::optional<uint32_t> gid;
  Duration time_limit = kUnlimited;   // measured from the start
  Duration kill_grace = Seconds(30);  // between SIGTERM and SIGKILL
  SignalSpec warn;                    // sent `warn.before` the time limit
};

struct ProcessExit {
  JobId job;
  Generation generation;
  int32_t exit_code = 0;              // WEXITSTATUS, or 0 when killed by a signal
  int32_t signal = 0;                 // WTERMSIG, 0 when it exited
  bool timed_out = false;
  bool cancelled = false;
  Timestamp start_time{};
  Timestamp end_time{};
  double cpu_seconds = 0;             // user + system of the whole group that was waited for
  uint64_t max_rss_mb = 0;
};

struct RunningProcess {
  JobId job;
  Generation generation;
  int pid = 0;
  Timestamp start_time{};
};

class ProcessSupervisor {
 public:
  using ExitCallback = std::function<void(const ProcessExit&)>;

  ProcessSupervisor(const Clock& clock, ExitCallback on_exit);
  ~ProcessSupervisor();  // kills every process it still runs (SIGKILL) and waits for them
  ProcessSupervisor(const ProcessSupervisor&) = delete;
  ProcessSupervisor& operator=(const ProcessSupervisor&) = delete;

  // Starts the process; returns once it runs.
  // Returns kAlreadyExists if this job runs already (any generation), kInvalidArgument naming
  // the path when the working directory does not exist or an output file cannot be opened,
  // kInternal with errno's text when the process cannot be started.
  Status Launch(const ProcessSpec& spec);

  // Sends `signal` to the job's process group. Returns kNotFound if no process of
  // `job`/`generation` runs.
  Status Signal(JobId job, Generation generation, int signal);

  // SIGCONT + SIGTERM to the group now, SIGKILL after the grace period; the exit is reported
  // with `cancelled = true`. Returns kNotFound if no such process runs.
  Status Cancel(JobId job, Generation generation);

  std::vector<RunningProcess> Running() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace corral::agent
