// HttpServer: `io_threads` epoll loops own the connections; handlers and the authentication
// hook run on a bounded WorkerPool.
//
// A connection lives on one loop and moves through these states:
//   kHandshake TLS only: the handshake must complete within `tls.handshake_timeout`
//   kReading   bytes are fed to its RequestParser; idle (nothing of a request yet) it waits at
//              most `idle_timeout`, started it must complete within `read_timeout` (408)
//   kWaiting   the hook or the handler runs on the pool; the loop neither reads nor closes it
//              (the pool holds a pointer to its request), so pipelined bytes wait in the
//              kernel and in `pending`
//   kWriting   the answer is being sent (at most `read_timeout`); then back to kReading, or
//              kLingering when the connection closes
//   kLingering half-closed; input is read and dropped for a while (at most 1 s, 16 MiB) so
//              that closing with unread input does not reset the answer away
// Sockets are edge-triggered for input and output at once, so a connection is registered once
// and never modified; a state that stops reading resumes with an explicit read.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "api/http.h"
#include "api/internal/http_answer.h"
#include "api/internal/http_conn.h"
#include "api/internal/http_router.h"
#include "api/internal/http_wire.h"
#include "api/internal/socket_io.h"
#include "api/internal/tls.h"
#include "api/internal/url.h"
#include "api/internal/worker_pool.h"
#include "core/check.h"
#include "core/log.h"

namespace corral::api {

HttpAuthResult HttpAuthResult::Authenticated(std::any principal) {
  HttpAuthResult r;
  r.kind = Kind::kAuthenticated;
  r.principal = std::move(principal);
  return r;
}

HttpAuthResult HttpAuthResult::Anonymous() { return HttpAuthResult{}; }

HttpAuthResult HttpAuthResult::Refused(HttpResponse response) {
  HttpAuthResult r;
  r.kind = Kind::kRefused;
  r.refusal = std::move(response);
  return r;
}

std::string HttpRequest::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

namespace {

using internal::Conn;
using internal::DeadlineAfter;
using internal::QueueAnswer;
using internal::Receive;
using internal::SendQueued;
using internal::Sent;
using internal::State;
using internal::TransportError;

// The server whose pool thread this is, if any (for `Stop()` from a handler).
thread_local const void* tls_serving = nullptr;

constexpr std::chrono::milliseconds kLinger{1000};
constexpr size_t kMaxLingerBytes = 16u << 20;
constexpr uint64_t kListenerId = 0;
constexpr uint64_t kWakeId = 1;
constexpr int kMaxEvents = 256;
// How long a pool thread that has just answered waits for the next request on the same
// connection before handing the connection back to its loop.
constexpr std::chrono::milliseconds kInlineLinger{1};

// What a pool thread hands back to a loop.
struct Completion {
  uint64_t conn_id = 0;
  bool is_auth = false;
  HttpAuthResult auth;
  HttpResponse response;
  // The pool thread queued the answer in `out` and sent what the socket took.
  bool answered = false;
  Sent sent = Sent::kAll;
};

}  // namespace

struct HttpServer::Impl {
  struct Loop {
    Impl* server = nullptr;
    int epfd = -1;
    int wake_fd = -1;
    std::thread thread;
    bool stop_seen = false;
    MonoTime listener_paused_until = MonoTime::min();  // out of descriptors: accept later
    bool listener_registered = false;

    std::unordered_map<uint64_t, std::unique_ptr<Conn>> conns;
    std::set<std::pair<MonoTime, uint64_t>> timers;
    std::list<Conn*> idle_anonymous;  // oldest first
    uint64_t next_id = 2;

    std::mutex mu;
    std::vector<Completion> completions;  // guarded by mu

    void Run();
    void Post(Completion c);
    void Wake();
    void OnStop();
    void Accept();
    void Reject(int fd, const std::string& why);
    void OnEvent(Conn* c, uint32_t events);
    void Handshake(Conn* c);
    void ReadInput(Conn* c);
    void Feed(Conn* c, std::string_view data);
    void OnHead(Conn* c);
    void ContinueBody(Conn* c);
    void Dispatch(Conn* c);
    void OnCompletion(Completion& done);
    void Answer(Conn* c, HttpResponse response);
    void Fail(Conn* c, int status, ErrorCode code, std::string message);
    void Flush(Conn* c);
    void WriteFailed(Conn* c);
    void ResponseSent(Conn* c);
    void BeginLinger(Conn* c);
    void Close(Conn* c);
    void SetDeadline(Conn* c, MonoTime t);
    void SetIdle(Conn* c, bool idle);
    void Prove(Conn* c);
    void ExpireTimers();
  };

