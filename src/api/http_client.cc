// HttpClient: blocking requests with deadlines over a small pool of keep-alive connections.
// It creates no thread and no epoll instance: a command-line call is a process start, and
// everything here is paid on every `sbatch` (DESIGN.md, "Process start cost").
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "api/http.h"
#include "api/internal/http_wire.h"
#include "api/internal/socket_io.h"
#include "api/internal/tls.h"
#include "api/internal/url.h"
#include "core/clock.h"
#include "core/strings.h"

namespace corral::api {
namespace {

using internal::Io;

constexpr size_t kMaxResponseHead = 1 << 20;
constexpr uint64_t kMaxResponseBody = uint64_t{1} << 30;
constexpr size_t kMaxIdleConnections = 16;

using internal::TlsIo;

// One connection: a socket, and its TLS state on https:// clients.
struct Conn {
  int fd = -1;
  std::unique_ptr<internal::TlsConn> tls;
  bool session_kept = false;  // its TLS session was handed to the client for resumption

  Conn() = default;
  Conn(Conn&& o) noexcept
      : fd(std::exchange(o.fd, -1)), tls(std::move(o.tls)), session_kept(o.session_kept) {}
  Conn& operator=(Conn&& o) noexcept {
    std::swap(fd, o.fd);
    std::swap(tls, o.tls);
    std::swap(session_kept, o.session_kept);
    return *this;
  }
  ~Conn() {
    if (tls != nullptr) tls->Shutdown();  // close_notify, best effort
    tls.reset();
    if (fd >= 0) close(fd);
  }
};

// Waits for what TLS asked for (`io` is kWantRead or kWantWrite).
Io WaitTls(const Conn& c, TlsIo io, MonoTime deadline) {
  return internal::Wait(c.fd, io == TlsIo::kWantWrite ? POLLOUT : POLLIN, -1, deadline);
}

// As `internal::ReadMore`, over TLS when the connection has it.
Io ReadMore(Conn& c, std::string* buf, size_t max, MonoTime deadline) {
  if (c.tls == nullptr) return internal::ReadMore(c.fd, buf, max, -1, deadline);
  char tmp[internal::kReadChunk];
  while (true) {
    size_t n = 0;
    TlsIo io = c.tls->Read(tmp, std::min(max, sizeof tmp), &n);
    if (io == TlsIo::kOk) {
      buf->append(tmp, n);
      return Io::kOk;
    }
    if (io == TlsIo::kClosed) return Io::kEof;
    if (io == TlsIo::kError) return Io::kError;
    Io w = WaitTls(c, io, deadline);
    if (w != Io::kOk) return w;
  }
}

// As `internal::WriteAll`, over TLS when the connection has it. With TLS, input that arrives
// while sending may be only a session ticket: it is read, and only application data (kept in
// `*early` for the response) counts as the peer speaking.
Io WriteAll(Conn& c, std::string_view a, std::string_view b, MonoTime deadline,
            std::string* early) {
  if (c.tls == nullptr) return internal::WriteAll(c.fd, a, b, deadline, /*watch_input=*/true);
  for (std::string_view part : {a, b}) {
    while (!part.empty()) {
      size_t n = 0;
      TlsIo io = c.tls->Write(part, &n);
      if (io == TlsIo::kOk) {
        part.remove_prefix(n);
        continue;
      }
      if (io != TlsIo::kWantRead && io != TlsIo::kWantWrite) return Io::kError;
      pollfd p{c.fd, static_cast<short>(io == TlsIo::kWantWrite ? POLLOUT | POLLIN : POLLIN), 0};
      int rc;
      do {
        rc = poll(&p, 1, internal::PollTimeoutMs(deadline));
      } while (rc < 0 && errno == EINTR);
      if (rc < 0) return Io::kError;
      if (rc == 0) return Io::kTimeout;
      if (io == TlsIo::kWantWrite && (p.revents & POLLIN) != 0) {
        char tmp[internal::kReadChunk];
        TlsIo r = c.tls->Read(tmp, sizeof tmp, &n);
        if (r == TlsIo::kOk) {
          early->append(tmp, n);
          return Io::kPeerSpoke;
        }
        if (r == TlsIo::kClosed || r == TlsIo::kError) return Io::kPeerSpoke;
      }
    }
  }
  return Io::kOk;
}

// What one exchange on one connection gave.
struct Exchange {
  Result<HttpResponse> response = HttpResponse{};
  bool reusable = false;
  bool got_bytes = false;  // a byte of the response was read
};

Exchange ExchangeOn(Conn& conn, std::string_view head, std::string_view body, bool is_head,
                    MonoTime deadline, uint64_t max_body) {
  Exchange x;
  auto broken = [&x](std::string message) {
    x.response = Unavailable(std::move(message));
    return std::move(x);
  };
  auto timed_out = [&x] {
    x.response = MakeError(ErrorCode::kDeadlineExceeded, "timed out");
    return std::move(x);
  };
  // A server may answer before it has read the whole request (a 413 to an oversized body, a
  // 401 before an anonymous body) and then close; the answer is then read even though sending
  // stopped or failed.
  bool peer_spoke = false;
  int send_error = 0;
  std::string buf;  // what was read and not yet parsed
  switch (WriteAll(conn, head, body, deadline, &buf)) {
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

  internal::ResponseParser parser({.max_head_bytes = kMaxResponseHead,
                                   .max_header_count = kMaxResponseHead,
                                   .max_body_bytes = std::min(max_body, kMaxResponseBody)});
  parser.ExpectHeadResponse(is_head);
  HttpResponse r;
  size_t pos = 0;  // start of the unparsed part of `buf`
  bool closed = false;
  while (true) {
    internal::WireStep step = parser.Parse(std::string_view(buf).substr(pos));
    pos += step.consumed;
    if (step.event == internal::WireEvent::kHead) {
      const internal::WireResponseHead& h = parser.head();
      r.status = h.status;
      r.headers = h.headers;
      auto ct = h.headers.find("content-type");
      r.content_type = ct == h.headers.end() ? "" : ct->second;
      if (auto cl = h.headers.find("content-length"); cl != h.headers.end()) {
        r.body.reserve(static_cast<size_t>(std::min<uint64_t>(
            {internal::ParseContentLength(cl->second).value_or(0), 64 << 20, max_body})));
      }
      continue;
    }
    if (step.event == internal::WireEvent::kBody) {
      r.body.append(step.body);
      continue;
    }
    if (step.event == internal::WireEvent::kDone) break;
    if (step.event == internal::WireEvent::kError) return broken(parser.error().message);
    // kNeedMore: every byte was used.
    buf.clear();
    pos = 0;
    Io io = ReadMore(conn, &buf, 4 * internal::kReadChunk, deadline);
    if (!buf.empty()) x.got_bytes = true;
    if (io == Io::kOk) continue;
    if (io == Io::kTimeout) return timed_out();
    if (io == Io::kEof && parser.FinishOnClose()) {
      closed = true;
      break;
    }
    if (!x.got_bytes && send_error != 0) {
      return broken(std::string("connection broken while sending: ") + std::strerror(send_error));
    }
    if (io == Io::kEof) {
      return broken(x.got_bytes ? "connection closed in the middle of the response"
                                : "connection closed before a response");
    }
    if (conn.tls != nullptr) return broken("connection broken: " + conn.tls->error());
    return broken(std::string("connection broken: ") + std::strerror(errno));
  }
  x.reusable = parser.head().keep_alive && !closed && !peer_spoke && pos == buf.size();
  x.response = std::move(r);
  return x;
}

}  // namespace

struct HttpClient::Impl {
  std::string base_url;
  internal::BaseUrl url;
  HttpClientOptions options;
  std::unique_ptr<internal::TlsContext> tls;  // https:// only

