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
// Thread-safety: AddTask and Start from one thread; done() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
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
  // Starts forwarding. Requires: called once.
  void Start();
  // Every stream has reached end of file and been reported.
  bool done() const { return done_.load(); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> done_{false};
};

}  // namespace corral::agent
