// The client side of a terminal step (`srun --pty`, `corral run --pty`; docs/slurm.md,
// "srun --pty"): this terminal in raw mode, what is typed and the window's size queued for
// the agent that runs task 0 in a pseudo-terminal (it long-polls `GET /pty` on the step's I/O
// server, api/step_io.h), and the task's output written as it comes.
//
// Ctrl-C, Ctrl-Z and Ctrl-\ are bytes like any other here (raw mode): the remote terminal
// turns them into signals for the task's foreground process group, as on a local terminal.
//
// Thread-safety: PtyInput is thread-safe; RawTerminal and StdinPump belong to one thread.
#pragma once

#include <termios.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "api/http.h"

namespace corral::cli {

// The size of the terminal on `fd` ({rows, cols}), or nullopt when it is none.
std::optional<std::pair<uint16_t, uint16_t>> TerminalSize(int fd);

// The terminal on `fd` in raw mode while the object lives. Its settings come back when the
// object goes, at exit(), and on a fatal signal (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL; the
// signal then does what it would have done). Only one at a time.
class RawTerminal {
 public:
  // Returns null (changing nothing) when `fd` is not a terminal or cannot be set.
  static std::unique_ptr<RawTerminal> Enter(int fd);
  ~RawTerminal();
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;
  // Puts the settings back now (idempotent).
  void Restore();

 private:
  RawTerminal() = default;
};

// The input stream of the terminal (api/step_io.h frames), served to the agent.
class PtyInput {
 public:
  // What is typed, in frames of at most kPtyMaxFrameData bytes. Waits while more than 1 MiB
  // is queued that the agent has not taken (until Close).
  void Type(std::string_view bytes);
  void Resize(uint16_t rows, uint16_t cols);
  // Pending and later polls answer 410 at once (the step is over).
  void Close();

  // GET /pty?task=0&from=N: the frames from byte N of the stream (which acknowledges what came
  // before), at most kPtyMaxAnswer bytes of them; waits up to 10 s for some. 400 for a `from`
  // outside what is queued or another task than 0.
  api::HttpResponse Handle(const api::HttpRequest& req);

 private:
  void Append(const std::string& frame, std::unique_lock<std::mutex>& lock);

  std::mutex mu_;
  std::condition_variable cv_;
  std::string queued_;  // the stream from byte `base_` on
  uint64_t base_ = 0;
  bool closed_ = false;
};

// Copies what is read from `fd` into `input` on a thread, until end of file or Stop.
class StdinPump {
 public:
  StdinPump(int fd, PtyInput* input);
  ~StdinPump();  // Stop
  StdinPump(const StdinPump&) = delete;
  StdinPump& operator=(const StdinPump&) = delete;
  void Stop();

 private:
  int wake_[2] = {-1, -1};
  std::thread thread_;
};

}  // namespace corral::cli