  HttpServerOptions options;
  internal::WireLimits limits;
  internal::Router router;
  HttpAuthHook auth_hook;
  HttpRouteWrapper route_wrapper;
  std::unique_ptr<internal::TlsContext> tls;  // set when TLS is on
  std::atomic<size_t> tls_handshakes{0};
  std::atomic<size_t> tls_resumed{0};
  bool started = false;
  int listen_fd = -1;
  uint16_t port = 0;
  std::atomic<bool> stopping{false};
  std::atomic<size_t> listener_users{0};  // loops that still have the listener registered
  std::mutex stop_mu;                     // serialises the joining part of concurrent Stop()
  std::vector<std::unique_ptr<Loop>> loops;
  std::unique_ptr<internal::WorkerPool> pool;

  std::atomic<size_t> connections{0};
  std::atomic<size_t> anonymous{0};
  std::mutex peers_mu;
  std::unordered_map<std::string, size_t> per_peer;  // guarded by peers_mu

  void ReleaseListener() {
    if (listener_users.fetch_sub(1) == 1) {
      close(listen_fd);  // no loop polls or accepts on it any more
      listen_fd = -1;
    }
  }
};

HttpServer::HttpServer(HttpServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  impl_->limits = {.max_head_bytes = options.max_header_bytes,
                   .max_header_count = options.max_header_count,
                   .max_body_bytes = options.max_body_bytes};
}

HttpServer::~HttpServer() {
  Stop();
  for (auto& loop : impl_->loops) {
    if (loop->epfd >= 0) close(loop->epfd);
    if (loop->wake_fd >= 0) close(loop->wake_fd);
  }
  if (impl_->listen_fd >= 0) close(impl_->listen_fd);
}

void HttpServer::Route(std::string method, std::string pattern, HttpHandler handler) {
  CORRAL_CHECK(!impl_->started) << "HttpServer::Route after Start";
  if (impl_->route_wrapper) handler = impl_->route_wrapper(method, pattern, std::move(handler));
  impl_->router.Add(std::move(method), std::move(pattern), std::move(handler));
}

void HttpServer::SetRouteWrapper(HttpRouteWrapper wrapper) {
  CORRAL_CHECK(!impl_->started) << "HttpServer::SetRouteWrapper after Start";
  impl_->route_wrapper = std::move(wrapper);
}

void HttpServer::SetAuthHook(HttpAuthHook hook) {
  CORRAL_CHECK(!impl_->started) << "HttpServer::SetAuthHook after Start";
  impl_->auth_hook = std::move(hook);
}

uint16_t HttpServer::port() const { return impl_->port; }

HttpServerStats HttpServer::stats() const {
  HttpServerStats s;
  s.connections = impl_->connections.load();
  s.anonymous_connections = impl_->anonymous.load();
  if (impl_->pool) {
    s.handler_threads = impl_->pool->threads();
    s.handlers_running = impl_->pool->running();
  }
  s.tls_handshakes = impl_->tls_handshakes.load();
  s.tls_resumed = impl_->tls_resumed.load();
  return s;
}

Status HttpServer::Start(const std::string& host, uint16_t port) {
  Impl& s = *impl_;
  CORRAL_CHECK(!s.started) << "HttpServer::Start called twice";
  if (s.options.raise_fd_limit) {
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max;
      setrlimit(RLIMIT_NOFILE, &rl);
    }
  }
  if (!s.options.tls.certificate_chain_file.empty() || !s.options.tls.psk.empty()) {
    CORRAL_ASSIGN_OR_RETURN(s.tls, internal::TlsContext::ForServer(s.options.tls));
  }
  CORRAL_ASSIGN_OR_RETURN(internal::Listener listener, internal::Listen(host, port));
  s.listen_fd = listener.fd;
  s.port = listener.port;
  std::string where = host + ":" + std::to_string(port);
  size_t n = s.options.io_threads == 0 ? 1 : s.options.io_threads;
  for (size_t i = 0; i < n; ++i) {
    auto loop = std::make_unique<Impl::Loop>();
    loop->server = &s;
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    loop->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (loop->epfd < 0 || loop->wake_fd < 0) {
      return Unavailable("cannot listen on " + where + ": " + std::strerror(errno));
    }
    epoll_event wake{EPOLLIN, {.u64 = kWakeId}};
    // Every loop accepts; EPOLLEXCLUSIVE wakes one of them per new connection.
    epoll_event accept{EPOLLIN | (n > 1 ? EPOLLEXCLUSIVE : 0u), {.u64 = kListenerId}};
    if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->wake_fd, &wake) != 0 ||
        epoll_ctl(loop->epfd, EPOLL_CTL_ADD, s.listen_fd, &accept) != 0) {
      return Unavailable("cannot listen on " + where + ": epoll: " + std::strerror(errno));
    }
    loop->listener_registered = true;
    s.loops.push_back(std::move(loop));
  }
  s.listener_users = n;
  s.pool =
      std::make_unique<internal::WorkerPool>(s.options.handler_threads, [&s] { tls_serving = &s; });
  s.started = true;
  for (auto& loop : s.loops) {
    loop->thread = std::thread([l = loop.get()] { l->Run(); });
  }
  return {};
}

