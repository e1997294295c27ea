#include "agent/exec/step_output.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include <sys/ioctl.h>
#include <sys/stat.h>

#include "api/http.h"
#include "api/step_io.h"
#include "core/log.h"

namespace corral::agent {

struct StepOutputForwarder::Impl {
  struct Stream {
    int fd = -1;
    uint32_t rank = 0;
    bool err = false;
    bool pty = false;  // a terminal's master: EIO is its end of file
  };
  std::string io_url;
  std::string token;
  std::string what;  // "job 42 step 0", for the log
  std::vector<Stream> streams;
  int wake[2] = {-1, -1};  // closing the write end stops the thread
  std::thread thread;
  std::unique_ptr<api::HttpClient> client;
  bool dead = false;  // the caller cannot be reached: drop output

  // The terminal's input (AddPtyTask): its own thread, client and descriptor of the master.
  int input_fd = -1;
  uint32_t pty_rank = 0;
  std::thread input_thread;
  std::unique_ptr<api::HttpClient> input_client;
  std::atomic<bool> stopping{false};  // the output has ended, or the forwarder is going away
  std::atomic<bool> input_done{true};

  void Send(const Stream& s, std::string_view body, bool eof) {
    if (dead) return;
    std::string path = "/io?task=" + std::to_string(s.rank) + "&stream=" + (s.err ? "err" : "out");
    if (eof) path += "&eof=1";
    auto r = client->Send("POST", path, body, {{"content-type", "application/octet-stream"}},
                          /*idempotent=*/false);
    if (!r || r->status / 100 != 2) {
      CORRAL_LOG(Warn) << what << ": cannot forward task output to " << io_url << ": "
                       << (r ? "HTTP " + std::to_string(r->status) : r.error().message)
                       << "; dropping the rest";
      dead = true;
    }
  }

  void Run(std::atomic<bool>* done) {
    std::vector<char> buf(64 * 1024);
    // A terminal task has no stderr of its own: its end of file goes first.
    for (const Stream& s : streams) {
      if (s.pty) Send({.rank = s.rank, .err = true}, "", true);
    }
    while (true) {
      std::vector<pollfd> fds;
      std::vector<size_t> index;
      for (size_t i = 0; i < streams.size(); ++i) {
        if (streams[i].fd < 0) continue;
        fds.push_back({streams[i].fd, POLLIN, 0});
        index.push_back(i);
      }
      if (fds.empty()) break;
      fds.push_back({wake[0], POLLIN, 0});
      if (poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        CORRAL_LOG(Error) << what << ": poll: " << std::strerror(errno);
        break;
      }
      if (fds.back().revents != 0) break;  // stopping
      for (size_t k = 0; k + 1 < fds.size(); ++k) {
        if (fds[k].revents == 0) continue;
        Stream& s = streams[index[k]];
        ssize_t n = read(s.fd, buf.data(), buf.size());
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n > 0) {
          Send(s, std::string_view(buf.data(), static_cast<size_t>(n)), false);
          continue;
        }
        close(s.fd);
        s.fd = -1;
        Send(s, "", true);
      }
    }
    stopping.store(true);
    done->store(true);
  }

  // Writes typed bytes to the terminal without ever blocking for long: a task that does not
  // read its input fills the terminal, and the agent waits (checking `stopping`) instead.
  bool WriteInput(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = write(input_fd, data.data(), data.size());
      if (n > 0) {
        data.remove_prefix(static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) {
        if (stopping.load()) return false;
        pollfd p{input_fd, POLLOUT, 0};
        (void)poll(&p, 1, 200);
        continue;
      }
      return false;  // EIO: the terminal has been hung up
    }
    return true;
  }

  void Input() {
    uint64_t from = 0;
    std::vector<api::PtyFrame> frames;
    bool lost = false;  // the caller went away while the task runs (not the step's end: 410)
    while (!stopping.load()) {
      auto r = input_client->Send(
          "GET", "/pty?task=" + std::to_string(pty_rank) + "&from=" + std::to_string(from), "", {},
          /*idempotent=*/true);
      if (!r || r->status != 200) {
        if (!stopping.load() && !(r && r->status == 410)) {
          CORRAL_LOG(Warn) << what << ": terminal input from " << io_url << ": "
                           << (r ? "HTTP " + std::to_string(r->status) : r.error().message)
                           << "; the input ends";
          lost = true;
        }
        break;
      }
      frames.clear();
      auto used = api::DecodePtyFrames(r->body, &frames);
      if (!used) {
        CORRAL_LOG(Warn) << what << ": " << used.error().message << "; the input ends";
        lost = true;
        break;
      }
      bool ok = true;
      for (const api::PtyFrame& f : frames) {
        if (f.kind == api::PtyFrame::Kind::kData) {
          ok = WriteInput(f.data);
        } else {
          winsize ws{};
          ws.ws_row = f.rows;
          ws.ws_col = f.cols;
          ok = ioctl(input_fd, TIOCSWINSZ, &ws) == 0;
        }
        if (!ok) break;
      }
      if (!ok) break;
      from += *used;
    }
    // As a terminal whose connection drops (sshd's): the task's foreground process group gets
    // SIGHUP, so that an interactive shell nobody can type into does not hold the step.
    if (lost && !stopping.load()) (void)ioctl(input_fd, TIOCSIG, SIGHUP);
    close(input_fd);
    input_fd = -1;
    input_done.store(true);
  }
};

