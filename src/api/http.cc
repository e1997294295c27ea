#include "api/http.h"

#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <exception>
#include <list>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "api/http_status.h"
#include "core/check.h"
#include "core/clock.h"
#include "core/log.h"

namespace corral::api {
namespace {

// ---------------------------------------------------------------------------------------------
// Time and socket I/O. Every socket is non-blocking; waits go through poll() with a deadline
// and, on the server, the stop eventfd so that `Stop()` wakes every thread at once.

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

enum class Io { kOk, kEof, kTimeout, kStopped, kPeerSpoke, kError };

// Waits until `fd` has one of `events`, `stop_fd` (if >= 0) is readable, or the deadline.
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

constexpr size_t kReadChunk = 16 * 1024;

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
Io WriteAll(int fd, std::string_view a, std::string_view b, MonoTime deadline,
            bool watch_input = false) {
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

// ---------------------------------------------------------------------------------------------
// HTTP/1.x message syntax shared by the server and the client.

bool IsTchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::strchr("!#$%&'*+-.^_`|~", c) != nullptr && c != '\0';
}

bool IsToken(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsTchar); }

char ToLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ToLower(c);
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// True when the comma-separated header value contains `token` (case-insensitive).
bool HasToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view item = Trim(value.substr(0, comma));
    if (item.size() == token.size() && Lower(item) == token) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

// The last comma-separated item of a header value, lower-cased ("gzip, chunked" -> "chunked").
std::string LastToken(std::string_view value) {
  size_t comma = value.rfind(',');
  return Lower(Trim(comma == std::string_view::npos ? value : value.substr(comma + 1)));
}

// Finds the blank line that ends a message head (CRLF or bare LF line ends), scanning from
// `*scanned` so that a head arriving byte by byte is not rescanned from the start. Returns the
// offset just past the blank line, or npos.
size_t FindHeadEnd(std::string_view buf, size_t* scanned) {
  size_t i = *scanned;
  while (true) {
    size_t nl = buf.find('\n', i);
    if (nl == std::string_view::npos) {
      *scanned = buf.size();
      return std::string_view::npos;
    }
    if (nl + 1 < buf.size() && buf[nl + 1] == '\n') return nl + 2;
    if (nl + 2 < buf.size() && buf[nl + 1] == '\r' && buf[nl + 2] == '\n') return nl + 3;
    if (nl + 2 >= buf.size()) {
      // Not enough bytes yet to tell; rescan from this newline next time.
      *scanned = nl;
      return std::string_view::npos;
    }
    i = nl + 1;
  }
}

// Splits a head into lines, dropping the CR of CRLF.
std::vector<std::string_view> SplitLines(std::string_view head) {
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    head.remove_prefix(nl + 1);
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

bool HasControlChars(std::string_view s, bool allow_tab) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && !(allow_tab && c == '\t')) || u == 0x7f) return true;
  }
  return false;
}

// Parses "name: value" header lines into `headers` (names lower-cased; repeated headers
// joined with ", "). Returns an error message, or "" when the lines are well-formed.
std::string ParseHeaderLines(const std::vector<std::string_view>& lines, size_t first,
                             std::map<std::string, std::string>* headers) {
  for (size_t i = first; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (line.empty()) return "empty header line";
    if (line.front() == ' ' || line.front() == '\t') return "obsolete header line folding";
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return "header line without a colon";
    std::string_view name = line.substr(0, colon);
    if (!IsToken(name)) return "invalid header name";
    std::string_view value = Trim(line.substr(colon + 1));
    if (HasControlChars(value, /*allow_tab=*/true)) return "control character in a header value";
    std::string key = Lower(name);
    auto [it, inserted] = headers->try_emplace(key, value);
    if (!inserted) {
      if (key == "content-length") {
        if (it->second != value) return "conflicting Content-Length headers";
      } else {
        it->second.append(", ").append(value);
      }
    }
  }
  return "";
}

// Parses a Content-Length value: decimal digits only, no overflow.
std::optional<uint64_t> ParseContentLength(std::string_view s) {
  if (s.empty() || s.size() > 19) {
    if (s.size() > 19 &&
        std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return UINT64_MAX;  // absurdly large but syntactically valid: reported as too large
    }
    return std::nullopt;
  }
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

std::string JsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned>(c));
          out += b;
        } else {
          out += c;
        }
    }
  }
  return out;
}

// An answer produced by the transport itself (bad request, no route, ...), in the JSON error
// format of api/http_status.h.
HttpResponse TransportError(int status, ErrorCode code, std::string_view message) {
  HttpResponse r;
  r.status = status;
  r.body = "{\"error\":{\"code\":\"" + std::string(ErrorCodeName(code)) + "\",\"message\":\"" +
           JsonEscape(message) + "\"}}";
  return r;
}

bool BodyForbidden(int status) {
  return (status >= 100 && status < 200) || status == 204 || status == 304;
}

