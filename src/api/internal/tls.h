// TLS for the HTTP transport, over OpenSSL (linked statically, DESIGN.md "Process start
// cost"): the server's and the client's contexts, non-blocking I/O on one connection, and the
// identity of a verified peer certificate. OpenSSL's headers stay in tls.cc; nothing here
// runs (or initialises OpenSSL) unless a TLS server or an https:// client is created.
//
// Thread-safety: a `TlsContext` is thread-safe once built; a `TlsConn` belongs to one thread
// at a time.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "api/http.h"
#include "core/result.h"
#include "core/time.h"

struct ssl_st;
struct ssl_ctx_st;
struct ssl_session_st;
struct evp_md_st;
struct x509_store_ctx_st;

namespace corral::api::internal {

class TlsContext {
 public:
  // A server context: the certificate chain and key, and (when `client_certificate` is not
  // kNone) the CAs that client certificates must chain to. Returns kInvalidArgument naming
  // the file that cannot be read or does not fit.
  static Result<std::unique_ptr<TlsContext>> ForServer(const HttpTlsOptions& options);
  // A client context: verifies the server against `ca_file` (the system's CAs when empty),
  // and presents `certificate_file`/`key_file` when set. Returns kInvalidArgument naming the
  // file.
  static Result<std::unique_ptr<TlsContext>> ForClient(const std::string& ca_file,
                                                       const std::string& certificate_file,
                                                       const std::string& key_file);
  // A client context that authenticates the server by the pre-shared key `psk` (TLS 1.3,
  // TLS_AES_128_GCM_SHA256), offered under `identity`; a server that answers with a
  // certificate instead fails the handshake (no CA is trusted).
  static Result<std::unique_ptr<TlsContext>> ForPskClient(const std::string& psk,
                                                          const std::string& identity);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  ssl_ctx_st* get() const { return ctx_; }
  // True for a context made with a pre-shared key: its handshakes must use it.
  bool psk() const { return !psk_.empty(); }

 private:
  explicit TlsContext(ssl_ctx_st* ctx) : ctx_(ctx) {}
  // Makes `ctx` a TLS 1.3 PSK context on `psk`/`identity` (kept here for the callbacks).
  Status UsePsk(bool server, std::string psk, std::string identity);
  static int FindPsk(ssl_st* ssl, const unsigned char* identity, size_t identity_len,
                     ssl_session_st** session);
  static int UsePskSession(ssl_st* ssl, const evp_md_st* md, const unsigned char** id,
                           size_t* id_len, ssl_session_st** session);
  // Verifies a server's chain against `ca_file_`, parsed at the first full handshake: a CLI
  // call that resumes its session never needs it, and parsing it costs more than resuming saves.
  static int VerifyChain(x509_store_ctx_st* store_ctx, void* self);
  ssl_ctx_st* ctx_;
  std::string psk_;
  std::string psk_identity_;
  std::string ca_file_;
  std::once_flag ca_once_;
  bool ca_loaded_ = false;
  std::string ca_error_;
};

// What one non-blocking TLS operation did.
enum class TlsIo { kOk, kWantRead, kWantWrite, kClosed, kError };

// One TLS connection over a non-blocking socket (the socket stays the caller's).
class TlsConn {
 public:
  // A server side (`accept`) or client side connection. For a client, `host` is verified
  // against the certificate (a DNS name or an IP address) and sent as SNI (names only), and
  // `session` (may be null) is offered for resumption.
  static std::unique_ptr<TlsConn> Server(const TlsContext& ctx, int fd);
  static std::unique_ptr<TlsConn> Client(const TlsContext& ctx, int fd, const std::string& host,
                                         ssl_session_st* session);
  ~TlsConn();
  TlsConn(const TlsConn&) = delete;
  TlsConn& operator=(const TlsConn&) = delete;

  TlsIo Handshake();
  // `*n` is set to the bytes read or written on kOk.
  TlsIo Read(char* buf, size_t size, size_t* n);
  TlsIo Write(std::string_view data, size_t* n);
  // Sends close_notify (best effort, non-blocking).
  void Shutdown();

  // Why the last operation failed ("certificate verify failed: ..."), for error messages.
  const std::string& error() const { return error_; }
  bool resumed() const;
  // True when decrypted input is buffered (a read would not need the socket).
  bool Pending() const;
  // The peer's certificate when it was verified; `verified` false otherwise.
  PeerCertificate Peer() const;
  // The session, for resumption by a later connection (caller frees with `FreeSession`);
  // null when it cannot be resumed.
  ssl_session_st* TakeSession() const;
  // True when the handshake used a pre-shared key or resumed a session (no certificate was
  // needed).
  bool UsedPsk() const;

 private:
  explicit TlsConn(ssl_st* ssl) : ssl_(ssl) {}
  TlsIo Outcome(int rc, size_t* n);
  ssl_st* ssl_;
  std::string error_;
};

void FreeSession(ssl_session_st* session);

// A session serialized for another process (`HttpClientOptions::resume_session`): its DER and
// when it expires. Null `der` when it is no TLS 1.3 session that can be resumed.
TlsSessionTicket SerializeSession(ssl_session_st* session);
// The session of `der`, or null when it does not parse, is no resumable TLS 1.3 session, or
// has expired at `now_unix_s`. Caller frees with `FreeSession`.
ssl_session_st* ParseSession(std::string_view der, int64_t now_unix_s);

}  // namespace corral::api::internal
