#include "api/connection_holder.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <list>
#include <mutex>
#include <thread>
#include <utility>

#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
// OpenSSL's SHA-256 block functions only (as api/token.cc): the one-shot SHA256() of OpenSSL
// 3 fetches an EVP digest, which initialises the providers this path exists to avoid.
#define OPENSSL_API_COMPAT 0x10100000L
#include <openssl/sha.h>

#include "api/internal/socket_io.h"
#include "api/private_file.h"
#include "api/tls_session_cache.h"
#include "core/hex.h"

namespace corral::api {
namespace {

using internal::Io;

constexpr std::string_view kVersion = "corral-holder-1";
constexpr std::string_view kWhat = "connection holder";
constexpr std::chrono::milliseconds kDefaultTimeout{60'000};
constexpr std::chrono::milliseconds kReplyMargin{10'000};
constexpr std::chrono::milliseconds kReplyWriteTimeout{30'000};

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t GetU32(std::string_view in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

void PutField(std::string* out, std::string_view field) {
  PutU32(out, static_cast<uint32_t>(field.size()));
  out->append(field);
}

// The fields of a frame, in order.
class Fields {
 public:
  explicit Fields(std::string_view frame) : rest_(frame) {}
  bool Next(std::string_view* field) {
    if (rest_.size() < 4) return false;
    const uint32_t n = GetU32(rest_);
    if (rest_.size() - 4 < n) return false;
    *field = rest_.substr(4, n);
    rest_.remove_prefix(4 + n);
    return true;
  }
  bool done() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

bool ParseInt(std::string_view text, int64_t* out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && p == text.data() + text.size();
}

// Name and value pairs until the end of the frame.
bool ReadHeaders(Fields& fields, std::map<std::string, std::string>* headers) {
  std::string_view name, value;
  while (!fields.done()) {
    if (!fields.Next(&name) || !fields.Next(&value)) return false;
    (*headers)[std::string(name)] = std::string(value);
  }
  return true;
}

// Writes `body` as one frame (the length, then the bytes, in one gathered write).
Io WriteFrame(int fd, std::string_view body, MonoTime deadline) {
  std::string length;
  PutU32(&length, static_cast<uint32_t>(body.size()));
  return internal::WriteAll(fd, length, body, deadline);
}

// Reads until `*buf` starts with a whole frame of at most `max` bytes and sets `*n` to its
// length: the frame is `FrameIn(*buf, *n)`, then `buf->erase(0, 4 + *n)`. kEof with `buf`
// empty is a close between frames; kError also for an oversized frame.
Io ReadFrame(int fd, std::string* buf, size_t* n, size_t max, int stop_fd, MonoTime deadline) {
  while (true) {
    if (buf->size() >= 4) {
      *n = GetU32(*buf);
      if (*n > max) return Io::kError;
      if (buf->size() - 4 >= *n) return Io::kOk;
      buf->reserve(4 + *n);
    }
    Io io = internal::ReadMore(fd, buf, internal::kReadChunk, stop_fd, deadline);
    if (io != Io::kOk) return io;
  }
}

std::string_view FrameIn(const std::string& buf, size_t n) {
  return std::string_view(buf).substr(4, n);
}

HolderReply NotSentReply(std::string message) {
  HolderReply r;
  r.outcome = HolderOutcome::kNotSent;
  r.error = Error{ErrorCode::kUnavailable, std::move(message)};
  return r;
}

bool SameUid(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == geteuid();
}

}  // namespace

std::string HolderKey(std::string_view url, std::string_view ca_pem) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, url.data(), url.size());
  SHA256_Update(&ctx, "\n", 1);
  SHA256_Update(&ctx, ca_pem.data(), ca_pem.size());
  SHA256_Final(md, &ctx);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(md), sizeof md));
}

std::string HolderSocketPath(const std::string& dir, const std::string& key) {
  return dir + "/holder-" + key.substr(0, 16) + ".sock";
}

std::string EncodeHolderRequest(const HolderRequest& r) {
  std::string out;
  out.reserve(256 + r.path.size() + r.body.size());
  PutField(&out, kVersion);
  PutField(&out, r.key);
  PutField(&out, r.method);
  PutField(&out, r.path);
  PutField(&out, r.idempotent ? "1" : "0");
  PutField(&out, std::to_string(r.timeout.count()));
  PutField(&out, r.body);
  for (const auto& [name, value] : r.headers) {
    PutField(&out, name);
    PutField(&out, value);
  }
  return out;
}

Result<HolderRequest> DecodeHolderRequest(std::string_view frame) {
  Fields fields(frame);
  std::string_view version, key, method, path, idempotent, timeout, body;
  if (!fields.Next(&version) || version != kVersion) {
    return InvalidArgument("holder request: not a corral-holder-1 frame");
  }
  if (!fields.Next(&key) || !fields.Next(&method) || !fields.Next(&path) ||
      !fields.Next(&idempotent) || !fields.Next(&timeout) || !fields.Next(&body)) {
    return InvalidArgument("holder request: cut short");
  }
  HolderRequest r;
  int64_t ms = 0;
  if ((idempotent != "0" && idempotent != "1") || !ParseInt(timeout, &ms) || ms < 0) {
    return InvalidArgument("holder request: bad idempotent or timeout field");
  }
  if (!ReadHeaders(fields, &r.headers)) return InvalidArgument("holder request: bad headers");
  r.key = key;
  r.method = method;
  r.path = path;
  r.idempotent = idempotent == "1";
  r.timeout = std::chrono::milliseconds(ms);
  r.body = body;
  return r;
}

std::string EncodeHolderReply(const HolderReply& r) {
  std::string out;
  const bool answered = r.outcome == HolderOutcome::kAnswered;
  out.reserve(128 + (answered ? r.response.body.size() : r.error.message.size()));
  PutField(&out, kVersion);
  PutField(&out, answered                               ? "answered"
                 : r.outcome == HolderOutcome::kNotSent ? "not-sent"
                                                        : "failed");
  PutField(&out, std::to_string(answered ? r.response.status : static_cast<int>(r.error.code)));
  PutField(&out, answered ? r.response.content_type : "");
  PutField(&out, answered ? r.response.body : r.error.message);
  if (answered) {
    for (const auto& [name, value] : r.response.headers) {
      PutField(&out, name);
      PutField(&out, value);
    }
  }
  return out;
}

Result<HolderReply> DecodeHolderReply(std::string_view frame) {
  Fields fields(frame);
  std::string_view version, outcome, status, content_type, body;
  if (!fields.Next(&version) || version != kVersion) {
    return InvalidArgument("holder reply: not a corral-holder-1 frame");
  }
  if (!fields.Next(&outcome) || !fields.Next(&status) || !fields.Next(&content_type) ||
      !fields.Next(&body)) {
    return InvalidArgument("holder reply: cut short");
  }
  HolderReply r;
  int64_t code = 0;
  if (!ParseInt(status, &code)) return InvalidArgument("holder reply: bad status");
  if (outcome == "answered") {
    if (code < 100 || code > 999) return InvalidArgument("holder reply: bad status");
    r.response.status = static_cast<int>(code);
    r.response.content_type = content_type;
    r.response.body = body;
    if (!ReadHeaders(fields, &r.response.headers)) {
      return InvalidArgument("holder reply: bad headers");
    }
    return r;
  }
  if (outcome != "not-sent" && outcome != "failed") {
    return InvalidArgument("holder reply: unknown outcome");
  }
  if (code < 0 || code > static_cast<int64_t>(ErrorCode::kInternal)) {
    return InvalidArgument("holder reply: bad error code");
  }
  r.outcome = outcome == "not-sent" ? HolderOutcome::kNotSent : HolderOutcome::kFailed;
  r.error = Error{static_cast<ErrorCode>(code), std::string(body)};
  return r;
}

// ---------------------------------------------------------------------------------------------
// The client's side.

HolderChannel::HolderChannel(std::string dir, std::string key)
    : dir_(std::move(dir)), key_(std::move(key)), socket_path_(HolderSocketPath(dir_, key_)) {}

HolderChannel::~HolderChannel() {
  if (fd_ >= 0) close(fd_);
}

HolderCall HolderChannel::Open() {
  HolderCall call;
  auto not_sent = [&call](std::string why, bool no_holder) {
    call.why = std::move(why);
    call.no_holder = no_holder;
    return std::move(call);
  };
  sockaddr_un addr{};
  if (socket_path_.size() >= sizeof addr.sun_path) return not_sent("socket path too long", false);
  if (Status dir = CheckPrivateUserDir(dir_, kWhat); !dir) {
    return not_sent(dir.error().message, dir.error().code == ErrorCode::kNotFound);
  }
  struct stat st {};
  if (lstat(socket_path_.c_str(), &st) != 0) {
    return not_sent(socket_path_ + ": " + std::strerror(errno), errno == ENOENT);
  }
  if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
    return not_sent(socket_path_ + ": not a socket of uid " + std::to_string(geteuid()), false);
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return not_sent(std::string("socket: ") + std::strerror(errno), false);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path_.data(), socket_path_.size());
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    close(fd);
    // Refused: a socket left by a holder that died (the next holder replaces it).
    return not_sent(socket_path_ + ": " + std::strerror(err), err == ECONNREFUSED);
  }
  if (!SameUid(fd)) {
    close(fd);
    return not_sent(
        socket_path_ + ": the listening process is not of uid " + std::to_string(geteuid()), false);
  }
  fd_ = fd;
  return call;
}

