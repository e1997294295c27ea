// The server under hostile load (issue 15 item 7): limits on heads, per-peer caps, the
// authentication hook that runs before a body is read, capacity kept for authenticated
// callers, idle and slow-body timeouts, and handlers that block.
#include <any>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "api/http.h"
#include "api/http_status.h"
#include "api/http_test_util.h"

namespace corral::api {
namespace {

using http_testing::BodyOf;
using http_testing::ClientFor;
using http_testing::kPatience;
using http_testing::RawConn;
using http_testing::RssKib;
using http_testing::StatusOf;
using http_testing::Text;
using http_testing::WaitUntil;
using std::chrono::milliseconds;

constexpr char kGoodToken[] = "Bearer good";

// A fake authenticator: "Bearer good" is user "alice"; /public is open to anyone; everything
// else without the token is refused with 401.
HttpAuthResult FakeAuth(const HttpRequest& head) {
  if (head.header("authorization") == kGoodToken) {
    return HttpAuthResult::Authenticated(std::string("alice"));
  }
  if (head.path == "/public") return HttpAuthResult::Anonymous();
  return HttpAuthResult::Refused(
      ErrorResponse({ErrorCode::kUnauthenticated, "no credentials for " + head.path}));
}

class HttpLimitsTest : public ::testing::Test {
 protected:
  void Start(HttpServerOptions options, bool with_auth) {
    server_ = std::make_unique<HttpServer>(options);
    server_->Route("POST", "/echo", [this](const HttpRequest& r) {
      ++handled_;
      return Text(std::to_string(r.body.size()));
    });
    server_->Route("POST", "/public", [this](const HttpRequest& r) {
      ++handled_;
      return Text(std::to_string(r.body.size()));
    });
    server_->Route("GET", "/whoami", [](const HttpRequest& r) {
      const std::string* who = std::any_cast<std::string>(&r.principal);
      return Text(who ? *who : "anonymous");
    });
    server_->Route("GET", "/block", [this](const HttpRequest&) {
      std::unique_lock<std::mutex> lock(mu_);
      ++blocked_;
      cv_.notify_all();
      cv_.wait(lock, [this] { return released_; });
      return Text("released");
    });
    if (with_auth) server_->SetAuthHook(FakeAuth);
    ASSERT_TRUE(server_->Start("127.0.0.1", 0).has_value());
  }

  void TearDown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      released_ = true;
      cv_.notify_all();
    }
    server_.reset();
  }

  std::string Raw(std::string_view request) {
    RawConn c(server_->port());
    EXPECT_TRUE(c.connected());
    c.Write(request);
    return c.ReadUntilClose();
  }

  std::unique_ptr<HttpServer> server_;
  std::atomic<int> handled_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  int blocked_ = 0;
  bool released_ = false;
};

TEST_F(HttpLimitsTest, TooManyHeaderLinesGet431AndBareLfOrNoHostGet400) {
  HttpServerOptions options;
  options.max_header_count = 8;
  Start(options, false);
  std::string many = "POST /echo HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 9; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  std::string r = Raw(many + "\r\n");
  EXPECT_EQ(StatusOf(r), 431) << r;
  EXPECT_NE(r.find("header lines"), std::string::npos) << r;

  r = Raw("POST /echo HTTP/1.1\nHost: x\nContent-Length: 0\n\n");
  EXPECT_EQ(StatusOf(r), 400) << r;
  EXPECT_NE(r.find("bare LF"), std::string::npos) << r;
  r = Raw("POST /echo HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(StatusOf(r), 400) << r;
  EXPECT_NE(r.find("without Host"), std::string::npos) << r;
  r = Raw("POST /echo HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(StatusOf(r), 400) << r;
  EXPECT_EQ(handled_.load(), 0);
  // Eight header lines are still fine.
  std::string eight = "POST /echo HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 5; ++i) eight += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(StatusOf(Raw(eight + "Content-Length: 0\r\nConnection: close\r\n\r\n")), 200);
}

TEST_F(HttpLimitsTest, ConnectionsFromOnePeerAreCapped) {
  HttpServerOptions options;
  options.max_connections_per_peer = 3;
  Start(options, false);
  std::vector<std::unique_ptr<RawConn>> conns;
  for (int i = 0; i < 3; ++i) {
    conns.push_back(std::make_unique<RawConn>(server_->port()));
    conns.back()->Write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    EXPECT_EQ(StatusOf(conns.back()->ReadResponse()), 200);
  }
  RawConn fourth(server_->port());
  std::string r = fourth.ReadUntilClose();
  EXPECT_EQ(StatusOf(r), 503) << r;
  EXPECT_NE(r.find("too many connections from 127.0.0.1"), std::string::npos) << r;
  conns.pop_back();
  EXPECT_TRUE(WaitUntil([&] {
    RawConn again(server_->port());
    again.Write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    return StatusOf(again.ReadResponse()) == 200;
  }));
}

TEST_F(HttpLimitsTest, AuthHookRunsOnTheHeadAndHandsThePrincipalOn) {
  Start({}, true);
  auto client = ClientFor(server_->port());
  Result<HttpResponse> r = client->Send("GET", "/whoami", "", {{"Authorization", kGoodToken}});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, "alice");
  r = client->Send("GET", "/whoami", "");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(CheckResponse(r).error(),
            (Error{ErrorCode::kUnauthenticated, "no credentials for /whoami"}));
  EXPECT_EQ(r->headers.at("connection"), "close");
  // A public route takes anonymous callers, with the small anonymous body limit.
  r = client->Send("POST", "/public", "small");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "5");
  r = client->Send("POST", "/public", std::string(100 * 1024, 'x'));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->status, 413);
  r = client->Send("POST", "/public", std::string(100 * 1024, 'x'),
                   {{"Authorization", kGoodToken}});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "102400");
}

