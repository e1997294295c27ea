// HTTP/1.1 transport for Corral's JSON API: a small server with a router, and a client.
//
// Written here (not cpp-httplib) because every client command is a process start: the
// `corral` binary links only static archives so that `sbatch`/`corral submit` start in about
// a millisecond (DESIGN.md, "Process start cost"); Debian's cpp-httplib is a shared library
// that pulls libssl, libcrypto, zlib, brotli and libstdc++ in at every start (+2.8 ms here).
//
// Supported: HTTP/1.1 and 1.0, keep-alive, pipelining, Content-Length bodies (requests with
// Transfer-Encoding are answered 411 when chunked, so that the client resends with a length,
// and 501 otherwise), `Expect: 100-continue`, size limits on the request line and headers
// (431) and the body (413). Malformed requests get 400, other HTTP versions 505. Answers the
// transport makes itself (these, 404, 405, 408, 500, 503) carry the JSON error body of
// api/http_status.h; those about a request's framing also close the connection. The client
// also reads chunked and read-until-close responses. No TLS: deploy behind a TLS proxy or on
// a private network; identity comes from MUNGE or JWT (api/auth.h), not from the transport.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace corral::api {

struct HttpRequest {
  std::string method;                          // "GET", "POST", ...
  std::string path;                            // decoded path, without the query
  std::map<std::string, std::string> query;    // decoded query parameters (last one wins)
  std::map<std::string, std::string> headers;  // names lower-cased
  std::map<std::string, std::string> params;   // path parameters from the route ("{id}")
  std::string body;
  std::string peer;  // "127.0.0.1:53412"

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

struct HttpServerOptions {
  size_t max_header_bytes = 64 * 1024;
  size_t max_body_bytes = 64 * 1024 * 1024;
  size_t max_connections = 4096;
  std::chrono::milliseconds idle_timeout{60'000};  // keep-alive connections idle this long close
  // A started request (head and body) must arrive within this, else 408; also bounds the
  // time to send an answer to a client that does not read.
  std::chrono::milliseconds read_timeout{30'000};
};

// A threaded HTTP server: one acceptor thread and one thread per connection, so handlers may
// block (for example until a change is durable, or on a long poll). Connections beyond
// `max_connections` get 503. Handlers run concurrently and must be thread-safe.
// Thread-safe: `Route` before `Start`; `Stop` from any thread.
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

  // Binds and listens on `host:port` (port 0 = any free port) and starts serving.
  // Returns kUnavailable naming the address if it cannot bind.
  // Requires: called once (checked).
  Status Start(const std::string& host, uint16_t port);

  // The bound port (after Start).
  uint16_t port() const;

  // Stops accepting, closes every connection, waits for handler threads to finish. A handler
  // that is running finishes and its answer is sent (with `Connection: close`). Idempotent;
  // concurrent calls are safe. Called from a handler, it only begins stopping and returns at
  // once: a `Stop()` from another thread, or the destructor, waits for the threads.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{5'000};
  std::chrono::milliseconds request_timeout{60'000};  // whole exchange, per request
};

// A keep-alive HTTP/1.1 client for one base URL ("http://host:port").
// Thread-safe: concurrent requests use separate connections from a small pool.
class HttpClient {
 public:
  // Returns kInvalidArgument naming the URL when it is not "http://host[:port][/prefix]".
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
  // timeout), the connection breaks or the response is malformed or over 1 GiB,
  // kDeadlineExceeded when the request timeout passes, kInvalidArgument when the method, path
  // or a header would not make a well-formed request (a space or line break in them).
  Result<HttpResponse> Send(std::string_view method, std::string_view path, std::string_view body,
                            const std::map<std::string, std::string>& headers = {},
                            bool idempotent = false, std::chrono::milliseconds timeout = {});

  const std::string& base_url() const;

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
