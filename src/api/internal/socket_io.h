// Socket I/O with deadlines for the HTTP transport: non-blocking sockets, poll() waits that
// end at a deadline (or when a stop eventfd becomes readable), listening and connecting.
// The client uses the blocking-with-deadline helpers; the server's event loop uses only
// `Listen`, `SetNoDelay` and `PeerName`.
//
// Thread-safe: pure functions over the descriptors they are given.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <sys/socket.h>

#include "core/result.h"
#include "core/time.h"

namespace corral::api::internal {

MonoTime Now();
// `Now() + d`, saturating instead of overflowing for huge or negative durations.
MonoTime DeadlineAfter(std::chrono::milliseconds d);
// Milliseconds from now to `deadline` for poll()/epoll_wait(): -1 for MonoTime::max().
int PollTimeoutMs(MonoTime deadline);

enum class Io { kOk, kEof, kTimeout, kStopped, kPeerSpoke, kError };

// Waits until `fd` has one of `events`, `stop_fd` (if >= 0) is readable, or the deadline.
Io Wait(int fd, short events, int stop_fd, MonoTime deadline);

constexpr size_t kReadChunk = 16 * 1024;

// Appends what arrives next (at most `max` bytes, waiting if none is there yet) to `buf`.
Io ReadMore(int fd, std::string* buf, size_t max, int stop_fd, MonoTime deadline);

// Sends `a` then `b` in one gathered write where the socket allows. With `watch_input`, stops
// early with kPeerSpoke when the peer sends something (a server answering before it has read
// the whole request, or closing).
Io WriteAll(int fd, std::string_view a, std::string_view b, MonoTime deadline,
            bool watch_input = false);

void SetNoDelay(int fd);

// "127.0.0.1:53412", "[::1]:8080", or "unix".
std::string PeerName(const sockaddr_storage& addr);
// The address without the port ("127.0.0.1", "::1"): what per-peer limits count.
std::string PeerHost(const sockaddr_storage& addr);

// A non-blocking listening socket on `host:port` (port 0: any free port). Returns the socket
// and the bound port, or kUnavailable naming the address.
struct Listener {
  int fd = -1;
  uint16_t port = 0;
};
Result<Listener> Listen(const std::string& host, uint16_t port);

// A connected non-blocking TCP socket to `host:port`. `what` names the target in errors.
// Returns kUnavailable when it cannot resolve or connect (the connect timeout included),
// kDeadlineExceeded when `deadline` (earlier than the connect timeout) passes.
Result<int> Connect(const std::string& host, const std::string& port, const std::string& what,
                    std::chrono::milliseconds connect_timeout, MonoTime deadline);

}  // namespace corral::api::internal
