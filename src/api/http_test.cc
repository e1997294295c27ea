#include "api/http.h"

#include <dirent.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "api/http_status.h"
#include "api/http_test_util.h"
#include "core/clock.h"

namespace corral::api {
namespace {

using http_testing::BodyOf;
using http_testing::ClientFor;
using http_testing::kPatience;
using http_testing::Now;
using http_testing::RawConn;
using http_testing::StatusOf;
using http_testing::Text;
using http_testing::ThreadCount;
using http_testing::WaitUntil;
using std::chrono::milliseconds;

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer(HttpServerOptions options = {}) {
    server_ = std::make_unique<HttpServer>(options);
    server_->Route("GET", "/api/v1/jobs/{id}", [](const HttpRequest& r) {
      std::string out = "job " + r.params.at("id");
      for (const auto& [k, v] : r.query) out += " " + k + "=" + v;
      return Text(out);
    });
    server_->Route("GET", "/api/v1/jobs/stats", [](const HttpRequest&) { return Text("stats"); });
    server_->Route("DELETE", "/api/v1/jobs/{id}",
                   [](const HttpRequest& r) { return Text("deleted " + r.params.at("id")); });
    server_->Route("POST", "/echo", [](const HttpRequest& r) {
      HttpResponse resp = Text(r.body);
      resp.headers["X-Content-Type-Seen"] = r.header("content-type");
      return resp;
    });
    server_->Route("GET", "/files/{path*}",
                   [](const HttpRequest& r) { return Text("file " + r.params.at("path")); });
    server_->Route("GET", "/peer", [](const HttpRequest& r) { return Text(r.peer); });
    server_->Route("GET", "/throw",
                   [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); });
    server_->Route("GET", "/empty", [](const HttpRequest&) { return Text("", 204); });
    server_->Route("POST", "/stop", [this](const HttpRequest&) {
      server_->Stop();
      return Text("stopping");
    });
    server_->Route("GET", "/block", [this](const HttpRequest&) {
      std::unique_lock<std::mutex> lock(mu_);
      ++blocked_;
      cv_.notify_all();
      cv_.wait(lock, [this] { return released_; });
      return Text("released");
    });
    ASSERT_TRUE(server_->Start("127.0.0.1", 0).has_value());
    ASSERT_NE(server_->port(), 0);
  }

  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

  bool WaitBlocked(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kPatience, [&] { return blocked_ >= n; });
  }

  void TearDown() override {
    Release();
    server_.reset();
  }

  // Sends raw bytes on a new connection and returns everything until the server closes.
  std::string RawExchange(std::string_view request) {
    RawConn c(server_->port());
    EXPECT_TRUE(c.connected());
    c.Write(request);
    return c.ReadUntilClose();
  }

  std::unique_ptr<HttpServer> server_;
  std::mutex mu_;
  std::condition_variable cv_;
  int blocked_ = 0;
  bool released_ = false;
};

TEST_F(HttpServerTest, RoutesWithParametersQueryAndBody) {
  StartServer();
  auto client = ClientFor(server_->port());
  Result<HttpResponse> r = client->Send("GET", "/api/v1/jobs/42?a=1&b=x%20y&flag", "");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->content_type, "text/plain");
  EXPECT_EQ(r->body, "job 42 a=1 b=x y flag=");

  r = client->Send("POST", "/echo", R"({"x":1})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, R"({"x":1})");
  EXPECT_EQ(r->headers.at("x-content-type-seen"), "application/json");

  r = client->Send("DELETE", "/api/v1/jobs/7", "");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "deleted 7");
}

TEST_F(HttpServerTest, LiteralSegmentBeatsParameterAndEncodedSlashStaysInSegment) {
  StartServer();
  auto client = ClientFor(server_->port());
  EXPECT_EQ(client->Send("GET", "/api/v1/jobs/stats", "")->body, "stats");
  EXPECT_EQ(client->Send("GET", "/api/v1/jobs/a%2Fb", "")->body, "job a/b");
  EXPECT_EQ(client->Send("GET", "/files/a/b/c.txt", "")->body, "file a/b/c.txt");
  EXPECT_EQ(client->Send("GET", "/files/", "")->body, "file ");
  EXPECT_EQ(client->Send("GET", "/api/v1/jobs/", "")->status, 404);  // a parameter is never empty
}

