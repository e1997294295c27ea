// The run's directory and batch script as the agent writes them (root for the ownership
// checks; the `os` group).
#include "agent/launcher.h"

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

TEST(RunScriptTest, AStaleDirectoryCannotLeadTheScriptElsewhere) {
  if (geteuid() != 0) GTEST_SKIP() << "giving the script to a user needs root";
  passwd* pw = getpwnam("nobody");
  if (pw == nullptr) GTEST_SKIP() << "no user `nobody` on this machine";
  char tmpl[] = "/tmp/corral-launcher-XXXXXX";
  std::string state = mkdtemp(tmpl);
  fs::create_directories(state + "/jobs");
  const JobRun run{JobId(7), Generation(2)};
  // What a user could have left in a run directory of theirs (the old layout): the script a
  // symlink to a root-owned file.
  std::string dir = RunDirectory(state, run);
  std::string target = state + "/root-file";
  std::ofstream(target) << "keep\n";
  fs::create_directories(dir);
  fs::create_symlink(target, dir + "/script");
  ASSERT_EQ(chown(dir.c_str(), pw->pw_uid, pw->pw_gid), 0);

  auto script = WriteRunScript(state, run, "#!/bin/sh\necho hi\n", pw->pw_uid, pw->pw_gid);
  ASSERT_TRUE(script.has_value()) << script.error().message;
  EXPECT_EQ(*script, dir + "/script");
  EXPECT_EQ(ReadFile(target), "keep\n");
  EXPECT_EQ(ReadFile(*script), "#!/bin/sh\necho hi\n");
  struct stat st {};
  ASSERT_EQ(lstat(script->c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(st.st_uid, pw->pw_uid);
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u) << "the run's directory is the agent's";
  EXPECT_EQ(st.st_mode & 0777, 0711u);

  auto own =
      WriteRunScript(state, {JobId(8), Generation(1)}, "#!/bin/sh\n", std::nullopt, std::nullopt);
  ASSERT_TRUE(own.has_value()) << own.error().message;
  ASSERT_EQ(stat(own->c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  fs::remove_all(state);
}

}  // namespace
}  // namespace corral::agent
