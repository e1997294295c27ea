// The node's health script, run as a real process with its real timeout (the `os` group).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "agent/health.h"
#include "core/clock.h"

namespace corral::agent {
namespace {

class HealthScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/corral-health-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Script(const std::string& body) {
    std::string path = dir_ + "/check" + std::to_string(n_++);
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  }
  std::string dir_;
  int n_ = 0;
};

TEST_F(HealthScriptTest, ExitStatusAndMessage) {
  const Clock& clock = SystemClock::Get();
  EXPECT_EQ(RunHealthScript(Script("echo all good; exit 0"), Seconds(10), clock), "");
  EXPECT_EQ(
      RunHealthScript(Script("echo; echo 'ERROR: nhc: eth0 down'; exit 1"), Seconds(10), clock),
      "ERROR: nhc: eth0 down");
  EXPECT_EQ(RunHealthScript(Script("exit 3"), Seconds(10), clock), "exit status 3");
  EXPECT_EQ(RunHealthScript(Script("sleep 30"), Millis(200), clock), "timed out after 0 s");
  EXPECT_EQ(RunHealthScript(dir_ + "/missing", Seconds(1), clock).rfind("cannot run ", 0), 0u);
}

}  // namespace
}  // namespace corral::agent