// Serialises a response head (the body is sent separately).
std::string ResponseHead(const HttpResponse& r, size_t body_size, bool keep_alive,
                         bool http10_keep_alive) {
  std::string h;
  h.reserve(128 + r.headers.size() * 32);
  h += "HTTP/1.1 ";
  h += std::to_string(r.status);
  h += ' ';
  h += HttpReasonPhrase(r.status);
  h += "\r\n";
  if (!BodyForbidden(r.status)) {
    if (!r.content_type.empty()) {
      h += "Content-Type: ";
      h += r.content_type;
      h += "\r\n";
    }
    h += "Content-Length: ";
    h += std::to_string(body_size);
    h += "\r\n";
  }
  if (!keep_alive) {
    h += "Connection: close\r\n";
  } else if (http10_keep_alive) {
    h += "Connection: keep-alive\r\n";
  }
  for (const auto& [name, value] : r.headers) {
    // Framing headers are ours; a header that would split the response is a handler bug.
    std::string lower = Lower(name);
    if (lower == "content-length" || lower == "transfer-encoding" || lower == "connection" ||
        lower == "content-type" || !IsToken(name) || HasControlChars(value, true)) {
      continue;
    }
    h += name;
    h += ": ";
    h += value;
    h += "\r\n";
  }
  h += "\r\n";
  return h;
}

// Splits a route pattern or a raw path into its segments ("/a/b" -> {"a", "b"}; "/" -> {""}).
std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> segments;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (true) {
    size_t slash = path.find('/');
    segments.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return segments;
}

void ParseQuery(std::string_view q, std::map<std::string, std::string>* out) {
  while (!q.empty()) {
    size_t amp = q.find('&');
    std::string_view item = q.substr(0, amp);
    if (!item.empty()) {
      size_t eq = item.find('=');
      std::string key = UrlDecode(item.substr(0, eq));
      std::string value = eq == std::string_view::npos ? "" : UrlDecode(item.substr(eq + 1));
      (*out)[std::move(key)] = std::move(value);
    }
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string UrlDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int hi = HexValue(s[i + 1]);
      int lo = HexValue(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      auto u = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

std::string HttpRequest::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

// =============================================================================================
// Server

namespace {

struct RouteEntry {
  std::string method;
  std::vector<std::string> segments;  // a literal, or a parameter name when is_param
  std::vector<bool> is_param;
  bool has_rest = false;
  std::string rest_name;
  HttpHandler handler;
};

// A parsed request head and what it says about framing.
struct RequestHead {
  HttpRequest request;
  std::string raw_path;  // still percent-encoded; routing splits it before decoding
  bool http10 = false;
  bool keep_alive = true;
  bool http10_keep_alive = false;
  uint64_t content_length = 0;
  bool expect_continue = false;
};

struct HeadError {
  int status;
  ErrorCode code;
  std::string message;
};

}  // namespace

namespace {
// The server whose connection the current thread serves, if any (for `Stop()` from a handler).
thread_local const void* tls_serving = nullptr;
}  // namespace

struct HttpServer::Impl {
  // One accepted connection and the thread serving it.
  struct Conn {
    int fd = -1;
    std::string peer;
    std::thread thread;
    bool done = false;  // guarded by mu; set by the thread just before it exits
  };

  HttpServerOptions options;
  std::vector<RouteEntry> routes;  // fixed once started
  bool started = false;
  int listen_fd = -1;
  int stop_fd = -1;  // eventfd; readable once Stop() has begun, never reset
  int reap_fd = -1;  // eventfd; a connection thread finished and can be joined
  uint16_t port = 0;
  std::atomic<bool> stopping{false};
  std::mutex stop_mu;  // serialises the joining part of concurrent Stop() calls
  std::thread acceptor;

  std::mutex mu;
  std::list<Conn> conns;  // guarded by mu

  void AcceptLoop();
  void Reap();
  void Reject(int fd);
  void Serve(Conn* conn);
  std::variant<RequestHead, HeadError> ParseHead(std::string_view head, const std::string& peer);
  HttpResponse Dispatch(RequestHead& head);
  bool Send(int fd, const HttpResponse& response, bool head_only, bool keep_alive,
            bool http10_keep_alive);
  void SendErrorAndClose(int fd, const HeadError& e);
};

HttpServer::HttpServer(HttpServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
}

HttpServer::~HttpServer() {
  Stop();
  if (impl_->listen_fd >= 0) close(impl_->listen_fd);
  if (impl_->stop_fd >= 0) close(impl_->stop_fd);
  if (impl_->reap_fd >= 0) close(impl_->reap_fd);
}

void HttpServer::Route(std::string method, std::string pattern, HttpHandler handler) {
  CORRAL_CHECK(!impl_->started) << "HttpServer::Route after Start";
  CORRAL_CHECK(!pattern.empty() && pattern.front() == '/') << "route pattern " << pattern;
  RouteEntry e;
  e.method = std::move(method);
  e.handler = std::move(handler);
  std::vector<std::string_view> segments = SplitPath(pattern);
  for (size_t i = 0; i < segments.size(); ++i) {
    std::string_view s = segments[i];
    bool param = s.size() >= 2 && s.front() == '{' && s.back() == '}';
    if (param && s.size() >= 3 && s[s.size() - 2] == '*') {
      CORRAL_CHECK(i + 1 == segments.size()) << "{name*} must end the pattern " << pattern;
      e.has_rest = true;
      e.rest_name = std::string(s.substr(1, s.size() - 3));
      break;
    }
    e.segments.emplace_back(param ? s.substr(1, s.size() - 2) : s);
    e.is_param.push_back(param);
  }
  impl_->routes.push_back(std::move(e));
}

Status HttpServer::Start(const std::string& host, uint16_t port) {
  Impl& s = *impl_;
  CORRAL_CHECK(!s.started) << "HttpServer::Start called twice";
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
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
      s.listen_fd = fd;
      break;
    }
    err = errno;
    close(fd);
  }
  freeaddrinfo(res);
  if (s.listen_fd < 0) {
    return Unavailable("cannot listen on " + where + ": " + std::strerror(err));
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  getsockname(s.listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  s.port = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  s.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  s.reap_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s.stop_fd < 0 || s.reap_fd < 0) {
    return Unavailable("cannot listen on " + where + ": eventfd: " + std::strerror(errno));
  }
  s.started = true;
  s.acceptor = std::thread([&s] {
    s.AcceptLoop();
    close(s.listen_fd);  // refuse new connections as soon as stopping begins
    s.listen_fd = -1;
  });
  return {};
}

uint16_t HttpServer::port() const { return impl_->port; }

void HttpServer::Stop() {
  Impl& s = *impl_;
  if (!s.started) return;
  if (!s.stopping.exchange(true)) {
    uint64_t one = 1;
    ssize_t n = write(s.stop_fd, &one, sizeof one);
    (void)n;
  }
  // From a handler, only begin: joining other connection threads from one could deadlock
  // (two handlers stopping at once would wait for each other), and its own cannot be joined.
  if (tls_serving == &s) return;
  std::lock_guard<std::mutex> stop_lock(s.stop_mu);
  if (s.acceptor.joinable()) s.acceptor.join();  // it closes the listener
  // Idle and reading connections see `stop_fd` and close; one inside a handler finishes it,
  // sends its answer (with `Connection: close`) and closes.
  std::list<Impl::Conn> to_join;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    to_join.splice(to_join.end(), s.conns);
  }
  for (Impl::Conn& c : to_join) {
    if (c.thread.joinable()) c.thread.join();
  }
}

void HttpServer::Impl::AcceptLoop() {
  bool backing_off = false;
  while (true) {
    pollfd p[3] = {{stop_fd, POLLIN, 0}, {reap_fd, POLLIN, 0}, {listen_fd, POLLIN, 0}};
    // Out of file descriptors: stop polling the listener for a moment (it would stay
    // readable and spin) and retry when a connection ends or 50 ms have passed.
    int rc = poll(p, backing_off ? 2 : 3, backing_off ? 50 : -1);
    if (rc < 0 && errno != EINTR) {
      CORRAL_LOG(Error) << "http server: poll: " << std::strerror(errno);
      return;
    }
    backing_off = false;
    if (p[0].revents != 0) return;
    if (p[1].revents != 0) {
      uint64_t v;
      ssize_t n = read(reap_fd, &v, sizeof v);
      (void)n;
    }
    Reap();
    if (rc <= 0 || p[2].revents == 0) continue;
    while (true) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          CORRAL_LOG(Warn) << "http server: accept: " << std::strerror(errno);
          backing_off = true;
        }
        break;  // EAGAIN: all pending connections taken
      }
      SetNoDelay(fd);
      // Only this thread adds, reaps or (before Stop() has joined it) removes connections,
      // so `conn` stays valid while the thread is started outside the lock.
      std::list<Conn>::iterator conn;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (conns.size() < options.max_connections) {
          conn = conns.emplace(conns.end());
          conn->fd = fd;
          conn->peer = PeerName(addr);
        } else {
          conn = conns.end();
        }
      }
      if (conn == conns.end()) {
        Reject(fd);
        continue;
      }
      try {
        std::thread thread([this, c = &*conn] { Serve(c); });
        std::lock_guard<std::mutex> lock(mu);
        conn->thread = std::move(thread);
      } catch (const std::exception& e) {  // std::system_error: no more threads
        CORRAL_LOG(Warn) << "http server: cannot start a connection thread: " << e.what();
        {
          std::lock_guard<std::mutex> lock(mu);
          conns.erase(conn);
        }
        Reject(fd);
      }
    }
  }
}