void HttpServer::Stop() {
  Impl& s = *impl_;
  if (!s.started) return;
  if (!s.stopping.exchange(true)) {
    for (auto& loop : s.loops) loop->Wake();
  }
  // From a handler, only begin: its own pool thread cannot be joined from inside it.
  if (tls_serving == &s) return;
  std::lock_guard<std::mutex> stop_lock(s.stop_mu);
  // A loop ends once its last connection is closed: those in a handler first finish it and
  // send its answer (with `Connection: close`).
  for (auto& loop : s.loops) {
    if (loop->thread.joinable()) loop->thread.join();
  }
  s.pool->Stop();
}

// ---------------------------------------------------------------------------------------------
// The loop

void HttpServer::Impl::Loop::Wake() {
  uint64_t one = 1;
  ssize_t n = write(wake_fd, &one, sizeof one);
  (void)n;
}

void HttpServer::Impl::Loop::Post(Completion c) {
  {
    std::lock_guard<std::mutex> lock(mu);
    completions.push_back(std::move(c));
  }
  Wake();
}

void HttpServer::Impl::Loop::Run() {
  epoll_event events[kMaxEvents];
  while (true) {
    if (server->stopping.load() && !stop_seen) OnStop();
    if (stop_seen && conns.empty()) break;
    MonoTime next = timers.empty() ? MonoTime::max() : timers.begin()->first;
    if (!listener_registered && !stop_seen) next = std::min(next, listener_paused_until);
    // While handlers wait for a thread, look again soon: the pool may need another one.
    if (server->pool->Poke()) next = std::min(next, DeadlineAfter(std::chrono::milliseconds(2)));
    int n = epoll_wait(epfd, events, kMaxEvents, internal::PollTimeoutMs(next));
    if (n < 0 && errno != EINTR) {
      CORRAL_LOG(Error) << "http server: epoll_wait: " << std::strerror(errno);
      break;
    }
    for (int i = 0; i < n; ++i) {
      uint64_t id = events[i].data.u64;
      if (id == kListenerId) {
        if (!stop_seen) Accept();
      } else if (id == kWakeId) {
        uint64_t v;
        ssize_t r = read(wake_fd, &v, sizeof v);
        (void)r;
        std::vector<Completion> done;
        {
          std::lock_guard<std::mutex> lock(mu);
          done.swap(completions);
        }
        for (Completion& c : done) OnCompletion(c);
      } else if (auto it = conns.find(id); it != conns.end()) {
        OnEvent(it->second.get(), events[i].events);
      }
    }
    if (!listener_registered && !stop_seen && internal::Now() >= listener_paused_until) {
      epoll_event accept{EPOLLIN | (server->loops.size() > 1 ? EPOLLEXCLUSIVE : 0u),
                         {.u64 = kListenerId}};
      listener_registered = epoll_ctl(epfd, EPOLL_CTL_ADD, server->listen_fd, &accept) == 0;
    }
    ExpireTimers();
  }
  if (!stop_seen) OnStop();
}