TEST_F(HttpServerTest, NotFoundAndMethodNotAllowedAnswerJsonErrors) {
  StartServer();
  auto client = ClientFor(server_->port());
  Result<HttpResponse> r = client->Send("GET", "/nope", "");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->content_type, "application/json");
  Result<HttpResponse> checked = CheckResponse(r);
  EXPECT_EQ(checked.error(), (Error{ErrorCode::kNotFound, "no route for GET /nope"}));

  r = client->Send("PUT", "/api/v1/jobs/3", "{}");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->headers.at("allow"), "DELETE, GET");
  EXPECT_EQ(CheckResponse(r).error().code, ErrorCode::kUnimplemented);
}

TEST_F(HttpServerTest, HandlerThatThrowsGets500AndServerKeepsServing) {
  StartServer();
  auto client = ClientFor(server_->port());
  for (int i = 0; i < 3; ++i) {
    Result<HttpResponse> r = client->Send("GET", "/throw", "");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 500);
    EXPECT_EQ(CheckResponse(r).error(), (Error{ErrorCode::kInternal, "handler failed: boom"}));
  }
  EXPECT_EQ(client->Send("GET", "/api/v1/jobs/1", "")->status, 200);
}

TEST_F(HttpServerTest, KeepAliveReusesOneConnection) {
  StartServer();
  auto client = ClientFor(server_->port());
  std::string first = client->Send("GET", "/peer", "")->body;
  for (int i = 0; i < 20; ++i) EXPECT_EQ(client->Send("GET", "/peer", "")->body, first);
}