  std::mutex mu;
  std::vector<Conn> idle;                 // guarded by mu: open keep-alive connections, newest last
  ssl_session_st* tls_session = nullptr;  // guarded by mu: the last resumable session
  HttpClientTlsStats tls_stats;           // guarded by mu

  ~Impl() { internal::FreeSession(tls_session); }

  // A pooled connection that the server has not closed meanwhile, or one with fd -1.
  Conn TakeIdle() {
    std::lock_guard<std::mutex> lock(mu);
    while (!idle.empty()) {
      Conn c = std::move(idle.back());
      idle.pop_back();
      pollfd p{c.fd, POLLIN, 0};
      if (poll(&p, 1, 0) == 0) return c;  // nothing to read: still open, nothing stray
      // Over TLS the input may be a session ticket only: the connection is then still good.
      char tmp[256];
      size_t n = 0;
      if (c.tls != nullptr && c.tls->Read(tmp, sizeof tmp, &n) == TlsIo::kWantRead) return c;
    }
    return Conn{};
  }

  void PutIdle(Conn c) {
    std::lock_guard<std::mutex> lock(mu);
    if (idle.size() < kMaxIdleConnections) idle.push_back(std::move(c));
  }

  // Keeps the connection's session for the next handshake (TLS 1.3 sends its tickets after
  // the handshake, so this is done after an exchange).
  // A new session also goes to `options.on_new_session` (a resumed connection's too: the
  // server sends it a fresh ticket).
  void KeepSession(Conn& c) {
    if (c.tls == nullptr || c.session_kept || tls->psk()) return;  // once a connection
    ssl_session_st* s = c.tls->TakeSession();
    if (s == nullptr) return;
    c.session_kept = true;
    if (options.on_new_session) {
      TlsSessionTicket ticket = internal::SerializeSession(s);
      if (!ticket.der.empty()) options.on_new_session(ticket);
    }
    std::lock_guard<std::mutex> lock(mu);
    internal::FreeSession(tls_session);
    tls_session = s;
  }

