// The CLI's connection holder on a real TLS cluster (cli/connection_holder.h; docs/operations.md,
// "The connection holder"): calls after the first go through it and make no TLS handshake;
// another uid is refused, and a directory of another uid is never used; it exits when idle;
// killing it during a call falls back to a connection of the call's own; the TCP side still
// carries neither token nor script in plain text.
#include "api/connection_holder.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "api/json_codec.h"
#include "tests/integration/test_cluster.h"
#include "tests/integration/test_util.h"
#include "tests/integration/trust_util.h"

namespace corral::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Whether process `pid` is gone (or a zombie nobody has reaped yet).
bool Gone(pid_t pid) {
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return true;
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && stat.size() > paren + 2 && stat[paren + 2] == 'Z';
}

// Sockets of the holder at `socket` in /proc/net/unix: its listener and each accepted client
// (listed under the name it was bound to, before it was renamed into place).
int SocketsAt(const std::string& socket) {
  const std::string path = socket + ".new";
  std::istringstream in(ReadFile("/proc/net/unix"));
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.size() > path.size() &&
        line.compare(line.size() - path.size(), path.size(), path) == 0)
      ++n;
  }
  return n;
}

class ConnectionHolderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new TestCluster({.nodes = 1, .gpus_per_node = 0, .cpus_per_node = 4});
    Status s = cluster_->Start();
    ASSERT_TRUE(s.has_value()) << s.error().message;
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  void SetUp() override {
    static int n = 0;  // short: a socket path has at most 107 bytes
    runtime_ = cluster_->dir() + "/rt" + std::to_string(++n);
    fs::create_directories(runtime_);
    chmod(runtime_.c_str(), 0700);
    env_ = {{"XDG_RUNTIME_DIR", runtime_}};
  }
  void TearDown() override {
    for (const std::string& socket : sockets_) {
      pid_t pid = HolderPid(socket);
      if (pid > 0 && kill(pid, SIGKILL) == 0) WaitFor([pid] { return Gone(pid); }, seconds(10));
    }
  }

  // The socket of the holder for `url` (the cluster's by default) under this test's runtime
  // directory; remembered so that TearDown stops it.
  std::string Socket(const std::string& url = "") {
    std::string s = api::HolderSocketPath(
        runtime_ + "/corral",
        api::HolderKey(url.empty() ? cluster_->url() : url, ReadFile(cluster_->ca_file())));
    sockets_.push_back(s);
    return s;
  }
  static pid_t HolderPid(const std::string& socket) {
    std::string text = ReadFile(socket + ".lock");
    return text.empty() ? -1 : static_cast<pid_t>(std::stol(text));
  }
  CliResult Cli(const std::vector<std::string>& args,
                std::map<std::string, std::string> extra = {}) {
    std::map<std::string, std::string> env = env_;
    for (auto& [k, v] : extra) env[k] = v;
    const std::string program = args.front();
    return cluster_->CliAs(program, std::vector<std::string>(args.begin() + 1, args.end()), "",
                           env);
  }
  // The controller's completed TLS handshakes, read on one keep-alive connection.
  long Handshakes() {
    if (metrics_ == nullptr) {
      auto c = api::HttpClient::Create(cluster_->url(), cluster_->client_options());
      if (!c) return -1;
      metrics_ = std::move(*c);
      metrics_token_ = ReadFile(cluster_->dir() + "/pki/metrics.token");
      metrics_token_.erase(metrics_token_.find_last_not_of("\n") + 1);
    }
    return testing::Handshakes(*metrics_, metrics_token_, false) +
           testing::Handshakes(*metrics_, metrics_token_, true);
  }

  static uint16_t ControllerPort() {
    const std::string& url = cluster_->url();
    return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
  }

  static TestCluster* cluster_;
  std::string runtime_;
  std::map<std::string, std::string> env_;
  std::vector<std::string> sockets_;
  std::unique_ptr<api::HttpClient> metrics_;
  std::string metrics_token_;
};

TestCluster* ConnectionHolderTest::cluster_ = nullptr;

