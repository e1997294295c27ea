// HTTP/1.1 transport for Corral's JSON API: a server with a router, and a client.
//
// Written here (not cpp-httplib) because every client command is a process start: the
// `corral` binary links only static archives so that `sbatch`/`corral submit` start in about
// a millisecond (DESIGN.md, "Process start cost"); Debian's cpp-httplib is a shared library
// that pulls libssl, libcrypto, zlib, brotli and libstdc++ in at every start (+2.8 ms here).
//
// Supported: HTTP/1.1 and 1.0, keep-alive, pipelining, Content-Length bodies (requests with
// Transfer-Encoding are answered 411 when chunked, so that the client resends with a length,
// and 501 otherwise), `Expect: 100-continue`, limits on the head's size and line count (431)
// and the body (413). Malformed requests get 400 (bare-LF line ends and an HTTP/1.1 request
// without exactly one `Host` included), other HTTP versions 505. Answers the transport makes
// itself (these, 401 from the authentication hook, 404, 405, 408, 500, 503) carry the JSON
// error body of api/http_status.h; those about a request's framing also close the connection.
// The client also reads chunked and read-until-close responses.
//
// Layout: api/internal/http_wire.* (the wire parser, no sockets), internal/socket_io.*
// (deadlines, listen, connect), internal/url.*, internal/http_router.*, internal/http_answer.*,
// http_server.cc (the event loop and its worker pool), http_client.cc.
#pragma once

#include <any>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/peer_certificate.h"
#include "core/result.h"

namespace corral::api {

struct HttpRequest {
  std::string method;                          // "GET", "POST", ...
  std::string path;                            // decoded path, without the query
  std::map<std::string, std::string> query;    // decoded query parameters (last one wins)
  std::map<std::string, std::string> headers;  // names lower-cased
  std::map<std::string, std::string> params;   // path parameters from the route ("{id}")
  std::string body;
  std::string peer;                  // "127.0.0.1:53412"
  PeerCertificate peer_certificate;  // on TLS connections with a verified client certificate
  // What the server's authentication hook learned about the caller (`HttpAuthResult`), empty
  // without a hook or for an anonymous request.
  std::any principal;

