#include "api/private_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <sys/stat.h>

namespace corral::api {
namespace {

std::string Octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// The rule of the header, on an opened (or stat'ed) file.
Status CheckStat(const struct stat& st, std::string_view what, const std::string& path) {
  std::string name = std::string(what) + " " + path;
  if (S_ISDIR(st.st_mode)) return InvalidArgument(name + ": is a directory, not a file");
  if (!S_ISREG(st.st_mode)) return InvalidArgument(name + ": is not a regular file");
  if ((st.st_mode & 077) != 0) {
    return FailedPrecondition(name + ": mode " + Octal(st.st_mode) +
                              " lets its group or others read or write it; a secret file must "
                              "be 0600 or stricter (chmod 600 " +
                              path + ")");
  }
  uid_t me = geteuid();
  if (st.st_uid != me && st.st_uid != 0) {
    return FailedPrecondition(name + ": owned by uid " + std::to_string(st.st_uid) +
                              ", not by the user reading it (uid " + std::to_string(me) +
                              ") or root");
  }
  return {};
}

// Opens without following a FIFO's writer wait (O_NONBLOCK), so that a FIFO put in place of a
// key is refused instead of hanging the daemon.
Result<int> OpenForCheck(const std::string& path, std::string_view what) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return FileError(errno, what, path, "cannot open");
  return fd;
}

}  // namespace

tl::unexpected<Error> FileError(int err, std::string_view what, const std::string& path,
                                std::string_view action) {
  std::string message =
      std::string(what) + " " + path + ": " + std::string(action) + ": " + std::strerror(err);
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return MakeError(ErrorCode::kNotFound, std::move(message));
    case EACCES:
    case EPERM:
      return MakeError(ErrorCode::kPermissionDenied, std::move(message));
    case EEXIST:
      return MakeError(ErrorCode::kAlreadyExists, std::move(message));
    case EISDIR:
      return InvalidArgument(std::move(message));
    default:
      return Unavailable(std::move(message));
  }
}

namespace {

// Reads what is left of `fd` (and closes it), at most `max_bytes`.
Result<std::string> ReadAndClose(int fd, const std::string& path, std::string_view what,
                                 size_t max_bytes) {
  std::string content;
  char buf[4096];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return FileError(err, what, path, "cannot read");
    }
    if (n == 0) break;
    content.append(buf, static_cast<size_t>(n));
    if (content.size() > max_bytes) {
      close(fd);
      return InvalidArgument(std::string(what) + " " + path + ": larger than " +
                             std::to_string(max_bytes) + " bytes");
    }
  }
  close(fd);
  return content;
}

}  // namespace

Result<std::string> ReadPrivateFile(const std::string& path, std::string_view what,
                                    size_t max_bytes) {
  CORRAL_ASSIGN_OR_RETURN(int fd, OpenForCheck(path, what));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return FileError(err, what, path, "cannot stat");
  }
  if (Status ok = CheckStat(st, what, path); !ok) {
    close(fd);
    return tl::unexpected<Error>(ok.error());
  }
  return ReadAndClose(fd, path, what, max_bytes);
}

Result<std::string> ReadPublicFile(const std::string& path, std::string_view what,
                                   size_t max_bytes) {
  CORRAL_ASSIGN_OR_RETURN(int fd, OpenForCheck(path, what));
  return ReadAndClose(fd, path, what, max_bytes);
}

Status CheckPrivateFile(const std::string& path, std::string_view what) {
  CORRAL_ASSIGN_OR_RETURN(int fd, OpenForCheck(path, what));
  struct stat st {};
  int rc = fstat(fd, &st);
  int err = errno;
  close(fd);
  if (rc != 0) return FileError(err, what, path, "cannot stat");
  return CheckStat(st, what, path);
}

Status WriteFileAtomically(const std::string& path, std::string_view content, WriteMode mode,
                           mode_t perms, std::string_view what) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = mkostemp(tmp.data(), O_CLOEXEC);  // mode 0600 from the start
  if (fd < 0) return FileError(errno, what, path, "cannot create");
  auto fail = [&](int err, std::string_view action) {
    if (fd >= 0) close(fd);
    unlink(tmp.c_str());
    return FileError(err, what, path, action);
  };
  if (fchmod(fd, perms) != 0) return fail(errno, "cannot set its mode");
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(n < 0 ? errno : EIO, "cannot write");
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) return fail(errno, "cannot write");
  int closed = close(fd);
  fd = -1;
  if (closed != 0) return fail(errno, "cannot write");
  if (mode == WriteMode::kCreateNew) {
    // link() fails with EEXIST instead of replacing: never overwrite a key.
    if (link(tmp.c_str(), path.c_str()) != 0) return fail(errno, "cannot create");
    unlink(tmp.c_str());
  } else if (rename(tmp.c_str(), path.c_str()) != 0) {
    return fail(errno, "cannot replace");
  }
  // Make the new directory entry durable too.
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  if (dir.empty()) dir = "/";
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return {};
}

}  // namespace corral::api