void HttpServer::Impl::Reap() {
  std::list<Conn> finished;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (auto it = conns.begin(); it != conns.end();) {
      auto next = std::next(it);
      if (it->done) finished.splice(finished.end(), conns, it);
      it = next;
    }
  }
  for (Conn& c : finished) c.thread.join();
}

// Answers 503 on a connection over the cap, without blocking the acceptor, and closes it.
void HttpServer::Impl::Reject(int fd) {
  HttpResponse r = TransportError(503, ErrorCode::kUnavailable, "too many connections");
  std::string head = ResponseHead(r, r.body.size(), /*keep_alive=*/false, false);
  std::string all = head + r.body;
  ssize_t n = send(fd, all.data(), all.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)n;
  shutdown(fd, SHUT_WR);
  char tmp[4096];
  while (recv(fd, tmp, sizeof tmp, MSG_DONTWAIT) > 0) {
  }
  close(fd);
}

std::variant<RequestHead, HeadError> HttpServer::Impl::ParseHead(std::string_view head,
                                                                 const std::string& peer) {
  auto bad = [](std::string message) {
    return HeadError{400, ErrorCode::kInvalidArgument, "bad request: " + std::move(message)};
  };
  std::vector<std::string_view> lines = SplitLines(head);
  if (lines.empty()) return bad("empty request");
  // Request line: METHOD SP request-target SP HTTP-version.
  std::string_view line = lines[0];
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return bad("malformed request line");
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method)) return bad("invalid method");
  RequestHead r;
  if (version == "HTTP/1.1") {
    r.http10 = false;
  } else if (version == "HTTP/1.0") {
    r.http10 = true;
  } else if (version.size() == 8 && version.substr(0, 5) == "HTTP/" && version[6] == '.' &&
             std::isdigit(static_cast<unsigned char>(version[5])) &&
             std::isdigit(static_cast<unsigned char>(version[7]))) {
    return HeadError{505, ErrorCode::kUnimplemented, "http version not supported"};
  } else {
    return bad("malformed http version");
  }
  if (target.empty() || HasControlChars(target, false)) return bad("invalid request target");
  if (target.substr(0, 7) == "http://" || target.substr(0, 8) == "https://") {
    size_t authority = target.find("//") + 2;
    size_t slash = target.find('/', authority);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  if (target.front() != '/') return bad("request target must start with \"/\"");
  size_t question = target.find('?');
  std::string_view raw_path = target.substr(0, question);

  HttpRequest& req = r.request;
  req.method = std::string(method);
  req.path = UrlDecode(raw_path);
  r.raw_path = std::string(raw_path);
  if (question != std::string_view::npos) ParseQuery(target.substr(question + 1), &req.query);
  req.peer = peer;
  std::string err = ParseHeaderLines(lines, 1, &req.headers);
  if (!err.empty()) return bad(err);

  auto it = req.headers.find("connection");
  if (r.http10) {
    r.keep_alive = it != req.headers.end() && HasToken(it->second, "keep-alive");
    r.http10_keep_alive = r.keep_alive;
  } else {
    r.keep_alive = it == req.headers.end() || !HasToken(it->second, "close");
  }
  if (auto te = req.headers.find("transfer-encoding"); te != req.headers.end()) {
    if (LastToken(te->second) == "chunked") {
      return HeadError{411, ErrorCode::kInvalidArgument,
                       "length required: chunked request bodies are not supported, send "
                       "Content-Length"};
    }
    return HeadError{501, ErrorCode::kUnimplemented,
                     "transfer-encoding \"" + te->second + "\" is not supported"};
  }
  if (auto cl = req.headers.find("content-length"); cl != req.headers.end()) {
    std::optional<uint64_t> n = ParseContentLength(cl->second);
    if (!n) return bad("invalid Content-Length");
    if (*n > options.max_body_bytes) {
      return HeadError{413, ErrorCode::kInvalidArgument,
                       "request body of " + cl->second + " bytes exceeds the limit of " +
                           std::to_string(options.max_body_bytes) + " bytes"};
    }
    r.content_length = *n;
  }
  if (auto ex = req.headers.find("expect"); ex != req.headers.end()) {
    if (Lower(ex->second) != "100-continue") {
      return HeadError{417, ErrorCode::kInvalidArgument,
                       "expectation \"" + ex->second + "\" is not supported"};
    }
    r.expect_continue = !r.http10;
  }
  return r;
}

