// One connection of the HTTP server (http_server.cc): its state, its parser and buffers, and
// its byte I/O, plain or TLS. The loop that owns it and the pool thread that runs its handler
// hand it to each other; see the state machine at the top of http_server.cc.
//
// Not thread-safe: one thread at a time, handed over under the loop's completion mutex.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <string>

#include <sys/types.h>

#include "api/http.h"
#include "api/internal/http_wire.h"
#include "api/internal/tls.h"
#include "core/time.h"

namespace corral::api::internal {

enum class State { kHandshake, kReading, kWaiting, kWriting, kLingering };

struct Conn {
  uint64_t id = 0;
  int fd = -1;
  std::string peer;
  std::string peer_host;
  std::unique_ptr<TlsConn> tls;  // null on plain connections
  PeerCertificate peer_certificate;
  State state = State::kReading;
  bool proven = false;  // no longer counts as anonymous
  RequestParser parser;
  std::string pending;  // input read but not parsed while the connection was not reading

  // The request being read or handled.
  HttpRequest request;
  std::string raw_path;
  bool keep_alive = true;
  bool http10_keep_alive = false;
  bool head_only = false;
  bool close_after_write = false;
  bool broken = false;        // a write failed while a hook or handler ran: close when it returns
  bool worker_sends = false;  // the pool thread sends the answer itself (loop-owned flag)

  std::deque<std::string> out;  // to send, in order
  size_t out_offset = 0;        // of `out.front()`

  MonoTime deadline = MonoTime::max();  // in the loop's timer set unless max()
  bool in_idle_list = false;
  std::list<Conn*>::iterator idle_it;
  size_t lingered = 0;

  explicit Conn(const WireLimits& limits) : parser(limits) {}
};

// What `SendQueued` achieved.
enum class Sent { kAll, kBlocked, kFailed };

// Queues `response` (head, then body) in `c->out` as the answer to the current request and
// decides whether the connection closes after it (`stopping`: it does).
void QueueAnswer(Conn* c, HttpResponse response, bool stopping);

// Sends what `c->out` holds until it is empty or the socket is full.
Sent SendQueued(Conn* c);

// Moves the parsed head (`c->parser`) into `c->request` and the connection's fields (path,
// keep-alive, HEAD).
void TakeHead(Conn* c);

// Called by the pool thread that has just sent an answer on a keep-alive connection: resets
// it for the next request and waits at most `linger` for that request on the socket. Returns
// true when a whole request (head and Content-Length body, no Expect, no Transfer-Encoding,
// no parse error) is in `c->request`, ready for its handler; bytes after it stay in
// `c->pending`. Otherwise returns false with everything it read put back into `c->pending`
// and the parser reset, so that the loop parses it as if it had read it itself.
bool NextRequestInline(Conn* c, std::chrono::milliseconds linger);

// recv() on plain connections (and lingering ones), SSL_read() on TLS ones: > 0 bytes, 0 at
// the end, -1 to wait for the socket (EAGAIN, or TLS wants to read or write), -2 broken.
ssize_t Receive(Conn* c, char* buf, size_t size);

}  // namespace corral::api::internal