  // The header's value, or "" when absent. `name` must be lower-case.
  std::string header(const std::string& name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::map<std::string, std::string> headers;  // extra headers
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// TLS on the server's port (OpenSSL; TLS 1.2 and 1.3). Off while `certificate_chain_file` and
// `psk` are empty. Plain HTTP clients on a TLS port get no answer: their connection closes.
struct HttpTlsOptions {
  std::string certificate_chain_file;  // PEM: the server's certificate, then intermediates
  std::string private_key_file;        // PEM
  // Client certificates: verified against the PEM CAs of `client_ca_file`. kOptional asks for
  // one and refuses a bad one; kRequired also refuses a handshake without one.
  enum class ClientCertificate { kNone, kOptional, kRequired };
  ClientCertificate client_certificate = ClientCertificate::kNone;
  std::string client_ca_file;
  std::chrono::milliseconds handshake_timeout{10'000};
  // Instead of a certificate: TLS 1.3 only (TLS_AES_128_GCM_SHA256, with a fresh ECDHE
  // exchange) with this external pre-shared key, offered by clients under `psk_identity`
  // (`HttpClientOptions::psk`). A client without the key cannot complete the handshake. TLS is
  // on when this or `certificate_chain_file` is set.
  std::string psk;
  std::string psk_identity;
  // How long a session ticket lets a client resume without a full handshake (TLS 1.3 tickets
  // are encrypted with keys the server keeps for its whole life).
  std::chrono::seconds session_lifetime{3600};
};

struct HttpServerOptions {
  size_t max_header_bytes = 64 * 1024;  // request line, headers and the blank line (431)
  size_t max_header_count = 128;        // header lines in one request (431)
  size_t max_body_bytes = 64 * 1024 * 1024;
  // All connections; one more is answered 503 and closed.
  size_t max_connections = 16384;
  // Connections from one address (IP without the port); 0 = no cap. Over it: 503.
  size_t max_connections_per_peer = 1024;
  // Connections not yet proven: with an authentication hook, those without an authenticated
  // request so far; without one, those without a complete request so far. Past this many, a
  // new connection closes the oldest idle one among them (or, if none is idle, gets 503), so
  // that idle anonymous connections cannot keep authenticated callers out.
  size_t max_anonymous_connections = 4096;
  // With an authentication hook: the body limit of a request the hook let through anonymous.
  size_t max_anonymous_body_bytes = 64 * 1024;
  std::chrono::milliseconds idle_timeout{60'000};  // keep-alive connections idle this long close
  // A started request (head and body) must arrive within this, else 408; also bounds the
  // time to send an answer to a client that does not read.
  std::chrono::milliseconds read_timeout{30'000};
  // Threads: `io_threads` event loops (epoll) read, parse and write for every connection;
  // handlers and the authentication hook run on a pool of at most `handler_threads` threads,
  // started as needed. A handler that blocks holds one pool thread, never a loop.
  size_t io_threads = 1;
  size_t handler_threads = 128;
  // Raise the soft RLIMIT_NOFILE to the hard limit at Start (each connection is a descriptor).
  bool raise_fd_limit = true;
  HttpTlsOptions tls;
};

// What an authentication hook decided about a request, from its head alone.
struct HttpAuthResult {
  enum class Kind { kAuthenticated, kAnonymous, kRefused };
  Kind kind = Kind::kAnonymous;
  HttpResponse refusal;  // kRefused: sent as it is; the body is never read, the connection closes
  std::any principal;    // kAuthenticated: handed to the handler in `HttpRequest::principal`

  static HttpAuthResult Authenticated(std::any principal = {});
  // Let through without an identity (a public route); the body limit is then
  // `max_anonymous_body_bytes`.
  static HttpAuthResult Anonymous();
  static HttpAuthResult Refused(HttpResponse response);
};

// Runs on a pool thread once a request's head has arrived, before its body is read. The
// request has no body yet and no route parameters. Must be thread-safe.
using HttpAuthHook = std::function<HttpAuthResult(const HttpRequest& head)>;

// Wraps the handler of route `method` `pattern` (request metrics by route pattern, not by raw
// path: controller/metrics/service_metrics.h).
using HttpRouteWrapper =
    std::function<HttpHandler(const std::string& method, const std::string& pattern, HttpHandler)>;

// Counters of a running server (a snapshot; each figure read atomically).
struct HttpServerStats {
  size_t connections = 0;
  size_t anonymous_connections = 0;
  size_t handler_threads = 0;  // pool threads started so far
  size_t handlers_running = 0;
  size_t tls_handshakes = 0;  // completed, since Start
  size_t tls_resumed = 0;     // of which resumed a session (no full handshake)
};

// An HTTP server on an event loop: `io_threads` epoll loops own every connection (so idle
// keep-alive connections cost memory, not threads), and a bounded pool runs handlers, which
// may block (until a change is durable, or on a long poll). Connections beyond
// `max_connections` get 503. Handlers run concurrently and must be thread-safe.
// Thread-safe: `Route` and `SetAuthHook` before `Start`; `Stop`, `port` and `stats` from any
// thread.
class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options = {});
  ~HttpServer();  // stops the server
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Registers `handler` for `method` and a path pattern: "/api/v1/jobs/{id}" matches one
  // segment per `{name}`, stored in `HttpRequest::params`. A pattern ending in "/{name*}"
  // matches the rest of the path. Requests with no route get 404; a known path with another
  // method gets 405 (with `Allow`). A handler that throws gets a 500 answer; the server keeps
  // running. Parameters are percent-decoded per segment ("%2F" stays inside one `{id}`) and
  // never empty; a `{name*}` may be empty. A literal segment is preferred over a parameter,
  // which is preferred over `{name*}`. HEAD requests use the GET route without a body.
  // Requires: not started; `pattern` starts with "/" (both checked).
  void Route(std::string method, std::string pattern, HttpHandler handler);

  // Sets the hook that decides on every request's head before its body is read: refused
  // requests get the hook's answer (a 401, say) and their connection closes unread; connections
  // with an authenticated request stop counting as anonymous. A hook that throws refuses with
  // 500. Requires: not started (checked).
  void SetAuthHook(HttpAuthHook hook);

  // Sets the wrapper that every later `Route` call applies to its handler. Requires: not
  // started (checked).
  void SetRouteWrapper(HttpRouteWrapper wrapper);

  // Binds and listens on `host:port` (port 0 = any free port) and starts serving.
  // Returns kUnavailable naming the address if it cannot bind, kInvalidArgument naming the
  // file when a TLS certificate, key or CA file cannot be used.
  // Requires: called once (checked).
  Status Start(const std::string& host, uint16_t port);

  // The bound port (after Start).
  uint16_t port() const;

  HttpServerStats stats() const;

  // Stops accepting, closes every connection, waits for handler threads to finish. A handler
  // that is running finishes and its answer is sent (with `Connection: close`). Idempotent;
  // concurrent calls are safe. Called from a handler, it only begins stopping and returns at
  // once: a `Stop()` from another thread, or the destructor, waits for the threads.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A client's TLS session, serialized (`HttpClientOptions::resume_session`).
struct TlsSessionTicket {
  std::string der;             // the SSL_SESSION in DER
  int64_t expires_unix_s = 0;  // when the server stops accepting it (seconds since the epoch)
};

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{5'000};
  std::chrono::milliseconds request_timeout{60'000};  // whole exchange, per request
  // https:// only: the PEM CAs the server's certificate must chain to (the system's CAs when
  // empty); its name must match the URL's host. A client certificate and key (PEM) to
  // present when the server asks for one.
  std::string ca_file;
  std::string certificate_file;
  std::string key_file;
  // https:// only: a saved TLS session (`TlsSessionTicket::der`, as `on_new_session` gave it)
  // to offer on the first connection, so that even a new process skips the full handshake.
  // Ignored when it does not parse, has expired, or is not a TLS 1.3 session. Keep it as
  // secret as a key: it lets whoever holds it act as the server that issued it to this client.
  std::string resume_session;
  // Called (on the calling thread) with each new resumable session that a server sends on a
  // connection of this client.
  std::function<void(const TlsSessionTicket&)> on_new_session;
  // https:// with a pre-shared key instead of certificates (`HttpTlsOptions::psk`): the server
  // is authenticated by knowing the key; `ca_file` and the certificate are not used, and a
  // server that presents a certificate instead is refused.
  std::string psk;
  std::string psk_identity;
  // A response body larger than this fails the request (kUnavailable): a client that talks to
  // a server it does not trust (a step's `srun`, api/step_io.h) bounds what it takes in.
  uint64_t max_response_body = uint64_t{1} << 30;
};

// What a client's TLS handshakes did (for tests and verbose output).
struct HttpClientTlsStats {
  size_t handshakes = 0;
  size_t resumed = 0;  // of which resumed a session
};

// A keep-alive HTTP/1.1 client for one base URL ("http://host:port" or "https://host:port").
// Over https:// it verifies the server's certificate and host name, and resumes its last TLS
// session on new connections so that they skip the full handshake. It starts no thread and
// touches OpenSSL only for https:// URLs.
// Thread-safe: concurrent requests use separate connections from a small pool.
class HttpClient {
 public:
  // Returns kInvalidArgument naming the URL when it is not "http[s]://host[:port][/prefix]",
  // or naming the file when a CA, certificate or key file cannot be used.
  static Result<std::unique_ptr<HttpClient>> Create(const std::string& base_url,
                                                    HttpClientOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends a request and returns the response, whatever its status. `timeout` (if > 0)
  // overrides the request timeout. A request on a reused keep-alive connection that fails
  // before any response byte is read is retried once on a fresh connection only when
  // `idempotent` is true.
  // The path (with any query, already encoded) is appended to the base URL's prefix. A body
  // without a `Content-Type` header is sent as application/json.
  // Returns kUnavailable naming the address when it cannot connect (including the connect
  // timeout and a failed TLS handshake: an unverified certificate, a wrong host name, a
  // refused client certificate), the connection breaks or the response is malformed or over
  // 1 GiB,
  // kDeadlineExceeded when the request timeout passes, kInvalidArgument when the method, path
  // or a header would not make a well-formed request (a space or line break in them).
  // `may_have_sent` (if given) is set to whether any byte of the request was written to the
  // server (false: it failed before, say while connecting, and cannot have been carried out).
  Result<HttpResponse> Send(std::string_view method, std::string_view path, std::string_view body,
                            const std::map<std::string, std::string>& headers = {},
                            bool idempotent = false, std::chrono::milliseconds timeout = {},
                            bool* may_have_sent = nullptr);

  const std::string& base_url() const;
  HttpClientTlsStats tls_stats() const;

 private:
  HttpClient();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Percent-decodes a URL component ("%2F" -> "/", "+" stays "+"). Invalid escapes are kept.
std::string UrlDecode(std::string_view s);
// Percent-encodes everything but unreserved characters.
std::string UrlEncode(std::string_view s);

}  // namespace corral::api
