// TLS in the HTTP transport (issue 15 item 1): a throwaway CA and certificates made in the
// test; handshakes that must succeed and those that must be refused; the verified client
// certificate's identity handed to handlers; keep-alive and session resumption.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api/http.h"
#include "api/http_test_certs.h"
#include "api/http_test_util.h"
#include "core/clock.h"

namespace corral::api {
namespace {

using http_testing::Issued;
using http_testing::RawConn;
using http_testing::TestPki;
using http_testing::Text;
using http_testing::WaitUntil;
using std::chrono::milliseconds;

class HttpTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/corral-tls-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    pki_ = std::make_unique<TestPki>(dir_);
    ca_ = &pki_->Ca("ca");
    other_ca_ = &pki_->Ca("other-ca");
    server_cert_ = &pki_->Leaf("server", "controller", {"localhost"}, {"127.0.0.1"}, *ca_);
    client_cert_ = &pki_->Leaf("node-7", "node-7", {"node-7.cluster", "n7"}, {}, *ca_);
    stranger_cert_ = &pki_->Leaf("stranger", "node-7", {"node-7.cluster"}, {}, *other_ca_);
  }

  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Start(HttpTlsOptions::ClientCertificate mode = HttpTlsOptions::ClientCertificate::kNone,
             const Issued* cert = nullptr, HttpServerOptions options = {}) {
    cert = cert ? cert : server_cert_;
    options.tls.certificate_chain_file = cert->cert_file;
    options.tls.private_key_file = cert->key_file;
    options.tls.client_certificate = mode;
    options.tls.client_ca_file = ca_->cert_file;
    server_ = std::make_unique<HttpServer>(options);
    server_->Route("GET", "/peer", [](const HttpRequest& r) {
      std::string out = r.peer_certificate.verified ? "verified " : "none ";
      out += r.peer_certificate.subject_cn;
      for (const std::string& n : r.peer_certificate.dns_names) out += " " + n;
      return Text(out);
    });
    server_->Route("POST", "/echo", [](const HttpRequest& r) { return Text(r.body); });
    Status s = server_->Start("127.0.0.1", 0);
    ASSERT_TRUE(s.has_value()) << s.error().message;
  }

  std::string Url(const std::string& host = "localhost") const {
    return "https://" + host + ":" + std::to_string(server_->port());
  }

  std::unique_ptr<HttpClient> Client(const std::string& url, const Issued* ca,
                                     const Issued* cert = nullptr) {
    HttpClientOptions o;
    o.ca_file = ca->cert_file;
    if (cert != nullptr) {
      o.certificate_file = cert->cert_file;
      o.key_file = cert->key_file;
    }
    auto c = HttpClient::Create(url, o);
    EXPECT_TRUE(c.has_value()) << c.error().message;
    return std::move(*c);
  }

  std::string dir_;
  std::unique_ptr<TestPki> pki_;
  const Issued* ca_ = nullptr;
  const Issued* other_ca_ = nullptr;
  const Issued* server_cert_ = nullptr;
  const Issued* client_cert_ = nullptr;
  const Issued* stranger_cert_ = nullptr;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpTlsTest, HandshakeAndKeepAliveByNameAndByAddress) {
  Start();
  for (const std::string host : {"localhost", "127.0.0.1"}) {
    auto client = Client(Url(host), ca_);
    for (int i = 0; i < 5; ++i) {
      Result<HttpResponse> r = client->Send("POST", "/echo", "hello " + std::to_string(i));
      ASSERT_TRUE(r.has_value()) << host << ": " << r.error().message;
      EXPECT_EQ(r->body, "hello " + std::to_string(i));
    }
    Result<HttpResponse> r = client->Send("GET", "/peer", "");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->body, "none ");  // no client certificate asked for
  }
  EXPECT_EQ(server_->stats().tls_handshakes, 2u);  // one connection per client: keep-alive
  // A large body crosses many TLS records both ways.
  auto client = Client(Url(), ca_);
  std::string big(3 << 20, 'q');
  for (size_t i = 0; i < big.size(); i += 997) big[i] = static_cast<char>('a' + i % 26);
  Result<HttpResponse> r = client->Send("POST", "/echo", big);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, big);
}

TEST_F(HttpTlsTest, WrongCaAndWrongHostNameAreRefused) {
  Start();
  Result<HttpResponse> r = Client(Url(), other_ca_)->Send("GET", "/peer", "");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(r.error().message.find("certificate verify failed"), std::string::npos)
      << r.error().message;

  server_.reset();
  const Issued& elsewhere = pki_->Leaf("elsewhere", "db", {"db.example"}, {"10.1.2.3"}, *ca_);
  Start(HttpTlsOptions::ClientCertificate::kNone, &elsewhere);
  for (const std::string host : {"localhost", "127.0.0.1"}) {
    r = Client(Url(host), ca_)->Send("GET", "/peer", "");
    ASSERT_FALSE(r.has_value()) << host;
    EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
    EXPECT_NE(r.error().message.find("mismatch"), std::string::npos) << r.error().message;
  }
  EXPECT_EQ(server_->stats().tls_handshakes, 0u);
}

