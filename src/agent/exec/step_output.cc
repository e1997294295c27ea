#include "agent/exec/step_output.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "api/http.h"
#include "api/step_io.h"
#include "core/log.h"

namespace corral::agent {

struct StepOutputForwarder::Impl {
  struct Stream {
    int fd = -1;
    uint32_t rank = 0;
    bool err = false;
  };
  std::string io_url;
  std::string token;
  std::string what;  // "job 42 step 0", for the log
  std::vector<Stream> streams;
  int wake[2] = {-1, -1};  // closing the write end stops the thread
  std::thread thread;
  std::unique_ptr<api::HttpClient> client;
  bool dead = false;  // the caller cannot be reached: drop output

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
      if (fds.back().revents != 0) return;  // stopping
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
    done->store(true);
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
  if (impl_->wake[1] >= 0) close(impl_->wake[1]);
  if (impl_->thread.joinable()) impl_->thread.join();
  if (impl_->wake[0] >= 0) close(impl_->wake[0]);
  for (auto& s : impl_->streams) {
    if (s.fd >= 0) close(s.fd);
  }
}

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

void StepOutputForwarder::Start() {
  if (pipe2(impl_->wake, O_CLOEXEC) != 0) {
    CORRAL_LOG(Error) << impl_->what << ": pipe: " << std::strerror(errno);
    impl_->wake[0] = impl_->wake[1] = -1;
  }
  Impl* impl = impl_.get();
  std::atomic<bool>* done = &done_;
  impl_->thread = std::thread([impl, done] { impl->Run(done); });
}

}  // namespace corral::agent