TEST_F(HttpServerTest, HeadAndNoContentHaveNoBody) {
  StartServer();
  RawConn c(server_->port());
  c.Write("HEAD /api/v1/jobs/5 HTTP/1.1\r\nHost: x\r\n\r\nGET /empty HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string head = c.ReadResponse(/*head_only=*/true);
  EXPECT_EQ(StatusOf(head), 200);
  EXPECT_NE(head.find("Content-Length: 5\r\n"), std::string::npos);  // "job 5", not sent
  c.Write("GET /api/v1/jobs/6 HTTP/1.1\r\nHost: x\r\n\r\n");
  // Had HEAD carried a body, these reads would be out of step.
  std::string empty = c.ReadResponse();
  EXPECT_EQ(StatusOf(empty), 204);
  EXPECT_EQ(empty.find("Content-Length"), std::string::npos);
  EXPECT_EQ(BodyOf(c.ReadResponse()), "job 6");

  auto client = ClientFor(server_->port());
  Result<HttpResponse> r = client->Send("HEAD", "/api/v1/jobs/5", "");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "");
  EXPECT_EQ(client->Send("GET", "/api/v1/jobs/5", "")->body, "job 5");  // connection still in step
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  StartServer();
  RawConn c(server_->port());
  c.Write(
      "GET /api/v1/jobs/1 HTTP/1.1\r\nHost: x\r\n\r\n"
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
      "\r\nGET /api/v1/jobs/3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string all = c.ReadUntilClose();
  size_t p1 = all.find("job 1");
  size_t p2 = all.find("abc");
  size_t p3 = all.find("job 3");
  ASSERT_NE(p1, std::string::npos) << all;
  ASSERT_NE(p2, std::string::npos) << all;
  ASSERT_NE(p3, std::string::npos) << all;
  EXPECT_LT(p1, p2);
  EXPECT_LT(p2, p3);
  EXPECT_NE(all.find("Connection: close"), std::string::npos);
}

TEST_F(HttpServerTest, Http10ClosesUnlessKeepAliveIsAsked) {
  StartServer();
  std::string r = RawExchange("GET /api/v1/jobs/1 HTTP/1.0\r\n\r\n");
  EXPECT_EQ(StatusOf(r), 200);
  EXPECT_EQ(BodyOf(r), "job 1");

  RawConn c(server_->port());
  c.Write("GET /api/v1/jobs/2 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  std::string first = c.ReadResponse();
  EXPECT_NE(first.find("Connection: keep-alive"), std::string::npos);
  c.Write("GET /api/v1/jobs/3 HTTP/1.0\r\n\r\n");
  EXPECT_EQ(BodyOf(c.ReadResponse()), "job 3");
  EXPECT_TRUE(c.WaitForClose());
}

TEST_F(HttpServerTest, ExpectContinueGetsInterimAnswer) {
  StartServer();
  RawConn c(server_->port());
  c.Write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  std::string interim = c.ReadResponse();
  EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  c.Write("hello");
  EXPECT_EQ(BodyOf(c.ReadResponse()), "hello");

  // Over the limit: 413 at once, no 100.
  server_.reset();
  HttpServerOptions options;
  options.max_body_bytes = 10;
  StartServer(options);
  RawConn d(server_->port());
  d.Write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n");
  std::string r = d.ReadResponse();
  EXPECT_EQ(StatusOf(r), 413) << r;
  EXPECT_TRUE(d.WaitForClose());
}

// After an answer the handler's thread may read the next request itself; whatever it cannot
// take whole (an Expect, a body still on its way, a malformed head) goes back to the loop.
TEST_F(HttpServerTest, RequestsAfterAnAnswerAreServedWhateverTheyNeed) {
  StartServer();
  RawConn c(server_->port());
  c.Write("GET /api/v1/jobs/1 HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(BodyOf(c.ReadResponse()), "job 1");
  c.Write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_EQ(c.ReadResponse(), "HTTP/1.1 100 Continue\r\n\r\n");
  c.Write("hello");
  EXPECT_EQ(BodyOf(c.ReadResponse()), "hello");
  c.Write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nab");
  c.Write("cdef");
  EXPECT_EQ(BodyOf(c.ReadResponse()), "abcdef");
  c.Write(
      "GET /api/v1/jobs/2 HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/jobs/3 HTTP/1.1\r\nHost: "
      "x\r\n\r\n");
  EXPECT_EQ(BodyOf(c.ReadResponse()), "job 2");
  EXPECT_EQ(BodyOf(c.ReadResponse()), "job 3");
  c.Write("GET /x HTTP/1.1\nHost: x\n\n");
  EXPECT_EQ(StatusOf(c.ReadResponse()), 400);
  EXPECT_TRUE(c.WaitForClose());
}

TEST_F(HttpServerTest, MalformedRequestsGet400AndTheConnectionCloses) {
  StartServer();
  const std::vector<std::string> bad = {
      "GARBAGE\r\n\r\n",
      "GET\r\n\r\n",
      "GET /x\r\n\r\n",
      "GET  /x HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /x HTTP/1.1 extra\r\n\r\n",
      "G(T /x HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET x HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /x HTTX/1.1\r\n\r\n",
      "GET /x HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n",
      "GET /x HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n",
      "GET /x HTTP/1.1\r\nHost: x\r\nA: b\r\n folded\r\n\r\n",
      "GET /x HTTP/1.1\r\nHost: x\r\nA: b\x01\r\n\r\n",
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
      std::string("GET /x\0 HTTP/1.1\r\nHost: x\r\n\r\n", 29),
      // The start of a TLS ClientHello, then a blank line.
      std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 15),
  };
  for (const std::string& request : bad) {
    std::string r = RawExchange(request);
    EXPECT_EQ(StatusOf(r), 400) << request << " -> " << r;
    EXPECT_NE(r.find("INVALID_ARGUMENT"), std::string::npos);
  }
  EXPECT_EQ(StatusOf(RawExchange("GET /x HTTP/2.0\r\n\r\n")), 505);
  EXPECT_EQ(StatusOf(RawExchange("GET /x HTTP/1.1\r\nHost: x\r\nExpect: magic\r\n\r\n")), 417);
  // Still serving.
  EXPECT_EQ(ClientFor(server_->port())->Send("GET", "/api/v1/jobs/1", "")->status, 200);
}

TEST_F(HttpServerTest, TransferEncodingIsRefused) {
  StartServer();
  std::string r = RawExchange(
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  EXPECT_EQ(StatusOf(r), 411) << r;
  r = RawExchange("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n");
  EXPECT_EQ(StatusOf(r), 501) << r;
  // Both together (a request-smuggling shape): still refused.
  r = RawExchange(
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: "
      "chunked\r\n\r\nabc");
  EXPECT_EQ(StatusOf(r), 411) << r;
}

TEST_F(HttpServerTest, TenGigabyteContentLengthGets413WithoutReading) {
  StartServer();
  RawConn c(server_->port());
  c.Write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10737418240\r\n\r\nsome bytes");
  std::string r = c.ReadResponse();
  EXPECT_EQ(StatusOf(r), 413) << r;
  EXPECT_NE(r.find("Connection: close"), std::string::npos);
  EXPECT_TRUE(c.WaitForClose());
  EXPECT_EQ(
      StatusOf(RawExchange(
          "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n")),
      413);
}

TEST_F(HttpServerTest, HugeHeaderLineGets431) {
  StartServer();
  std::string request =
      "GET /api/v1/jobs/1 HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(100 * 1024, 'a') +
      "\r\n\r\n";
  RawConn c(server_->port());
  c.Write(request);
  std::string r = c.ReadResponse();
  EXPECT_EQ(StatusOf(r), 431) << r.substr(0, 200);
  EXPECT_TRUE(c.WaitForClose());

  // A request line alone over the limit, never ended.
  RawConn d(server_->port());
  d.Write("GET /" + std::string(100 * 1024, 'b'));
  EXPECT_EQ(StatusOf(d.ReadResponse()), 431);
}

TEST_F(HttpServerTest, SlowClientGets408AndDoesNotBlockOthers) {
  HttpServerOptions options;
  options.read_timeout = milliseconds(300);
  StartServer(options);
  RawConn slow(server_->port());
  slow.Write("GET /api/v1/jobs/1 HTTP/1.1\r\nHost: ");
  // Meanwhile another client is served at once.
  EXPECT_EQ(ClientFor(server_->port())->Send("GET", "/api/v1/jobs/2", "")->body, "job 2");
  std::string r = slow.ReadResponse();
  EXPECT_EQ(StatusOf(r), 408) << r;
  EXPECT_TRUE(slow.WaitForClose());

  // A body that stops half-way also times out.
  RawConn half(server_->port());
  half.Write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc");
  EXPECT_EQ(StatusOf(half.ReadResponse()), 408);
}

TEST_F(HttpServerTest, IdleKeepAliveConnectionIsClosed) {
  HttpServerOptions options;
  options.idle_timeout = milliseconds(100);
  StartServer(options);
  RawConn c(server_->port());
  c.Write("GET /api/v1/jobs/1 HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(BodyOf(c.ReadResponse()), "job 1");
  EXPECT_TRUE(c.WaitForClose());

  // The client notices the closed pooled connection and reconnects, even for a POST.
  auto client = ClientFor(server_->port());
  EXPECT_EQ(client->Send("GET", "/api/v1/jobs/1", "")->status, 200);
  RawConn other(server_->port());  // wait for the server's close of the client's connection
  other.Write("GET /api/v1/jobs/1 HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(other.WaitForClose());
  Result<HttpResponse> r = client->Send("POST", "/echo", "x");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, "x");
}

TEST_F(HttpServerTest, ClientClosingMidRequestLeavesNoThreadBehind) {
  const int baseline = ThreadCount();
  StartServer();
  for (int i = 0; i < 20; ++i) {
    RawConn c(server_->port());
    c.Write(i % 2 ? "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc"
                  : "GET /api/v1/jo");
  }
  // All closed: only the acceptor remains.
  EXPECT_TRUE(WaitUntil([&] { return ThreadCount() == baseline + 1; })) << ThreadCount();
  EXPECT_EQ(ClientFor(server_->port())->Send("GET", "/api/v1/jobs/1", "")->status, 200);
  server_->Stop();
  EXPECT_TRUE(WaitUntil([&] { return ThreadCount() == baseline; })) << ThreadCount();
}

TEST_F(HttpServerTest, ConnectionsOverTheCapGet503) {
  HttpServerOptions options;
  options.max_connections = 2;
  StartServer(options);
  RawConn a(server_->port());
  RawConn b(server_->port());
  for (RawConn* c : {&a, &b}) {  // make sure both are accepted and served
    c->Write("GET /api/v1/jobs/1 HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(StatusOf(c->ReadResponse()), 200);
  }
  RawConn third(server_->port());
  std::string r = third.ReadUntilClose();
  EXPECT_EQ(StatusOf(r), 503) << r;
  EXPECT_NE(r.find("UNAVAILABLE"), std::string::npos);
  a.Close();
  // Once a slot is free, new connections are served again.
  EXPECT_TRUE(WaitUntil([&] {
    RawConn d(server_->port());
    d.Write("GET /api/v1/jobs/1 HTTP/1.1\r\nHost: x\r\n\r\n");
    return StatusOf(d.ReadResponse()) == 200;
  }));
}

TEST_F(HttpServerTest, ManyParallelClients) {
  StartServer();
  constexpr int kThreads = 32;
  constexpr int kRequests = 50;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto client = ClientFor(server_->port());
      for (int i = 0; i < kRequests; ++i) {
        std::string body = std::to_string(t) + ":" + std::to_string(i);
        Result<HttpResponse> r = client->Send("POST", "/echo", body);
        if (r.has_value() && r->body == body) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads * kRequests);
}

TEST_F(HttpServerTest, HundredsOfSimultaneousConnections) {
  const int baseline = ThreadCount();
  HttpServerOptions options;
  options.handler_threads = 4;
  StartServer(options);
  constexpr int kConns = 300;
  std::vector<std::unique_ptr<RawConn>> conns;
  for (int i = 0; i < kConns; ++i) {
    conns.push_back(std::make_unique<RawConn>(server_->port()));
    ASSERT_TRUE(conns.back()->connected());
  }
  for (int i = 0; i < kConns; ++i) {
    conns[i]->Write("GET /api/v1/jobs/" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  for (int i = 0; i < kConns; ++i) {
    EXPECT_EQ(BodyOf(conns[i]->ReadResponse()), "job " + std::to_string(i));
  }
  // One event loop and at most the pool: connections hold no thread.
  EXPECT_EQ(server_->stats().connections, static_cast<size_t>(kConns));
  EXPECT_LE(ThreadCount(), baseline + 1 + 4);
  conns.clear();
  EXPECT_TRUE(WaitUntil([&] { return server_->stats().connections == 0; }));
  EXPECT_LE(ThreadCount(), baseline + 1 + 4);
}

TEST_F(HttpServerTest, OneClientSharedByManyThreads) {
  StartServer();
  auto client = ClientFor(server_->port());
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        std::string id = std::to_string(t * 1000 + i);
        Result<HttpResponse> r = client->Send("GET", "/api/v1/jobs/" + id, "", {}, true);
        if (r.has_value() && r->body == "job " + id) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 800);
}

TEST_F(HttpServerTest, RandomGarbageNeverCrashesTheServer) {
  StartServer();
  std::mt19937_64 rng(12345);
  const std::string pieces[] = {"GET ",
                                "POST ",
                                "/echo",
                                " HTTP/1.1",
                                "\r\n",
                                "\n",
                                ":",
                                "Content-Length: ",
                                "99",
                                "\r\n\r\n",
                                "Expect: 100-continue",
                                "Transfer-Encoding: chunked",
                                "%",
                                "%zz",
                                "?a=b&",
                                "\0",
                                " "};
  for (int i = 0; i < 300; ++i) {
    std::string request;
    int n = static_cast<int>(rng() % 20);
    for (int j = 0; j < n; ++j) {
      if (rng() % 3 == 0) {
        request += static_cast<char>(rng() % 256);
      } else {
        request += pieces[rng() % std::size(pieces)];
      }
    }
    RawConn c(server_->port());
    c.Write(request);
    if (i % 2 == 0) shutdown(c.fd(), SHUT_WR);  // half the time, end the request early
  }
  EXPECT_EQ(ClientFor(server_->port())->Send("GET", "/api/v1/jobs/1", "")->status, 200);
}

TEST_F(HttpServerTest, StopClosesIdleConnectionsPromptlyAndJoinsEveryThread) {
  const int baseline = ThreadCount();
  StartServer();  // idle timeout 60 s: only Stop() can end these connections
  std::vector<std::unique_ptr<RawConn>> conns;
  for (int i = 0; i < 10; ++i) {
    conns.push_back(std::make_unique<RawConn>(server_->port()));
    conns.back()->Write("GET /api/v1/jobs/1 HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(StatusOf(conns.back()->ReadResponse()), 200);
  }
  RawConn partial(server_->port());
  partial.Write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab");
  EXPECT_TRUE(WaitUntil([&] { return server_->stats().connections == 11; }));
  MonoTime start = Now();
  server_->Stop();
  EXPECT_LT(Now() - start, std::chrono::seconds(5));
  EXPECT_EQ(ThreadCount(), baseline);
  for (auto& c : conns) EXPECT_TRUE(c->WaitForClose());
  EXPECT_TRUE(partial.WaitForClose());
  RawConn late(server_->port());
  EXPECT_FALSE(late.connected());
}

TEST_F(HttpServerTest, StopLetsABlockedHandlerFinish) {
  StartServer();
  auto client = ClientFor(server_->port());
  auto answer = std::async(std::launch::async, [&] { return client->Send("GET", "/block", ""); });
  ASSERT_TRUE(WaitBlocked(1));
  const uint16_t port = server_->port();
  auto stopped = std::async(std::launch::async, [&] { server_->Stop(); });
  // Stop() has begun once the listener is gone; only then let the handler return.
  EXPECT_TRUE(WaitUntil([&] { return !RawConn(port).connected(); }));
  Release();
  stopped.get();
  Result<HttpResponse> r = answer.get();
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, "released");
  EXPECT_EQ(r->headers.at("connection"), "close");
}

TEST_F(HttpServerTest, StopFromAHandlerAnswersThenStops) {
  const int baseline = ThreadCount();
  StartServer();
  auto idle = std::make_unique<RawConn>(server_->port());
  idle->Write("GET /api/v1/jobs/1 HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(StatusOf(idle->ReadResponse()), 200);
  auto client = ClientFor(server_->port());
  Result<HttpResponse> r = client->Send("POST", "/stop", "");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, "stopping");
  EXPECT_EQ(r->headers.at("connection"), "close");
  EXPECT_TRUE(idle->WaitForClose());
  const uint16_t port = server_->port();
  EXPECT_TRUE(WaitUntil([&] { return !RawConn(port).connected(); }));
  server_.reset();  // joins the handler's thread
  EXPECT_EQ(ThreadCount(), baseline);
}

TEST_F(HttpServerTest, StartOnABusyPortFails) {
  StartServer();
  HttpServer other;
  Status s = other.Start("127.0.0.1", server_->port());
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(s.error().message.find("127.0.0.1:" + std::to_string(server_->port())),
            std::string::npos);
  HttpServer bad_host;
  EXPECT_EQ(bad_host.Start("no.such.host.invalid", 0).error().code, ErrorCode::kUnavailable);
}

TEST_F(HttpServerTest, LargeBodiesBothWays) {
  StartServer();
  auto client = ClientFor(server_->port());
  std::string big(8 << 20, 'z');
  for (size_t i = 0; i < big.size(); i += 4093) big[i] = static_cast<char>('a' + i % 26);
  Result<HttpResponse> r = client->Send("POST", "/echo", big);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, big);
}

TEST_F(HttpServerTest, ClientReadsAnEarlyAnswerToAnOversizedBody) {
  HttpServerOptions options;
  options.max_body_bytes = 1024;
  StartServer(options);
  auto client = ClientFor(server_->port());
  // 4 MiB: the server drains it while closing; 64 MiB: it stops draining and resets the
  // connection, after its answer.
  for (size_t size : {size_t{4} << 20, size_t{64} << 20}) {
    Result<HttpResponse> r = client->Send("POST", "/echo", std::string(size, 'x'));
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(r->status, 413);
  }
  EXPECT_EQ(client->Send("POST", "/echo", "small")->body, "small");
}

// ---------------------------------------------------------------------------------------------
// Client against scripted servers.

// A listening socket and one thread that runs `script` on it.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::function<void(ScriptedServer&)> script) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd_, 16);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this, script = std::move(script)] { script(*this); });
  }
  ~ScriptedServer() {
    thread_.join();
    close(fd_);
  }
  uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Accepts one connection (or returns -1 after kPatience).
  int Accept() {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(kPatience.count())) <= 0) return -1;
    ++accepted_;
    return accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  }
  // Reads one request head and its Content-Length body from `fd`; "" when it closes.
  static std::string ReadRequest(int fd) {
    std::string buf;
    char tmp[65536];
    while (true) {
      size_t end = buf.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t cl = buf.find("Content-Length: ");
        size_t length = cl == std::string::npos ? 0 : std::stoul(buf.substr(cl + 16));
        if (buf.size() >= end + 4 + length) return buf;
      }
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(kPatience.count())) <= 0) return "";
      ssize_t n = recv(fd, tmp, sizeof tmp, 0);
      if (n <= 0) return "";
      buf.append(tmp, static_cast<size_t>(n));
    }
  }
  static void Write(int fd, std::string_view s) {
    while (!s.empty()) {
      ssize_t n = send(fd, s.data(), s.size(), MSG_NOSIGNAL);
      if (n <= 0) return;
      s.remove_prefix(static_cast<size_t>(n));
    }
  }
  int accepted() const { return accepted_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

constexpr std::string_view kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

TEST(HttpClientTest, CreateParsesBaseUrls) {
  for (const char* good :
       {"http://localhost", "http://127.0.0.1:8080", "http://h:1/prefix/", "http://[::1]:9000/api",
        "http://node-1.cluster_a:65535", "https://h", "https://[::1]:6817/api"}) {
    Result<std::unique_ptr<HttpClient>> c = HttpClient::Create(good);
    ASSERT_TRUE(c.has_value()) << good << ": " << c.error().message;
    EXPECT_EQ((*c)->base_url(), good);
  }
  for (const char* bad :
       {"", "localhost:80", "ftp://h", "http://", "https://", "http://:80",
        "http://h:", "http://h:0", "http://h:65536", "http://h:8x", "http://u@h", "http://[::1",
        "http://[::1]x", "http://h/p?q=1", "http://h/a b", "http://h h"}) {
    Result<std::unique_ptr<HttpClient>> c = HttpClient::Create(bad);
    ASSERT_FALSE(c.has_value()) << bad;
    EXPECT_EQ(c.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(c.error().message.find(std::string("\"") + bad + "\""), std::string::npos);
  }
}

TEST(HttpClientTest, PrefixIsPrependedAndHostSent) {
  std::string seen;
  ScriptedServer server([&](ScriptedServer& s) {
    int fd = s.Accept();
    seen = ScriptedServer::ReadRequest(fd);
    ScriptedServer::Write(fd, kOk);
    close(fd);
  });
  auto client = *HttpClient::Create(server.url() + "/pre/");
  Result<HttpResponse> r = client->Send("PUT", "/x?y=1", "", {{"X-Trace", "t1"}});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, "ok");
  EXPECT_EQ(seen.rfind("PUT /pre/x?y=1 HTTP/1.1\r\n", 0), 0u) << seen;
  EXPECT_NE(seen.find("Host: 127.0.0.1:" + std::to_string(server.port()) + "\r\n"),
            std::string::npos);
  EXPECT_NE(seen.find("X-Trace: t1\r\n"), std::string::npos);
  EXPECT_NE(seen.find("Content-Length: 0\r\n"), std::string::npos);
}

TEST(HttpClientTest, RejectsRequestsThatWouldSplitTheMessage) {
  auto client = *HttpClient::Create("http://127.0.0.1:1");
  EXPECT_EQ(client->Send("GET", "/a b", "").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(client->Send("GET", "nope", "").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(client->Send("G T", "/", "").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(client->Send("GET", "/", "", {{"X", "a\r\nInjected: 1"}}).error().code,
            ErrorCode::kInvalidArgument);
}

TEST(HttpClientTest, RefusedConnectionIsUnavailableNamingTheAddress) {
  // A port that was just free: bind, read the port, close.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  std::string url = "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  auto client = *HttpClient::Create(url);
  Result<HttpResponse> r = client->Send("GET", "/x", "");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(r.error().message.find(url), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("refused"), std::string::npos) << r.error().message;
}

TEST(HttpClientTest, ConnectTimeoutIsUnavailable) {
  // A listener whose accept queue is full drops further SYNs, so connect() hangs.
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  listen(fd, 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  std::vector<int> fillers;
  for (int i = 0; i < 4; ++i) {
    int f = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    connect(f, reinterpret_cast<sockaddr*>(&a), sizeof a);
    fillers.push_back(f);
  }
  HttpClientOptions options;
  options.connect_timeout = milliseconds(200);
  auto client =
      *HttpClient::Create("http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)), options);
  MonoTime start = Now();
  Result<HttpResponse> r = client->Send("GET", "/x", "");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable) << r.error().message;
  EXPECT_NE(r.error().message.find("timed out"), std::string::npos) << r.error().message;
  EXPECT_LT(Now() - start, std::chrono::seconds(5));
  // The request deadline, when shorter, gives kDeadlineExceeded.
  r = client->Send("GET", "/x", "", {}, false, milliseconds(100));
  EXPECT_EQ(r.error().code, ErrorCode::kDeadlineExceeded) << r.error().message;
  for (int f : fillers) close(f);
  close(fd);
}

TEST_F(HttpServerTest, RequestTimeoutIsDeadlineExceeded) {
  StartServer();
  auto client = ClientFor(server_->port());
  Result<HttpResponse> r = client->Send("GET", "/block", "", {}, true, milliseconds(100));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kDeadlineExceeded);
  EXPECT_NE(r.error().message.find("/block"), std::string::npos) << r.error().message;
  Release();
  EXPECT_EQ(client->Send("GET", "/api/v1/jobs/1", "")->status, 200);
}

// The server answers the first request, then reads the second and closes without answering.
void AnswerOnceThenDropTheNext(ScriptedServer& s, bool answer_on_new_connection) {
  int fd = s.Accept();
  ScriptedServer::ReadRequest(fd);
  ScriptedServer::Write(fd, kOk);
  ScriptedServer::ReadRequest(fd);
  close(fd);
  if (answer_on_new_connection) {
    int fd2 = s.Accept();
    ScriptedServer::ReadRequest(fd2);
    ScriptedServer::Write(fd2, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nretry");
    close(fd2);
  }
}

TEST(HttpClientTest, IdempotentRequestIsRetriedOnceOnAFreshConnection) {
  ScriptedServer server([](ScriptedServer& s) { AnswerOnceThenDropTheNext(s, true); });
  auto client = *HttpClient::Create(server.url());
  EXPECT_EQ(client->Send("GET", "/a", "")->body, "ok");
  Result<HttpResponse> r = client->Send("GET", "/a", "", {}, /*idempotent=*/true);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, "retry");
  EXPECT_EQ(server.accepted(), 2);
}

TEST(HttpClientTest, NonIdempotentRequestIsNotRetried) {
  ScriptedServer server([](ScriptedServer& s) { AnswerOnceThenDropTheNext(s, false); });
  auto client = *HttpClient::Create(server.url());
  EXPECT_EQ(client->Send("POST", "/a", "{}")->body, "ok");
  Result<HttpResponse> r = client->Send("POST", "/a", "{}");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(r.error().message.find("closed before a response"), std::string::npos)
      << r.error().message;
}

TEST(HttpClientTest, FailureAfterResponseBytesIsNotRetried) {
  ScriptedServer server([](ScriptedServer& s) {
    int fd = s.Accept();
    ScriptedServer::ReadRequest(fd);
    ScriptedServer::Write(fd, kOk);
    ScriptedServer::ReadRequest(fd);
    ScriptedServer::Write(fd, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\npart");
    close(fd);
  });
  auto client = *HttpClient::Create(server.url());
  EXPECT_EQ(client->Send("GET", "/a", "")->body, "ok");
  Result<HttpResponse> r = client->Send("GET", "/a", "", {}, true);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(r.error().message.find("middle of the response"), std::string::npos);
  EXPECT_EQ(server.accepted(), 1);
}

TEST(HttpClientTest, ReadsChunkedUntilCloseAndInterimResponses) {
  ScriptedServer server([](ScriptedServer& s) {
    int fd = s.Accept();
    ScriptedServer::ReadRequest(fd);
    ScriptedServer::Write(
        fd,
        "HTTP/1.1 100 Continue\r\n\r\n"
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"
        "5;ext=1\r\nhello\r\n1\r\n \r\n6\r\nworld!\r\n0\r\nTrailer: x\r\n\r\n");
    ScriptedServer::ReadRequest(fd);  // same connection: chunked responses keep it alive
    ScriptedServer::Write(fd, "HTTP/1.0 200 OK\r\n\r\nuntil close");
    close(fd);
  });
  auto client = *HttpClient::Create(server.url());
  Result<HttpResponse> r = client->Send("GET", "/a", "");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, "hello world!");
  EXPECT_EQ(r->content_type, "text/plain");
  r = client->Send("GET", "/b", "");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, "until close");
  EXPECT_EQ(server.accepted(), 1);
}

TEST(HttpClientTest, HostileResponsesAreErrorsNotCrashes) {
  const std::vector<std::string> answers = {
      "garbage\r\n\r\n",
      "HTTP/1.1 2000 OK\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 10737418240\r\n\r\nabc",
      "HTTP/1.1 200 OK\r\nContent-Length: zz\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFF\r\n",
      "HTTP/1.1 200 OK\r\nX: " + std::string(2 << 20, 'h'),
      "HTTP/1.1 101 Switching Protocols\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab",
      "",
  };
  for (const std::string& answer : answers) {
    ScriptedServer server([&](ScriptedServer& s) {
      int fd = s.Accept();
      ScriptedServer::ReadRequest(fd);
      ScriptedServer::Write(fd, answer);
      close(fd);
    });
    auto client = *HttpClient::Create(server.url());
    Result<HttpResponse> r = client->Send("GET", "/a", "");
    ASSERT_FALSE(r.has_value()) << answer.substr(0, 60);
    EXPECT_EQ(r.error().code, ErrorCode::kUnavailable) << r.error().message;
  }
}

TEST(HttpClientTest, SilentServerTimesOut) {
  ScriptedServer server([](ScriptedServer& s) {
    int fd = s.Accept();
    ScriptedServer::ReadRequest(fd);
    ScriptedServer::ReadRequest(fd);  // until the client gives up and closes
    close(fd);
  });
  auto client = *HttpClient::Create(server.url());
  Result<HttpResponse> r = client->Send("GET", "/a", "", {}, true, milliseconds(100));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kDeadlineExceeded);
}

TEST(HttpUrlTest, EncodeAndDecode) {
  EXPECT_EQ(UrlEncode("a b/c?d=e&f~g_h.i-j"), "a%20b%2Fc%3Fd%3De%26f~g_h.i-j");
  EXPECT_EQ(UrlEncode(std::string("\0\xff", 2)), "%00%FF");
  EXPECT_EQ(UrlDecode("a%20b%2Fc%2f+"), "a b/c/+");
  EXPECT_EQ(UrlDecode("%zz%4"), "%zz%4");
  EXPECT_EQ(UrlDecode("%"), "%");
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  EXPECT_EQ(UrlDecode(UrlEncode(all)), all);
}

}  // namespace
}  // namespace corral::api
