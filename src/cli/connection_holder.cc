#include "cli/connection_holder.h"

#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include <sys/stat.h>

#include "api/connection_holder.h"
#include "api/http.h"
#include "api/private_file.h"

namespace corral::cli {
namespace {

constexpr int kDefaultIdleSeconds = 60;
constexpr int kMaxIdleSeconds = 24 * 3600;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

int IdleSeconds() {
  const std::string text = Env("CORRAL_CONNECTION_HOLDER_IDLE_S");
  int v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || v < 1) {
    return kDefaultIdleSeconds;
  }
  return std::min(v, kMaxIdleSeconds);
}

api::HolderReply Forward(api::HttpClient& http, const api::HolderRequest& r) {
  bool may_have_sent = false;
  auto response =
      http.Send(r.method, r.path, r.body, r.headers, r.idempotent, r.timeout, &may_have_sent);
  api::HolderReply reply;
  if (response) {
    reply.response = std::move(*response);
    return reply;
  }
  reply.outcome = may_have_sent ? api::HolderOutcome::kFailed : api::HolderOutcome::kNotSent;
  reply.error = response.error();
  return reply;
}

}  // namespace

bool ConnectionHolderEnabled() { return Env("CORRAL_CONNECTION_HOLDER") != "0"; }

void StartConnectionHolder(const std::string& url, const std::string& ca_file,
                           const std::string& dir) {
  const std::string idle = std::to_string(IdleSeconds());
  std::vector<char*> argv = {const_cast<char*>("corral"),
                             const_cast<char*>("__connection-holder"),
                             const_cast<char*>(url.c_str()),
                             const_cast<char*>(ca_file.c_str()),
                             const_cast<char*>(dir.c_str()),
                             const_cast<char*>(idle.c_str()),
                             nullptr};
  // No credential travels: only what OpenSSL reads to find CAs.
  std::vector<std::string> env_text;
  for (const char* name : {"SSL_CERT_FILE", "SSL_CERT_DIR", "OPENSSL_CONF"}) {
    if (const char* v = std::getenv(name)) env_text.push_back(std::string(name) + "=" + v);
  }
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t files;
  posix_spawnattr_t attr;
  if (posix_spawn_file_actions_init(&files) != 0) return;
  if (posix_spawnattr_init(&attr) != 0) {
    posix_spawn_file_actions_destroy(&files);
    return;
  }
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDWR, 0);
  posix_spawn_file_actions_adddup2(&files, 0, 1);
  posix_spawn_file_actions_adddup2(&files, 0, 2);
  // Nothing of the caller's stays open in it (a pipe held open would keep `$(corral ...)`
  // waiting for the holder's exit).
  posix_spawn_file_actions_addclosefrom_np(&files, 3);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, "/proc/self/exe", &files, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&files);
  // The spawned process forks the holder and exits at once (RunConnectionHolderCommand):
  // reaping it here leaves no zombie in a long-lived caller such as `corral run`.
  if (spawned == 0) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

int RunConnectionHolderCommand(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: corral __connection-holder URL CA_FILE DIR IDLE_SECONDS\n");
    return 2;
  }
  // Detach from the caller, which reaps this process at once: the holder is its child, which
  // init (or the session's subreaper) adopts, and not a session leader, so it can never gain
  // a controlling terminal.
  pid_t holder = fork();
  if (holder < 0) return 1;
  if (holder > 0) _exit(0);
  signal(SIGPIPE, SIG_IGN);  // a closed TLS socket is an error to handle, not a death
  // Answers of a few hundred KB pass through on every call: keep freed memory for the next
  // one instead of mapping and unmapping it each time (page faults were most of its CPU).
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
  if (chdir("/") != 0) return 1;
  const std::string url = argv[1], ca_file = argv[2], dir = argv[3];
  int idle = 0;
  const std::string idle_text = argv[4];
  std::from_chars(idle_text.data(), idle_text.data() + idle_text.size(), idle);
  if (idle < 1) idle = kDefaultIdleSeconds;

  auto read_ca = [&ca_file]() -> Result<std::string> {
    if (ca_file.empty()) return std::string();
    return api::ReadPublicFile(ca_file, "CA file");
  };
  auto ca_pem = read_ca();
  if (!ca_pem) return 1;
  const std::string key = api::HolderKey(url, *ca_pem);
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return 1;
  api::HttpClientOptions options;
  options.ca_file = ca_file;
  auto http = api::HttpClient::Create(url, options);
  if (!http) return 1;
  // The CA it verifies with is the one named by the key (the file read again: unchanged).
  auto again = read_ca();
  if (!again || *again != *ca_pem) return 1;
  std::shared_ptr<api::HttpClient> client = std::move(*http);
  auto server = api::HolderServer::Listen(
      {.socket_path = api::HolderSocketPath(dir, key),
       .key = key,
       .idle_timeout = std::chrono::seconds(idle)},
      [client](const api::HolderRequest& r) { return Forward(*client, r); });
  if (!server) return server.error().code == ErrorCode::kAlreadyExists ? 0 : 1;
  (*server)->Run();
  return 0;
}

}  // namespace corral::cli