TEST_F(ConnectionHolderTest, CallsAfterTheFirstGoThroughTheHolderWithoutAHandshake) {
  const std::string socket = Socket();
  CliResult first = Cli({"corral", "nodes"});
  ASSERT_EQ(first.status, 0) << first.err;
  ASSERT_TRUE(WaitFor([&] { return fs::exists(socket); }, seconds(10))) << socket;
  struct stat st {};
  ASSERT_EQ(lstat(socket.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const pid_t holder = HolderPid(socket);
  ASSERT_GT(holder, 0);

  const long h0 = Handshakes();
  ASSERT_GE(h0, 0);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Cli({"corral", "queue"}).status, 0);
  EXPECT_LE(Handshakes() - h0, 1);  // the holder's own connection, made once
  const long h1 = Handshakes();
  CliResult submitted = Cli({"corral", "submit", "--hold", "--parsable", "--wrap", "true"});
  ASSERT_EQ(submitted.status, 0) << submitted.err;
  const std::string id = submitted.out.substr(0, submitted.out.find_first_of(";\n"));
  CliResult squeue = Cli({"squeue", "--noheader", "-o", "%i %T"});
  EXPECT_TRUE(Has(squeue.out, id + " PENDING")) << squeue.out << squeue.err;
  ASSERT_EQ(Cli({"corral", "cancel", id}).status, 0);
  EXPECT_EQ(Handshakes() - h1, 0);
  auto job = cluster_->GetJob(JobId(std::stoull(id)));
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->job.state, JobState::kCancelled);
  EXPECT_EQ(HolderPid(socket), holder);  // still the one holder

  // Turned off, a call connects by itself.
  const long h2 = Handshakes();
  ASSERT_EQ(Cli({"corral", "queue"}, {{"CORRAL_CONNECTION_HOLDER", "0"}}).status, 0);
  EXPECT_EQ(Handshakes() - h2, 1);
}

TEST_F(ConnectionHolderTest, AnotherUidIsRefusedAndADirectoryOfAnotherUidIsNeverUsed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another uid";
  const std::string socket = Socket();
  ASSERT_EQ(Cli({"corral", "nodes"}).status, 0);
  ASSERT_TRUE(WaitFor([&] { return fs::exists(socket); }, seconds(10)));
  // Open the way to the socket, as a mistake might; the holder still checks the peer's uid.
  for (const std::string& p : {cluster_->dir(), runtime_, runtime_ + "/corral"})
    chmod(p.c_str(), 0755);
  chmod(socket.c_str(), 0777);
  api::HolderRequest request{.key = api::HolderKey(cluster_->url(), ReadFile(cluster_->ca_file())),
                             .method = "GET",
                             .path = "/api/v1/jobs"};
  const std::string body = api::EncodeHolderRequest(request);
  std::string frame;
  for (int i = 0; i < 4; ++i) frame.push_back(static_cast<char>((body.size() >> (8 * i)) & 0xff));
  frame += body;
  pid_t pid = fork();
  if (pid == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, socket.data(), socket.size());
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) _exit(11);
    (void)!send(fd, frame.data(), frame.size(), MSG_NOSIGNAL);
    char buf[16];
    _exit(read(fd, buf, sizeof buf) > 0 ? 12 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;  // closed, unanswered
  chmod(runtime_.c_str(), 0700);
  // The user's own calls still go through.
  EXPECT_EQ(Cli({"corral", "queue"}).status, 0);

  // A directory that another uid made in advance (a shared HOME, /tmp) is never used: no
  // connection to what listens there, no holder started in it; the call connects itself.
  const std::string planted_rt = cluster_->dir() + "/rtp";
  fs::create_directories(planted_rt + "/corral");
  chmod(planted_rt.c_str(), 0755);
  chmod((planted_rt + "/corral").c_str(), 0700);
  ASSERT_EQ(chown((planted_rt + "/corral").c_str(), 65534, 65534), 0);
  const std::string planted = api::HolderSocketPath(planted_rt + "/corral", request.key);
  int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, planted.data(), planted.size());
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  ASSERT_EQ(lchown(planted.c_str(), 65534, 65534), 0);
  CliResult direct = Cli({"corral", "queue"}, {{"XDG_RUNTIME_DIR", planted_rt}});
  EXPECT_EQ(direct.status, 0) << direct.err;
  EXPECT_LT(accept(listener, nullptr, nullptr), 0);  // nobody connected
  close(listener);
  EXPECT_FALSE(fs::exists(planted + ".lock"));
}

