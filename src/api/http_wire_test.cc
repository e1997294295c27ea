#include "api/internal/http_wire.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace corral::api::internal {
namespace {

// What feeding a message gave: the events, the body and the bytes left after kDone or kError.
struct Fed {
  std::vector<WireEvent> events;
  std::string body;
  size_t left = 0;
};

// Feeds `input` to `parser` in pieces of `piece` bytes.
template <typename Parser>
Fed Drive(Parser& parser, std::string_view input, size_t piece) {
  Fed run;
  size_t pos = 0;
  while (true) {
    size_t end = std::min(input.size(), pos + piece);
    std::string_view chunk = input.substr(pos, end - pos);
    WireStep step = parser.Parse(chunk);
    pos += step.consumed;
    if (step.event == WireEvent::kNeedMore) {
      if (pos >= input.size()) break;
      continue;
    }
    run.events.push_back(step.event);
    if (step.event == WireEvent::kBody) run.body.append(step.body);
    if (step.event == WireEvent::kDone || step.event == WireEvent::kError) break;
  }
  run.left = input.size() - pos;
  return run;
}

TEST(RequestParserTest, HeadAndLengthBodyInAnyPieces) {
  const std::string msg =
      "\r\nPOST /a%2Fb?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nX-A: 1\r\nx-a: 2\r\n\r\n"
      "hello"
      "GET /next HTTP/1.1\r\n";
  for (size_t piece : {1, 2, 7, 1000}) {
    RequestParser p;
    Fed r = Drive(p, msg, piece);
    ASSERT_FALSE(r.events.empty());
    EXPECT_EQ(r.events.front(), WireEvent::kHead) << piece;
    EXPECT_EQ(r.events.back(), WireEvent::kDone) << piece;
    EXPECT_EQ(r.body, "hello");
    EXPECT_EQ(r.left, std::string("GET /next HTTP/1.1\r\n").size()) << piece;
    EXPECT_EQ(p.head().method, "POST");
    EXPECT_EQ(p.head().raw_path, "/a%2Fb");
    EXPECT_EQ(p.head().raw_query, "x=1");
    EXPECT_EQ(p.head().headers.at("x-a"), "1, 2");
    EXPECT_TRUE(p.head().keep_alive);
  }
}

TEST(RequestParserTest, ChunkedBodyWithExtensionsAndTrailers) {
  const std::string msg =
      "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;ext=1\r\nhello\r\n1\r\n \r\n6\r\nworld!\r\n0\r\nT: x\r\n\r\n";
  for (size_t piece : {1, 3, 1000}) {
    RequestParser p;
    Fed r = Drive(p, msg, piece);
    EXPECT_EQ(r.events.back(), WireEvent::kDone);
    EXPECT_EQ(r.body, "hello world!");
    EXPECT_TRUE(p.head().chunked);
    EXPECT_EQ(r.left, 0u);
  }
}

TEST(RequestParserTest, RefusesWhatTheBriefRefuses) {
  struct Case {
    std::string input;
    int status;
  };
  const std::vector<Case> cases = {
      {"GET / HTTP/1.1\nHost: h\n\n", 400},                   // bare LF
      {"GET / HTTP/1.1\r\nHost: h\nX: y\r\n\r\n", 400},       // one bare LF
      {"GET / HTTP/1.1\r\n\r\n", 400},                        // no Host
      {"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},  // two Hosts
      {"GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999\r\n\r\n", 413},
      {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
      {"GET / HTTP/1.1\r\nHost: h\r\nExpect: magic\r\n\r\n", 417},
      {"GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(70000, 'a') + "\r\n\r\n", 431},
  };
  for (const Case& c : cases) {
    RequestParser p;
    Fed r = Drive(p, c.input, 5);
    ASSERT_FALSE(r.events.empty()) << c.input.substr(0, 60);
    EXPECT_EQ(r.events.back(), WireEvent::kError) << c.input.substr(0, 60);
    EXPECT_EQ(p.error().status, c.status) << c.input.substr(0, 60) << ": " << p.error().message;
  }
  // HTTP/1.0 needs no Host.
  RequestParser p;
  EXPECT_EQ(Drive(p, "GET / HTTP/1.0\r\n\r\n", 100).events.back(), WireEvent::kDone);
}

TEST(RequestParserTest, HeaderCountLimit) {
  std::string msg = "GET / HTTP/1.1\r\nHost: h\r\n";
  for (int i = 0; i < 10; ++i) msg += "X-" + std::to_string(i) + ": v\r\n";
  msg += "\r\n";
  RequestParser small({.max_header_count = 5});
  EXPECT_EQ(Drive(small, msg, 1000).events.back(), WireEvent::kError);
  EXPECT_EQ(small.error().status, 431);
  RequestParser enough({.max_header_count = 11});
  EXPECT_EQ(Drive(enough, msg, 1000).events.back(), WireEvent::kDone);
}

TEST(RequestParserTest, LimitBodyAfterTheHead) {
  RequestParser p;
  const std::string msg = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n";
  WireStep step = p.Parse(msg);
  ASSERT_EQ(step.event, WireEvent::kHead);
  EXPECT_FALSE(p.LimitBody(99));
  EXPECT_EQ(p.error().status, 413);
  p.Reset();
  ASSERT_EQ(p.Parse(msg).event, WireEvent::kHead);
  EXPECT_TRUE(p.LimitBody(100));
}

TEST(ResponseParserTest, InterimAnswersChunkedAndUntilClose) {
  ResponseParser p;
  const std::string msg =
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n"
      "3\nabc\n0\n\n";
  Fed r = Drive(p, msg, 4);
  EXPECT_EQ(r.events.back(), WireEvent::kDone);
  EXPECT_EQ(r.body, "abc");
  EXPECT_EQ(p.head().status, 200);
  EXPECT_TRUE(p.head().keep_alive);

  ResponseParser q;
  Fed u = Drive(q, "HTTP/1.0 200 OK\r\n\r\nuntil close", 3);
  EXPECT_NE(u.events.back(), WireEvent::kDone);
  EXPECT_EQ(u.body, "until close");
  EXPECT_TRUE(q.FinishOnClose());
  EXPECT_FALSE(q.head().keep_alive);

  ResponseParser t;
  Drive(t, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", 100);
  EXPECT_FALSE(t.FinishOnClose());  // truncated

  ResponseParser h;
  h.ExpectHeadResponse(true);
  EXPECT_EQ(Drive(h, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", 100).events.back(),
            WireEvent::kDone);
}

TEST(ResponseParserTest, HostileResponsesAreErrors) {
  for (std::string bad :
       {"garbage\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 101 Switching\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: zz\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n"}) {
    ResponseParser p;
    EXPECT_EQ(Drive(p, bad, 2).events.back(), WireEvent::kError) << bad;
  }
  ResponseParser big({.max_body_bytes = 10});
  EXPECT_EQ(Drive(big, "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n", 100).events.back(),
            WireEvent::kError);
}

TEST(WireGrammarTest, TokensAndContentLength) {
  EXPECT_TRUE(IsToken("GET"));
  EXPECT_FALSE(IsToken("G T"));
  EXPECT_FALSE(IsToken(""));
  EXPECT_TRUE(HasToken("keep-alive, Close", "close"));
  EXPECT_FALSE(HasToken("closed", "close"));
  EXPECT_EQ(LastToken("gzip, Chunked "), "chunked");
  EXPECT_EQ(ParseContentLength("42"), 42u);
  EXPECT_EQ(ParseContentLength("99999999999999999999999"), UINT64_MAX);
  EXPECT_EQ(ParseContentLength("-1"), std::nullopt);
  EXPECT_EQ(ParseContentLength(""), std::nullopt);
}

}  // namespace
}  // namespace corral::api::internal
