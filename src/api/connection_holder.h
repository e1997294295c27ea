// The connection holder: one process per user and controller that keeps keep-alive TLS
// connections to the controller and carries the requests of that user's short-lived client
// processes over a Unix socket (as ssh's ControlMaster does), so that a `corral`/`squeue` call
// neither initialises OpenSSL nor makes a TLS handshake (docs/operations.md, "The connection
// holder"; docs/security.md, "The CLI's connection holder").
//
// Where: `HolderSocketPath(dir, key)` in the user's private directory (the TLS session cache's:
// `CheckPrivateUserDir`), named after `HolderKey(url, ca_pem)`, so that a holder serves exactly
// one controller URL verified against exactly one CA; every request also carries the full key
// and a holder refuses (kNotSent) one made for another. Beside the socket, `<socket>.lock`
// holds the running holder's pid under an exclusive lock, so that at most one runs.
//
// Who: the holder accepts only peers of its own uid (SO_PEERCRED), and a client sends only to
// a socket owned by its own uid in a directory that others cannot write, whose listening peer
// has its uid. The holder adds no credential: it forwards the method, path, headers (the
// caller's own Authorization) and body as it got them, and returns the controller's answer.
//
// The wire (both ways): frames of a little-endian u32 length and that many bytes, a sequence
// of fields, each a u32 length and its bytes:
//   request: "corral-holder-1", key, method, path, idempotent ("0"/"1"), timeout in ms, body,
//            then header name and value pairs
//   reply:   "corral-holder-1", outcome ("answered", "not-sent", "failed"), the HTTP status
//            (answered) or error code (otherwise), the content type, the body (answered) or
//            error message (otherwise), then header name and value pairs
// "not-sent" says that the holder never sent the request on (a client then sends it itself);
// "failed" that the request may have reached the controller and the answer was lost.
//
// Thread-safety: the codecs are pure; a `HolderChannel` is not thread-safe; `HolderServer`'s
// `Stop` and `stats` may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <sys/types.h>

#include "api/http.h"
#include "core/result.h"

namespace corral::api {

// The hex SHA-256 of `url`, a line break and `ca_pem` (empty: the system's CAs). Uses
// OpenSSL's SHA-256 block functions only, which initialise nothing.
std::string HolderKey(std::string_view url, std::string_view ca_pem);
// `dir`/holder-<the key's first 16 hex digits>.sock (short: a socket path has at most 107
// bytes; the full key is checked on every request)
std::string HolderSocketPath(const std::string& dir, const std::string& key);

struct HolderRequest {
  std::string key;  // `HolderKey` of the controller and CA the client verifies it with
  std::string method;
  std::string path;  // with its query, encoded
  std::map<std::string, std::string> headers;
  std::string body;
  bool idempotent = false;               // as `HttpClient::Send`'s
  std::chrono::milliseconds timeout{0};  // 0: the holder's default
};

enum class HolderOutcome { kAnswered, kNotSent, kFailed };

struct HolderReply {
  HolderOutcome outcome = HolderOutcome::kAnswered;
  HttpResponse response;  // kAnswered
  Error error;            // kNotSent, kFailed
};

// The frame bodies (without the length prefix). Decoding returns kInvalidArgument saying what
// is wrong: another version, a field cut short, a header without a value.
std::string EncodeHolderRequest(const HolderRequest& request);
Result<HolderRequest> DecodeHolderRequest(std::string_view frame);
std::string EncodeHolderReply(const HolderReply& reply);
Result<HolderReply> DecodeHolderReply(std::string_view frame);

constexpr size_t kMaxHolderRequestFrame = 80u << 20;  // the controller's body limit and more
constexpr size_t kMaxHolderReplyFrame = (1u << 30) + (1u << 20);  // HttpClient's, and a head

// What became of a request given to a `HolderChannel`.
struct HolderCall {
  enum class Kind {
    kAnswered,  // `response`: the controller's answer, or (an error) what the holder said
                // went wrong after it may have sent the request on
    kNotSent,   // the request reached no controller: send it another way
    kLost,      // sent to the holder, no reply (it died): it may have reached the controller
  };
  Kind kind = Kind::kNotSent;
  Result<HttpResponse> response = HttpResponse{};
  std::string why;         // kNotSent, kLost: for verbose output
  bool no_holder = false;  // kNotSent because none listens (or its directory is missing)
};

// A client's connection to the holder of `dir` and `key`, opened at the first `Send` and kept.
class HolderChannel {
 public:
  HolderChannel(std::string dir, std::string key);
  ~HolderChannel();
  HolderChannel(const HolderChannel&) = delete;
  HolderChannel& operator=(const HolderChannel&) = delete;

  // Sends `request` (its `key` is set here) and waits for the reply until the request's
  // timeout (or 60 s) and 10 s more. Before sending it checks the directory
  // (`CheckPrivateUserDir`), that the socket is a socket owned by the effective user, and
  // that the peer that accepted runs as that uid; any of them failing is kNotSent.
  HolderCall Send(HolderRequest request);

  const std::string& socket_path() const { return socket_path_; }

 private:
  HolderCall Open();
  std::string dir_;
  std::string key_;
  std::string socket_path_;
  int fd_ = -1;
  std::string buf_;  // read and not yet used
};

// Forwards one request to the controller (the holder's `HttpClient`); must be thread-safe.
using HolderForward = std::function<HolderReply(const HolderRequest&)>;

struct HolderServerOptions {
  std::string socket_path;  // `HolderSocketPath(dir, key)`; `dir` must pass `CheckPrivateUserDir`
  std::string key;
  // Exit when no client has been connected for this long.
  std::chrono::milliseconds idle_timeout{60'000};
  // How often the socket file is checked (gone or replaced: exit) and idleness measured.
  std::chrono::milliseconds check_interval{1'000};
  size_t max_connections = 512;  // more are closed at once
};

struct HolderServerStats {
  size_t connections = 0;    // accepted from the user, in all
  size_t requests = 0;       // forwarded
  size_t refused_peers = 0;  // connections of another uid, closed unread
  size_t open = 0;           // connections open now
};

// The holder's listening side: the socket, the lock, and a thread per client connection.
class HolderServer {
 public:
  // Takes the lock (kAlreadyExists when another holder holds it), then binds a fresh socket
  // (mode 0600) beside the path and renames it into place, so a client never finds a socket
  // that does not listen yet. kFailedPrecondition when the directory is not private, kUnavailable
  // naming the path when it cannot bind.
  static Result<std::unique_ptr<HolderServer>> Listen(HolderServerOptions options,
                                                      HolderForward forward);
  ~HolderServer();  // stops, joins every thread, removes its socket if still its own

  // Serves until idle, until the socket file is removed or replaced, or `Stop`. Returns why
  // it stopped ("idle", "socket removed or replaced", "stopped").
  std::string Run();
  void Stop();
  HolderServerStats stats() const;

 private:
  struct Impl;
  explicit HolderServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace corral::api
