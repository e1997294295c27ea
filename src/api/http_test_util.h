// Helpers shared by the HTTP transport's tests: raw sockets to talk bytes to a server, waits
// with a deadline, thread and memory figures of this process.
#pragma once

#include <dirent.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "api/http.h"
#include "core/clock.h"

namespace corral::api::http_testing {

using std::chrono::milliseconds;

// Bounds every wait in these tests; reaching it is a failure, never the expected path.
inline constexpr milliseconds kPatience{10'000};

inline MonoTime Now() { return SystemClock::Get().MonotonicNow(); }

// Waits until `cond` holds or `kPatience` passes; returns whether it held.
inline bool WaitUntil(const std::function<bool()>& cond) {
  MonoTime deadline = Now() + kPatience;
  while (!cond()) {
    if (Now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

inline int ThreadCount() {
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return -1;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n;
}

// A plain blocking TCP socket to talk raw bytes to a server.
class RawConn {
 public:
  explicit RawConn(uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawConn() { Close(); }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  bool connected() const { return connected_; }
  int fd() const { return fd_; }

  bool Write(std::string_view s) {
    while (!s.empty()) {
      ssize_t n = send(fd_, s.data(), s.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      s.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Reads whatever arrives until the peer closes (or kPatience). Returns it.
  std::string ReadUntilClose() {
    std::string out;
    while (ReadSome(&out)) {
    }
    return out;
  }

  // Reads one response (head plus Content-Length body unless `head_only`). Returns "" if the
  // connection ends first.
  std::string ReadResponse(bool head_only = false) {
    while (true) {
      size_t end = buf_.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t length = 0;
        size_t cl = buf_.find("Content-Length: ");
        if (cl != std::string::npos && cl < end && !head_only) {
          length = std::stoul(buf_.substr(cl + 16));
        }
        if (buf_.size() >= end + 4 + length) {
          std::string r = buf_.substr(0, end + 4 + length);
          buf_.erase(0, end + 4 + length);
          return r;
        }
      }
      if (!ReadSome(&buf_)) return "";
    }
  }

  // True when the server has closed the connection (EOF or reset) within kPatience.
  bool WaitForClose() {
    std::string sink;
    while (ReadSome(&sink)) {
    }
    return closed_;
  }

 private:
  bool ReadSome(std::string* out) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(kPatience.count())) <= 0) return false;
    char tmp[65536];
    ssize_t n = recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) {
      closed_ = true;
      return false;
    }
    out->append(tmp, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
  std::string buf_;
};

inline int StatusOf(const std::string& response) {
  if (response.size() < 12 || response.compare(0, 9, "HTTP/1.1 ") != 0) return -1;
  return std::stoi(response.substr(9, 3));
}

inline std::string BodyOf(const std::string& response) {
  size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}

inline HttpResponse Text(std::string body, int status = 200) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain";
  r.body = std::move(body);
  return r;
}

inline std::unique_ptr<HttpClient> ClientFor(uint16_t port, HttpClientOptions options = {}) {
  auto client = HttpClient::Create("http://127.0.0.1:" + std::to_string(port), options);
  EXPECT_TRUE(client.has_value());
  return std::move(*client);
}

// This process's resident memory in KiB (VmRSS of /proc/self/status), or -1.
inline long RssKib() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  }
  std::fclose(f);
  return kib;
}

}  // namespace corral::api::http_testing