HolderCall HolderChannel::Send(HolderRequest request) {
  if (fd_ < 0) {
    HolderCall opened = Open();
    if (fd_ < 0) return opened;
  }
  HolderCall call;
  auto drop = [this, &call](HolderCall::Kind kind, std::string why) {
    close(fd_);
    fd_ = -1;
    buf_.clear();
    call.kind = kind;
    call.why = std::move(why);
    return std::move(call);
  };
  request.key = key_;
  const std::string frame = EncodeHolderRequest(request);
  if (frame.size() > kMaxHolderRequestFrame) {
    call.why = "request too large for the holder";
    return call;
  }
  const auto timeout = request.timeout.count() > 0 ? request.timeout : kDefaultTimeout;
  const MonoTime deadline = internal::DeadlineAfter(timeout + kReplyMargin);
  // The holder acts on a frame only once it has all of it: a frame not written in full was not
  // sent on.
  if (WriteFrame(fd_, frame, deadline) != Io::kOk) {
    return drop(HolderCall::Kind::kNotSent, "connection to the holder broken while sending");
  }
  size_t n = 0;
  Io io = ReadFrame(fd_, &buf_, &n, kMaxHolderReplyFrame, -1, deadline);
  if (io != Io::kOk) {
    return drop(HolderCall::Kind::kLost, io == Io::kTimeout ? "no reply from the holder in time"
                                                            : "the holder closed without a reply");
  }
  auto reply = DecodeHolderReply(FrameIn(buf_, n));
  buf_.erase(0, 4 + n);
  if (!reply) return drop(HolderCall::Kind::kLost, reply.error().message);
  switch (reply->outcome) {
    case HolderOutcome::kAnswered:
      call.kind = HolderCall::Kind::kAnswered;
      call.response = std::move(reply->response);
      return call;
    case HolderOutcome::kNotSent:
      call.kind = HolderCall::Kind::kNotSent;
      call.why = reply->error.message;
      return call;
    case HolderOutcome::kFailed:
      call.kind = HolderCall::Kind::kAnswered;
      call.response = tl::unexpected<Error>(reply->error);
      return call;
  }
  return call;
}

