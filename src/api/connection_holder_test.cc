// The connection holder's pieces (api/connection_holder.h): the frames, the client's checks of
// the directory, the socket and the peer, the holder's refusal of other uids, what a client is
// told when the holder cannot or may not have sent a request on, and when the holder stops.
#include "api/connection_holder.h"

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

namespace corral::api {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

HolderRequest SampleRequest() {
  return {.key = "k",
          .method = "POST",
          .path = "/api/v1/jobs?x=1",
          .headers = {{"authorization", "Bearer abc"}, {"x-empty", ""}},
          .body = std::string("{\"a\":1}\0tail", 12),
          .idempotent = false,
          .timeout = milliseconds(1500)};
}

TEST(HolderFrameTest, RequestsAndRepliesRoundTrip) {
  const HolderRequest in = SampleRequest();
  auto out = DecodeHolderRequest(EncodeHolderRequest(in));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->key, in.key);
  EXPECT_EQ(out->method, in.method);
  EXPECT_EQ(out->path, in.path);
  EXPECT_EQ(out->headers, in.headers);
  EXPECT_EQ(out->body, in.body);
  EXPECT_FALSE(out->idempotent);
  EXPECT_EQ(out->timeout, milliseconds(1500));

  HolderReply answered;
  answered.response = {.status = 201,
                       .content_type = "application/json",
                       .body = "{}",
                       .headers = {{"retry-after", "1"}}};
  auto a = DecodeHolderReply(EncodeHolderReply(answered));
  ASSERT_TRUE(a.has_value()) << a.error().message;
  EXPECT_EQ(a->outcome, HolderOutcome::kAnswered);
  EXPECT_EQ(a->response.status, 201);
  EXPECT_EQ(a->response.body, "{}");
  EXPECT_EQ(a->response.headers.at("retry-after"), "1");

  for (HolderOutcome o : {HolderOutcome::kNotSent, HolderOutcome::kFailed}) {
    HolderReply failed{.outcome = o, .error = {ErrorCode::kDeadlineExceeded, "timed out"}};
    auto f = DecodeHolderReply(EncodeHolderReply(failed));
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->outcome, o);
    EXPECT_EQ(f->error.code, ErrorCode::kDeadlineExceeded);
    EXPECT_EQ(f->error.message, "timed out");
  }
}

TEST(HolderFrameTest, MalformedFramesAreRefused) {
  const std::string good = EncodeHolderRequest(SampleRequest());
  EXPECT_FALSE(DecodeHolderRequest("").has_value());
  EXPECT_FALSE(DecodeHolderRequest("garbage that is long enough").has_value());
  for (size_t cut = 1; cut < good.size(); cut += 7) {
    EXPECT_FALSE(DecodeHolderRequest(good.substr(0, cut)).has_value()) << cut;
  }
  std::string other_version = good;
  other_version[4 + 14] = '2';  // "corral-holder-1" -> "corral-holder-2"
  EXPECT_FALSE(DecodeHolderRequest(other_version).has_value());
  // A header name without its value.
  std::string odd = good + std::string("\x01\x00\x00\x00z", 5);
  EXPECT_FALSE(DecodeHolderRequest(odd).has_value());
  // A field claiming more bytes than the frame has.
  std::string huge = good;
  huge[4 + 15] = '\xff';
  EXPECT_FALSE(DecodeHolderRequest(huge).has_value());

  HolderReply bad_status;
  bad_status.response.status = 42;
  EXPECT_FALSE(DecodeHolderReply(EncodeHolderReply(bad_status)).has_value());
  EXPECT_FALSE(DecodeHolderReply(good).has_value());
}

TEST(HolderFrameTest, TheKeyNamesTheUrlAndTheCa) {
  const std::string k = HolderKey("https://ctl:6900", "CA");
  EXPECT_EQ(k.size(), 64u);
  EXPECT_NE(k, HolderKey("https://ctl:6901", "CA"));
  EXPECT_NE(k, HolderKey("https://ctl:6900", "CA2"));
  EXPECT_NE(k, HolderKey("https://ctl:6900", ""));
  EXPECT_EQ(HolderSocketPath("/d", k), "/d/holder-" + k.substr(0, 16) + ".sock");
}

class HolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/corral-holder-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/corral";
    ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
    key_ = HolderKey("https://ctl:6900", "CA");
  }
  void TearDown() override {
    Stop();
    fs::remove_all(root_);
  }

  // A holder whose forwarder records requests and answers 200 with the request's body.
  void Start(HolderServerOptions options = {}) {
    options.socket_path = HolderSocketPath(dir_, key_);
    options.key = key_;
    auto s = HolderServer::Listen(options, [this](const HolderRequest& r) {
      std::lock_guard<std::mutex> lock(mu_);
      forwarded_.push_back(r);
      if (r.path == "/not-sent") {
        return HolderReply{.outcome = HolderOutcome::kNotSent,
                           .error = {ErrorCode::kUnavailable, "cannot connect"}};
      }
      if (r.path == "/failed") {
        return HolderReply{.outcome = HolderOutcome::kFailed,
                           .error = {ErrorCode::kUnavailable, "connection broken"}};
      }
      HolderReply reply;
      reply.response.body = r.body;
      return reply;
    });
    ASSERT_TRUE(s.has_value()) << s.error().message;
    server_ = std::move(*s);
    runner_ = std::thread([this] { why_ = server_->Run(); });
  }
  void Stop() {
    if (server_ == nullptr) return;
    server_->Stop();
    runner_.join();
    server_.reset();
  }
  size_t Forwarded() {
    std::lock_guard<std::mutex> lock(mu_);
    return forwarded_.size();
  }

  std::string root_, dir_, key_;
  std::unique_ptr<HolderServer> server_;
  std::thread runner_;
  std::string why_;
  std::mutex mu_;
  std::vector<HolderRequest> forwarded_;
};

