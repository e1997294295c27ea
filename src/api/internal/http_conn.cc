#include "api/internal/http_conn.h"

#include <cerrno>
#include <string_view>

#include <sys/socket.h>
#include <sys/uio.h>

#include "api/internal/http_answer.h"

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

}  // namespace corral::api::internal
