#include "api/internal/tls.h"

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace corral::api::internal {
namespace {

// The queued OpenSSL errors as one line (and the queue cleared).
std::string OpenSslErrors() {
  std::string out;
  const char* data = nullptr;
  int flags = 0;
  while (unsigned long e = ERR_get_error_all(nullptr, nullptr, nullptr, &data, &flags)) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
    if (data != nullptr && *data != '\0' && (flags & ERR_TXT_STRING) != 0) {
      out += std::string(" (") + data + ")";
    }
  }
  return out.empty() ? "unknown TLS error" : out;
}

tl::unexpected<Error> FileError(const std::string& what, const std::string& path) {
  return InvalidArgument("tls: cannot use " + what + " \"" + path + "\": " + OpenSslErrors());
}

SSL_CTX* NewContext(const SSL_METHOD* method) {
  SSL_CTX* ctx = SSL_CTX_new(method);
  if (ctx == nullptr) return nullptr;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // Partial writes from a buffer that may move between retries (it is a std::string).
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                            SSL_MODE_RELEASE_BUFFERS);
  return ctx;
}

}  // namespace

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

namespace {

// A CA file the client can use later: readable, with a PEM certificate in it (at most 16 MiB).
Status CheckCaFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) {
    return InvalidArgument("tls: cannot use CA file \"" + path + "\": " + std::strerror(errno));
  }
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && text.size() < (16u << 20)) {
    text.append(buf, n);
  }
  const bool read_error = std::ferror(f) != 0;
  std::fclose(f);
  if (read_error || text.find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    return InvalidArgument("tls: cannot use CA file \"" + path + "\": no PEM certificate in it");
  }
  return {};
}

}  // namespace

int TlsContext::VerifyChain(X509_STORE_CTX* store_ctx, void* arg) {
  auto* self = static_cast<TlsContext*>(arg);
  std::call_once(self->ca_once_, [self] {
    ERR_set_mark();
    self->ca_loaded_ =
        SSL_CTX_load_verify_locations(self->ctx_, self->ca_file_.c_str(), nullptr) == 1;
    if (!self->ca_loaded_) {
      self->ca_error_ = "tls: cannot use CA file \"" + self->ca_file_ + "\": " + OpenSslErrors();
    }
    ERR_pop_to_mark();
  });
  if (!self->ca_loaded_) {
    // The connection's error then names the file (`TlsConn::error`).
    ERR_raise_data(ERR_LIB_SSL, SSL_R_CERTIFICATE_VERIFY_FAILED, "%s", self->ca_error_.c_str());
    X509_STORE_CTX_set_error(store_ctx, X509_V_ERR_UNSPECIFIED);
    return 0;
  }
  return X509_verify_cert(store_ctx);
}

namespace {

// The session OpenSSL resumes for an external PSK: TLS 1.3 with TLS_AES_128_GCM_SHA256 (whose
// hash, SHA-256, the key's length matches).
SSL_SESSION* PskSession(SSL* ssl, const std::string& key) {
  static const unsigned char kAes128GcmSha256[] = {0x13, 0x01};
  const SSL_CIPHER* cipher = SSL_CIPHER_find(ssl, kAes128GcmSha256);
  if (cipher == nullptr) return nullptr;
  SSL_SESSION* s = SSL_SESSION_new();
  if (s == nullptr) return nullptr;
  if (SSL_SESSION_set1_master_key(s, reinterpret_cast<const unsigned char*>(key.data()),
                                  key.size()) != 1 ||
      SSL_SESSION_set_cipher(s, cipher) != 1 ||
      SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION) != 1) {
    SSL_SESSION_free(s);
    return nullptr;
  }
  return s;
}

}  // namespace

int TlsContext::FindPsk(SSL* ssl, const unsigned char* identity, size_t identity_len,
                        SSL_SESSION** session) {
  *session = nullptr;
  const auto* self = static_cast<const TlsContext*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
  if (self == nullptr) return 0;
  if (std::string_view(reinterpret_cast<const char*>(identity), identity_len) !=
      self->psk_identity_) {
    return 1;  // an unknown identity: no PSK, and without a certificate no handshake
  }
  *session = PskSession(ssl, self->psk_);
  return *session != nullptr ? 1 : 0;
}

int TlsContext::UsePskSession(SSL* ssl, const EVP_MD* md, const unsigned char** id, size_t* id_len,
                              SSL_SESSION** session) {
  *session = nullptr;
  const auto* self = static_cast<const TlsContext*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
  if (self == nullptr) return 0;
  if (md != nullptr && EVP_MD_get_type(md) != NID_sha256) return 1;  // another suite: no PSK
  SSL_SESSION* s = PskSession(ssl, self->psk_);
  if (s == nullptr) return 0;
  *id = reinterpret_cast<const unsigned char*>(self->psk_identity_.data());
  *id_len = self->psk_identity_.size();
  *session = s;
  return 1;
}