namespace {

// Matches `route` against the raw path segments (`decoded` holds the same, percent-decoded).
// On a match fills the parameters and a rank: lower ranks are more specific (a literal
// segment beats a parameter, which beats a trailing `{name*}`).
bool MatchRoute(const RouteEntry& route, const std::vector<std::string_view>& raw,
                const std::vector<std::string>& decoded, std::map<std::string, std::string>* params,
                std::vector<int>* rank) {
  size_t n = route.segments.size();
  if (route.has_rest ? raw.size() < n : raw.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (route.is_param[i]) {
      if (decoded[i].empty()) return false;
      (*params)[route.segments[i]] = decoded[i];
      rank->push_back(1);
    } else {
      if (decoded[i] != route.segments[i]) return false;
      rank->push_back(0);
    }
  }
  if (route.has_rest) {
    std::string rest;
    for (size_t i = n; i < raw.size(); ++i) {
      if (i > n) rest += '/';
      rest += raw[i];
    }
    (*params)[route.rest_name] = UrlDecode(rest);
    rank->push_back(2);
  }
  return true;
}

// Half-closes, then reads and discards what the peer still sends for a short while, so that
// closing a socket with unread input does not reset the connection before the peer has read
// our answer.
void LingerClose(int fd, int stop_fd) {
  shutdown(fd, SHUT_WR);
  MonoTime deadline = DeadlineAfter(std::chrono::milliseconds(1000));
  std::string sink;
  size_t drained = 0;
  while (drained < (16u << 20)) {
    sink.clear();
    if (ReadMore(fd, &sink, kReadChunk, stop_fd, deadline) != Io::kOk) break;
    drained += sink.size();
  }
}

}  // namespace