TEST_F(ConnectionHolderTest, TheHolderExitsWhenIdle) {
  const std::string socket = Socket();
  env_["CORRAL_CONNECTION_HOLDER_IDLE_S"] = "1";
  ASSERT_EQ(Cli({"corral", "nodes"}).status, 0);
  ASSERT_TRUE(WaitFor([&] { return fs::exists(socket); }, seconds(10)));
  const pid_t holder = HolderPid(socket);
  ASSERT_GT(holder, 0);
  ASSERT_EQ(Cli({"corral", "queue"}).status, 0);  // through it
  EXPECT_TRUE(WaitFor([&] { return !fs::exists(socket) && Gone(holder); }, seconds(20)));
  // The next call starts a new one.
  ASSERT_EQ(Cli({"corral", "queue"}).status, 0);
  EXPECT_TRUE(WaitFor([&] { return fs::exists(socket); }, seconds(10)));
}

TEST_F(ConnectionHolderTest, KillingTheHolderDuringACallFallsBackToADirectConnection) {
  const std::string socket = Socket();
  ASSERT_EQ(Cli({"corral", "nodes"}).status, 0);
  ASSERT_TRUE(WaitFor([&] { return fs::exists(socket); }, seconds(10)));
  CliResult submitted = Cli({"corral", "submit", "--hold", "--parsable", "--wrap", "true"});
  ASSERT_EQ(submitted.status, 0) << submitted.err;
  const std::string id = submitted.out.substr(0, submitted.out.find_first_of(";\n"));
  const pid_t holder = HolderPid(socket);
  ASSERT_GT(holder, 0);

  // `corral wait` long-polls through the holder; the holder dies under it.
  std::string token = cluster_->Token("");
  const std::string out = runtime_ + "/wait.out";
  std::vector<std::string> env_text = {"PATH=/usr/bin:/bin",
                                       "HOME=" + cluster_->dir(),
                                       "XDG_RUNTIME_DIR=" + runtime_,
                                       "CORRAL_CONTROLLER=" + cluster_->url(),
                                       "CORRAL_CA_FILE=" + cluster_->ca_file(),
                                       "CORRAL_TOKEN=" + token.substr(7)};
  std::vector<char*> envp, argv;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = {"corral", "wait", id};
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t waiter = -1;
  ASSERT_EQ(posix_spawn(&waiter, CORRAL_BINARY, &fa, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  // The listener and the waiter's connection.
  ASSERT_TRUE(WaitFor([&] { return SocketsAt(socket) >= 2; }, seconds(10))) << ReadFile(out);
  ASSERT_EQ(kill(holder, SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return Gone(holder); }, seconds(10)));
  ASSERT_EQ(Cli({"corral", "release", id}).status, 0);  // a stale socket: connects itself
  int status = -1;
  ASSERT_TRUE(WaitFor([&] { return waitpid(waiter, &status, WNOHANG) == waiter; }, seconds(60)))
      << ReadFile(out);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(out);
  auto job = cluster_->GetJob(JobId(std::stoull(id)));
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->job.state, JobState::kCompleted);
}

TEST_F(ConnectionHolderTest, TheWireFromTheHolderHoldsNoTokenAndNoScript) {
  RecordingRelay relay(ControllerPort());
  const std::string url = "https://127.0.0.1:" + std::to_string(relay.port());
  env_["CORRAL_CONTROLLER"] = url;
  const std::string socket = Socket(url);
  ASSERT_EQ(Cli({"corral", "nodes"}).status, 0);
  ASSERT_TRUE(WaitFor([&] { return fs::exists(socket); }, seconds(10)));
  const std::string marker = "corral-holder-wire-marker-9c1e";
  CliResult submitted = Cli({"corral", "submit", "--parsable", "--wrap", "echo " + marker});
  ASSERT_EQ(submitted.status, 0) << submitted.err;
  const std::string id = submitted.out.substr(0, submitted.out.find_first_of(";\n"));
  auto job = cluster_->GetJob(JobId(std::stoull(id)));
  ASSERT_TRUE(job.has_value());
  EXPECT_TRUE(Has(job->job.spec.script, marker));  // it did travel, inside TLS
  EXPECT_GE(SocketsAt(socket), 1);  // the holder listens (a call's end may still be open)
  EXPECT_EQ(Cli({"corral", "queue"}).status, 0);
  const std::string wire = relay.bytes();
  EXPECT_GT(wire.size(), 1000u);
  EXPECT_FALSE(Has(wire, marker));
  EXPECT_FALSE(Has(wire, "Bearer"));
  EXPECT_FALSE(Has(wire, "/api/v1/"));
  ASSERT_TRUE(cluster_->WaitJob(JobId(std::stoull(id)), seconds(60)).has_value());
}

}  // namespace
}  // namespace corral::testing