Status TlsContext::UsePsk(bool server, std::string psk, std::string identity) {
  psk_ = std::move(psk);
  psk_identity_ = std::move(identity);
  SSL_CTX_set_app_data(ctx_, this);
  SSL_CTX_set_min_proto_version(ctx_, TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(ctx_, TLS1_3_VERSION);
  if (SSL_CTX_set_ciphersuites(ctx_, "TLS_AES_128_GCM_SHA256") != 1) {
    return MakeError(ErrorCode::kInternal, "tls: " + OpenSslErrors());
  }
  // The key is the only credential: no session tickets (each connection proves it anew).
  SSL_CTX_set_options(ctx_, SSL_OP_NO_TICKET);
  SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_OFF);
  if (server) {
    SSL_CTX_set_num_tickets(ctx_, 0);
    SSL_CTX_set_psk_find_session_callback(ctx_, &TlsContext::FindPsk);
  } else {
    // A server that answers with a certificate instead of the key is refused: no CA is
    // trusted (and the client checks that the handshake used the key, `UsedPsk`).
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    SSL_CTX_set_psk_use_session_callback(ctx_, &TlsContext::UsePskSession);
  }
  return {};
}

Result<std::unique_ptr<TlsContext>> TlsContext::ForPskClient(const std::string& psk,
                                                             const std::string& identity) {
  ERR_clear_error();
  if (psk.size() != 32) return InvalidArgument("tls: a pre-shared key must be 32 bytes");
  SSL_CTX* raw = NewContext(TLS_client_method());
  if (raw == nullptr) return MakeError(ErrorCode::kInternal, "tls: " + OpenSslErrors());
  std::unique_ptr<TlsContext> ctx(new TlsContext(raw));
  CORRAL_RETURN_IF_ERROR(ctx->UsePsk(false, psk, identity));
  return ctx;
}