TEST_F(HttpTlsTest, RequiredClientCertificateIsCheckedAndItsIdentityExposed) {
  Start(HttpTlsOptions::ClientCertificate::kRequired);
  // None: refused in the handshake.
  Result<HttpResponse> r = Client(Url(), ca_)->Send("GET", "/peer", "");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable) << r.error().message;
  // One from another CA: refused too.
  r = Client(Url(), ca_, stranger_cert_)->Send("GET", "/peer", "");
  ASSERT_FALSE(r.has_value());
  // Ours: the handler sees who it is.
  r = Client(Url(), ca_, client_cert_)->Send("GET", "/peer", "");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, "verified node-7 node-7.cluster n7");
  // A verified certificate counts as authenticated.
  EXPECT_EQ(server_->stats().anonymous_connections, 0u);
}

TEST_F(HttpTlsTest, OptionalClientCertificate) {
  Start(HttpTlsOptions::ClientCertificate::kOptional);
  Result<HttpResponse> r = Client(Url(), ca_)->Send("GET", "/peer", "");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, "none ");
  r = Client(Url(), ca_, client_cert_)->Send("GET", "/peer", "");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, "verified node-7 node-7.cluster n7");
  r = Client(Url(), ca_, stranger_cert_)->Send("GET", "/peer", "");
  EXPECT_FALSE(r.has_value());  // offered but not from our CA
}

TEST_F(HttpTlsTest, PlaintextClientOnATlsPortGetsNothingUseful) {
  Start();
  auto plain = HttpClient::Create("http://127.0.0.1:" + std::to_string(server_->port()));
  ASSERT_TRUE(plain.has_value());
  Result<HttpResponse> r = (*plain)->Send("GET", "/peer", "", {}, false, milliseconds(5000));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable) << r.error().message;
  // Raw bytes: no HTTP answer, only the connection closing (or a TLS alert).
  RawConn raw(server_->port());
  raw.Write("GET /peer HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string got = raw.ReadUntilClose();
  EXPECT_EQ(got.find("HTTP/1.1"), std::string::npos) << got;
  EXPECT_EQ(got.find("verified"), std::string::npos);
  // The TLS clients are still served.
  EXPECT_EQ(Client(Url(), ca_)->Send("POST", "/echo", "ok")->body, "ok");
}

TEST_F(HttpTlsTest, NewConnectionsResumeTheSession) {
  HttpServerOptions options;
  options.idle_timeout = milliseconds(50);  // the server closes idle connections soon
  Start(HttpTlsOptions::ClientCertificate::kNone, nullptr, options);
  auto client = Client(Url(), ca_);
  for (int i = 0; i < 3; ++i) {
    Result<HttpResponse> r = client->Send("POST", "/echo", "x", {}, /*idempotent=*/true);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    // Wait until the server has closed it, so that the next request needs a new connection.
    EXPECT_TRUE(WaitUntil([&] { return server_->stats().connections == 0; }));
  }
  EXPECT_EQ(server_->stats().tls_handshakes, 3u);
  EXPECT_EQ(server_->stats().tls_resumed, 2u);  // all but the first
}

TEST_F(HttpTlsTest, ASessionSavedByOneClientResumesInAnother) {
  Start();
  std::vector<TlsSessionTicket> saved;
  HttpClientOptions o;
  o.ca_file = ca_->cert_file;
  o.on_new_session = [&saved](const TlsSessionTicket& t) { saved.push_back(t); };
  auto first = HttpClient::Create(Url(), o);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE((*first)->Send("POST", "/echo", "x").has_value());
  ASSERT_EQ(saved.size(), 1u);  // once a connection
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(SystemClock::Get().Now().time_since_epoch())
          .count();
  // The server's lifetime (an hour by default) bounds the ticket's.
  EXPECT_GT(saved[0].expires_unix_s, now + 3000);
  EXPECT_LE(saved[0].expires_unix_s, now + 3601);
  EXPECT_EQ((*first)->tls_stats().resumed, 0u);

  // A new client (as a new process would be) given the bytes resumes: no full handshake.
  HttpClientOptions again;
  again.ca_file = ca_->cert_file;
  again.resume_session = saved[0].der;
  auto second = HttpClient::Create(Url(), again);
  ASSERT_TRUE(second.has_value());
  Result<HttpResponse> r = (*second)->Send("POST", "/echo", "y");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, "y");
  EXPECT_EQ((*second)->tls_stats().handshakes, 1u);
  EXPECT_EQ((*second)->tls_stats().resumed, 1u);
  EXPECT_EQ(server_->stats().tls_resumed, 1u);

  // Garbage, or a session another server issued, only costs a full handshake.
  for (const std::string& bad : {std::string("not a session"), std::string()}) {
    again.resume_session = bad;
    auto third = HttpClient::Create(Url(), again);
    ASSERT_TRUE(third.has_value());
    ASSERT_TRUE((*third)->Send("POST", "/echo", "z").has_value());
    EXPECT_EQ((*third)->tls_stats().resumed, 0u);
  }
  server_.reset();
  Start();  // new ticket keys
  again.resume_session = saved[0].der;
  auto fourth = HttpClient::Create(Url(), again);
  ASSERT_TRUE(fourth.has_value());
  r = (*fourth)->Send("POST", "/echo", "w");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*fourth)->tls_stats().resumed, 0u);
  EXPECT_EQ(server_->stats().tls_handshakes, 1u);
  EXPECT_EQ(server_->stats().tls_resumed, 0u);
}

