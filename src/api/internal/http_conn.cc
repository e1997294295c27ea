#include "api/internal/http_conn.h"

#include <poll.h>

#include <cerrno>
#include <string_view>

#include <sys/socket.h>
#include <sys/uio.h>

#include "api/internal/http_answer.h"
#include "api/internal/url.h"

namespace corral::api::internal {

void QueueAnswer(Conn* c, HttpResponse response, bool stopping) {
  const bool keep_alive = c->keep_alive && !stopping && !c->close_after_write;
  std::string_view body = BodyForbidden(response.status) ? std::string_view() : response.body;
  c->out.push_back(ResponseHead(response, body.size(), keep_alive, c->http10_keep_alive));
  if (!c->head_only && !body.empty()) c->out.push_back(std::move(response.body));
  c->close_after_write = !keep_alive;
}

Sent SendQueued(Conn* c) {
  while (c->tls != nullptr && !c->out.empty()) {
    std::string_view chunk = std::string_view(c->out.front()).substr(c->out_offset);
    size_t n = 0;
    TlsIo io = c->tls->Write(chunk, &n);
    if (io == TlsIo::kWantRead || io == TlsIo::kWantWrite) {
      return Sent::kBlocked;
    }
    if (io != TlsIo::kOk) return Sent::kFailed;
    c->out_offset += n;
    if (c->out_offset == c->out.front().size()) {
      c->out.pop_front();
      c->out_offset = 0;
    }
  }
  while (!c->out.empty()) {
    iovec iov[8];
    int n_iov = 0;
    for (auto it = c->out.begin(); it != c->out.end() && n_iov < 8; ++it, ++n_iov) {
      size_t skip = n_iov == 0 ? c->out_offset : 0;
      iov[n_iov] = {const_cast<char*>(it->data()) + skip, it->size() - skip};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n_iov);
    ssize_t n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK ? Sent::kBlocked : Sent::kFailed;
    }
    auto sent = static_cast<size_t>(n);
    while (sent > 0) {
      size_t left = c->out.front().size() - c->out_offset;
      if (sent < left) {
        c->out_offset += sent;
        break;
      }
      sent -= left;
      c->out.pop_front();
      c->out_offset = 0;
    }
  }
  return Sent::kAll;
}

ssize_t Receive(Conn* c, char* buf, size_t size) {
  if (c->tls != nullptr && c->state != State::kLingering) {
    size_t n = 0;
    switch (c->tls->Read(buf, size, &n)) {
      case TlsIo::kOk:
        return static_cast<ssize_t>(n);
      case TlsIo::kWantRead:
      case TlsIo::kWantWrite:
        return -1;
      case TlsIo::kClosed:
        return 0;
      case TlsIo::kError:
        return -2;
    }
  }
  while (true) {
    ssize_t n = recv(c->fd, buf, size, 0);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : -2;
  }
}

void TakeHead(Conn* c) {
  WireRequestHead& h = c->parser.mutable_head();
  HttpRequest& req = c->request;
  req.method = h.method;
  req.path = UrlDecode(h.raw_path);
  if (!h.raw_query.empty()) ParseQuery(h.raw_query, &req.query);
  req.headers = std::move(h.headers);
  req.peer = c->peer;
  req.peer_certificate = c->peer_certificate;
  c->raw_path = std::move(h.raw_path);
  c->keep_alive = h.keep_alive;
  c->http10_keep_alive = h.http10 && h.keep_alive;
  c->head_only = req.method == "HEAD";
}

bool NextRequestInline(Conn* c, std::chrono::milliseconds linger) {
  c->parser.Reset();
  c->request = HttpRequest{};
  c->raw_path.clear();
  std::string input = std::move(c->pending);
  c->pending.clear();
  if (input.empty()) {
    pollfd p{c->fd, POLLIN, 0};
    bool buffered = c->tls != nullptr && c->tls->Pending();
    if (!buffered && poll(&p, 1, static_cast<int>(linger.count())) != 1) return false;
    char buf[16 * 1024];
    ssize_t n = Receive(c, buf, sizeof buf);
    if (n <= 0) return false;  // nothing after all, or the end: the loop sees it again
    input.assign(buf, static_cast<size_t>(n));
  }
  auto give_back = [&] {  // the loop parses it all from the start
    c->parser.Reset();
    c->request = HttpRequest{};
    c->raw_path.clear();
    c->pending = std::move(input);
    return false;
  };
  std::string_view data = input;
  while (true) {
    WireStep step = c->parser.Parse(data);
    data.remove_prefix(step.consumed);
    if (step.event == WireEvent::kHead) {
      const WireRequestHead& h = c->parser.head();
      if (h.has_transfer_encoding || h.expect_continue) return give_back();  // the loop's
      TakeHead(c);
    } else if (step.event == WireEvent::kBody) {
      c->request.body.append(step.body);
    } else if (step.event == WireEvent::kDone) {
      break;
    } else {
      return give_back();  // incomplete, or an error for the loop to answer
    }
  }
  c->pending.assign(data);
  return true;
}

}  // namespace corral::api::internal