void HttpServer::Impl::Loop::OnStop() {
  stop_seen = true;
  if (listener_registered) epoll_ctl(epfd, EPOLL_CTL_DEL, server->listen_fd, nullptr);
  listener_registered = false;
  server->ReleaseListener();  // the last loop closes it: new connections are refused
  std::vector<Conn*> all;
  for (auto& [id, c] : conns) all.push_back(c.get());
  for (Conn* c : all) {
    switch (c->state) {
      case State::kHandshake:
      case State::kReading:
      case State::kLingering:
        Close(c);
        break;
      case State::kWaiting:  // its answer is sent with `Connection: close` when it comes
        break;
      case State::kWriting:
        c->close_after_write = true;
        SetDeadline(c, std::min(c->deadline, DeadlineAfter(kLinger)));
        break;
    }
  }
}

void HttpServer::Impl::Loop::Accept() {
  const HttpServerOptions& o = server->options;
  while (true) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    int fd = accept4(server->listen_fd, reinterpret_cast<sockaddr*>(&addr), &len,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: stop polling the listener for a moment (it would stay readable
        // and spin) and retry in 50 ms.
        CORRAL_LOG(Warn) << "http server: accept: " << std::strerror(errno);
        epoll_ctl(epfd, EPOLL_CTL_DEL, server->listen_fd, nullptr);
        listener_registered = false;
        listener_paused_until = DeadlineAfter(std::chrono::milliseconds(50));
      }
      return;  // EAGAIN: all pending connections taken (or another loop took them)
    }
    internal::SetNoDelay(fd);
    if (server->connections.load() >= o.max_connections) {
      Reject(fd, "too many connections");
      continue;
    }
    std::string host = internal::PeerHost(addr);
    if (o.max_connections_per_peer > 0) {
      std::lock_guard<std::mutex> lock(server->peers_mu);
      size_t& count = server->per_peer[host];
      if (count >= o.max_connections_per_peer) {
        Reject(fd, "too many connections from " + host);
        continue;
      }
      ++count;
    }
    if (server->anonymous.load() >= o.max_anonymous_connections) {
      if (idle_anonymous.empty()) {
        if (o.max_connections_per_peer > 0) {
          std::lock_guard<std::mutex> lock(server->peers_mu);
          if (--server->per_peer[host] == 0) server->per_peer.erase(host);
        }
        Reject(fd, "too many unauthenticated connections");
        continue;
      }
      Close(idle_anonymous.front());  // the oldest idle anonymous connection makes room
    }
    auto conn = std::make_unique<Conn>(server->limits);
    Conn* c = conn.get();
    c->id = next_id++;
    c->fd = fd;
    c->peer = internal::PeerName(addr);
    c->peer_host = std::move(host);
    conns.emplace(c->id, std::move(conn));
    ++server->connections;
    ++server->anonymous;
    epoll_event ev{EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, {.u64 = c->id}};
    epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
    SetIdle(c, true);
    if (server->tls) {
      c->tls = internal::TlsConn::Server(*server->tls, fd);
      if (c->tls == nullptr) {
        Close(c);
        continue;
      }
      c->state = State::kHandshake;
      SetDeadline(c, DeadlineAfter(o.tls.handshake_timeout));
    } else {
      SetDeadline(c, DeadlineAfter(o.idle_timeout));
    }
  }
}

// Answers 503 on a connection over a cap, without blocking the loop, and closes it.
void HttpServer::Impl::Loop::Reject(int fd, const std::string& why) {
  HttpResponse r = TransportError(503, ErrorCode::kUnavailable, why);
  std::string all = internal::ResponseHead(r, r.body.size(), /*keep_alive=*/false, false) + r.body;
  ssize_t n = send(fd, all.data(), all.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)n;
  shutdown(fd, SHUT_WR);
  char tmp[4096];
  while (recv(fd, tmp, sizeof tmp, MSG_DONTWAIT) > 0) {
  }
  close(fd);
}