// ---------------------------------------------------------------------------------------------
// The holder's side.

struct HolderServer::Impl {
  HolderServerOptions options;
  HolderForward forward;
  int lock_fd = -1;
  int listen_fd = -1;
  int stop_fd = -1;
  dev_t dev = 0;
  ino_t ino = 0;
  std::atomic<size_t> connections{0}, requests{0}, refused{0}, open{0};
  std::atomic<int64_t> last_activity_us{0};

  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::mutex mu;
  std::list<Worker> workers;  // guarded by mu

  ~Impl() {
    Signal();
    JoinWorkers(/*all=*/true);
    struct stat st {};
    if (listen_fd >= 0 && lstat(options.socket_path.c_str(), &st) == 0 && st.st_dev == dev &&
        st.st_ino == ino) {
      unlink(options.socket_path.c_str());
    }
    for (int fd : {listen_fd, stop_fd, lock_fd}) {
      if (fd >= 0) close(fd);
    }
  }

  void Signal() {
    if (stop_fd < 0) return;
    uint64_t one = 1;
    (void)!write(stop_fd, &one, sizeof one);
  }

  void Touch() {
    last_activity_us =
        std::chrono::duration_cast<Duration>(internal::Now().time_since_epoch()).count();
  }

  void JoinWorkers(bool all) {
    std::list<Worker> finished;
    {
      std::lock_guard<std::mutex> lock(mu);
      for (auto it = workers.begin(); it != workers.end();) {
        if (all || it->done->load()) {
          finished.splice(finished.end(), workers, it++);
        } else {
          ++it;
        }
      }
    }
    for (Worker& w : finished) w.thread.join();
  }

