// HttpClient: blocking requests with deadlines over a small pool of keep-alive connections.
// It creates no thread and no epoll instance: a command-line call is a process start, and
// everything here is paid on every `sbatch` (DESIGN.md, "Process start cost").
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "api/http.h"
#include "api/internal/http_wire.h"
#include "api/internal/socket_io.h"
#include "api/internal/url.h"
#include "core/strings.h"

namespace corral::api {
namespace {

using internal::Io;

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
  // A server may answer before it has read the whole request (a 413 to an oversized body, a
  // 401 before an anonymous body) and then close; the answer is then read even though sending
  // stopped or failed.
  bool peer_spoke = false;
  int send_error = 0;
  switch (internal::WriteAll(fd, head, body, deadline, /*watch_input=*/true)) {
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
                                   .max_body_bytes = kMaxResponseBody});
  parser.ExpectHeadResponse(is_head);
  HttpResponse r;
  std::string buf;
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
        r.body.reserve(static_cast<size_t>(
            std::min<uint64_t>(internal::ParseContentLength(cl->second).value_or(0), 64 << 20)));
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
    Io io = internal::ReadMore(fd, &buf, 4 * internal::kReadChunk, -1, deadline);
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
};

HttpClient::HttpClient() : impl_(std::make_unique<Impl>()) {}
HttpClient::~HttpClient() = default;

Result<std::unique_ptr<HttpClient>> HttpClient::Create(const std::string& base_url,
                                                       HttpClientOptions options) {
  CORRAL_ASSIGN_OR_RETURN(internal::BaseUrl url,
                          internal::ParseBaseUrl(base_url, /*allow_https=*/false));
  std::unique_ptr<HttpClient> client(new HttpClient());
  Impl& c = *client->impl_;
  c.base_url = base_url;
  c.url = std::move(url);
  c.options = options;
  return client;
}

const std::string& HttpClient::base_url() const { return impl_->base_url; }

Result<HttpResponse> HttpClient::Send(std::string_view method, std::string_view path,
                                      std::string_view body,
                                      const std::map<std::string, std::string>& headers,
                                      bool idempotent, std::chrono::milliseconds timeout) {
  Impl& c = *impl_;
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
    int fd = attempt == 0 ? c.TakeIdle() : -1;
    const bool reused = fd >= 0;
    if (!reused) {
      Result<int> connected = internal::Connect(c.url.host, c.url.port, c.base_url,
                                                c.options.connect_timeout, deadline);
      if (!connected) {
        return Annotate(connected.error(), std::string(method) + " " + std::string(path));
      }
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