TEST_F(HttpLimitsTest, AnonymousHugeBodiesAreRefusedUnreadAndLeaveMemoryFlat) {
  Start({}, true);
  const std::string body(64 << 20, 'x');  // shared by every sender, allocated before the baseline
  auto warm = ClientFor(server_->port());
  ASSERT_EQ(warm->Send("POST", "/echo", "x", {{"Authorization", kGoodToken}})->status, 200);
  const long before = RssKib();
  ASSERT_GT(before, 0);
  std::vector<std::thread> senders;
  std::atomic<int> refused{0};
  for (int i = 0; i < 8; ++i) {
    senders.emplace_back([&] {
      auto client = ClientFor(server_->port());
      Result<HttpResponse> r = client->Send("POST", "/echo", body);
      if (r.has_value() && r->status == 401) ++refused;
    });
  }
  for (std::thread& t : senders) t.join();
  EXPECT_EQ(refused.load(), 8);
  EXPECT_EQ(handled_.load(), 1);  // only the warm-up
  const long after = RssKib();
  // One buffered body would be 64 MiB; allow for thread stacks and allocator slack.
  EXPECT_LT(after - before, 16 * 1024) << "RSS grew from " << before << " to " << after << " KiB";
}

TEST_F(HttpLimitsTest, IdleAnonymousConnectionsCannotKeepAnAuthenticatedCallerOut) {
  HttpServerOptions options;
  options.max_connections_per_peer = 0;  // all from 127.0.0.1: only the anonymous cap applies
  options.max_anonymous_connections = 4096;
  Start(options, true);
  constexpr int kIdle = 4200;
  std::vector<std::unique_ptr<RawConn>> idle;
  idle.reserve(kIdle);
  for (int i = 0; i < kIdle; ++i) {
    idle.push_back(std::make_unique<RawConn>(server_->port()));
    ASSERT_TRUE(idle.back()->connected()) << i;
  }
  EXPECT_TRUE(WaitUntil([&] { return server_->stats().connections >= 4096; }));
  EXPECT_LE(server_->stats().anonymous_connections, 4096u);
  auto client = ClientFor(server_->port());
  Result<HttpResponse> r = client->Send("GET", "/whoami", "", {{"Authorization", kGoodToken}});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, "alice");
  // The oldest idle ones made room.
  EXPECT_TRUE(idle.front()->WaitForClose());
  EXPECT_LE(server_->stats().anonymous_connections, 4096u);
  // The authenticated connection no longer counts as anonymous, and stays usable.
  r = client->Send("GET", "/whoami", "", {{"Authorization", kGoodToken}});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->body, "alice");
}

TEST_F(HttpLimitsTest, SilentAndSlowConnectionsTimeOut) {
  HttpServerOptions options;
  options.idle_timeout = milliseconds(100);
  options.read_timeout = milliseconds(200);
  Start(options, false);
  RawConn silent(server_->port());
  EXPECT_TRUE(silent.WaitForClose());  // never sent a byte: closed without an answer

  // A body that trickles in one byte at a time still has to arrive within the read timeout.
  RawConn slow(server_->port());
  slow.Write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n");
  std::string answer;
  EXPECT_TRUE(WaitUntil([&] {
    slow.Write("x");
    pollfd p{slow.fd(), POLLIN, 0};
    return poll(&p, 1, 5) == 1;
  }));
  answer = slow.ReadResponse();
  EXPECT_EQ(StatusOf(answer), 408) << answer;
  EXPECT_EQ(handled_.load(), 0);
}

TEST_F(HttpLimitsTest, BlockedHandlersDoNotStallOtherConnections) {
  HttpServerOptions options;
  options.handler_threads = 3;
  Start(options, false);
  std::vector<std::thread> waiters;
  for (int i = 0; i < 2; ++i) {
    waiters.emplace_back([this] {
      auto c = ClientFor(server_->port());
      EXPECT_EQ(c->Send("GET", "/block", "")->body, "released");
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu_);
    ASSERT_TRUE(cv_.wait_for(lock, kPatience, [this] { return blocked_ == 2; }));
  }
  // Two pool threads are held; the third and the loop still serve everyone else.
  auto client = ClientFor(server_->port());
  for (int i = 0; i < 20; ++i) EXPECT_EQ(client->Send("POST", "/echo", "abc")->body, "3");
  EXPECT_LE(server_->stats().handler_threads, 3u);
  {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  for (std::thread& t : waiters) t.join();
}

}  // namespace
}  // namespace corral::api
