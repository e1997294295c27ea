#include "controller/internal/access.h"

#include <gtest/gtest.h>

#include "controller/testing/requests.h"

namespace corral::controller::internal {
namespace {

using testing::kAdmin;
using testing::kAlice;
using testing::kBob;

const api::Identity kOperator{
    .user = "olga", .uid = 1500, .gid = 1500, .role = api::Role::kOperator};

Job AlicesJob() {
  Job job;
  job.id = JobId(7);
  job.spec.user = "alice";
  job.spec.script = "#!/bin/sh\nsecret\n";
  job.spec.environment = {{"CORRAL_TOKEN", "t"}};
  job.spec.script_args = {"--password", "p"};
  job.spec.command = "/home/alice/job.sh";
  job.usage.cpu_seconds = 42;
  return job;
}

TEST(AccessTest, JobActionsAreDecidedByTheTableAgainstTheJob) {
  Job job = AlicesJob();
  EXPECT_TRUE(AuthorizeJob(kAlice, api::Action::kCancelJob, job).has_value());
  auto denied = AuthorizeJob(kBob, api::Action::kCancelJob, job);
  ASSERT_FALSE(denied.has_value());
  EXPECT_EQ(denied.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(denied.error().message.find("not the job's user"), std::string::npos)
      << denied.error().message;
  EXPECT_TRUE(AuthorizeJob(kOperator, api::Action::kCancelJob, job).has_value());
  EXPECT_FALSE(AuthorizeJob(kOperator, api::Action::kUpdateJob, job).has_value());
  EXPECT_TRUE(AuthorizeJob(kAdmin, api::Action::kUpdateJob, job).has_value());
  // A job credential acts on its own job's current run only.
  job.allocation.generation = Generation(3);
  api::Identity cred{.user = "alice",
                     .uid = 1000,
                     .gid = 1000,
                     .role = api::Role::kJob,
                     .job = JobId(7),
                     .generation = Generation(3)};
  EXPECT_TRUE(AuthorizeJob(cred, api::Action::kCreateStep, job).has_value());
  cred.generation = Generation(2);
  EXPECT_FALSE(AuthorizeJob(cred, api::Action::kCreateStep, job).has_value()) << "an older run";
  cred.generation = Generation(3);
  cred.job = JobId(8);
  EXPECT_FALSE(AuthorizeJob(cred, api::Action::kCreateStep, job).has_value()) << "another job";
  // An agent is never an administrator.
  api::Identity agent{.user = "agent:node01",
                      .uid = api::kNoUnixId,
                      .gid = api::kNoUnixId,
                      .role = api::Role::kAgent,
                      .node = "node01"};
  EXPECT_FALSE(AuthorizeJob(agent, api::Action::kCancelJob, job).has_value());
  EXPECT_FALSE(IsAdministrator(agent));
  EXPECT_FALSE(IsPrivileged(agent));
  EXPECT_TRUE(IsPrivileged(kOperator));
  EXPECT_FALSE(IsAdministrator(kOperator));
  EXPECT_FALSE(IsAdministrator({.user = "x", .uid = 0, .gid = 0, .role = api::Role::kUser}))
      << "roles come from the authenticator, not from uid 0 here";
}

TEST(AccessTest, OthersNeverSeeTheScriptEnvironmentArgumentsOrArgv) {
  PrivacyConfig open;
  api::JobInfo info{.job = AlicesJob()};
  EXPECT_TRUE(SeesJob(kBob, "alice", open));
  api::JobInfo bobs_view = info;
  Redact(kBob, open, bobs_view);
  EXPECT_EQ(bobs_view.job.spec.script, "");
  EXPECT_TRUE(bobs_view.job.spec.environment.empty());
  EXPECT_TRUE(bobs_view.job.spec.script_args.empty());
  EXPECT_EQ(bobs_view.job.spec.command, "");
  EXPECT_EQ(bobs_view.job.spec.user, "alice") << "metadata stays";
  EXPECT_EQ(bobs_view.job.usage.cpu_seconds, 42) << "usage is not private unless configured";
  for (const api::Identity& who : {kAlice, kOperator, kAdmin}) {
    api::JobInfo view = info;
    Redact(who, open, view);
    EXPECT_EQ(view, info) << who.user;
  }
  api::StepInfo step{.argv = {"python", "--key=secret"}};
  Redact(kBob, "alice", step);
  EXPECT_TRUE(step.argv.empty());
  step.argv = {"python"};
  Redact(kAlice, "alice", step);
  EXPECT_EQ(step.argv.size(), 1u);
}

TEST(AccessTest, PrivateDataHidesOtherUsersJobsAndUsage) {
  PrivacyConfig priv{.jobs = true, .usage = true};
  EXPECT_FALSE(SeesJob(kBob, "alice", priv));
  EXPECT_TRUE(SeesJob(kAlice, "alice", priv));
  EXPECT_TRUE(SeesJob(kOperator, "alice", priv));
  EXPECT_TRUE(SeesJob(kAdmin, "alice", priv));
  std::vector<api::JobInfo> jobs = {{.job = AlicesJob()}, {.job = AlicesJob()}};
  jobs[1].job.spec.user = "bob";
  Filter(kBob, priv, jobs);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].job.spec.user, "bob");
  EXPECT_EQ(jobs[0].job.usage.cpu_seconds, 42) << "own usage";
  PrivacyConfig usage_only{.usage = true};
  api::JobInfo info{.job = AlicesJob()};
  Redact(kBob, usage_only, info);
  EXPECT_EQ(info.job.usage.cpu_seconds, 0);
}

}  // namespace
}  // namespace corral::controller::internal
