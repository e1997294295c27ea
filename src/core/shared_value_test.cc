#include "core/shared_value.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/job.h"

namespace corral {
namespace {

TEST(SharedTest, CopiesShareTheValueAndAChangeIsTheCopysOwn) {
  Shared<std::string> a = std::string(64 * 1024, '#');
  Shared<std::string> b = a;
  EXPECT_TRUE(b.SharesWith(a));
  EXPECT_EQ(b, a);
  b.Mutable() += "x";  // copy on write
  EXPECT_FALSE(b.SharesWith(a));
  EXPECT_EQ(a->size(), 64u * 1024);
  EXPECT_EQ(b->size(), 64u * 1024 + 1);
  b = "new";
  EXPECT_EQ(b, "new");
  EXPECT_EQ(a->size(), 64u * 1024);
  a.clear();
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a, std::string());
  // The only holder changes its value in place.
  Shared<std::vector<std::string>> args = {"a"};
  const std::string* before = &args->front();
  args.Mutable().front() = "b";
  EXPECT_EQ(&args->front(), before);
  EXPECT_EQ(args, (std::vector<std::string>{"b"}));
}

TEST(SharedTest, ValuesCompareByValueNotByAddress) {
  Shared<std::map<std::string, std::string>> a = {{"A", "1"}};
  Shared<std::map<std::string, std::string>> b = {{"A", "1"}};
  EXPECT_FALSE(a.SharesWith(b));
  EXPECT_EQ(a, b);
  EXPECT_EQ(Shared<std::string>(), Shared<std::string>(""));
  b.Mutable()["B"] = "2";
  EXPECT_NE(a, b);
}

// The tasks of an array are copies of one spec: their script, environment and arguments are
// held once, and changing one task's (an update) leaves the others as they were.
TEST(SharedTest, CopiesOfAJobShareItsScriptEnvironmentAndArguments) {
  Job job;
  job.spec.script = "#!/bin/sh\n" + std::string(64 * 1024, '#');
  job.spec.environment = {{"PATH", "/bin"}};
  job.spec.script_args = {"--lr", "0.1"};
  std::vector<Job> tasks(1001, job);
  for (const Job& t : tasks) {
    EXPECT_TRUE(t.spec.script.SharesWith(job.spec.script));
    EXPECT_TRUE(t.spec.environment.SharesWith(job.spec.environment));
    EXPECT_TRUE(t.spec.script_args.SharesWith(job.spec.script_args));
  }
  tasks[5].spec.environment.Mutable()["ONLY_FIVE"] = "1";
  EXPECT_EQ(tasks[4].spec.environment->count("ONLY_FIVE"), 0u);
  EXPECT_EQ(tasks[5].spec.environment->at("ONLY_FIVE"), "1");
  EXPECT_EQ(tasks[4], job);
  EXPECT_NE(tasks[5], job);
}

}  // namespace
}  // namespace corral
