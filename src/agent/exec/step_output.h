// StepOutputForwarder: carries the stdout and stderr of a step's tasks on this node to the
// `corral run` that launched the step (as slurmstepd sends task output to srun).
//
// Each task writes into two pipes. One thread per forwarder reads them and sends each chunk
// as it comes, in order per stream, with
//   POST <io_url>/io?task=RANK&stream=out|err          body: the bytes (application/octet-stream)
// and, when a stream reaches end of file (the task and what it started are gone),
//   POST <io_url>/io?task=RANK&stream=out|err&eof=1    empty body
// over TLS 1.3 with a pre-shared key derived from the step's I/O secret `token`
// (api/step_io.h): the caller's server is the one that holds the secret, and the output is
// encrypted. When the caller cannot be reached (or is not who holds the secret) the output is
// read and dropped, so that tasks never block on a full pipe.
//
// A terminal task (srun --pty, AddPtyTask) has a pseudo-terminal instead of pipes: what the
// task writes to it goes out as its stdout (its stderr is at end of file from the start), and
// a second thread long-polls the caller for the terminal's input and window size
// (`GET <io_url>/pty?task=RANK&from=N`, api/step_io.h), writes the bytes to the terminal and
// sets its size, which the kernel announces to the task's foreground process group
// (SIGWINCH); Ctrl-C arrives as the byte 0x03, which the terminal turns into SIGINT for that
// group. The caller's bytes are hostile: frames are checked (api::DecodePtyFrames), answers are
// bounded (kPtyMaxAnswer), a full terminal never blocks the agent, and the input ends at the
// first bad frame or failed request.
//
// Thread-safety: AddTask, AddPtyTask and Start from one thread; done() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/result.h"

namespace corral::agent {

class StepOutputForwarder {
 public:
  StepOutputForwarder(std::string io_url, std::string token, std::string what);
  // Stops the thread and closes the pipes' read ends (what is still buffered is dropped).
  ~StepOutputForwarder();
  StepOutputForwarder(const StepOutputForwarder&) = delete;
  StepOutputForwarder& operator=(const StepOutputForwarder&) = delete;

  // Creates the pipes of task `rank` and returns their write ends {stdout, stderr} (close on
  // exec), which the caller hands to the task's process and then closes.
  // Returns kResourceExhausted when no pipe can be had. Requires: before Start.
  Result<std::pair<int, int>> AddTask(uint32_t rank);
  // A pseudo-terminal for task `rank` (at most one per forwarder): opened by the agent (root),
  // its slave end given to user `uid` (when set) with mode 0600, its window `rows` x `cols`
  // (clamped to 1..kPtyMaxDimension). Returns the slave's path, which the task's process opens
  // after it has become the job's user (ProcessSpec::tty_path), and a descriptor of the slave
  // that the caller closes once that process has started (until then the terminal is not hung
  // up). Returns kResourceExhausted when no terminal can be had, kInternal when it cannot be
  // given to the user, kFailedPrecondition for a second one. Requires: before Start.
  struct PtySlave {
    std::string path;
    int fd = -1;
  };
  Result<PtySlave> AddPtyTask(uint32_t rank, std::optional<uint32_t> uid, uint32_t rows,
                              uint32_t cols);
  // Starts forwarding. Requires: called once.
  void Start();
  // Every stream has reached end of file and been reported, and a terminal's input has ended.
  bool done() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> done_{false};
};

}  // namespace corral::agent