Result<std::unique_ptr<TlsContext>> TlsContext::ForServer(const HttpTlsOptions& o) {
  ERR_clear_error();
  SSL_CTX* raw = NewContext(TLS_server_method());
  if (raw == nullptr) return MakeError(ErrorCode::kInternal, "tls: " + OpenSslErrors());
  std::unique_ptr<TlsContext> ctx(new TlsContext(raw));
  if (!o.psk.empty()) {
    if (o.psk.size() != 32) return InvalidArgument("tls: a pre-shared key must be 32 bytes");
    CORRAL_RETURN_IF_ERROR(ctx->UsePsk(true, o.psk, o.psk_identity));
    return ctx;
  }
  if (SSL_CTX_use_certificate_chain_file(raw, o.certificate_chain_file.c_str()) != 1) {
    return FileError("certificate chain", o.certificate_chain_file);
  }
  if (SSL_CTX_use_PrivateKey_file(raw, o.private_key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return FileError("private key", o.private_key_file);
  }
  if (SSL_CTX_check_private_key(raw) != 1) return FileError("private key", o.private_key_file);
  // Stateless session tickets (OpenSSL's default) let clients resume without a server cache,
  // on any connection and from any process (the CLI keeps its ticket in a file: cli/
  // tls_session_cache.h): the ticket keys are made with the context and kept for its life (the
  // server's). A ticket is good for `session_lifetime`; a small cache also serves TLS 1.2
  // session ids.
  SSL_CTX_set_session_cache_mode(raw, SSL_SESS_CACHE_SERVER);
  SSL_CTX_set_timeout(raw, static_cast<long>(o.session_lifetime.count()));
  static const unsigned char kSessionContext[] = "corral";
  SSL_CTX_set_session_id_context(raw, kSessionContext, sizeof kSessionContext - 1);
  if (o.client_certificate != HttpTlsOptions::ClientCertificate::kNone) {
    if (SSL_CTX_load_verify_locations(raw, o.client_ca_file.c_str(), nullptr) != 1) {
      return FileError("client CA file", o.client_ca_file);
    }
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(o.client_ca_file.c_str());
    if (names != nullptr) SSL_CTX_set_client_CA_list(raw, names);
    int mode = SSL_VERIFY_PEER;
    if (o.client_certificate == HttpTlsOptions::ClientCertificate::kRequired) {
      mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    }
    SSL_CTX_set_verify(raw, mode, nullptr);
  }
  return ctx;
}

Result<std::unique_ptr<TlsContext>> TlsContext::ForClient(const std::string& ca_file,
                                                          const std::string& certificate_file,
                                                          const std::string& key_file) {
  ERR_clear_error();
  SSL_CTX* raw = NewContext(TLS_client_method());
  if (raw == nullptr) return MakeError(ErrorCode::kInternal, "tls: " + OpenSslErrors());
  std::unique_ptr<TlsContext> ctx(new TlsContext(raw));
  if (ca_file.empty()) {
    if (SSL_CTX_set_default_verify_paths(raw) != 1) return FileError("the system CAs", "");
  } else {
    // Checked now (readable, a PEM certificate in it), parsed at the first full handshake.
    CORRAL_RETURN_IF_ERROR(CheckCaFile(ca_file));
    ctx->ca_file_ = ca_file;
    SSL_CTX_set_cert_verify_callback(raw, &TlsContext::VerifyChain, ctx.get());
  }
  SSL_CTX_set_verify(raw, SSL_VERIFY_PEER, nullptr);
  if (!certificate_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(raw, certificate_file.c_str()) != 1) {
      return FileError("certificate", certificate_file);
    }
    const std::string& key = key_file.empty() ? certificate_file : key_file;
    if (SSL_CTX_use_PrivateKey_file(raw, key.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(raw) != 1) {
      return FileError("key", key);
    }
  }
  // The client keeps its sessions itself (`TakeSession`); no internal cache.
  SSL_CTX_set_session_cache_mode(raw, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
  return ctx;
}

std::unique_ptr<TlsConn> TlsConn::Server(const TlsContext& ctx, int fd) {
  SSL* ssl = SSL_new(ctx.get());
  if (ssl == nullptr) return nullptr;
  SSL_set_fd(ssl, fd);
  SSL_set_accept_state(ssl);
  return std::unique_ptr<TlsConn>(new TlsConn(ssl));
}

std::unique_ptr<TlsConn> TlsConn::Client(const TlsContext& ctx, int fd, const std::string& host,
                                         ssl_session_st* session) {
  SSL* ssl = SSL_new(ctx.get());
  if (ssl == nullptr) return nullptr;
  SSL_set_fd(ssl, fd);
  SSL_set_connect_state(ssl);
  in6_addr addr6;
  in_addr addr4;
  const bool ip = inet_pton(AF_INET, host.c_str(), &addr4) == 1 ||
                  inet_pton(AF_INET6, host.c_str(), &addr6) == 1;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (ip) {
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    SSL_set1_host(ssl, host.c_str());
    SSL_set_tlsext_host_name(ssl, host.c_str());
  }
  if (session != nullptr) SSL_set_session(ssl, session);
  return std::unique_ptr<TlsConn>(new TlsConn(ssl));
}

TlsConn::~TlsConn() { SSL_free(ssl_); }

namespace {

// OpenSSL's socket BIO writes with write(2), which cannot be given MSG_NOSIGNAL: a write to a
// peer that has gone raises SIGPIPE, which kills a process that does not ignore it (the CLI,
// the tests; the daemons ignore it). While a TLS call runs, SIGPIPE is blocked in the calling
// thread and one it raised is consumed, so that a closed peer is an error like on plain
// connections. A process that ignores SIGPIPE (the daemons, from the start of main) needs none
// of this: its four system calls per TLS call were a fifth of a controller's CPU under 2,000
// agent heartbeats a second (bench/swarm.sh).
bool SigpipeIgnored() {
  static const bool ignored = [] {
    struct sigaction sa {};
    return sigaction(SIGPIPE, nullptr, &sa) == 0 && sa.sa_handler == SIG_IGN;
  }();
  return ignored;
}

class SigpipeGuard {
 public:
  SigpipeGuard() : active_(!SigpipeIgnored()) {
    if (!active_) return;
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    pending_before_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeGuard() {
    if (!active_) return;
    if (!pending_before_) {
      sigset_t pending;
      sigemptyset(&pending);
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        timespec zero{0, 0};
        sigtimedwait(&pipe_, nullptr, &zero);
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  const bool active_;
  sigset_t pipe_;
  sigset_t old_;
  bool pending_before_ = false;
};

}  // namespace

TlsIo TlsConn::Outcome(int rc, size_t* n) {
  if (rc > 0) {
    if (n != nullptr) *n = static_cast<size_t>(rc);
    return TlsIo::kOk;
  }
  int err = SSL_get_error(ssl_, rc);
  switch (err) {
    case SSL_ERROR_WANT_READ:
      return TlsIo::kWantRead;
    case SSL_ERROR_WANT_WRITE:
      return TlsIo::kWantWrite;
    case SSL_ERROR_ZERO_RETURN:
      return TlsIo::kClosed;
    case SSL_ERROR_SYSCALL:
      if (ERR_peek_error() == 0) {
        error_ = errno == 0 ? "connection closed" : std::strerror(errno);
        ERR_clear_error();
        return errno == 0 ? TlsIo::kClosed : TlsIo::kError;
      }
      [[fallthrough]];
    default: {
      long verify = SSL_get_verify_result(ssl_);
      error_ = OpenSslErrors();
      if (verify != X509_V_OK) {
        error_ += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
      }
      return TlsIo::kError;
    }
  }
}

TlsIo TlsConn::Handshake() {
  SigpipeGuard guard;
  ERR_clear_error();
  return Outcome(SSL_do_handshake(ssl_), nullptr);
}

TlsIo TlsConn::Read(char* buf, size_t size, size_t* n) {
  SigpipeGuard guard;
  ERR_clear_error();
  return Outcome(SSL_read(ssl_, buf, static_cast<int>(std::min<size_t>(size, 1 << 30))), n);
}

TlsIo TlsConn::Write(std::string_view data, size_t* n) {
  SigpipeGuard guard;
  ERR_clear_error();
  return Outcome(
      SSL_write(ssl_, data.data(), static_cast<int>(std::min<size_t>(data.size(), 1 << 30))), n);
}

void TlsConn::Shutdown() {
  SigpipeGuard guard;
  ERR_clear_error();
  SSL_shutdown(ssl_);
  ERR_clear_error();
}

bool TlsConn::resumed() const { return SSL_session_reused(ssl_) == 1; }

bool TlsConn::Pending() const { return SSL_pending(ssl_) > 0; }

PeerCertificate TlsConn::Peer() const {
  PeerCertificate p;
  X509* cert = SSL_get_peer_certificate(ssl_);
  if (cert == nullptr) return p;
  p.verified = SSL_get_verify_result(ssl_) == X509_V_OK;
  if (p.verified) {
    char cn[256];
    int len = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
    if (len > 0) p.subject_cn.assign(cn, static_cast<size_t>(len));
    auto* names =
        static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
    if (names != nullptr) {
      for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
        const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
        if (name->type != GEN_DNS) continue;
        const ASN1_IA5STRING* dns = name->d.dNSName;
        p.dns_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                                 static_cast<size_t>(ASN1_STRING_length(dns)));
      }
      GENERAL_NAMES_free(names);
    }
  }
  X509_free(cert);
  return p;
}

ssl_session_st* TlsConn::TakeSession() const {
  SSL_SESSION* s = SSL_get1_session(ssl_);
  if (s == nullptr) return nullptr;
  // A copy: freeing a connection that was not shut down marks its own session object as not
  // resumable, and the server may close an idle connection at any time.
  SSL_SESSION* copy = SSL_SESSION_is_resumable(s) == 1 ? SSL_SESSION_dup(s) : nullptr;
  SSL_SESSION_free(s);
  return copy;
}

void FreeSession(ssl_session_st* session) {
  if (session != nullptr) SSL_SESSION_free(session);
}

bool TlsConn::UsedPsk() const { return SSL_session_reused(ssl_) == 1; }

namespace {

// When a client's session stops being accepted: its start plus the shorter of its timeout and
// (TLS 1.3) the ticket's lifetime.
int64_t SessionExpiry(const SSL_SESSION* s) {
  int64_t lifetime = SSL_SESSION_get_timeout(s);
  const int64_t hint = static_cast<int64_t>(SSL_SESSION_get_ticket_lifetime_hint(s));
  if (hint > 0 && hint < lifetime) lifetime = hint;
  return static_cast<int64_t>(SSL_SESSION_get_time(s)) + lifetime;
}

bool UsableTls13(const SSL_SESSION* s) {
  return SSL_SESSION_get_protocol_version(s) == TLS1_3_VERSION &&
         SSL_SESSION_is_resumable(s) == 1 && SSL_SESSION_has_ticket(s) == 1;
}

}  // namespace

TlsSessionTicket SerializeSession(ssl_session_st* session) {
  TlsSessionTicket t;
  if (session == nullptr || !UsableTls13(session)) return t;
  int len = i2d_SSL_SESSION(session, nullptr);
  if (len <= 0) return t;
  t.der.resize(static_cast<size_t>(len));
  auto* p = reinterpret_cast<unsigned char*>(t.der.data());
  if (i2d_SSL_SESSION(session, &p) != len) {
    t.der.clear();
    return t;
  }
  t.expires_unix_s = SessionExpiry(session);
  return t;
}

ssl_session_st* ParseSession(std::string_view der, int64_t now_unix_s) {
  if (der.empty() || der.size() > (1 << 16)) return nullptr;
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  SSL_SESSION* s = d2i_SSL_SESSION(nullptr, &p, static_cast<long>(der.size()));
  ERR_clear_error();
  if (s == nullptr) return nullptr;
  if (!UsableTls13(s) || SessionExpiry(s) <= now_unix_s ||
      p != reinterpret_cast<const unsigned char*>(der.data() + der.size())) {
    SSL_SESSION_free(s);
    return nullptr;
  }
  return s;
}

}  // namespace corral::api::internal