StepOutputForwarder::StepOutputForwarder(std::string io_url, std::string token, std::string what)
    : impl_(std::make_unique<Impl>()) {
  impl_->io_url = std::move(io_url);
  impl_->token = std::move(token);
  impl_->what = std::move(what);
  // TLS with the step's key (api/step_io.h): only the step's own `corral run` can take the
  // output, and nothing of it crosses the network in clear.
  api::HttpClientOptions options = api::StepIoClientOptions(impl_->token);
  options.connect_timeout = std::chrono::milliseconds(3000);
  options.request_timeout = std::chrono::milliseconds(15000);
  auto client = api::HttpClient::Create(impl_->io_url, std::move(options));
  if (client) {
    impl_->client = std::move(*client);
  } else {
    CORRAL_LOG(Warn) << impl_->what << ": bad output address " << impl_->io_url << ": "
                     << client.error().message;
    impl_->dead = true;
  }
}

StepOutputForwarder::~StepOutputForwarder() {
  impl_->stopping.store(true);
  if (impl_->wake[1] >= 0) close(impl_->wake[1]);
  if (impl_->thread.joinable()) impl_->thread.join();
  // At most one long poll (the caller answers within seconds; the request is bounded).
  if (impl_->input_thread.joinable()) impl_->input_thread.join();
  if (impl_->input_fd >= 0) close(impl_->input_fd);
  if (impl_->wake[0] >= 0) close(impl_->wake[0]);
  for (auto& s : impl_->streams) {
    if (s.fd >= 0) close(s.fd);
  }
}

bool StepOutputForwarder::done() const { return done_.load() && impl_->input_done.load(); }

Result<std::pair<int, int>> StepOutputForwarder::AddTask(uint32_t rank) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    return MakeError(ErrorCode::kResourceExhausted,
                     impl_->what + ": pipe: " + std::strerror(errno));
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    close(out[0]);
    close(out[1]);
    return MakeError(ErrorCode::kResourceExhausted, impl_->what + ": pipe: " + std::strerror(e));
  }
  impl_->streams.push_back({out[0], rank, false});
  impl_->streams.push_back({err[0], rank, true});
  return std::make_pair(out[1], err[1]);
}

Result<StepOutputForwarder::PtySlave> StepOutputForwarder::AddPtyTask(uint32_t rank,
                                                                      std::optional<uint32_t> uid,
                                                                      uint32_t rows,
                                                                      uint32_t cols) {
  const std::string& what = impl_->what;
  if (impl_->input_fd >= 0) return FailedPrecondition(what + ": a second terminal");
  auto fail = [&](ErrorCode code, const char* step, int master, int slave) -> Error {
    std::string message = what + ": terminal: " + step + ": " + std::strerror(errno);
    if (slave >= 0) close(slave);
    if (master >= 0) close(master);
    return Error{code, message};
  };
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0)
    return tl::unexpected(fail(ErrorCode::kResourceExhausted, "posix_openpt", -1, -1));
  char name[128];
  if (grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, name, sizeof name) != 0) {
    return tl::unexpected(fail(ErrorCode::kInternal, "grantpt", master, -1));
  }
  int slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0) return tl::unexpected(fail(ErrorCode::kInternal, name, master, -1));
  // The user's terminal, which nobody else may read or write (as Slurm's: mode 0600).
  if (uid && *uid != geteuid() && fchown(slave, *uid, static_cast<gid_t>(-1)) != 0) {
    return tl::unexpected(fail(ErrorCode::kInternal, "fchown", master, slave));
  }
  if (fchmod(slave, 0600) != 0)
    return tl::unexpected(fail(ErrorCode::kInternal, "fchmod", master, slave));
  winsize ws{};
  ws.ws_row = static_cast<uint16_t>(std::clamp<uint32_t>(rows, 1, api::kPtyMaxDimension));
  ws.ws_col = static_cast<uint16_t>(std::clamp<uint32_t>(cols, 1, api::kPtyMaxDimension));
  if (ioctl(master, TIOCSWINSZ, &ws) != 0) {
    return tl::unexpected(fail(ErrorCode::kInternal, "TIOCSWINSZ", master, slave));
  }
  // Reads and writes never block the agent (the descriptors share the open file).
  int input = fcntl(master, F_DUPFD_CLOEXEC, 3);
  if (input < 0 || fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK) != 0) {
    if (input >= 0) close(input);
    return tl::unexpected(fail(ErrorCode::kResourceExhausted, "dup", master, slave));
  }
  api::HttpClientOptions options = api::StepIoClientOptions(impl_->token);
  options.connect_timeout = std::chrono::milliseconds(3000);
  options.request_timeout = std::chrono::milliseconds(30000);  // the caller answers within 10 s
  options.max_response_body = api::kPtyMaxAnswer;
  auto client = api::HttpClient::Create(impl_->io_url, std::move(options));
  if (!client) {
    close(input);
    close(slave);
    close(master);
    return tl::unexpected(client.error());
  }
  impl_->input_client = std::move(*client);
  impl_->input_fd = input;
  impl_->pty_rank = rank;
  impl_->input_done.store(false);
  impl_->streams.push_back({.fd = master, .rank = rank, .err = false, .pty = true});
  return PtySlave{.path = name, .fd = slave};
}

void StepOutputForwarder::Start() {
  if (pipe2(impl_->wake, O_CLOEXEC) != 0) {
    CORRAL_LOG(Error) << impl_->what << ": pipe: " << std::strerror(errno);
    impl_->wake[0] = impl_->wake[1] = -1;
  }
  Impl* impl = impl_.get();
  std::atomic<bool>* done = &done_;
  impl_->thread = std::thread([impl, done] { impl->Run(done); });
  if (impl_->input_fd >= 0) impl_->input_thread = std::thread([impl] { impl->Input(); });
}

}  // namespace corral::agent