HttpResponse HttpServer::Impl::Dispatch(RequestHead& head) {
  HttpRequest& req = head.request;
  std::vector<std::string_view> raw = SplitPath(head.raw_path);
  std::vector<std::string> decoded;
  decoded.reserve(raw.size());
  for (std::string_view s : raw) decoded.push_back(UrlDecode(s));

  const RouteEntry* best = nullptr;
  std::vector<int> best_rank;
  std::map<std::string, std::string> best_params;
  std::vector<std::string> allowed;
  for (const RouteEntry& route : routes) {
    std::map<std::string, std::string> params;
    std::vector<int> rank;
    if (!MatchRoute(route, raw, decoded, &params, &rank)) continue;
    bool exact = route.method == req.method;
    if (!exact && !(req.method == "HEAD" && route.method == "GET")) {
      allowed.push_back(route.method);
      continue;
    }
    rank.push_back(exact ? 0 : 1);  // a HEAD route beats the GET fallback
    if (best == nullptr || rank < best_rank) {
      best = &route;
      best_rank = std::move(rank);
      best_params = std::move(params);
    }
  }
  if (best == nullptr) {
    if (allowed.empty()) {
      return TransportError(404, ErrorCode::kNotFound,
                            "no route for " + req.method + " " + req.path);
    }
    std::sort(allowed.begin(), allowed.end());
    allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
    std::string allow;
    for (const std::string& m : allowed) allow += (allow.empty() ? "" : ", ") + m;
    HttpResponse r = TransportError(
        405, ErrorCode::kUnimplemented,
        "method " + req.method + " is not allowed on " + req.path + " (allowed: " + allow + ")");
    r.headers["Allow"] = allow;
    return r;
  }
  req.params = std::move(best_params);
  try {
    HttpResponse r = best->handler(req);
    if (r.status < 200 || r.status > 999) {
      CORRAL_LOG(Error) << "http server: handler for " << req.method << " " << req.path
                        << " returned status " << r.status;
      return TransportError(500, ErrorCode::kInternal, "handler returned an invalid status");
    }
    return r;
  } catch (const std::exception& e) {
    CORRAL_LOG(Error) << "http server: handler for " << req.method << " " << req.path
                      << " threw: " << e.what();
    return TransportError(500, ErrorCode::kInternal, std::string("handler failed: ") + e.what());
  } catch (...) {
    CORRAL_LOG(Error) << "http server: handler for " << req.method << " " << req.path
                      << " threw a non-standard exception";
    return TransportError(500, ErrorCode::kInternal, "handler failed");
  }
}

bool HttpServer::Impl::Send(int fd, const HttpResponse& response, bool head_only, bool keep_alive,
                            bool http10_keep_alive) {
  std::string_view body = BodyForbidden(response.status) ? std::string_view() : response.body;
  std::string head = ResponseHead(response, body.size(), keep_alive, http10_keep_alive);
  if (head_only) body = {};
  // While stopping, a client that does not read its answer may delay Stop() only briefly.
  auto limit = options.read_timeout;
  if (stopping.load()) limit = std::min(limit, std::chrono::milliseconds(1000));
  return WriteAll(fd, head, body, DeadlineAfter(limit)) == Io::kOk;
}

void HttpServer::Impl::SendErrorAndClose(int fd, const HeadError& e) {
  HttpResponse r = TransportError(e.status, e.code, e.message);
  if (Send(fd, r, /*head_only=*/false, /*keep_alive=*/false, false)) LingerClose(fd, stop_fd);
}

void HttpServer::Impl::Serve(Conn* conn) {
  tls_serving = this;
  const int fd = conn->fd;
  const size_t max_head = options.max_header_bytes;
  std::string buf;
  while (!stopping.load()) {
    // 1. Wait (at most the idle timeout) for the first byte of the next request.
    if (buf.empty() &&
        ReadMore(fd, &buf, kReadChunk, stop_fd, DeadlineAfter(options.idle_timeout)) != Io::kOk) {
      break;
    }
    // 2. From there the whole request must arrive within the read timeout.
    const MonoTime deadline = DeadlineAfter(options.read_timeout);
    size_t scanned = 0;
    size_t head_end = std::string::npos;
    std::optional<HeadError> error;
    bool closed = false;
    while (true) {
      if (scanned == 0) {
        // Empty lines before a request line are ignored (RFC 9112, section 2.2).
        size_t skip = buf.find_first_not_of("\r\n");
        buf.erase(0, skip == std::string::npos ? buf.size() : skip);
      }
      if (!buf.empty()) head_end = FindHeadEnd(buf, &scanned);
      if (head_end != std::string::npos) break;
      if (buf.size() > max_head) break;
      Io io = ReadMore(fd, &buf, kReadChunk, stop_fd, deadline);
      if (io == Io::kTimeout) {
        error = HeadError{408, ErrorCode::kDeadlineExceeded, "request not received in time"};
        break;
      }
      if (io != Io::kOk) {
        closed = true;
        break;
      }
    }
    if (closed) break;
    if (!error && (head_end == std::string::npos || head_end > max_head)) {
      error = HeadError{431, ErrorCode::kInvalidArgument,
                        "request line and headers exceed " + std::to_string(max_head) + " bytes"};
    }
    if (error) {
      SendErrorAndClose(fd, *error);
      break;
    }
    auto parsed = ParseHead(std::string_view(buf).substr(0, head_end), conn->peer);
    if (auto* e = std::get_if<HeadError>(&parsed)) {
      SendErrorAndClose(fd, *e);
      break;
    }
    RequestHead& rh = std::get<RequestHead>(parsed);

    // 3. The body.
    const size_t total = head_end + static_cast<size_t>(rh.content_length);
    if (rh.expect_continue && buf.size() < total) {
      if (WriteAll(fd, "HTTP/1.1 100 Continue\r\n\r\n", {}, deadline) != Io::kOk) break;
    }
    if (buf.size() < total) buf.reserve(total);
    while (buf.size() < total) {
      Io io = ReadMore(fd, &buf, total - buf.size(), stop_fd, deadline);
      if (io == Io::kTimeout) {
        error = HeadError{408, ErrorCode::kDeadlineExceeded, "request body not received in time"};
        break;
      }
      if (io != Io::kOk) {
        closed = true;
        break;
      }
    }
    if (closed) break;
    if (error) {
      SendErrorAndClose(fd, *error);
      break;
    }
    rh.request.body.assign(buf, head_end, static_cast<size_t>(rh.content_length));
    buf.erase(0, total);

    // 4. Answer.
    const bool head_only = rh.request.method == "HEAD";
    HttpResponse response = Dispatch(rh);
    const bool keep_alive = rh.keep_alive && !stopping.load();
    if (!Send(fd, response, head_only, keep_alive, rh.http10_keep_alive)) break;
    if (!keep_alive) {
      LingerClose(fd, stop_fd);
      break;
    }
  }
  close(fd);
  std::lock_guard<std::mutex> lock(mu);
  conn->done = true;
  uint64_t one = 1;
  ssize_t n = write(reap_fd, &one, sizeof one);
  (void)n;
}

