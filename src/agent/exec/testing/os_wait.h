// Waiting on this machine's processes in tests, on conditions with deadlines and never by
// sleeping: for a process to end (its pidfd), and for a line a job's script writes (a FIFO).
//
// Test-only. Thread-compatible.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include <sys/stat.h>
#include <sys/syscall.h>

#include "core/clock.h"

namespace corral::testing {

// Whether `pid` is gone (or a zombie, which no longer runs and which its parent or init
// reaps), now.
inline bool ProcessGone(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

// Milliseconds from now to `deadline` (SystemClock's monotonic time), at least 0.
inline int MillisUntil(MonoTime deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - SystemClock::Get().MonotonicNow());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 1'000'000));
}

// Waits until process `pid` (any process, not only a child) has ended or `timeout` passes;
// returns whether it ended. Its pidfd becomes readable when it exits.
inline bool WaitGone(int pid, Duration timeout = Seconds(20)) {
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;  // gone already
  MonoTime deadline = SystemClock::Get().MonotonicNow() + timeout;
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  int n;
  while ((n = poll(&p, 1, MillisUntil(deadline))) < 0 && errno == EINTR) {
  }
  close(fd);
  return n > 0 || ProcessGone(pid);
}

// A FIFO at `path` that a job's script writes lines to (`echo ready > PATH`), read by the test
// as they come. The test holds a write end too, so that a script closing its own never reads
// as the end of the stream. Mode 0666: a job running as another user may write it.
class LineFifo {
 public:
  explicit LineFifo(std::string path) : path_(std::move(path)) {
    if (mkfifo(path_.c_str(), 0666) != 0 || chmod(path_.c_str(), 0666) != 0) std::abort();
    read_ = open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    write_ = open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (read_ < 0 || write_ < 0) std::abort();
  }
  ~LineFifo() {
    close(read_);
    close(write_);
    unlink(path_.c_str());
  }
  LineFifo(const LineFifo&) = delete;
  LineFifo& operator=(const LineFifo&) = delete;

  // The next line written (without its newline), or nullopt when none comes within `timeout`.
  std::optional<std::string> Next(Duration timeout = Seconds(20)) {
    MonoTime deadline = SystemClock::Get().MonotonicNow() + timeout;
    while (true) {
      if (size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      pollfd p{.fd = read_, .events = POLLIN, .revents = 0};
      int n = poll(&p, 1, MillisUntil(deadline));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      char buf[256];
      ssize_t got = read(read_, buf, sizeof buf);
      if (got > 0) buffer_.append(buf, static_cast<size_t>(got));
    }
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int read_ = -1;
  int write_ = -1;
  std::string buffer_;
};

}  // namespace corral::testing
