// The HTTP/1.x wire format: an incremental parser of request and response messages (heads,
// Content-Length, chunked and read-until-close bodies) and the serialisation of heads. No
// sockets, no clocks, no threads: the caller feeds bytes as they arrive and reads events,
// so the same code serves the event-loop server, the blocking client and the fuzzer
// (fuzz/http_parser_fuzz.cc). Modelled on Envoy's HTTP/1 codec: bytes in, events out.
//
// A parser handles one message at a time. `Parse(data)` consumes a prefix of `data` and
// returns one event:
//   kNeedMore  every byte given was consumed; feed more
//   kHead      the head is complete (`head()`); call `Parse` again to go on with the body
//   kBody      `body` holds the next piece of the body (a view into `data`)
//   kDone      the message is complete; `Reset()` before the next one
//   kError     `error()` says why (an HTTP status for the server to answer with, and a
//              message); the parser stays in error
// Requests are strict (bare-LF line ends, a missing or repeated `Host` on HTTP/1.1, too many
// header lines are errors); responses are lenient (bare LF accepted, interim 1xx answers
// skipped) because the client must read what real servers send.
//
// Not thread-safe; one parser per connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace corral::api::internal {

// --- Pieces of the grammar (RFC 9110/9112) --------------------------------------------------

// A `token` (method, header name): one or more tchars.
bool IsToken(std::string_view s);
// True when `s` holds a control character (DEL included; TAB allowed when `allow_tab`).
bool HasControlChars(std::string_view s, bool allow_tab);
// True when the comma-separated header value holds `token` (case-insensitive).
bool HasToken(std::string_view value, std::string_view token);
// The last comma-separated item of a header value, lower-cased ("gzip, chunked" -> "chunked").
std::string LastToken(std::string_view value);
// A Content-Length value: decimal digits only. A syntactically valid value too large for 64
// bits gives UINT64_MAX (reported as too large rather than malformed).
std::optional<uint64_t> ParseContentLength(std::string_view s);

// --- Limits ---------------------------------------------------------------------------------

struct WireLimits {
  size_t max_head_bytes = 64 * 1024;  // start line, headers and the blank line
  size_t max_header_count = 128;      // header lines in one head
  uint64_t max_body_bytes = 64ull << 20;
  size_t max_chunk_line = 4096;  // a chunk-size line with its extensions
};

// --- Parsed heads ---------------------------------------------------------------------------

using HeaderMap = std::map<std::string, std::string>;  // names lower-cased; repeats joined ", "

struct WireRequestHead {
  std::string method;
  std::string raw_path;   // percent-encoded, origin form ("/a%2Fb"); absolute form reduced
  std::string raw_query;  // after '?', without it; "" when none
  bool http10 = false;
  HeaderMap headers;
  bool keep_alive = true;
  uint64_t content_length = 0;
  bool chunked = false;  // Transfer-Encoding ends in chunked
  bool has_transfer_encoding = false;
  bool expect_continue = false;  // `Expect: 100-continue` on HTTP/1.1
  std::string expect;            // the Expect header's value, "" when none
};

struct WireResponseHead {
  int status = 0;
  bool http10 = false;
  HeaderMap headers;
  bool keep_alive = true;  // as the headers say; until-close bodies never keep the connection
  bool until_close = false;
};

struct WireError {
  int status = 400;     // what a server answers: 400, 413, 431, 505, ...
  std::string message;  // "bad request: bare LF line ending"
};

enum class WireEvent { kNeedMore, kHead, kBody, kDone, kError };

struct WireStep {
  WireEvent event = WireEvent::kNeedMore;
  size_t consumed = 0;    // bytes of the input used by this step
  std::string_view body;  // kBody: the piece (a view into the input)
};

// The body framing shared by requests and responses.
class BodyReader {
 public:
  enum class Mode { kNone, kLength, kChunked, kUntilClose };
  void Start(Mode mode, uint64_t length, const WireLimits& limits);
  WireStep Parse(std::string_view data, WireError* error);
  // The peer closed: true when that ends the body (read-until-close).
  bool FinishOnClose() const { return mode_ == Mode::kUntilClose; }
  bool done() const { return state_ == State::kDone; }
  uint64_t received() const { return received_; }

