#include "agent/exec/bcast.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>

#include <sys/stat.h>

#include "agent/exec/internal/spawn.h"

namespace corral::agent {

using spawn::ErrnoText;
using spawn::Fd;

Status CheckBcastPath(std::string_view path) {
  const std::string what = "path \"" + std::string(path.substr(0, 200)) + "\"";
  if (path.empty() || path.front() != '/') return InvalidArgument(what + ": not absolute");
  if (path.size() >= PATH_MAX) return InvalidArgument(what + ": too long");
  if (path.find('\0') != std::string_view::npos) return InvalidArgument(what + ": holds a NUL");
  if (path.back() == '/') return InvalidArgument(what + ": names a directory");
  for (size_t at = 1; at <= path.size();) {
    size_t end = path.find('/', at);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(at, end - at);
    if (part.empty() || part == "." || part == "..") {
      return InvalidArgument(what + ": an empty, \".\" or \"..\" component");
    }
    at = end + 1;
  }
  return {};
}

Status WriteFileAsUser(JobId job, uint32_t uid, uint32_t gid, const api::BcastOptions& options,
                       std::string_view data) {
  CORRAL_RETURN_IF_ERROR(CheckBcastPath(options.path));
  const std::string& path = options.path;
  const std::string what = "job " + job.ToString() + ": " + path;
  if (data.size() > api::kMaxBcastBytes) {
    return InvalidArgument(what + ": " + std::to_string(data.size()) + " bytes, more than " +
                           std::to_string(api::kMaxBcastBytes));
  }
  CORRAL_ASSIGN_OR_RETURN(spawn::Credentials creds, spawn::ResolveCredentials(job, uid, gid));
  spawn::FsIdentity identity(creds.uid, creds.gid, creds.groups);
  if (!identity.ok()) {
    return MakeError(ErrorCode::kPermissionDenied,
                     what + ": cannot act as uid " + std::to_string(uid) + " (the agent is not root)");
  }
  // Every directory on the way, as the user sees it: a symbolic link there must be root's or
  // the user's own (someone else's link could lead the user's write where that one chose).
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    const std::string dir = path.substr(0, slash);
    struct stat st {};
    if (lstat(dir.c_str(), &st) != 0) {
      return InvalidArgument(what + ": " + dir + ": " + ErrnoText(errno));
    }
    if (S_ISLNK(st.st_mode) && st.st_uid != 0 && st.st_uid != uid) {
      return MakeError(ErrorCode::kPermissionDenied,
                       what + ": " + dir + " is a symbolic link of uid " +
                           std::to_string(st.st_uid) + ", not of the user or root");
    }
  }
  int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
              (options.force ? 0 : O_EXCL);
  const mode_t mode = options.mode == 0 ? 0600 : static_cast<mode_t>(options.mode & 0777);
  Fd fd(open(path.c_str(), flags, mode));
  if (fd.get() < 0) {
    int err = errno;
    if (err == EEXIST) {
      return MakeError(ErrorCode::kAlreadyExists, what + ": the file exists (sbcast -f replaces it)");
    }
    if (err == ELOOP) {
      return MakeError(ErrorCode::kPermissionDenied, what + ": is a symbolic link");
    }
    if (err == EACCES || err == EPERM) {
      return MakeError(ErrorCode::kPermissionDenied, what + ": " + ErrnoText(err));
    }
    return InvalidArgument(what + ": " + ErrnoText(err));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return Internal(what + ": fstat: " + ErrnoText(errno));
  if (!S_ISREG(st.st_mode)) return InvalidArgument(what + ": not a regular file");
  if (fcntl(fd.get(), F_SETFL, 0) != 0 || ftruncate(fd.get(), 0) != 0 ||
      fchmod(fd.get(), mode) != 0) {
    return Internal(what + ": " + ErrnoText(errno));
  }
  for (size_t done = 0; done < data.size();) {
    ssize_t n = write(fd.get(), data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Internal(what + ": write: " + ErrnoText(errno));
    }
    done += static_cast<size_t>(n);
  }
  if (options.atime >= 0 && options.mtime >= 0) {
    timespec times[2] = {{.tv_sec = options.atime, .tv_nsec = 0},
                         {.tv_sec = options.mtime, .tv_nsec = 0}};
    if (futimens(fd.get(), times) != 0) return Internal(what + ": futimens: " + ErrnoText(errno));
  }
  if (close(fd.Release()) != 0) return Internal(what + ": close: " + ErrnoText(errno));
  return {};
}

}  // namespace corral::agent
