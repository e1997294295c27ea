// TLS in the HTTP transport (issue 15 item 1): a throwaway CA and certificates made in the
// test; handshakes that must succeed and those that must be refused; the verified client
// certificate's identity handed to handlers; keep-alive and session resumption.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "api/http.h"
#include "api/http_test_certs.h"
#include "api/http_test_util.h"

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
