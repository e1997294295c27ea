// The host side of containers on this machine: mounts checked as the job's user and staged,
// env files, private directories (needs root for most; the `os` group).
#include "agent/exec/container_host.h"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "agent/exec/testing/process_supervisor_fixture.h"

namespace corral::agent {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

class ContainerHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "checking mounts as another user needs root";
    passwd* pw = getpwnam("nobody");
    if (pw == nullptr) GTEST_SKIP() << "no user `nobody` on this machine";
    auto u = LookUpContainerUser(pw->pw_uid, pw->pw_gid);
    ASSERT_TRUE(u.has_value()) << u.error().message;
    user_ = *u;
    ASSERT_EQ(chmod(root_.path().c_str(), 0711), 0);  // users may pass through
    // /allowed (read-only for jobs), /rw (read-write), /outside; a root-only directory with
    // a world-readable directory inside; a directory of the user's own.
    for (const char* d : {"allowed/data", "rw/out", "outside/data", "private/pub", "mine"}) {
      fs::create_directories(root_ / d);
    }
    for (const char* d :
         {"allowed", "allowed/data", "rw", "rw/out", "outside", "outside/data", "private/pub"}) {
      ASSERT_EQ(chmod((root_ / d).c_str(), 0755), 0);
    }
    ASSERT_EQ(chmod((root_ / "private").c_str(), 0700), 0);
    ASSERT_EQ(chown((root_ / "mine").c_str(), *user_.uid, *user_.gid), 0);
    WriteFile(root_ / "allowed/data/file", "dataset\n");
    WriteFile(root_ / "outside/data/file", "elsewhere\n");
    config_.allow_mounts = {root_ / "allowed"};
    config_.allow_rw_mounts = {root_ / "rw"};
    state_ = root_ / "state";
    fs::create_directories(state_);
  }
  void TearDown() override {
    // Never leave a mount under the temporary directory it removes.
    if (!dir_.empty()) RemoveContainer({.dir = dir_}, false);
  }

  BindMount Requested(const std::string& source, std::vector<std::string> options = {}) {
    return {source, "/in", std::move(options), BindMount::Origin::kRequested};
  }
  Result<std::vector<BindMount>> Check(std::vector<BindMount> mounts, bool stage = false) {
    if (dir_.empty()) {
      auto d = MakeContainerDir(state_, "corral-nobody-1-1-batch-n", false);
      EXPECT_TRUE(d.has_value()) << d.error().message;
      dir_ = d.value_or("");
    }
    return CheckMounts(config_, std::move(mounts), user_, stage, dir_);
  }
  ErrorCode Code(std::vector<BindMount> mounts) {
    auto r = Check(std::move(mounts));
    return r ? ErrorCode::kInternal : r.error().code;
  }

  TempDir root_;
  ContainerUser user_;
  ContainerConfig config_;
  std::string state_, dir_;
};

TEST_F(ContainerHostTest, RequestedMountsFollowTheAllowListReadOnlyUnlessAllowedRw) {
  auto ro = Check({Requested(root_ / "allowed/data")});
  ASSERT_TRUE(ro.has_value()) << ro.error().message;
  EXPECT_EQ((*ro)[0].source, root_ / "allowed/data");
  EXPECT_EQ((*ro)[0].options, (std::vector<std::string>{"ro"}));  // added
  auto rw = Check({Requested(root_ / "rw/out")});
  ASSERT_TRUE(rw.has_value()) << rw.error().message;
  EXPECT_TRUE((*rw)[0].options.empty());  // read-write as asked
  auto refused = Check({Requested(root_ / "allowed/data", {"rw"})});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied);
  EXPECT_THAT(refused.error().message, HasSubstr("read-only only"));
  EXPECT_EQ(Code({Requested(root_ / "outside/data")}), ErrorCode::kPermissionDenied);
  EXPECT_EQ(Code({Requested(root_ / "allowedx")}), ErrorCode::kInvalidArgument);  // no such
  // A prefix matches whole components only.
  fs::create_directories(root_ / "allowed2");
  ASSERT_EQ(chmod((root_ / "allowed2").c_str(), 0755), 0);
  EXPECT_EQ(Code({Requested(root_ / "allowed2")}), ErrorCode::kPermissionDenied);
}