 private:
  enum class State { kData, kChunkSize, kChunkData, kChunkEnd, kTrailers, kDone };
  Mode mode_ = Mode::kNone;
  State state_ = State::kDone;
  uint64_t remaining_ = 0;  // kData (length) or kChunkData
  uint64_t received_ = 0;
  uint64_t max_body_ = 0;
  size_t max_line_ = 0;
  size_t max_trailers_ = 0;
  size_t trailer_bytes_ = 0;
  std::string line_;  // a chunk-size or trailer line being collected
};

// Collects a message head byte by byte until its blank line.
class HeadCollector {
 public:
  // `strict`: every line must end in CRLF. `skip_leading_blank_lines`: empty lines before the
  // start line are ignored (RFC 9112, section 2.2).
  HeadCollector(bool strict, bool skip_leading_blank_lines)
      : strict_(strict), skip_leading_(skip_leading_blank_lines) {}
  // Consumes bytes of `data` into the head. Returns true (and the head in `head()`) once the
  // blank line is in; false when it needs more, or `error` is set.
  bool Collect(std::string_view data, const WireLimits& limits, size_t* consumed, WireError* error);
  std::string_view head() const { return buf_; }
  bool started() const { return !buf_.empty(); }
  void Reset();

 private:
  bool strict_;
  bool skip_leading_;
  std::string buf_;
  size_t line_start_ = 0;
  size_t lines_ = 0;
};

class RequestParser {
 public:
  explicit RequestParser(WireLimits limits = {});
  WireStep Parse(std::string_view data);
  const WireRequestHead& head() const { return head_; }
  WireRequestHead& mutable_head() { return head_; }
  const WireError& error() const { return error_; }
  // True once a byte of this message has arrived (a timeout is then a 408, not an idle close).
  bool started() const { return state_ != State::kHead || collector_.started(); }
  // Changes the body limit of the message whose head was just returned (an anonymous caller
  // may get a smaller one). Returns false, with `error()` set to a 413, when the head's
  // Content-Length is over it.
  bool LimitBody(uint64_t max_body_bytes);
  void Reset();

 private:
  bool ParseHead(std::string_view text);
  WireStep Fail(int status, std::string message, size_t consumed);

  enum class State { kHead, kHeadDone, kBody, kDone, kError };
  WireLimits limits_;
  State state_ = State::kHead;
  HeadCollector collector_{/*strict=*/true, /*skip_leading_blank_lines=*/true};
  BodyReader body_;
  WireRequestHead head_;
  WireError error_;
};

class ResponseParser {
 public:
  explicit ResponseParser(WireLimits limits = {});
  // The next response answers a HEAD request (it has no body whatever it says).
  void ExpectHeadResponse(bool head) { head_request_ = head; }
  WireStep Parse(std::string_view data);
  // The peer closed the connection: true when that completes the message (a body read until
  // close); otherwise the message is truncated.
  bool FinishOnClose();
  const WireResponseHead& head() const { return head_; }
  const WireError& error() const { return error_; }
  void Reset();

 private:
  bool ParseHead(std::string_view text);
  WireStep Fail(std::string message, size_t consumed);

  enum class State { kHead, kHeadDone, kBody, kDone, kError };
  WireLimits limits_;
  State state_ = State::kHead;
  bool head_request_ = false;
  HeadCollector collector_{/*strict=*/false, /*skip_leading_blank_lines=*/false};
  BodyReader body_;
  WireResponseHead head_;
  WireError error_;
};

// Parses "name: value" lines (CRLF or LF separated, starting at `text`) into `headers`.
// Returns "" or what is wrong ("header line without a colon").
std::string ParseHeaderLines(std::string_view text, HeaderMap* headers);

}  // namespace corral::api::internal