  Result<Conn> Connect(MonoTime deadline) {
    Conn c;
    CORRAL_ASSIGN_OR_RETURN(
        c.fd, internal::Connect(url.host, url.port, base_url, options.connect_timeout, deadline));
    if (tls == nullptr) return c;
    {
      std::lock_guard<std::mutex> lock(mu);
      c.tls = internal::TlsConn::Client(*tls, c.fd, url.host, tls_session);
    }
    if (c.tls == nullptr) return Unavailable(base_url + ": TLS: cannot create a connection");
    const MonoTime handshake_deadline =
        std::min(deadline, internal::DeadlineAfter(options.connect_timeout));
    while (true) {
      TlsIo io = c.tls->Handshake();
      if (io == TlsIo::kOk) {
        // A pre-shared key authenticates the server only if the handshake used it.
        if (tls->psk() && !c.tls->UsedPsk()) {
          return Unavailable(base_url + ": TLS handshake did not use the pre-shared key");
        }
        std::lock_guard<std::mutex> lock(mu);
        ++tls_stats.handshakes;
        if (c.tls->resumed()) ++tls_stats.resumed;
        return c;
      }
      if (io == TlsIo::kClosed || io == TlsIo::kError) {
        return Unavailable(base_url + ": TLS handshake failed: " +
                           (c.tls->error().empty() ? "connection closed" : c.tls->error()));
      }
      Io w = WaitTls(c, io, handshake_deadline);
      if (w == Io::kTimeout) {
        if (handshake_deadline >= deadline) {
          return MakeError(ErrorCode::kDeadlineExceeded,
                           base_url + ": timed out in the TLS handshake");
        }
        return Unavailable(base_url + ": TLS handshake timed out");
      }
      if (w != Io::kOk) return Unavailable(base_url + ": TLS handshake failed");
    }
  }
};

HttpClient::HttpClient() : impl_(std::make_unique<Impl>()) {}
HttpClient::~HttpClient() = default;

Result<std::unique_ptr<HttpClient>> HttpClient::Create(const std::string& base_url,
                                                       HttpClientOptions options) {
  CORRAL_ASSIGN_OR_RETURN(internal::BaseUrl url,
                          internal::ParseBaseUrl(base_url, /*allow_https=*/true));
  std::unique_ptr<HttpClient> client(new HttpClient());
  Impl& c = *client->impl_;
  if (!options.psk.empty()) {
    if (!url.tls) return InvalidArgument(base_url + ": a pre-shared key needs an https:// URL");
    CORRAL_ASSIGN_OR_RETURN(c.tls,
                            internal::TlsContext::ForPskClient(options.psk, options.psk_identity));
  } else if (url.tls) {
    CORRAL_ASSIGN_OR_RETURN(
        c.tls, internal::TlsContext::ForClient(options.ca_file, options.certificate_file,
                                               options.key_file));
    if (!options.resume_session.empty()) {
      const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                              SystemClock::Get().Now().time_since_epoch())
                              .count();
      c.tls_session = internal::ParseSession(options.resume_session, now);
    }
  }
  c.base_url = base_url;
  c.url = std::move(url);
  c.options = options;
  return client;
}

const std::string& HttpClient::base_url() const { return impl_->base_url; }

HttpClientTlsStats HttpClient::tls_stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->tls_stats;
}

Result<HttpResponse> HttpClient::Send(std::string_view method, std::string_view path,
                                      std::string_view body,
                                      const std::map<std::string, std::string>& headers,
                                      bool idempotent, std::chrono::milliseconds timeout,
                                      bool* may_have_sent) {
  Impl& c = *impl_;
  if (may_have_sent != nullptr) *may_have_sent = false;
  const MonoTime deadline = internal::DeadlineAfter(
      timeout > std::chrono::milliseconds::zero() ? timeout : c.options.request_timeout);
  std::string what = std::string(method) + " " + c.base_url + std::string(path);
  if (!internal::IsToken(method)) return InvalidArgument(what + ": invalid method");
  if (path.empty() || path.front() != '/' || internal::HasControlChars(path, false) ||
      path.find(' ') != std::string_view::npos) {
    return InvalidArgument(
        what + ": the path must start with \"/\" and hold no spaces or control characters");
  }
  std::string head;
  head.reserve(128 + path.size() + headers.size() * 48);
  head.append(method).append(" ").append(c.url.prefix).append(path);
  head.append(" HTTP/1.1\r\nHost: ").append(c.url.host_header).append("\r\n");
  bool has_content_type = false;
  for (const auto& [name, value] : headers) {
    if (!internal::IsToken(name) || internal::HasControlChars(value, /*allow_tab=*/true)) {
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
    Conn conn = attempt == 0 ? c.TakeIdle() : Conn{};
    const bool reused = conn.fd >= 0;
    if (!reused) {
      Result<Conn> connected = c.Connect(deadline);
      if (!connected) {
        return Annotate(connected.error(), std::string(method) + " " + std::string(path));
      }
      conn = std::move(*connected);
    }
    if (may_have_sent != nullptr) *may_have_sent = true;
    Exchange x = ExchangeOn(conn, head, body, is_head, deadline, c.options.max_response_body);
    if (x.response.has_value()) {
      c.KeepSession(conn);
      if (x.reusable) c.PutIdle(std::move(conn));
      return std::move(x.response);
    }
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