TEST_F(ContainerHostTest, SymlinksAreResolvedAsTheUserAndTheResolvedPathIsChecked) {
  // The user's own symlink into an allowed directory: allowed, as the resolved path.
  fs::create_symlink(root_ / "allowed/data", root_ / "mine/link-in");
  auto in = Check({Requested(root_ / "mine/link-in")});
  ASSERT_TRUE(in.has_value()) << in.error().message;
  EXPECT_EQ((*in)[0].source, root_ / "allowed/data");
  // A symlink inside an allowed directory that leads out of it: refused.
  fs::create_symlink(root_ / "outside/data", root_ / "allowed/escape");
  EXPECT_EQ(Code({Requested(root_ / "allowed/escape")}), ErrorCode::kPermissionDenied);
  // A world-readable directory behind one the user cannot enter: refused, by path or link.
  config_.allow_mounts.push_back(root_ / "private");
  EXPECT_EQ(Code({Requested(root_ / "private/pub")}), ErrorCode::kPermissionDenied);
  fs::create_symlink(root_ / "private/pub", root_ / "mine/link-private");
  EXPECT_EQ(Code({Requested(root_ / "mine/link-private")}), ErrorCode::kPermissionDenied);
  // Magic links (a descriptor of the agent's) are refused even where they would resolve.
  int fd = open((root_ / "private").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  fs::create_symlink("/proc/self/fd/" + std::to_string(fd), root_ / "mine/magic");
  EXPECT_EQ(Code({Requested(root_ / "mine/magic")}), ErrorCode::kPermissionDenied);
  close(fd);
}

TEST_F(ContainerHostTest, TheJobsOwnPathsAreCheckedAsTheUserButNeedNoAllowList) {
  BindMount own{root_ / "mine", root_ / "mine", {}, BindMount::Origin::kJob};
  auto ok = Check({own});
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  BindMount hidden{root_ / "private/pub", root_ / "private/pub", {}, BindMount::Origin::kJob};
  EXPECT_EQ(Code({hidden}), ErrorCode::kPermissionDenied);
  BindMount agent{root_ / "private", "/corral/job", {"ro"}, BindMount::Origin::kAgent};
  auto trusted = Check({agent});
  ASSERT_TRUE(trusted.has_value());
  EXPECT_EQ((*trusted)[0], agent);  // the agent's own directory is passed as it is
}

// A runtime that runs as root mounts the staged source, which is the object that was
// checked: swapping the path for a symlink afterwards changes nothing.
TEST_F(ContainerHostTest, StagedMountsHoldWhatWasCheckedAndGoWithoutTouchingTheData) {
  fs::create_directories(root_ / "allowed/swap");
  ASSERT_EQ(chmod((root_ / "allowed/swap").c_str(), 0755), 0);
  WriteFile(root_ / "allowed/swap/file", "checked\n");
  auto staged = Check({Requested(root_ / "allowed/swap"), Requested(root_ / "allowed/data/file")},
                      /*stage=*/true);
  ASSERT_TRUE(staged.has_value()) << staged.error().message;
  EXPECT_EQ((*staged)[0].source, dir_ + "/m0");
  EXPECT_EQ((*staged)[1].source, dir_ + "/m1");
  EXPECT_EQ((*staged)[1].options, (std::vector<std::string>{"ro"}));
  fs::rename(root_ / "allowed/swap", root_ / "allowed/swapped");
  fs::create_symlink(root_ / "private", root_ / "allowed/swap");
  EXPECT_EQ(ReadFile(dir_ + "/m0/file"), "checked\n");
  EXPECT_EQ(ReadFile(dir_ + "/m1"), "dataset\n");
  struct stat st {};
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << "nobody reaches a user's data through the stage";

  RemoveContainer({.dir = dir_}, false);
  EXPECT_FALSE(fs::exists(dir_));
  EXPECT_EQ(ReadFile(root_ / "allowed/swapped/file"), "checked\n");
  EXPECT_EQ(ReadFile(root_ / "allowed/data/file"), "dataset\n");
  dir_.clear();
}

TEST_F(ContainerHostTest, AStaleDirectoryIsUnmountedNeverDeletedThrough) {
  auto staged = Check({Requested(root_ / "allowed/data")}, /*stage=*/true);
  ASSERT_TRUE(staged.has_value()) << staged.error().message;
  RemoveStaleContainerDirs(state_);  // as a restarted agent does
  EXPECT_FALSE(fs::exists(dir_));
  EXPECT_EQ(ReadFile(root_ / "allowed/data/file"), "dataset\n");
  dir_.clear();
}

TEST_F(ContainerHostTest, EnvFilesAreNewPrivateFiles) {
  auto dir = MakeContainerDir(state_, "c1", true);
  ASSERT_TRUE(dir.has_value());
  dir_ = *dir;
  struct stat st {};
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0711u);
  std::string path = dir_ + "/env";
  ASSERT_TRUE(WriteEnvFile(path, {"A=1", "B=two words"}, &user_).has_value());
  EXPECT_EQ(ReadFile(path), "A=1\nB=two words\n");
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_uid, *user_.uid);
  // Never through an existing file or symlink.
  fs::create_symlink(root_ / "outside/data/file", dir_ + "/env2");
  EXPECT_FALSE(WriteEnvFile(dir_ + "/env2", {"X=1"}, nullptr).has_value());
  EXPECT_EQ(ReadFile(root_ / "outside/data/file"), "elsewhere\n");
}

TEST(ContainerUserTest, RootlessNeedsSubordinateIds) {
  ContainerUser nobody{.uid = 65534, .gid = 65534, .name = "no-such-user-here"};
  ContainerConfig c{.runtime = "podman"};
  EXPECT_FALSE(*UseRootlessPodman(c, nobody));  // "off"
  c.rootless = "auto";
  EXPECT_FALSE(*UseRootlessPodman(c, nobody));  // no ranges: rootful
  c.rootless = "always";
  auto always = UseRootlessPodman(c, nobody);
  ASSERT_FALSE(always.has_value());
  EXPECT_THAT(always.error().message, HasSubstr("/etc/subuid"));
  c.runtime = "docker";
  EXPECT_FALSE(*UseRootlessPodman(c, nobody));
}

}  // namespace
}  // namespace corral::agent