TEST_F(HttpTlsTest, APreSharedKeyServerTalksOnlyToHoldersOfTheKey) {
  const std::string key(32, 'k');
  HttpServerOptions options;
  options.tls.psk = key;
  options.tls.psk_identity = "step";
  server_ = std::make_unique<HttpServer>(options);
  server_->Route("POST", "/echo", [](const HttpRequest& r) { return Text(r.body); });
  ASSERT_TRUE(server_->Start("127.0.0.1", 0).has_value());
  const std::string url = "https://127.0.0.1:" + std::to_string(server_->port());
  auto with = [&](const std::string& psk, const std::string& identity) {
    HttpClientOptions o;
    o.psk = psk;
    o.psk_identity = identity;
    o.connect_timeout = milliseconds(3000);
    return HttpClient::Create(url, o);
  };
  auto good = with(key, "step");
  ASSERT_TRUE(good.has_value()) << good.error().message;
  Result<HttpResponse> r = (*good)->Send("POST", "/echo", "secret output");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, "secret output");
  // Another key, another identity, a certificate client, a plain one: no exchange.
  EXPECT_FALSE((*with(std::string(32, 'x'), "step"))->Send("POST", "/echo", "a").has_value());
  EXPECT_FALSE((*with(key, "other"))->Send("POST", "/echo", "a").has_value());
  EXPECT_FALSE(Client(url, ca_)->Send("POST", "/echo", "a").has_value());
  auto plain = HttpClient::Create("http://127.0.0.1:" + std::to_string(server_->port()));
  EXPECT_FALSE((*plain)->Send("POST", "/echo", "a", {}, false, milliseconds(3000)).has_value());
  EXPECT_EQ(server_->stats().tls_handshakes, 1u);

  // A key client never accepts a certificate server in its place (it trusts no CA).
  server_.reset();
  Start();
  HttpClientOptions o;
  o.psk = key;
  o.psk_identity = "step";
  auto impostor = HttpClient::Create(Url("127.0.0.1"), o);
  ASSERT_TRUE(impostor.has_value());
  EXPECT_FALSE((*impostor)->Send("POST", "/echo", "a").has_value());
  // A key needs https:// and 32 bytes.
  EXPECT_FALSE(HttpClient::Create("http://127.0.0.1:1", o).has_value());
  o.psk = "short";
  EXPECT_FALSE(HttpClient::Create("https://127.0.0.1:1", o).has_value());
}

TEST_F(HttpTlsTest, SilentClientIsDroppedAfterTheHandshakeTimeout) {
  HttpServerOptions options;
  options.tls.handshake_timeout = milliseconds(100);
  Start(HttpTlsOptions::ClientCertificate::kNone, nullptr, options);
  RawConn silent(server_->port());
  EXPECT_TRUE(silent.WaitForClose());
  EXPECT_TRUE(WaitUntil([&] { return server_->stats().connections == 0; }));
}

TEST_F(HttpTlsTest, BadFilesAreInvalidArgumentNamingThem) {
  HttpServerOptions options;
  options.tls.certificate_chain_file = dir_ + "/missing.crt";
  options.tls.private_key_file = server_cert_->key_file;
  HttpServer server(options);
  Status s = server.Start("127.0.0.1", 0);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(s.error().message.find("missing.crt"), std::string::npos) << s.error().message;
  HttpClientOptions o;
  o.ca_file = dir_ + "/nope.pem";
  auto c = HttpClient::Create("https://localhost:1", o);
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.error().message.find("nope.pem"), std::string::npos) << c.error().message;
}

}  // namespace
}  // namespace corral::api