// =============================================================================================
// Client

namespace {

constexpr size_t kMaxResponseHead = 1 << 20;
constexpr uint64_t kMaxResponseBody = uint64_t{1} << 30;
constexpr size_t kMaxIdleConnections = 16;

// What one exchange on one connection gave.
struct Exchange {
  Result<HttpResponse> response = HttpResponse{};
  bool reusable = false;
  bool got_bytes = false;  // a byte of the response was read
};

Exchange ExchangeOn(int fd, std::string_view head, std::string_view body, bool is_head,
                    MonoTime deadline) {
  Exchange x;
  auto broken = [&x](std::string message) {
    x.response = Unavailable(std::move(message));
    return std::move(x);
  };
  auto timed_out = [&x] {
    x.response = MakeError(ErrorCode::kDeadlineExceeded, "timed out");
    return std::move(x);
  };
  // A server may answer before it has read the whole request (a 413 to an oversized body)
  // and then close; the answer is then read even though sending stopped or failed.
  bool peer_spoke = false;
  int send_error = 0;
  switch (WriteAll(fd, head, body, deadline, /*watch_input=*/true)) {
    case Io::kOk:
      break;
    case Io::kPeerSpoke:
      peer_spoke = true;
      break;
    case Io::kTimeout:
      return timed_out();
    default:
      send_error = errno;
      peer_spoke = true;
      break;
  }

  std::string buf;
  size_t pos = 0;  // start of the unread part of `buf`
  // Reads until `buf` holds `n` bytes past `pos`. Returns "" or why it could not.
  auto need = [&](size_t n, bool* timeout) -> std::string {
    while (buf.size() - pos < n) {
      Io io = ReadMore(fd, &buf, std::max(kReadChunk, n - (buf.size() - pos)), -1, deadline);
      if (!buf.empty()) x.got_bytes = true;
      if (io == Io::kOk) continue;
      if (io == Io::kTimeout) {
        *timeout = true;
        return "timed out";
      }
      if (!x.got_bytes && send_error != 0) {
        return std::string("connection broken while sending: ") + std::strerror(send_error);
      }
      if (io == Io::kEof) {
        return x.got_bytes ? "connection closed in the middle of the response"
                           : "connection closed before a response";
      }
      return std::string("connection broken: ") + std::strerror(errno);
    }
    return "";
  };
  bool timeout = false;

  // The head, skipping interim 1xx answers.
  HttpResponse r;
  bool http10 = false;
  while (true) {
    size_t scanned = pos;
    size_t end;
    while ((end = FindHeadEnd(buf, &scanned)) == std::string::npos) {
      if (buf.size() - pos > kMaxResponseHead) return broken("response head too large");
      std::string err = need(buf.size() - pos + 1, &timeout);
      if (timeout) return timed_out();
      if (!err.empty()) return broken(err);
    }
    std::vector<std::string_view> lines = SplitLines(std::string_view(buf).substr(pos, end - pos));
    std::string_view status_line = lines.empty() ? std::string_view() : lines[0];
    if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ' ||
        !std::isdigit(static_cast<unsigned char>(status_line[9])) ||
        !std::isdigit(static_cast<unsigned char>(status_line[10])) ||
        !std::isdigit(static_cast<unsigned char>(status_line[11])) ||
        (status_line.size() > 12 && status_line[12] != ' ')) {
      return broken("malformed response status line");
    }
    http10 = status_line[7] == '0';
    r.status =
        (status_line[9] - '0') * 100 + (status_line[10] - '0') * 10 + (status_line[11] - '0');
    r.headers.clear();
    std::string err = ParseHeaderLines(lines, 1, &r.headers);
    if (!err.empty()) return broken("malformed response: " + err);
    pos = end;
    if (r.status >= 200) break;
    if (r.status == 101) return broken("unexpected protocol switch");
    if (r.status < 100) return broken("malformed response status line");
  }
  auto header = [&r](const char* name) -> const std::string* {
    auto it = r.headers.find(name);
    return it == r.headers.end() ? nullptr : &it->second;
  };
  const std::string* ct = header("content-type");
  r.content_type = ct ? *ct : "";