void HttpServer::Impl::Loop::OnEvent(Conn* c, uint32_t events) {
  const uint64_t id = c->id;
  if (c->state == State::kHandshake) {
    Handshake(c);
    return;
  }
  // TLS may need to read to write and write to read: on TLS connections every event retries
  // both directions.
  const bool any = c->tls != nullptr;
  if (c->worker_sends) return;  // a pool thread owns the connection's output now
  if ((any || (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) && !c->out.empty()) {
    Flush(c);
    if (conns.count(id) == 0) return;  // closed
  }
  if ((any || (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) &&
      (c->state == State::kReading || c->state == State::kLingering)) {
    ReadInput(c);
  }
}

void HttpServer::Impl::Loop::Handshake(Conn* c) {
  switch (c->tls->Handshake()) {
    case internal::TlsIo::kWantRead:
    case internal::TlsIo::kWantWrite:
      return;  // the next event goes on with it
    case internal::TlsIo::kClosed:
    case internal::TlsIo::kError:
      Close(c);  // a plain HTTP client, a refused certificate, a scanner: nothing to answer
      return;
    case internal::TlsIo::kOk:
      break;
  }
  ++server->tls_handshakes;
  if (c->tls->resumed()) ++server->tls_resumed;
  c->peer_certificate = c->tls->Peer();
  // A verified client certificate authenticates the connection.
  if (c->peer_certificate.verified) Prove(c);
  c->state = State::kReading;
  SetDeadline(c, DeadlineAfter(server->options.idle_timeout));
  ReadInput(c);  // the first request may have come with the handshake's last flight
}

void HttpServer::Impl::Loop::ReadInput(Conn* c) {
  const uint64_t id = c->id;
  static thread_local char scratch[64 * 1024];
  while (conns.count(id) != 0 && (c->state == State::kReading || c->state == State::kLingering)) {
    ssize_t n = Receive(c, scratch, sizeof scratch);
    if (n < 0) {
      if (n == -2) Close(c);
      return;
    }
    if (n == 0) {
      Close(c);  // the peer is gone (or half-closed: nothing more to read either way)
      return;
    }
    if (c->state == State::kLingering) {
      c->lingered += static_cast<size_t>(n);
      if (c->lingered > kMaxLingerBytes) {
        Close(c);
        return;
      }
      continue;
    }
    Feed(c, std::string_view(scratch, static_cast<size_t>(n)));
  }
}

void HttpServer::Impl::Loop::Feed(Conn* c, std::string_view data) {
  const uint64_t id = c->id;
  bool was_started = c->parser.started();
  while (c->state == State::kReading) {
    internal::WireStep step = c->parser.Parse(data);
    data.remove_prefix(step.consumed);
    if (!was_started && c->parser.started()) {
      // The first byte of a request: from here it must arrive within the read timeout.
      SetIdle(c, false);
      SetDeadline(c, DeadlineAfter(server->options.read_timeout));
      was_started = true;
    }
    switch (step.event) {
      case internal::WireEvent::kNeedMore:
        return;
      case internal::WireEvent::kHead:
        OnHead(c);
        if (conns.count(id) == 0) return;
        break;
      case internal::WireEvent::kBody:
        c->request.body.append(step.body);
        break;
      case internal::WireEvent::kDone:
        Dispatch(c);
        break;
      case internal::WireEvent::kError: {
        const internal::WireError& e = c->parser.error();
        ErrorCode code = e.status == 505   ? ErrorCode::kUnimplemented
                         : e.status == 501 ? ErrorCode::kUnimplemented
                                           : ErrorCode::kInvalidArgument;
        Fail(c, e.status, code, e.message);
        return;
      }
    }
  }
  // Not reading any more (a hook or handler runs, or an answer is being sent): keep the rest.
  if (!data.empty() && c->state != State::kLingering) c->pending.append(data);
}

void HttpServer::Impl::Loop::OnHead(Conn* c) {
  internal::WireRequestHead& h = c->parser.mutable_head();
  if (h.has_transfer_encoding) {
    Fail(c, 411, ErrorCode::kInvalidArgument,
         "length required: chunked request bodies are not supported, send Content-Length");
    return;
  }
  internal::TakeHead(c);
  if (!server->auth_hook) {
    ContinueBody(c);
    return;
  }
  // The hook may block (munged): it runs on the pool, and the body waits unread.
  c->state = State::kWaiting;
  SetDeadline(c, MonoTime::max());
  Impl* s = server;
  Loop* loop = this;
  const uint64_t id = c->id;
  const HttpRequest* head = &c->request;  // untouched by the loop while kWaiting
  s->pool->Submit([s, loop, id, head] {
    Completion done;
    done.conn_id = id;
    done.is_auth = true;
    try {
      done.auth = s->auth_hook(*head);
    } catch (const std::exception& e) {
      CORRAL_LOG(Error) << "http server: authentication hook threw: " << e.what();
      done.auth = HttpAuthResult::Refused(
          TransportError(500, ErrorCode::kInternal, "authentication failed"));
    } catch (...) {
      done.auth = HttpAuthResult::Refused(
          TransportError(500, ErrorCode::kInternal, "authentication failed"));
    }
    loop->Post(std::move(done));
  });
}

// After the head (and the hook): read the body, asking for it first when the client waits
// for a 100 Continue.
void HttpServer::Impl::Loop::ContinueBody(Conn* c) {
  c->state = State::kReading;
  const internal::WireRequestHead& h = c->parser.head();
  if (h.expect_continue && h.content_length > c->pending.size()) {
    c->out.emplace_back("HTTP/1.1 100 Continue\r\n\r\n");
    Flush(c);
  }
}

void HttpServer::Impl::Loop::Dispatch(Conn* c) {
  if (!server->auth_hook) Prove(c);  // without a hook, a complete request proves enough
  c->state = State::kWaiting;
  SetDeadline(c, MonoTime::max());
  Impl* s = server;
  Loop* loop = this;
  const uint64_t id = c->id;
  // The pool thread also sends the answer (one thread switch less before the client has
  // it) unless an interim 100 Continue is still being sent by the loop.
  c->worker_sends = c->out.empty();
  const bool worker_sends = c->worker_sends;
  s->pool->Submit([s, loop, id, c, worker_sends] {  // `c` is untouched by the loop meanwhile
    Completion done;
    done.conn_id = id;
    HttpResponse response = s->router.Dispatch(c->request, c->raw_path);
    if (!worker_sends) {
      done.response = std::move(response);
      loop->Post(std::move(done));
      return;
    }
    while (true) {
      QueueAnswer(c, std::move(response), s->stopping.load());
      done.answered = true;
      done.sent = SendQueued(c);
      // A keep-alive client that sends its next request at once has it answered here, with
      // no hand-off to the loop and back (see `NextRequestInline`).
      if (done.sent != Sent::kAll || c->close_after_write || s->auth_hook ||
          s->pool->Backlogged() || !internal::NextRequestInline(c, kInlineLinger) ||
          s->stopping.load()) {
        break;
      }
      response = s->router.Dispatch(c->request, c->raw_path);
    }
    loop->Post(std::move(done));
  });
}

void HttpServer::Impl::Loop::OnCompletion(Completion& done) {
  auto it = conns.find(done.conn_id);
  if (it == conns.end()) return;
  Conn* c = it->second.get();
  c->worker_sends = false;
  if (c->broken) {
    Close(c);
    return;
  }
  if (done.answered) {
    c->state = State::kWriting;
    if (done.sent == Sent::kFailed) {
      Close(c);
    } else if (done.sent == Sent::kBlocked) {
      SetDeadline(c, DeadlineAfter(server->options.read_timeout));
      Flush(c);  // output edges may have passed while the pool thread owned `out`
    } else {
      ResponseSent(c);
    }
    return;
  }
  if (!done.is_auth) {
    Answer(c, std::move(done.response));
    return;
  }
  if (server->stopping.load()) {
    Close(c);  // stopping: no new work starts
    return;
  }
  switch (done.auth.kind) {
    case HttpAuthResult::Kind::kRefused:
      c->keep_alive = false;
      Answer(c, std::move(done.auth.refusal));
      return;
    case HttpAuthResult::Kind::kAuthenticated:
      Prove(c);
      c->request.principal = std::move(done.auth.principal);
      break;
    case HttpAuthResult::Kind::kAnonymous:
      if (!c->parser.LimitBody(server->options.max_anonymous_body_bytes)) {
        Fail(c, 413, ErrorCode::kInvalidArgument, c->parser.error().message);
        return;
      }
      break;
  }
  // The rest of the request gets a fresh read timeout: the hook's time is not the client's.
  SetDeadline(c, DeadlineAfter(server->options.read_timeout));
  const uint64_t id = c->id;
  ContinueBody(c);
  if (conns.count(id) == 0) return;
  // What came while the hook ran, then what the kernel holds.
  std::string pending = std::move(c->pending);
  c->pending.clear();
  Feed(c, pending);
  if (conns.count(id) != 0 && c->state == State::kReading) ReadInput(c);
}

// Queues `response` as the answer to the current request.
void HttpServer::Impl::Loop::Answer(Conn* c, HttpResponse response) {
  const bool stopping = server->stopping.load();
  QueueAnswer(c, std::move(response), stopping);
  c->state = State::kWriting;
  // While stopping, a client that does not read its answer may delay Stop() only briefly.
  SetDeadline(c, DeadlineAfter(stopping ? std::min(kLinger, server->options.read_timeout)
                                        : server->options.read_timeout));
  Flush(c);
}

// Answers an error about the request's framing and closes the connection.
void HttpServer::Impl::Loop::Fail(Conn* c, int status, ErrorCode code, std::string message) {
  c->pending.clear();
  c->close_after_write = true;
  Answer(c, TransportError(status, code, message));
}

void HttpServer::Impl::Loop::Flush(Conn* c) {
  switch (SendQueued(c)) {
    case Sent::kBlocked:
      return;  // the next output event resumes
    case Sent::kFailed:
      WriteFailed(c);
      return;
    case Sent::kAll:
      if (c->state == State::kWriting) ResponseSent(c);
      return;
  }
}

// A send failed: the connection is gone, but one whose request the pool still holds is
// closed only when the hook or handler returns.
void HttpServer::Impl::Loop::WriteFailed(Conn* c) {
  if (c->state == State::kWaiting) {
    c->out.clear();
    c->broken = true;
  } else {
    Close(c);
  }
}

void HttpServer::Impl::Loop::ResponseSent(Conn* c) {
  // Stop() may have begun after a pool thread sent a keep-alive answer.
  if (c->close_after_write || server->stopping.load()) {
    BeginLinger(c);
    return;
  }
  c->state = State::kReading;
  c->parser.Reset();
  c->request = HttpRequest{};
  c->raw_path.clear();
  SetDeadline(c, DeadlineAfter(server->options.idle_timeout));
  if (!c->proven) SetIdle(c, true);
  // Pipelined requests first, then what the kernel holds (edges were missed meanwhile).
  std::string pending = std::move(c->pending);
  c->pending.clear();
  const uint64_t id = c->id;
  if (!pending.empty()) Feed(c, pending);
  if (conns.count(id) != 0 && c->state == State::kReading) ReadInput(c);
}

void HttpServer::Impl::Loop::BeginLinger(Conn* c) {
  if (c->tls != nullptr) c->tls->Shutdown();  // close_notify; then input is read raw and dropped
  shutdown(c->fd, SHUT_WR);
  c->state = State::kLingering;
  c->pending.clear();
  c->lingered = 0;
  SetIdle(c, false);
  SetDeadline(c, DeadlineAfter(kLinger));
  ReadInput(c);
}

void HttpServer::Impl::Loop::Close(Conn* c) {
  SetIdle(c, false);
  SetDeadline(c, MonoTime::max());
  c->tls.reset();
  close(c->fd);  // also leaves the epoll set
  --server->connections;
  if (!c->proven) --server->anonymous;
  if (server->options.max_connections_per_peer > 0) {
    std::lock_guard<std::mutex> lock(server->peers_mu);
    auto it = server->per_peer.find(c->peer_host);
    if (it != server->per_peer.end() && --it->second == 0) server->per_peer.erase(it);
  }
  conns.erase(c->id);
}

void HttpServer::Impl::Loop::SetDeadline(Conn* c, MonoTime t) {
  if (c->deadline != MonoTime::max()) timers.erase({c->deadline, c->id});
  c->deadline = t;
  if (t != MonoTime::max()) timers.insert({t, c->id});
}

void HttpServer::Impl::Loop::SetIdle(Conn* c, bool idle) {
  if (idle == c->in_idle_list) return;
  if (idle) {
    c->idle_it = idle_anonymous.insert(idle_anonymous.end(), c);
  } else {
    idle_anonymous.erase(c->idle_it);
  }
  c->in_idle_list = idle;
}

void HttpServer::Impl::Loop::Prove(Conn* c) {
  if (c->proven) return;
  c->proven = true;
  --server->anonymous;
  SetIdle(c, false);
}

void HttpServer::Impl::Loop::ExpireTimers() {
  const MonoTime now = internal::Now();
  while (!timers.empty() && timers.begin()->first <= now) {
    Conn* c = conns.at(timers.begin()->second).get();
    SetDeadline(c, MonoTime::max());
    if (c->state == State::kReading && c->parser.started()) {
      Fail(c, 408, ErrorCode::kDeadlineExceeded,
           c->parser.head().method.empty() ? "request not received in time"
                                           : "request body not received in time");
    } else {
      Close(c);  // idle, or an answer or a lingering close that took too long
    }
  }
}

}  // namespace corral::api
