#include "cli/step_pty.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <iterator>

#include <sys/ioctl.h>

#include "api/step_io.h"
#include "core/strings.h"

namespace corral::cli {
namespace {

// The saved settings, for exit() and the fatal-signal handler (async-signal-safe: plain data).
int g_fd = -1;
termios g_saved{};
volatile sig_atomic_t g_raw = 0;
constexpr int kFatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
struct sigaction g_old_fatal[std::size(kFatal)];

void RestoreSaved() {
  if (g_raw) {
    tcsetattr(g_fd, TCSAFLUSH, &g_saved);
    g_raw = 0;
  }
}

void OnFatal(int sig) {
  RestoreSaved();
  for (size_t i = 0; i < std::size(kFatal); ++i) {
    if (kFatal[i] == sig) sigaction(sig, &g_old_fatal[i], nullptr);
  }
  raise(sig);
}

constexpr size_t kMaxQueued = 1 << 20;

}  // namespace

std::optional<std::pair<uint16_t, uint16_t>> TerminalSize(int fd) {
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0) return std::nullopt;
  return std::make_pair(ws.ws_row, ws.ws_col);
}

std::unique_ptr<RawTerminal> RawTerminal::Enter(int fd) {
  if (g_raw || !isatty(fd)) return nullptr;
  termios saved{};
  if (tcgetattr(fd, &saved) != 0) return nullptr;
  termios raw = saved;
  cfmakeraw(&raw);
  g_fd = fd;
  g_saved = saved;
  static bool at_exit = [] { return std::atexit(RestoreSaved) == 0; }();
  (void)at_exit;
  struct sigaction sa {};
  sa.sa_handler = OnFatal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < std::size(kFatal); ++i) sigaction(kFatal[i], &sa, &g_old_fatal[i]);
  g_raw = 1;
  if (tcsetattr(fd, TCSAFLUSH, &raw) != 0) {
    g_raw = 0;
    for (size_t i = 0; i < std::size(kFatal); ++i) sigaction(kFatal[i], &g_old_fatal[i], nullptr);
    return nullptr;
  }
  return std::unique_ptr<RawTerminal>(new RawTerminal());
}

RawTerminal::~RawTerminal() { Restore(); }

void RawTerminal::Restore() {
  if (!g_raw) return;
  RestoreSaved();
  for (size_t i = 0; i < std::size(kFatal); ++i) sigaction(kFatal[i], &g_old_fatal[i], nullptr);
}

void PtyInput::Append(const std::string& frame, std::unique_lock<std::mutex>& lock) {
  cv_.wait(lock, [&] { return closed_ || queued_.size() < kMaxQueued; });
  if (closed_) return;
  queued_ += frame;
  cv_.notify_all();
}

void PtyInput::Type(std::string_view bytes) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!bytes.empty()) {
    size_t n = std::min(bytes.size(), api::kPtyMaxFrameData);
    Append(api::EncodePtyFrame({.data = std::string(bytes.substr(0, n))}), lock);
    bytes.remove_prefix(n);
  }
}

void PtyInput::Resize(uint16_t rows, uint16_t cols) {
  if (rows == 0 || cols == 0) return;  // not a size (a terminal that does not know its own)
  rows = std::min(rows, api::kPtyMaxDimension);
  cols = std::min(cols, api::kPtyMaxDimension);
  std::unique_lock<std::mutex> lock(mu_);
  Append(api::EncodePtyFrame({.kind = api::PtyFrame::Kind::kResize, .rows = rows, .cols = cols}),
         lock);
}

void PtyInput::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

api::HttpResponse PtyInput::Handle(const api::HttpRequest& req) {
  auto query = [&](const char* key) -> std::optional<uint64_t> {
    auto it = req.query.find(key);
    return it == req.query.end() ? std::nullopt : ParseUint(it->second);
  };
  api::HttpResponse r;
  r.content_type = "application/octet-stream";
  std::optional<uint64_t> task = query("task"), from = query("from");
  std::unique_lock<std::mutex> lock(mu_);
  if (task != 0u || !from || *from < base_ || *from > base_ + queued_.size()) {
    r.status = 400;
    r.content_type = "text/plain";
    r.body = "task must be 0 and from within the queued input\n";
    return r;
  }
  // What comes before `from` has been taken.
  queued_.erase(0, static_cast<size_t>(*from - base_));
  base_ = *from;
  cv_.notify_all();
  cv_.wait_for(lock, std::chrono::seconds(10), [&] { return closed_ || !queued_.empty(); });
  if (closed_) {
    r.status = 410;
    r.content_type = "text/plain";
    r.body = "the step is over\n";
    return r;
  }
  // Whole frames, at most kPtyMaxAnswer bytes (one frame always fits).
  size_t end = 0;
  while (queued_.size() - end >= 5) {
    size_t len = 5;
    uint32_t body = 0;
    for (size_t i = 1; i <= 4; ++i)
      body = (body << 8) | static_cast<unsigned char>(queued_[end + i]);
    len += body;
    if (end + len > api::kPtyMaxAnswer || end + len > queued_.size()) break;
    end += len;
  }
  r.body = queued_.substr(0, end);
  return r;
}

StdinPump::StdinPump(int fd, PtyInput* input) {
  if (pipe2(wake_, O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
  thread_ = std::thread([this, fd, input] {
    char buf[4096];
    while (true) {
      pollfd p[2] = {{fd, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      if (poll(p, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (p[1].revents != 0) return;
      ssize_t n = read(fd, buf, sizeof buf);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) return;  // end of file: nothing more to type
      input->Type(std::string_view(buf, static_cast<size_t>(n)));
    }
  });
}

StdinPump::~StdinPump() { Stop(); }

void StdinPump::Stop() {
  if (wake_[1] >= 0) {
    close(wake_[1]);
    wake_[1] = -1;
  }
  if (thread_.joinable()) thread_.join();
  if (wake_[0] >= 0) {
    close(wake_[0]);
    wake_[0] = -1;
  }
}

}  // namespace corral::cli
