// The process supervisor running jobs as another user (needs root; the `os` group).
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/fsuid.h>
#include <sys/stat.h>

#include "agent/exec/testing/process_supervisor_fixture.h"

namespace corral::agent {
namespace {

using ::corral::testing::ProcessGone;
using ::corral::testing::WaitGone;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

class ProcessSupervisorAsUserTest : public ProcessSupervisorTest {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "running jobs as another user needs root";
    passwd* pw = getpwnam("nobody");
    if (pw == nullptr) GTEST_SKIP() << "no user `nobody` on this machine";
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
    // The job user must be able to write its outputs and enter its directory.
    ASSERT_EQ(chown(dir_.path().c_str(), uid_, gid_), 0);
  }

  ProcessSpec AsUser(uint64_t job, const std::string& script) {
    ProcessSpec spec = Sh(job, script);
    spec.uid = uid_;
    spec.gid = gid_;
    return spec;
  }

  uid_t uid_ = 0;
  gid_t gid_ = 0;
};

TEST_F(ProcessSupervisorAsUserTest, RunsAsTheUser) {
  ProcessSpec spec = AsUser(1,
                            "id -u; id -g; id -G; ls /proc/$$/fd; "
                            "exec grep -E '^(SigBlk|SigIgn):' /proc/self/status");
  spec.stderr_path = dir_ / "job1.err";
  ProcessExit x = Run(spec);
  EXPECT_EQ(x.exit_code, 0);
  std::string ids = std::to_string(uid_) + "\n" + std::to_string(gid_) + "\n";
  EXPECT_EQ(ReadFile(spec.stdout_path), ids + std::to_string(gid_) +
                                            "\n"
                                            "0\n1\n2\n"
                                            "SigBlk:\t0000000000000000\n"
                                            "SigIgn:\t0000000000000000\n");
  for (const std::string& path : {spec.stdout_path, spec.stderr_path}) {
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, uid_) << path;
    EXPECT_EQ(st.st_gid, gid_) << path;
  }
}

TEST_F(ProcessSupervisorAsUserTest, GroupOfTheUserIsUsedWhenNoGidIsGiven) {
  ProcessSpec spec = AsUser(1, "id -g");
  spec.gid.reset();
  EXPECT_EQ(Run(spec).exit_code, 0);
  EXPECT_EQ(ReadFile(spec.stdout_path), std::to_string(gid_) + "\n");
}

TEST_F(ProcessSupervisorAsUserTest, OutputsAreOpenedWithTheUsersPermissions) {
  // A root-only file the job points its output at through a symlink must stay untouched.
  std::string secret = dir_ / "secret";
  WriteFile(secret, "root data\n");
  ASSERT_EQ(chmod(secret.c_str(), 0644), 0);
  ProcessSpec spec = AsUser(1, "echo overwritten");
  spec.stdout_path = dir_ / "link";
  fs::create_symlink(secret, spec.stdout_path);
  Status s = sup_->Launch(spec);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.error().message, HasSubstr(spec.stdout_path));
  EXPECT_EQ(ReadFile(secret), "root data\n");
}

TEST_F(ProcessSupervisorAsUserTest, SupplementaryGroupsOpenOutputsAndRunTheJob) {
  // A user that is a member of a group besides its primary one (HPC project directories are
  // group-writable): its outputs may go to a directory only that group may write.
  std::optional<std::pair<passwd, gid_t>> member;
  setgrent();
  for (group* g = getgrent(); g != nullptr && !member; g = getgrent()) {
    for (char** m = g->gr_mem; *m != nullptr; ++m) {
      passwd* pw = getpwnam(*m);
      if (pw != nullptr && pw->pw_gid != g->gr_gid && pw->pw_uid != 0) {
        member.emplace(*pw, g->gr_gid);
        break;
      }
    }
  }
  endgrent();
  if (!member) GTEST_SKIP() << "no user on this machine has a supplementary group";
  auto [pw, group_id] = *member;
  ASSERT_EQ(chmod(dir_.path().c_str(), 0711), 0);  // others may pass through
  std::string shared = dir_ / "project";
  ASSERT_EQ(mkdir(shared.c_str(), 0770), 0);
  ASSERT_EQ(chown(shared.c_str(), 0, group_id), 0);
  ASSERT_EQ(chmod(shared.c_str(), 0770), 0);
  ProcessSpec spec = Sh(1, "id -G");
  spec.uid = pw.pw_uid;
  spec.gid = pw.pw_gid;
  spec.cwd = shared;
  spec.stdout_path = shared + "/out";
  ProcessExit x = Run(spec);
  EXPECT_EQ(x.exit_code, 0);
  EXPECT_THAT(" " + ReadFile(spec.stdout_path), HasSubstr(" " + std::to_string(group_id)));
  // The agent's own thread has its identity back.
  EXPECT_EQ(setfsuid(static_cast<uid_t>(-1)), 0);
  EXPECT_EQ(setfsgid(static_cast<gid_t>(-1)), 0);
}