  // The body.
  bool delimited = true;
  const std::string* te = header("transfer-encoding");
  const std::string* cl = header("content-length");
  if (is_head || r.status == 204 || r.status == 304) {
    // No body.
  } else if (te != nullptr && LastToken(*te) == "chunked") {
    while (true) {
      size_t nl;
      while ((nl = buf.find('\n', pos)) == std::string::npos) {
        if (buf.size() - pos > 4096)
          return broken("malformed chunked response: chunk line too long");
        std::string e = need(buf.size() - pos + 1, &timeout);
        if (timeout) return timed_out();
        if (!e.empty()) return broken(e);
      }
      std::string_view line = std::string_view(buf).substr(pos, nl - pos);
      line = Trim(line.substr(0, line.find(';')));
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      line = Trim(line);
      if (line.empty() || line.size() > 15) return broken("malformed chunked response: chunk size");
      uint64_t size = 0;
      for (char c : line) {
        int v = HexValue(c);
        if (v < 0) return broken("malformed chunked response: chunk size");
        size = size * 16 + static_cast<uint64_t>(v);
      }
      pos = nl + 1;
      if (size == 0) {
        // Trailers, up to an empty line.
        while (true) {
          while ((nl = buf.find('\n', pos)) == std::string::npos) {
            if (buf.size() - pos > kMaxResponseHead) return broken("response trailers too large");
            std::string e = need(buf.size() - pos + 1, &timeout);
            if (timeout) return timed_out();
            if (!e.empty()) return broken(e);
          }
          std::string_view t = std::string_view(buf).substr(pos, nl - pos);
          pos = nl + 1;
          if (t.empty() || t == "\r") break;
        }
        break;
      }
      if (r.body.size() + size > kMaxResponseBody) return broken("response body too large");
      std::string e = need(static_cast<size_t>(size) + 1, &timeout);
      if (timeout) return timed_out();
      if (!e.empty()) return broken(e);
      r.body.append(buf, pos, static_cast<size_t>(size));
      pos += static_cast<size_t>(size);
      if (buf[pos] == '\r') {
        e = need(2, &timeout);
        if (timeout) return timed_out();
        if (!e.empty()) return broken(e);
        ++pos;
      }
      if (buf[pos] != '\n') return broken("malformed chunked response: missing chunk end");
      ++pos;
      buf.erase(0, pos);  // keep the buffer small on long responses
      pos = 0;
    }
  } else if (te == nullptr && cl != nullptr) {
    std::optional<uint64_t> n = ParseContentLength(*cl);
    if (!n) return broken("malformed response: invalid Content-Length");
    if (*n > kMaxResponseBody) return broken("response body too large (" + *cl + " bytes)");
    std::string e = need(static_cast<size_t>(*n), &timeout);
    if (timeout) return timed_out();
    if (!e.empty()) return broken(e);
    r.body.assign(buf, pos, static_cast<size_t>(*n));
    pos += static_cast<size_t>(*n);
  } else {
    // Neither length nor chunks: the body ends when the server closes.
    delimited = false;
    r.body.assign(buf, pos, std::string::npos);
    pos = buf.size();
    while (true) {
      buf.clear();
      pos = 0;
      Io io = ReadMore(fd, &buf, kReadChunk, -1, deadline);
      if (io == Io::kEof) break;
      if (io == Io::kTimeout) return timed_out();
      if (io != Io::kOk) return broken(std::string("connection broken: ") + std::strerror(errno));
      if (r.body.size() + buf.size() > kMaxResponseBody) return broken("response body too large");
      r.body += buf;
    }
  }

  const std::string* connection = header("connection");
  bool keep_alive = http10 ? (connection != nullptr && HasToken(*connection, "keep-alive"))
                           : (connection == nullptr || !HasToken(*connection, "close"));
  x.reusable = keep_alive && delimited && !peer_spoke && pos == buf.size();
  x.response = std::move(r);
  return x;
}

}  // namespace

struct HttpClient::Impl {
  std::string base_url;
  std::string host;         // without the brackets of an IPv6 literal
  std::string port;         // decimal
  std::string host_header;  // host[:port] as written in the URL
  std::string prefix;       // "" or "/prefix", without a trailing slash
  HttpClientOptions options;

  std::mutex mu;
  std::vector<int> idle;  // guarded by mu: open keep-alive connections, most recent last

  ~Impl() {
    for (int fd : idle) close(fd);
  }

  // A pooled connection that the server has not closed meanwhile, or -1.
  int TakeIdle() {
    std::lock_guard<std::mutex> lock(mu);
    while (!idle.empty()) {
      int fd = idle.back();
      idle.pop_back();
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 0) == 0) return fd;  // nothing to read: still open, nothing stray
      close(fd);
    }
    return -1;
  }

  void PutIdle(int fd) {
    std::lock_guard<std::mutex> lock(mu);
    if (idle.size() < kMaxIdleConnections) {
      idle.push_back(fd);
    } else {
      close(fd);
    }
  }

  Result<int> Connect(MonoTime deadline) {
    MonoTime connect_deadline = std::min(deadline, DeadlineAfter(options.connect_timeout));
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* res = nullptr;
    int gai = getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
    if (gai != 0) {
      return Unavailable(base_url + ": cannot resolve \"" + host + "\": " + gai_strerror(gai));
    }
    int err = ECONNREFUSED;
    bool timed_out = false;
    int fd = -1;
    for (addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
      int s =
          socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
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
        return MakeError(ErrorCode::kDeadlineExceeded, base_url + ": timed out connecting");
      }
      return Unavailable(base_url + ": cannot connect: timed out after " +
                         std::to_string(options.connect_timeout.count()) + " ms");
    }
    return Unavailable(base_url + ": cannot connect: " + std::strerror(err));
  }
};