  bool SocketStillOurs() const {
    struct stat st {};
    return lstat(options.socket_path.c_str(), &st) == 0 && st.st_dev == dev && st.st_ino == ino;
  }

  HolderReply Handle(std::string_view frame) {
    auto request = DecodeHolderRequest(frame);
    if (!request) return NotSentReply(request.error().message);
    if (request->key != options.key) {
      return NotSentReply("this holder serves another controller URL or CA");
    }
    ++requests;
    return forward(*request);
  }

  void Serve(int fd) {
    std::string buf;
    size_t n = 0;
    while (internal::Wait(fd, POLLIN, stop_fd, MonoTime::max()) == Io::kOk) {
      if (ReadFrame(fd, &buf, &n, kMaxHolderRequestFrame, stop_fd, MonoTime::max()) != Io::kOk) {
        break;
      }
      HolderReply reply = Handle(FrameIn(buf, n));
      buf.erase(0, 4 + n);
      if (WriteFrame(fd, EncodeHolderReply(reply), internal::DeadlineAfter(kReplyWriteTimeout)) !=
          Io::kOk) {
        break;
      }
    }
    close(fd);
    Touch();
    --open;
  }

  // After the socket is unlinked on the way out: a client that connected just before must
  // not lose its request, so each connection that arrives until the queue has been quiet a
  // moment is told "not sent" (its command then connects itself).
  void DrainBacklog() {
    constexpr int kQuietMs = 100;
    pollfd p{listen_fd, POLLIN, 0};
    while (poll(&p, 1, kQuietMs) > 0) {
      int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::string buf;
      size_t n = 0;
      const MonoTime deadline = internal::DeadlineAfter(std::chrono::seconds(1));
      if (SameUid(fd) &&
          ReadFrame(fd, &buf, &n, kMaxHolderRequestFrame, -1, deadline) == Io::kOk) {
        (void)WriteFrame(fd, EncodeHolderReply(NotSentReply("the holder is exiting")), deadline);
      }
      close(fd);
    }
  }

