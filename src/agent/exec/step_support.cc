#include "agent/exec/step_support.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "agent/exec/internal/spawn.h"
#include "core/strings.h"

namespace corral::agent {
namespace {

bool CanBind(uint32_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && listen(fd, 1) == 0;
  close(fd);
  return ok;
}

// mkdir -p with raw system calls only (it also runs in a forked child). Returns 0 or errno.
int MakeDirs(const char* path) {
  char buf[4096];
  size_t len = std::strlen(path);
  if (len == 0 || len >= sizeof buf) return ENAMETOOLONG;
  std::memcpy(buf, path, len + 1);
  for (size_t i = 1; i <= len; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    char saved = buf[i];
    buf[i] = '\0';
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return errno;
    buf[i] = saved;
  }
  struct stat st {};
  if (stat(path, &st) != 0) return errno;
  return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

}  // namespace

Result<uint32_t> PickFreePort(uint32_t candidate, uint32_t lo, uint32_t hi) {
  uint32_t span = hi - lo + 1;
  for (uint32_t i = 0; i < span; ++i) {
    uint32_t port = lo + (candidate - lo + i) % span;
    if (CanBind(port)) return port;
  }
  return MakeError(ErrorCode::kResourceExhausted, "no free port in " + std::to_string(lo) + "-" +
                                                      std::to_string(hi) + " for MASTER_PORT");
}

Status MakeDirectoriesAs(const std::string& path, std::optional<uint32_t> uid,
                         std::optional<uint32_t> gid) {
  auto fail = [&](int err) {
    return InvalidArgument("cannot create directory \"" + path + "\": " + std::strerror(err));
  };
  bool switch_ids = geteuid() == 0 && ((uid && *uid != 0) || (gid && *gid != 0));
  if (!switch_ids) {
    int err = MakeDirs(path.c_str());
    if (err != 0) return fail(err);
    return {};
  }
  // Resolved before the fork: NSS lookups are not safe in the child.
  auto creds = spawn::ResolveCredentials(JobId(), uid, gid);
  if (!creds) {
    return InvalidArgument("cannot create directory \"" + path + "\": " + creds.error().message);
  }
  const gid_t g = creds->gid.value_or(0);
  const std::vector<gid_t> groups = creds->groups.empty() ? std::vector<gid_t>{g} : creds->groups;
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return fail(errno);
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(pipefd[0]);
    close(pipefd[1]);
    return fail(err);
  }
  if (pid == 0) {
    // Raw system calls: glibc's set*id wrappers would signal the parent's other threads.
    int err = 0;
    if (syscall(SYS_setgroups, groups.size(), groups.data()) != 0 ||
        syscall(SYS_setresgid, g, g, g) != 0 ||
        (uid && syscall(SYS_setresuid, *uid, *uid, *uid) != 0)) {
      err = errno;
    } else {
      err = MakeDirs(path.c_str());
    }
    [[maybe_unused]] ssize_t w = write(pipefd[1], &err, sizeof err);
    _exit(err == 0 ? 0 : 1);
  }
  close(pipefd[1]);
  int err = EIO;
  ssize_t r;
  while ((r = read(pipefd[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  if (r != sizeof err) err = EIO;
  close(pipefd[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (err != 0) return fail(err);
  return {};
}

Result<std::string> ResolveProgram(const std::string& program, const std::string& path_var,
                                   const std::string& cwd, std::optional<uint32_t> uid,
                                   std::optional<uint32_t> gid) {
  // Looked up with the user's file-system identity: what root alone could see is not found.
  spawn::Credentials creds;
  if (geteuid() == 0 && (uid || gid)) {
    CORRAL_ASSIGN_OR_RETURN(creds, spawn::ResolveCredentials(JobId(), uid, gid));
  }
  std::optional<spawn::FsIdentity> identity;
  if (creds.uid || creds.gid) {
    identity.emplace(creds.uid, creds.gid, creds.groups);
    if (!identity->ok()) return NotFound(program + ": cannot look it up as the job's user");
  }
  auto executable = [](const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           faccessat(AT_FDCWD, p.c_str(), X_OK, AT_EACCESS) == 0;
  };
  if (program.find('/') != std::string::npos) {
    std::string p = program.front() == '/' ? program : cwd + "/" + program;
    if (executable(p)) return p;
    return NotFound(program + ": no such executable file");
  }
  for (std::string dir : Split(path_var, ':')) {
    if (dir.empty()) dir = cwd;
    if (dir.front() != '/') dir = cwd + "/" + dir;
    std::string p = dir + "/" + program;
    if (executable(p)) return p;
  }
  return NotFound(program + ": command not found");
}

}  // namespace corral::agent
