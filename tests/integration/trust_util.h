// Helpers of the tests of who is calling over what transport (trust_test.cc,
// connection_holder_test.cc): a recording TCP relay, the controller's TLS handshake count, a
// second local Unix user.
#pragma once

#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "api/http.h"
#include "tests/integration/test_cluster.h"

namespace corral::testing {

// A TCP relay on loopback that forwards every connection to `target_port` and records every
// byte that passes, both ways.
class RecordingRelay {
 public:
  explicit RecordingRelay(uint16_t target_port) : target_port_(target_port) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    listen(listener_, 16);
    socklen_t len = sizeof addr;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~RecordingRelay() {
    stop_ = true;
    shutdown(listener_, SHUT_RDWR);
    thread_.join();
    close(listener_);
  }
  uint16_t port() const { return port_; }
  std::string bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return bytes_;
  }

 private:
  void Run() {
    std::vector<std::thread> pumps;
    while (!stop_) {
      int client = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) break;
      int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(target_port_);
      if (connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        close(client);
        close(server);
        continue;
      }
      pumps.emplace_back([this, client, server] { Pump(client, server); });
    }
    for (auto& t : pumps) t.join();
  }
  void Pump(int a, int b) {
    pollfd fds[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
    char buf[16384];
    while (!stop_) {
      if (poll(fds, 2, 100) <= 0) continue;
      bool closed = false;
      for (int i = 0; i < 2; ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        ssize_t n = read(fds[i].fd, buf, sizeof buf);
        if (n <= 0) {
          closed = true;
          break;
        }
        {
          std::lock_guard<std::mutex> lock(mu_);
          bytes_.append(buf, static_cast<size_t>(n));
        }
        if (write(fds[1 - i].fd, buf, static_cast<size_t>(n)) != n) closed = true;
      }
      if (closed) break;
    }
    close(a);
    close(b);
  }

  uint16_t target_port_;
  uint16_t port_ = 0;
  int listener_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::string bytes_;
};

// The controller's count of TLS handshakes (`resumed` "true" or "false") from /metrics, read
// on one keep-alive connection (`client`) so that reading makes no handshake of its own.
inline long Handshakes(api::HttpClient& client, const std::string& metrics_token, bool resumed) {
  auto r = client.Send("GET", "/metrics", "", {{"authorization", "Bearer " + metrics_token}}, true);
  if (!r || r->status != 200) return -1;
  const std::string line =
      std::string("corral_tls_handshakes_total{resumed=\"") + (resumed ? "true" : "false") + "\"} ";
  size_t at = r->body.find(line);
  if (at == std::string::npos) return -1;
  return std::stol(r->body.substr(at + line.size()));
}

// Unix user `name`, created for the test when missing and removed afterwards.
class TestUser {
 public:
  explicit TestUser(const std::string& name) : name_(name) {
    if (getpwnam(name.c_str()) == nullptr) {
      created_ = std::system(("useradd --system --no-create-home --shell /usr/sbin/nologin " +
                              name + " >/dev/null 2>&1")
                                 .c_str()) == 0;
    }
    if (const passwd* pw = getpwnam(name.c_str())) {
      uid_ = pw->pw_uid;
      gid_ = pw->pw_gid;
    }
  }
  ~TestUser() {
    if (created_) (void)std::system(("userdel " + name_ + " >/dev/null 2>&1").c_str());
  }
  bool exists() const { return uid_ != 0; }
  // Runs `argv` as this user with `env`; returns its exit status, stdout and stderr.
  CliResult Run(const std::vector<std::string>& argv, const std::vector<std::string>& env) const {
    int out[2], err[2];
    CliResult r;
    if (pipe(out) != 0 || pipe(err) != 0) return r;
    pid_t pid = fork();
    if (pid == 0) {
      dup2(out[1], 1);
      dup2(err[1], 2);
      if (chdir("/tmp") != 0 || setgroups(0, nullptr) != 0 || setgid(gid_) != 0 ||
          setuid(uid_) != 0) {
        _exit(126);
      }
      std::vector<char*> a, e;
      for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
      a.push_back(nullptr);
      for (const auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
      e.push_back(nullptr);
      execve(CORRAL_BINARY, a.data(), e.data());
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    auto drain = [](int fd) {
      std::string s;
      char buf[4096];
      ssize_t n;
      while ((n = read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
      close(fd);
      return s;
    };
    r.out = drain(out[0]);
    r.err = drain(err[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
  }

 private:
  std::string name_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  bool created_ = false;
};

}  // namespace corral::testing
