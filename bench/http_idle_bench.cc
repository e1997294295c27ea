// Idle keep-alive connections against the API server: a child process opens N connections
// (default 10,000), sends one request on each and keeps them all open; meanwhile this process
// (the server) reports its thread count and resident memory from /proc/self/status, and
// sends requests of its own on a fresh client to show they are still answered.
//
//   http_idle_bench [N]
//
// The client side runs in another process so that each side has its own descriptor limit
// (both raise the soft RLIMIT_NOFILE to the hard one).
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "api/http.h"
#include "core/clock.h"

namespace {

void RaiseFdLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

// "Threads:" and "VmRSS:" (KiB) of this process.
void ProcStatus(long* threads, long* rss_kib) {
  *threads = -1;
  *rss_kib = -1;
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return;
  char line[256];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    std::sscanf(line, "Threads: %ld", threads);
    std::sscanf(line, "VmRSS: %ld kB", rss_kib);
  }
  std::fclose(f);
}

bool ReadFull(int fd, void* p, size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = read(fd, c, n);
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// The child: opens `n` connections to `port` in batches, one request each, keeps them open
// until `done_fd` closes. Writes the number it holds to `ready_fd`.
[[noreturn]] void Child(int port_fd, int ready_fd, int done_fd, int n) {
  RaiseFdLimit();
  uint16_t port = 0;
  if (!ReadFull(port_fd, &port, sizeof port)) _exit(1);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const std::string request =
      "GET /api/v1/health HTTP/1.1\r\nHost: bench\r\nContent-Length: 0\r\n\r\n";
  std::vector<int> fds;
  int held = 0;
  constexpr int kBatch = 200;
  for (int start = 0; start < n; start += kBatch) {
    std::vector<int> batch;
    for (int i = start; i < n && i < start + kBatch; ++i) {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        std::fprintf(stderr, "connect %d: %s\n", i, std::strerror(errno));
        if (fd >= 0) close(fd);
        continue;
      }
      if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(request.size())) {
        close(fd);
        continue;
      }
      batch.push_back(fd);
    }
    for (int fd : batch) {
      char buf[1024];
      pollfd p{fd, POLLIN, 0};
      ssize_t r = poll(&p, 1, 10'000) == 1 ? recv(fd, buf, sizeof buf, 0) : -1;
      if (r > 12 && std::memcmp(buf, "HTTP/1.1 200", 12) == 0) ++held;
      fds.push_back(fd);
    }
  }
  ssize_t w = write(ready_fd, &held, sizeof held);
  (void)w;
  char c;
  while (read(done_fd, &c, 1) > 0) {
  }
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 10'000;
  int port_pipe[2], ready_pipe[2], done_pipe[2];
  if (pipe(port_pipe) != 0 || pipe(ready_pipe) != 0 || pipe(done_pipe) != 0) return 1;
  // Fork before the server has threads: the child only uses sockets.
  pid_t child = fork();
  if (child == 0) {
    close(port_pipe[1]);
    close(ready_pipe[0]);
    close(done_pipe[1]);
    Child(port_pipe[0], ready_pipe[1], done_pipe[0], n);
  }
  close(port_pipe[0]);
  close(ready_pipe[1]);
  close(done_pipe[0]);

  RaiseFdLimit();
  long threads0, rss0;
  ProcStatus(&threads0, &rss0);
  corral::api::HttpServerOptions options;
  options.max_connections = static_cast<size_t>(n) + 1000;
#ifndef CORRAL_HTTP_IDLE_BENCH_OLD_SERVER
  options.max_connections_per_peer = 0;
  options.max_anonymous_connections = static_cast<size_t>(n) + 1000;
#endif
  corral::api::HttpServer server(options);
  server.Route("GET", "/api/v1/health",
               [](const corral::api::HttpRequest&) { return corral::api::HttpResponse{}; });
  server.Route("POST", "/api/v1/jobs", [](const corral::api::HttpRequest& r) {
    corral::api::HttpResponse resp;
    resp.status = 201;
    resp.body = R"({"job_id":)" + std::to_string(r.body.size()) + "}";
    return resp;
  });
  if (!server.Start("127.0.0.1", 0).has_value()) return 1;
  long threads1, rss1;
  ProcStatus(&threads1, &rss1);
  uint16_t port = server.port();
  ssize_t w = write(port_pipe[1], &port, sizeof port);
  (void)w;
  int held = 0;
  if (!ReadFull(ready_pipe[0], &held, sizeof held)) return 1;
  long threads2, rss2;
  ProcStatus(&threads2, &rss2);

  // Requests on a fresh connection while the idle ones are open.
  auto client = corral::api::HttpClient::Create("http://127.0.0.1:" + std::to_string(port));
  const corral::MonoTime t0 = corral::SystemClock::Get().MonotonicNow();
  constexpr int kRequests = 2000;
  int answered = 0;
  for (int i = 0; i < kRequests; ++i) {
    auto r = (*client)->Send("POST", "/api/v1/jobs", R"({"name":"x"})");
    if (r.has_value() && r->status == 201) ++answered;
  }
  const double seconds =
      std::chrono::duration<double>(corral::SystemClock::Get().MonotonicNow() - t0).count();
  long threads3, rss3;
  ProcStatus(&threads3, &rss3);

  close(done_pipe[1]);
  int status = 0;
  waitpid(child, &status, 0);
  std::printf("idle keep-alive connections held open: %d of %d\n", held, n);
  std::printf(
      "server process threads: %ld before the server, %ld started, %ld with the idle "
      "connections, %ld after %d requests\n",
      threads0, threads1, threads2, threads3, kRequests);
  std::printf(
      "server process RSS: %.1f MiB started, %.1f MiB with the idle connections "
      "(%.2f KiB per connection), %.1f MiB after the requests\n",
      rss1 / 1024.0, rss2 / 1024.0, held > 0 ? static_cast<double>(rss2 - rss1) / held : 0.0,
      rss3 / 1024.0);
  std::printf("requests while they are open: %d of %d answered, %.0f requests/s\n", answered,
              kRequests, kRequests / seconds);
  return held == n && answered == kRequests ? 0 : 2;
}