HttpClient::HttpClient() : impl_(std::make_unique<Impl>()) {}
HttpClient::~HttpClient() = default;

Result<std::unique_ptr<HttpClient>> HttpClient::Create(const std::string& base_url,
                                                       HttpClientOptions options) {
  auto bad = [&base_url](std::string_view why) {
    return InvalidArgument("invalid base URL \"" + base_url + "\": " + std::string(why) +
                           " (expected http://host[:port][/prefix])");
  };
  std::string_view url = base_url;
  if (url.substr(0, 7) != "http://") return bad("scheme must be http://");
  url.remove_prefix(7);
  size_t slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  std::string_view prefix =
      slash == std::string_view::npos ? std::string_view() : url.substr(slash);
  if (authority.empty()) return bad("no host");
  if (authority.find('@') != std::string_view::npos) return bad("user info is not supported");
  std::string_view host;
  std::string_view port;
  if (authority.front() == '[') {
    size_t close_bracket = authority.find(']');
    if (close_bracket == std::string_view::npos) return bad("unterminated IPv6 address");
    host = authority.substr(1, close_bracket - 1);
    std::string_view after = authority.substr(close_bracket + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("junk after the IPv6 address");
      port = after.substr(1);
      if (port.empty()) return bad("empty port");
    }
    if (host.empty() ||
        host.find_first_not_of("0123456789abcdefABCDEF:.%") != std::string_view::npos) {
      return bad("invalid IPv6 address");
    }
  } else {
    size_t colon = authority.find(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) return bad("empty port");
    }
    if (host.empty()) return bad("no host");
    for (char c : host) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') {
        return bad("invalid host name");
      }
    }
  }
  if (!port.empty()) {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos ||
        std::stoi(std::string(port)) < 1 || std::stoi(std::string(port)) > 65535) {
      return bad("invalid port");
    }
  }
  if (prefix.find_first_of("?# ") != std::string_view::npos || HasControlChars(prefix, false)) {
    return bad("the prefix may not hold a query, a fragment or spaces");
  }
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);

  std::unique_ptr<HttpClient> client(new HttpClient());
  Impl& c = *client->impl_;
  c.base_url = base_url;
  c.host = std::string(host);
  c.port = port.empty() ? "80" : std::string(port);
  c.host_header = std::string(authority);
  c.prefix = std::string(prefix);
  c.options = options;
  return client;
}

const std::string& HttpClient::base_url() const { return impl_->base_url; }

Result<HttpResponse> HttpClient::Send(std::string_view method, std::string_view path,
                                      std::string_view body,
                                      const std::map<std::string, std::string>& headers,
                                      bool idempotent, std::chrono::milliseconds timeout) {
  Impl& c = *impl_;
  const MonoTime deadline = DeadlineAfter(
      timeout > std::chrono::milliseconds::zero() ? timeout : c.options.request_timeout);
  std::string what = std::string(method) + " " + c.base_url + std::string(path);
  if (!IsToken(method)) return InvalidArgument(what + ": invalid method");
  if (path.empty() || path.front() != '/' || HasControlChars(path, false) ||
      path.find(' ') != std::string_view::npos) {
    return InvalidArgument(
        what + ": the path must start with \"/\" and hold no spaces or control characters");
  }
  std::string head;
  head.reserve(128 + path.size() + headers.size() * 48);
  head.append(method).append(" ").append(c.prefix).append(path).append(" HTTP/1.1\r\nHost: ");
  head.append(c.host_header).append("\r\n");
  bool has_content_type = false;
  for (const auto& [name, value] : headers) {
    if (!IsToken(name) || HasControlChars(value, /*allow_tab=*/true)) {
      return InvalidArgument(what + ": invalid header \"" + name + "\"");
    }
    std::string lower = Lower(name);
    if (lower == "host" || lower == "content-length" || lower == "transfer-encoding" ||
        lower == "connection") {
      continue;  // framing is ours
    }
    if (lower == "content-type") has_content_type = true;
    head.append(name).append(": ").append(value).append("\r\n");
  }
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    if (!body.empty() && !has_content_type) head.append("Content-Type: application/json\r\n");
    head.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  }
  head.append("\r\n");

  const bool is_head = method == "HEAD";
  for (int attempt = 0;; ++attempt) {
    int fd = attempt == 0 ? c.TakeIdle() : -1;
    const bool reused = fd >= 0;
    if (!reused) {
      Result<int> connected = c.Connect(deadline);
      if (!connected)
        return Annotate(connected.error(), std::string(method) + " " + std::string(path));
      fd = *connected;
    }
    Exchange x = ExchangeOn(fd, head, body, is_head, deadline);
    if (x.response.has_value()) {
      if (x.reusable) {
        c.PutIdle(fd);
      } else {
        close(fd);
      }
      return std::move(x.response);
    }
    close(fd);
    // A reused connection may have been closed by the server just as we sent: only then, and
    // only when repeating the request is harmless, try once more on a fresh connection.
    if (reused && attempt == 0 && idempotent && !x.got_bytes &&
        x.response.error().code == ErrorCode::kUnavailable) {
      continue;
    }
    return Annotate(x.response.error(), what);
  }
}

}  // namespace corral::api
