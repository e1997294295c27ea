#include "agent/exec/step_support.h"

#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

namespace corral::agent {
namespace {

namespace fs = std::filesystem;

// Listens on a free port of every address; returns the socket and sets `port`.
int Listen(uint32_t* port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

TEST(StepSupportTest, PickFreePortSkipsATakenPortWithinTheRange) {
  uint32_t taken = 0;
  int fd = Listen(&taken);
  auto port = PickFreePort(taken, taken, std::min<uint32_t>(taken + 50, 65535));
  ASSERT_TRUE(port.has_value()) << port.error().message;
  EXPECT_NE(*port, taken);
  auto none = PickFreePort(taken, taken, taken);
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().code, ErrorCode::kResourceExhausted);
  close(fd);
  EXPECT_EQ(*PickFreePort(taken, taken, taken), taken);
}

TEST(StepSupportTest, MakeDirectoriesCreatesThePathOnceAndRefusesAFile) {
  std::string root = fs::temp_directory_path() / ("corral-mkdir-" + std::to_string(getpid()));
  std::string path = root + "/a/.corral/checkpoints/42";
  ASSERT_TRUE(MakeDirectoriesAs(path, std::nullopt, std::nullopt).has_value());
  EXPECT_TRUE(fs::is_directory(path));
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_TRUE(MakeDirectoriesAs(path, std::nullopt, std::nullopt).has_value());  // exists: fine
  std::ofstream(root + "/file") << "x";
  auto bad = MakeDirectoriesAs(root + "/file/sub", std::nullopt, std::nullopt);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.error().message.find(root + "/file/sub"), std::string::npos) << bad.error().message;
  fs::remove_all(root);
}

TEST(StepSupportTest, MakeDirectoriesAsAnotherUserGivesThemToThatUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  std::string root = fs::temp_directory_path() / ("corral-mkdir-as-" + std::to_string(getpid()));
  fs::create_directories(root);
  chmod(root.c_str(), 0777);
  ASSERT_TRUE(MakeDirectoriesAs(root + "/ckpt/7", 65534, 65534).has_value());
  struct stat st {};
  ASSERT_EQ(stat((root + "/ckpt/7").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  // A directory the user may not write is refused, not created by root.
  std::string closed = root + "/closed";
  fs::create_directories(closed);
  chmod(closed.c_str(), 0755);
  EXPECT_FALSE(MakeDirectoriesAs(closed + "/x", 65534, 65534).has_value());
  EXPECT_FALSE(fs::exists(closed + "/x"));
  fs::remove_all(root);
}

TEST(StepSupportTest, ResolveProgramSearchesPath) {
  EXPECT_EQ(*ResolveProgram("sh", "/nonexistent:/bin:/usr/bin", "/"), "/bin/sh");
  EXPECT_EQ(*ResolveProgram("/bin/sh", "", "/"), "/bin/sh");
  EXPECT_EQ(*ResolveProgram("./sh", "", "/bin"), "/bin/./sh");
  auto missing = ResolveProgram("no-such-program-xyz", "/bin:/usr/bin", "/");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().message, "no-such-program-xyz: command not found");
  EXPECT_FALSE(ResolveProgram("/etc/passwd", "", "/").has_value());  // not executable
}

TEST(StepSupportTest, ResolveProgramLooksAsTheJobsUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  passwd* pw = getpwnam("nobody");
  if (pw == nullptr) GTEST_SKIP() << "no user `nobody` on this machine";
  char tmpl[] = "/tmp/corral-resolve-XXXXXX";
  std::string dir = mkdtemp(tmpl);  // 0700, root's
  std::string prog = dir + "/tool";
  std::ofstream(prog) << "#!/bin/sh\n";
  fs::permissions(prog, fs::perms::owner_all | fs::perms::others_exec | fs::perms::others_read);
  EXPECT_EQ(*ResolveProgram("tool", dir, "/"), prog);  // the agent's own identity
  auto hidden = ResolveProgram("tool", dir, "/", pw->pw_uid, pw->pw_gid);
  ASSERT_FALSE(hidden.has_value());
  EXPECT_EQ(hidden.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(ResolveProgram(prog, "", "/", pw->pw_uid, pw->pw_gid).has_value());
  EXPECT_EQ(*ResolveProgram("sh", "/bin", "/", pw->pw_uid, pw->pw_gid), "/bin/sh");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace corral::agent