  void Accept() {
    while (true) {
      int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN, or an error the next poll reports again
      if (!SameUid(fd)) {  // another user: nothing is read from them
        ++refused;
        close(fd);
        continue;
      }
      if (open.load() >= options.max_connections) {
        close(fd);
        continue;
      }
      ++open;
      ++connections;
      Touch();
      auto done = std::make_shared<std::atomic<bool>>(false);
      std::lock_guard<std::mutex> lock(mu);
      workers.push_back({std::thread([this, fd, done] {
                           Serve(fd);
                           *done = true;
                         }),
                         done});
    }
  }
};

HolderServer::HolderServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HolderServer::~HolderServer() = default;

Result<std::unique_ptr<HolderServer>> HolderServer::Listen(HolderServerOptions options,
                                                           HolderForward forward) {
  auto im = std::make_unique<Impl>();
  const std::string path = options.socket_path;
  sockaddr_un addr{};
  const std::string fresh = path + ".new";
  if (fresh.size() >= sizeof addr.sun_path) {
    return InvalidArgument(std::string(kWhat) + " socket " + path + ": path too long");
  }
  const std::string dir = path.substr(0, path.rfind('/'));
  CORRAL_RETURN_IF_ERROR(CheckPrivateUserDir(dir, kWhat));
  const std::string lock_path = path + ".lock";
  im->lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (im->lock_fd < 0) return FileError(errno, kWhat, lock_path, "cannot open");
  if (flock(im->lock_fd, LOCK_EX | LOCK_NB) != 0) {
    return MakeError(ErrorCode::kAlreadyExists, std::string(kWhat) + " " + path + ": one runs");
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(im->lock_fd, 0) != 0 || write(im->lock_fd, pid.data(), pid.size()) < 0) {
    return FileError(errno, kWhat, lock_path, "cannot write");
  }
  im->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  im->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (im->stop_fd < 0 || im->listen_fd < 0) return FileError(errno, kWhat, path, "cannot create");
  unlink(fresh.c_str());
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, fresh.data(), fresh.size());
  if (bind(im->listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      chmod(fresh.c_str(), 0600) != 0 || listen(im->listen_fd, 128) != 0 ||
      rename(fresh.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(fresh.c_str());
    return Unavailable(std::string(kWhat) + " " + path + ": cannot listen: " + std::strerror(err));
  }
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return FileError(errno, kWhat, path, "cannot stat");
  im->dev = st.st_dev;
  im->ino = st.st_ino;
  im->options = std::move(options);
  im->forward = std::move(forward);
  im->Touch();
  return std::unique_ptr<HolderServer>(new HolderServer(std::move(im)));
}

std::string HolderServer::Run() {
  Impl& im = *impl_;
  const int interval = static_cast<int>(im.options.check_interval.count());
  while (true) {
    pollfd p[2] = {{im.listen_fd, POLLIN, 0}, {im.stop_fd, POLLIN, 0}};
    int rc = poll(p, 2, interval);
    if (rc < 0 && errno != EINTR) return "poll failed";
    if ((p[1].revents & POLLIN) != 0) return "stopped";
    if ((p[0].revents & POLLIN) != 0) im.Accept();
    im.JoinWorkers(/*all=*/false);
    if (!im.SocketStillOurs()) {
      im.DrainBacklog();
      return "socket removed or replaced";
    }
    const int64_t now =
        std::chrono::duration_cast<Duration>(internal::Now().time_since_epoch()).count();
    const int64_t idle_us = std::chrono::duration_cast<Duration>(im.options.idle_timeout).count();
    if (im.open.load() == 0 && now - im.last_activity_us.load() >= idle_us) {
      if (im.SocketStillOurs()) unlink(im.options.socket_path.c_str());
      im.DrainBacklog();
      return "idle";
    }
  }
}

void HolderServer::Stop() { impl_->Signal(); }

HolderServerStats HolderServer::stats() const {
  return {.connections = impl_->connections.load(),
          .requests = impl_->requests.load(),
          .refused_peers = impl_->refused.load(),
          .open = impl_->open.load()};
}

}  // namespace corral::api
