// `sbcast`'s writer on this machine's file system: as the job's user, never as root (the
// cases that switch users need root; the `os` group).
#include "agent/exec/bcast.h"

#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "agent/exec/testing/process_supervisor_fixture.h"

namespace corral::agent {
namespace {

namespace fs = std::filesystem;

TEST(BcastTest, RefusesPathsOfTheWrongForm) {
  EXPECT_TRUE(CheckBcastPath("/tmp/x"));
  for (const char* bad : {"", "tmp/x", "/tmp/../etc/passwd", "/tmp/./x", "/tmp//x", "/tmp/x/",
                          "/.."}) {
    Status s = CheckBcastPath(bad);
    ASSERT_FALSE(s) << bad;
    EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument) << bad;
  }
}

class BcastAsUserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "writing as another user needs root";
    passwd* pw = getpwnam("nobody");
    if (pw == nullptr) GTEST_SKIP() << "no user `nobody` on this machine";
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
    ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
    user_dir_ = dir_ / "user";
    fs::create_directory(user_dir_);
    ASSERT_EQ(chown(user_dir_.c_str(), uid_, gid_), 0);
  }
  Status Write(const std::string& path, std::string_view data, bool force = false) {
    return WriteFileAsUser(JobId(1), uid_, gid_,
                           {.path = path, .mode = 0640, .force = force, .atime = 1000000,
                            .mtime = 2000000},
                           data);
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  TempDir dir_;
  std::string user_dir_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
};

TEST_F(BcastAsUserTest, WritesTheFileOwnedByTheUserWithModeAndTimes) {
  const std::string path = user_dir_ + "/data.bin";
  ASSERT_TRUE(Write(path, std::string("a\0b", 3)));
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, uid_);
  EXPECT_EQ(st.st_gid, gid_);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(st.st_mtime, 2000000);
  EXPECT_EQ(Read(path), std::string("a\0b", 3));
  // Without force an existing file stays; with it, it is replaced.
  Status again = Write(path, "new");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::kAlreadyExists);
  ASSERT_TRUE(Write(path, "new", /*force=*/true));
  EXPECT_EQ(Read(path), "new");
}

TEST_F(BcastAsUserTest, NeverWritesWhereOnlyRootMay) {
  // A root-owned directory, and a root-owned file behind a link the user made.
  Status s = Write(dir_ / "root_only", "x");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kPermissionDenied) << s.error().message;
  EXPECT_FALSE(fs::exists(dir_ / "root_only"));
  const std::string secret = dir_ / "secret";
  std::ofstream(secret) << "root's";
  fs::create_symlink(secret, user_dir_ + "/link");
  ASSERT_EQ(lchown((user_dir_ + "/link").c_str(), uid_, gid_), 0);
  s = Write(user_dir_ + "/link", "x", /*force=*/true);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kPermissionDenied) << s.error().message;
  EXPECT_EQ(Read(secret), "root's");
}

TEST_F(BcastAsUserTest, RefusesASymlinkedDirectoryOfAnotherUser) {
  // A link owned by a third user (here: uid 12345) on the way is refused, even to the user's
  // own directory.
  const std::string link = dir_ / "other";
  fs::create_directory_symlink(user_dir_, link);
  ASSERT_EQ(lchown(link.c_str(), 12345, 12345), 0);
  Status s = Write(link + "/f", "x");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(s.error().message.find("symbolic link of uid 12345"), std::string::npos);
  EXPECT_FALSE(fs::exists(user_dir_ + "/f"));
}

TEST_F(BcastAsUserTest, RefusesAFileOverTheLimit) {
  std::string big(api::kMaxBcastBytes + 1, 'x');
  Status s = Write(user_dir_ + "/big", big);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(user_dir_ + "/big"));
}

}  // namespace
}  // namespace corral::agent