TEST_F(ProcessSupervisorAsUserTest, FailureInTheChildNamesTheStep) {
  // The directory exists but the user may not enter it: chdir fails after setuid.
  TempDir private_dir;  // 0700, owned by root
  ProcessSpec spec = AsUser(1, "touch " + (dir_ / "ran"));
  spec.cwd = private_dir.path();
  spec.stdout_path = dir_ / "out";
  Status s = sup_->Launch(spec);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInternal);
  EXPECT_THAT(s.error().message, HasSubstr("chdir"));
  EXPECT_THAT(s.error().message, HasSubstr(private_dir.path()));

  spec = AsUser(2, "");
  spec.argv = {dir_ / "no-such-program"};
  s = sup_->Launch(spec);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInternal);
  EXPECT_THAT(s.error().message, HasSubstr("execve"));
  EXPECT_TRUE(sup_->Running().empty());
  EXPECT_FALSE(fs::exists(dir_ / "ran"));
}

TEST_F(ProcessSupervisorAsUserTest, NothingIsCreatedBehindADirectoryTheUserCannotEnter) {
  // A world-writable directory inside a root-only one: the agent (root) could reach it, the
  // user cannot; the working directory is opened as the user, so no output file lands there.
  TempDir hidden;  // 0700, owned by root
  std::string pub = hidden / "pub";
  ASSERT_EQ(mkdir(pub.c_str(), 0777), 0);
  ASSERT_EQ(chmod(pub.c_str(), 0777), 0);
  ProcessSpec spec = AsUser(1, "true");
  spec.cwd = pub;
  spec.stdout_path = "out";
  Status s = sup_->Launch(spec);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.error().message, HasSubstr("working directory \"" + pub + "\": Permission denied"));
  EXPECT_FALSE(fs::exists(pub + "/out"));
}

TEST_F(ProcessSupervisorAsUserTest, AGroupTheUserIsNotInIsRefused) {
  ProcessSpec spec = AsUser(1, "touch " + (dir_ / "ran"));
  spec.gid = 0;  // root's group, which `nobody` is not in
  Status s = sup_->Launch(spec);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(s.error().message, "job 1: gid 0 is not a group of user nobody");
  EXPECT_FALSE(fs::exists(dir_ / "ran"));
}

TEST_F(ProcessSupervisorAsUserTest, CancelAndTimeLimitWorkAsUser) {
  ProcessSpec spec = AsUser(1, "sleep 1000 & echo $! > " + Fifo("bg.pid").path() + "; wait");
  ASSERT_TRUE(sup_->Launch(spec).has_value());
  int bg = std::stoi(Line("bg.pid"));
  ASSERT_TRUE(sup_->Cancel(JobId(1), Generation(1)).has_value());
  EXPECT_TRUE(exits_.Wait(JobId(1)).cancelled);
  EXPECT_TRUE(WaitGone(bg));

  ProcessSpec limited = AsUser(2, "sleep 1000");
  limited.time_limit = Millis(100);
  ASSERT_TRUE(sup_->Launch(limited).has_value());
  clock_.Advance(Millis(100));
  Recheck(2, Millis(100));
  ProcessExit x = exits_.Wait(JobId(2));
  EXPECT_TRUE(x.timed_out);
  EXPECT_EQ(x.signal, SIGTERM);
}

}  // namespace
}  // namespace corral::agent