TEST_F(HolderTest, ForwardsTheRequestUnchangedAndReturnsTheAnswer) {
  Start();
  struct stat st {};
  ASSERT_EQ(lstat(HolderSocketPath(dir_, key_).c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  HolderChannel channel(dir_, key_);
  for (int i = 0; i < 3; ++i) {  // one connection, several requests
    HolderCall call = channel.Send(SampleRequest());
    ASSERT_EQ(call.kind, HolderCall::Kind::kAnswered) << call.why;
    ASSERT_TRUE(call.response.has_value());
    EXPECT_EQ(call.response->body, SampleRequest().body);
  }
  std::lock_guard<std::mutex> lock(mu_);
  ASSERT_EQ(forwarded_.size(), 3u);
  EXPECT_EQ(forwarded_[0].headers, SampleRequest().headers);
  EXPECT_EQ(forwarded_[0].key, key_);
  EXPECT_EQ(forwarded_[0].timeout, milliseconds(1500));
  EXPECT_EQ(server_->stats().connections, 1u);
}

TEST_F(HolderTest, TellsTheClientWhetherTheRequestMayHaveBeenSentOn) {
  Start();
  HolderChannel channel(dir_, key_);
  HolderRequest r = SampleRequest();
  r.path = "/not-sent";
  EXPECT_EQ(channel.Send(r).kind, HolderCall::Kind::kNotSent);
  r.path = "/failed";
  HolderCall failed = channel.Send(r);
  ASSERT_EQ(failed.kind, HolderCall::Kind::kAnswered);  // an error to return, not to retry
  ASSERT_FALSE(failed.response.has_value());
  EXPECT_EQ(failed.response.error().message, "connection broken");
}

TEST_F(HolderTest, AHolderOfAnotherControllerOrCaSendsNothingOn) {
  Start();
  HolderChannel channel(dir_, HolderKey("https://ctl:6900", "another CA"));
  // Its socket name differs: no holder there.
  HolderCall call = channel.Send(SampleRequest());
  EXPECT_EQ(call.kind, HolderCall::Kind::kNotSent);
  EXPECT_TRUE(call.no_holder);
  // Even at this holder's socket (a key sharing the name's prefix), the key is checked.
  const std::string path = HolderSocketPath(dir_, key_);
  const std::string alias = HolderSocketPath(dir_, key_.substr(0, 16) + std::string(48, '0'));
  ASSERT_EQ(path, alias);
  HolderChannel same_name(dir_, key_.substr(0, 16) + std::string(48, '0'));
  call = same_name.Send(SampleRequest());
  EXPECT_EQ(call.kind, HolderCall::Kind::kNotSent);
  EXPECT_FALSE(call.no_holder);
  EXPECT_EQ(Forwarded(), 0u);
}

TEST_F(HolderTest, NoHolderAStaleSocketOrAnUnsafeDirectoryIsNotUsed) {
  HolderChannel channel(dir_, key_);
  HolderCall none = channel.Send(SampleRequest());
  EXPECT_EQ(none.kind, HolderCall::Kind::kNotSent);
  EXPECT_TRUE(none.no_holder);  // start one

  // A socket left by a holder that died: connection refused, start one.
  {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string path = HolderSocketPath(dir_, key_);
    std::memcpy(addr.sun_path, path.data(), path.size());
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    close(fd);
  }
  HolderCall stale = channel.Send(SampleRequest());
  EXPECT_EQ(stale.kind, HolderCall::Kind::kNotSent);
  EXPECT_TRUE(stale.no_holder) << stale.why;
  // The next holder replaces it.
  Start();
  EXPECT_EQ(channel.Send(SampleRequest()).kind, HolderCall::Kind::kAnswered);
  Stop();

  // A symbolic link in place of the socket is not followed.
  const std::string path = HolderSocketPath(dir_, key_);
  fs::remove(path);
  fs::create_symlink("/tmp/elsewhere.sock", path);
  HolderChannel linked(dir_, key_);
  HolderCall call = linked.Send(SampleRequest());
  EXPECT_EQ(call.kind, HolderCall::Kind::kNotSent);
  EXPECT_FALSE(call.no_holder);
  fs::remove(path);

  // A directory others may write in (where a socket could have been planted) is not used.
  Start();
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  HolderChannel open_dir(dir_, key_);
  call = open_dir.Send(SampleRequest());
  EXPECT_EQ(call.kind, HolderCall::Kind::kNotSent);
  EXPECT_FALSE(call.no_holder);
  EXPECT_NE(call.why.find("mode 0777"), std::string::npos) << call.why;
  // A missing directory: start a holder (which creates it).
  HolderChannel missing(root_ + "/nothing", key_);
  call = missing.Send(SampleRequest());
  EXPECT_TRUE(call.no_holder);
  EXPECT_EQ(Forwarded(), 1u);  // only the request to the holder that replaced the stale socket
}

TEST_F(HolderTest, AHolderThatClosesWithoutAnsweringIsALostRequest) {
  // A stand-in for a holder killed after it read the request.
  const std::string path = HolderSocketPath(dir_, key_);
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  std::thread killer([listener] {
    int fd = accept(listener, nullptr, nullptr);
    char buf[64];
    (void)!read(fd, buf, sizeof buf);
    close(fd);
  });
  HolderChannel channel(dir_, key_);
  HolderCall call = channel.Send(SampleRequest());
  killer.join();
  close(listener);
  EXPECT_EQ(call.kind, HolderCall::Kind::kLost) << call.why;
}

TEST_F(HolderTest, AnotherUidIsRefusedUnread) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another uid";
  Start();
  // Make the socket reachable, as a mistake or an attacker with a foothold might.
  ASSERT_EQ(chmod(root_.c_str(), 0755), 0);
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  const std::string path = HolderSocketPath(dir_, key_);
  ASSERT_EQ(chmod(path.c_str(), 0777), 0);
  const std::string frame_body = EncodeHolderRequest([this] {
    HolderRequest r = SampleRequest();
    r.key = key_;
    return r;
  }());
  pid_t pid = fork();
  if (pid == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) _exit(11);
    std::string frame(4, '\0');
    for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>((frame_body.size() >> (8 * i)) & 0xff);
    frame += frame_body;
    (void)!send(fd, frame.data(), frame.size(), MSG_NOSIGNAL);
    char buf[16];
    ssize_t n = read(fd, buf, sizeof buf);
    _exit(n > 0 ? 12 : 0);  // 0: closed without a byte of reply
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(server_->stats().refused_peers, 1u);
  EXPECT_EQ(Forwarded(), 0u);
  // The user's own client still gets through.
  HolderChannel channel(dir_, key_);
  EXPECT_EQ(channel.Send(SampleRequest()).kind, HolderCall::Kind::kAnswered);
}

TEST_F(HolderTest, OneHolderPerKeyAndItStopsWhenIdleOrItsSocketIsGone) {
  HolderServerOptions options;
  options.idle_timeout = milliseconds(200);
  options.check_interval = milliseconds(10);
  Start(options);
  // A second holder for the same key finds the lock taken.
  auto second = HolderServer::Listen({.socket_path = HolderSocketPath(dir_, key_), .key = key_},
                                     [](const HolderRequest&) { return HolderReply{}; });
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::kAlreadyExists);
  {
    HolderChannel channel(dir_, key_);
    EXPECT_EQ(channel.Send(SampleRequest()).kind, HolderCall::Kind::kAnswered);
  }
  runner_.join();  // returns by itself once no client has been connected for 200 ms
  EXPECT_EQ(why_, "idle");
  server_.reset();
  EXPECT_FALSE(fs::exists(HolderSocketPath(dir_, key_)));  // removed on the way out

  options.idle_timeout = milliseconds(60'000);
  Start(options);
  fs::remove(HolderSocketPath(dir_, key_));
  runner_.join();
  EXPECT_EQ(why_, "socket removed or replaced");
  server_.reset();
}

}  // namespace
}  // namespace corral::api
