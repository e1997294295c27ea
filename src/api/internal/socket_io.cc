#include "api/internal/socket_io.h"

#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/uio.h>

#include "core/clock.h"

namespace corral::api::internal {

MonoTime Now() { return SystemClock::Get().MonotonicNow(); }

// `Now() + d`, saturating instead of overflowing for huge or negative durations.
MonoTime DeadlineAfter(std::chrono::milliseconds d) {
  MonoTime now = Now();
  if (d <= std::chrono::milliseconds::zero()) return now;
  if (d >= std::chrono::duration_cast<std::chrono::milliseconds>(MonoTime::max() - now)) {
    return MonoTime::max();
  }
  return now + std::chrono::duration_cast<Duration>(d);
}

int PollTimeoutMs(MonoTime deadline) {
  if (deadline == MonoTime::max()) return -1;
  Duration left = deadline - Now();
  if (left <= Duration::zero()) return 0;
  int64_t ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
}

Io Wait(int fd, short events, int stop_fd, MonoTime deadline) {
  pollfd p[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
  nfds_t n = stop_fd >= 0 ? 2 : 1;
  while (true) {
    int rc = poll(p, n, PollTimeoutMs(deadline));
    if (rc < 0) {
      if (errno == EINTR) continue;
      return Io::kError;
    }
    if (n == 2 && p[1].revents != 0) return Io::kStopped;
    if (rc == 0) return Io::kTimeout;
    return Io::kOk;  // POLLERR/POLLHUP included: the next call on `fd` reports them.
  }
}

// Appends what arrives next (at most `max` bytes, waiting if none is there yet) to `buf`.
Io ReadMore(int fd, std::string* buf, size_t max, int stop_fd, MonoTime deadline) {
  char tmp[kReadChunk];
  size_t want = std::min(max, sizeof tmp);
  if (want == 0) want = 1;
  while (true) {
    ssize_t n = recv(fd, tmp, want, 0);
    if (n > 0) {
      buf->append(tmp, static_cast<size_t>(n));
      return Io::kOk;
    }
    if (n == 0) return Io::kEof;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return Io::kError;
    Io w = Wait(fd, POLLIN, stop_fd, deadline);
    if (w != Io::kOk) return w;
  }
}

// Sends `a` then `b` in one gathered write where the socket allows. With `watch_input`, stops
// early with kPeerSpoke when the peer sends something (a server answering before it has read
// the whole request, or closing).
Io WriteAll(int fd, std::string_view a, std::string_view b, MonoTime deadline, bool watch_input) {
  while (!a.empty() || !b.empty()) {
    iovec iov[2];
    int n_iov = 0;
    if (!a.empty()) iov[n_iov++] = {const_cast<char*>(a.data()), a.size()};
    if (!b.empty()) iov[n_iov++] = {const_cast<char*>(b.data()), b.size()};
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n_iov);
    ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n >= 0) {
      size_t sent = static_cast<size_t>(n);
      size_t from_a = std::min(sent, a.size());
      a.remove_prefix(from_a);
      b.remove_prefix(std::min(sent - from_a, b.size()));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return Io::kError;
    pollfd p{fd, static_cast<short>(POLLOUT | (watch_input ? POLLIN : 0)), 0};
    int rc;
    do {
      rc = poll(&p, 1, PollTimeoutMs(deadline));
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) return Io::kError;
    if (rc == 0) return Io::kTimeout;
    if (watch_input && (p.revents & POLLIN) != 0) return Io::kPeerSpoke;
  }
  return Io::kOk;
}

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

std::string PeerName(const sockaddr_storage& addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    port = ntohs(in6->sin6_port);
    return "[" + std::string(host) + "]:" + std::to_string(port);
  }
  return "unix";
}

std::string PeerHost(const sockaddr_storage& addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (addr.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr, host, sizeof host);
  } else if (addr.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr, host,
              sizeof host);
  } else {
    return "unix";
  }
  return host;
}

Result<Listener> Listen(const std::string& host, uint16_t port) {
  std::string where = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string port_str = std::to_string(port);
  int gai = getaddrinfo(host.empty() ? nullptr : host.c_str(), port_str.c_str(), &hints, &res);
  if (gai != 0) {
    return Unavailable("cannot listen on " + where + ": " + gai_strerror(gai));
  }
  int err = 0;
  Listener l;
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
      l.fd = fd;
      break;
    }
    err = errno;
    close(fd);
  }
  freeaddrinfo(res);
  if (l.fd < 0) return Unavailable("cannot listen on " + where + ": " + std::strerror(err));
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  getsockname(l.fd, reinterpret_cast<sockaddr*>(&addr), &len);
  l.port = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return l;
}

Result<int> Connect(const std::string& host, const std::string& port, const std::string& what,
                    std::chrono::milliseconds connect_timeout, MonoTime deadline) {
  MonoTime connect_deadline = std::min(deadline, DeadlineAfter(connect_timeout));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  int gai = getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
  if (gai != 0) {
    return Unavailable(what + ": cannot resolve \"" + host + "\": " + gai_strerror(gai));
  }
  int err = ECONNREFUSED;
  bool timed_out = false;
  int fd = -1;
  for (addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
    int s = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (s < 0) {
      err = errno;
      continue;
    }
    SetNoDelay(s);
    int rc;
    do {
      rc = connect(s, ai->ai_addr, ai->ai_addrlen);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0 && errno == EINPROGRESS) {
      Io io = Wait(s, POLLOUT, -1, connect_deadline);
      if (io == Io::kTimeout) {
        timed_out = true;
        close(s);
        break;
      }
      int so_error = 0;
      socklen_t len = sizeof so_error;
      getsockopt(s, SOL_SOCKET, SO_ERROR, &so_error, &len);
      rc = so_error == 0 ? 0 : -1;
      errno = so_error;
    }
    if (rc == 0) {
      fd = s;
    } else {
      err = errno;
      close(s);
    }
  }
  freeaddrinfo(res);
  if (fd >= 0) return fd;
  if (timed_out) {
    if (connect_deadline >= deadline) {
      return MakeError(ErrorCode::kDeadlineExceeded, what + ": timed out connecting");
    }
    return Unavailable(what + ": cannot connect: timed out after " +
                       std::to_string(connect_timeout.count()) + " ms");
  }
  return Unavailable(what + ": cannot connect: " + std::strerror(err));
}

}  // namespace corral::api::internal
