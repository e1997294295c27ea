#include "controller/internal/job_validator.h"

#include <gtest/gtest.h>

#include "controller/internal/controller_state.h"
#include "controller/internal/request_limits.h"
#include "controller/testing/requests.h"
#include "core/testing/fake_clock.h"
#include "sched/first_fit_policy.h"

namespace corral::controller::internal {
namespace {

using testing::kAdmin;
using testing::kAlice;

sched::SchedulerConfig TwoPartitions() {
  sched::SchedulerConfig c = sched::DefaultSchedulerConfig();
  c.partitions = {
      Partition{.name = "short", .max_time = Minutes(30), .max_gpus_per_job = 2},
      Partition{.name = "long", .is_default = true, .default_time = Minutes(120)},
  };
  return c;
}

class JobValidatorTest : public ::testing::Test {
 protected:
  JobValidatorTest() {
    s_.nodes.Register(testing::NodeRegistration("node01", 4).inventory, clock_.Now(),
                      clock_.MonotonicNow());
  }

  static JobSpec Spec(uint32_t gpus = 1) {
    JobSpec s;
    s.script = "#!/bin/sh\ntrue\n";
    s.resources.gpus_per_node = gpus;
    return s;
  }

  std::string Error(const JobSpec& spec, const api::Identity& who = kAlice) {
    auto r = s_.validator.ValidateSubmission(who, spec);
    return r ? "" : r.error().message;
  }

  corral::testing::FakeClock clock_;
  static ControllerConfig Config() {
    ControllerConfig c;
    c.user_ids = testing::TestUserIds;
    c.max_submitted_jobs = 5;
    return c;
  }

  ControllerState s_{Config(), TwoPartitions(), std::make_unique<sched::FirstFitPolicy>(), clock_};
};

TEST_F(JobValidatorTest, TheJobAsItWouldBeQueued) {
  auto job = s_.validator.ValidateSubmission(kAlice, Spec());
  ASSERT_TRUE(job.has_value()) << job.error().message;
  EXPECT_EQ(job->id, s_.jobs.next_id());
  EXPECT_EQ(job->state, JobState::kPending);
  EXPECT_EQ(job->submit_time, clock_.Now());
  EXPECT_EQ(job->spec.user, "alice");
  EXPECT_EQ(job->spec.uid, 1000u);
  EXPECT_EQ(job->spec.name, "job");
  EXPECT_EQ(job->spec.working_dir, "/");
  EXPECT_EQ(job->spec.partitions, (std::vector<std::string>{"long"}));
  EXPECT_EQ(job->partition, "long");
  EXPECT_EQ(job->time_limit, Minutes(120)) << "the partition's DefaultTime";
  JobSpec in_short = Spec();
  in_short.partitions = {"short"};
  EXPECT_EQ(s_.validator.ValidateSubmission(kAlice, in_short)->time_limit, Minutes(30))
      << "no DefaultTime: its MaxTime";
  EXPECT_EQ(s_.jobs.size(), 0u) << "nothing recorded";
}

TEST_F(JobValidatorTest, TheFirstFailingCheckInTheDocumentedOrderIsReported) {
  JobSpec s = Spec();
  s.user = "bob";
  s.script = "";
  s.working_dir = "relative";
  EXPECT_EQ(Error(s), "user: alice may not submit jobs as bob");
  s.user = "";
  EXPECT_EQ(Error(s), "script: empty; a batch script is required");
  s.script = "#!/bin/sh\n";
  s.array = "5-1";
  EXPECT_EQ(Error(s), "working_dir: \"relative\" is not an absolute path");
  s.working_dir = "/tmp";
  EXPECT_EQ(Error(s).rfind("array: ", 0), 0u);
  s.array = "";
  s.time_limit = Seconds(0);
  s.partitions = {"nope"};
  EXPECT_EQ(Error(s), "time_limit: must be positive");
  s.time_limit = Minutes(60);
  EXPECT_EQ(Error(s), "partition: no such partition \"nope\"");
  // An administrator may submit for another user.
  JobSpec for_bob = Spec();
  for_bob.user = "bob";
  EXPECT_EQ(Error(for_bob, kAdmin), "");
}

TEST_F(JobValidatorTest, TheJobUsersUidIsTheControllersNeverTheRequests) {
  JobSpec s = Spec();
  s.uid = 0;  // a request that asks for root
  s.gid = 0;
  auto own = s_.validator.ValidateSubmission(kAlice, s);
  ASSERT_TRUE(own.has_value()) << own.error().message;
  EXPECT_EQ(own->spec.uid, 1000u) << "the credential's uid";
  EXPECT_EQ(own->spec.gid, 1000u);
  s.user = "bob";
  auto for_bob = s_.validator.ValidateSubmission(kAdmin, s);
  ASSERT_TRUE(for_bob.has_value()) << for_bob.error().message;
  EXPECT_EQ(for_bob->spec.uid, 1001u) << "bob's uid, looked up; not root's nor the body's";
  EXPECT_EQ(for_bob->spec.gid, 1001u);
  const api::Identity op{.user = "olga", .uid = 1500, .gid = 1500, .role = api::Role::kOperator};
  auto by_operator = s_.validator.ValidateSubmission(op, s);
  ASSERT_TRUE(by_operator.has_value()) << by_operator.error().message;
  EXPECT_EQ(by_operator->spec.uid, 1001u);
  s.user = "nosuchuser";
  EXPECT_EQ(Error(s, kAdmin), "user: no such user \"nosuchuser\"");
  s.user = "bob";
  EXPECT_EQ(Error(s, testing::kMallory), "user: mallory may not submit jobs as bob");
  const api::Identity agent{.user = "agent:node01",
                            .uid = api::kNoUnixId,
                            .gid = api::kNoUnixId,
                            .role = api::Role::kAgent,
                            .node = "node01"};
  s.user = "";
  auto by_agent = s_.validator.ValidateSubmission(agent, s);
  ASSERT_FALSE(by_agent.has_value());
  EXPECT_EQ(by_agent.error().code, ErrorCode::kPermissionDenied);
}

TEST_F(JobValidatorTest, OversizedFieldsNulBytesAndTooManyJobsAreRefusedNamingTheField) {
  auto field_of = [&](JobSpec s) {
    std::string e = Error(s);
    return e.substr(0, e.find(':'));
  };
  JobSpec s = Spec();
  s.comment = std::string(5000, 'c');
  EXPECT_EQ(field_of(s), "comment");
  s = Spec();
  s.environment.Mutable()["BIG"] = std::string(200 * 1024, 'x');
  EXPECT_EQ(field_of(s), "environment.BIG");
  s = Spec();
  for (int i = 0; i < 20; ++i)
    s.environment.Mutable()["V" + std::to_string(i)] = std::string(100000, 'x');
  EXPECT_EQ(field_of(s), "environment");
  s = Spec();
  s.script_args = std::vector<std::string>(2000, "a");
  EXPECT_EQ(field_of(s), "script_args");
  s = Spec();
  s.partitions = std::vector<std::string>(100, "long");
  EXPECT_EQ(field_of(s), "partition");
  s = Spec();
  s.dependencies.push_back({.jobs = std::vector<JobId>(2000, JobId(1))});
  EXPECT_EQ(field_of(s), "dependencies");
  s = Spec();
  s.stdout_path = std::string("/tmp/out\0x", 10);
  EXPECT_EQ(Error(s), "stdout_path: contains a NUL byte");
  s = Spec();
  s.working_dir = "/" + std::string(5000, 'd');
  EXPECT_EQ(field_of(s), "working_dir");
  s = Spec();
  s.name = std::string(300, 'n');
  EXPECT_EQ(field_of(s), "name");
  // An array's tasks share its script, environment and arguments and each hold the rest: the
  // shared part counts once, the rest once per task, and the whole is bounded.
  s = Spec();
  s.script = "#!/bin/sh\n" + std::string(300 * 1024, '#') + "\n";
  s.array = "0-1000";
  EXPECT_NE(field_of(s), "array") << "1,001 tasks share one 300 KiB script";
  EXPECT_TRUE(CheckArraySize(1001, {.total = 8 << 20, .shared = (8 << 20) - 1024}));
  Status over_limit = CheckArraySize(1001, {.total = 300 * 1024, .shared = 0});
  ASSERT_FALSE(over_limit.has_value());
  EXPECT_EQ(over_limit.error().message.rfind("array: 1001 tasks of 307200 bytes each", 0), 0u)
      << over_limit.error().message;
  EXPECT_TRUE(CheckArraySize(100, {.total = 300 * 1024, .shared = 0}));
  // At most `max_submitted_jobs` (5 here) pending or running, array tasks counted.
  s = Spec();
  s.array = "0-5";
  auto over = s_.validator.ValidateSubmission(kAlice, s);
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().code, ErrorCode::kResourceExhausted);
  EXPECT_EQ(over.error().message.rfind("max_submitted_jobs: ", 0), 0u) << over.error().message;
  s.array = "0-4";
  EXPECT_EQ(Error(s), "");
  EXPECT_EQ(s_.jobs.size(), 0u) << "nothing recorded";
}

TEST_F(JobValidatorTest, HostileContainerImagesAndMountsAreRefusedNamingTheField) {
  JobSpec s = Spec();
  s.container.image = "--user=0:0";
  std::string e = Error(s);
  EXPECT_EQ(e.rfind("container.image: ", 0), 0u) << e;
  s.container.image = "docker.io/library/busybox:1.36";
  EXPECT_EQ(Error(s), "");
  s.container.mounts = {"/:/host"};
  e = Error(s);
  EXPECT_EQ(e.rfind("container.mounts", 0), 0u) << e;
  EXPECT_EQ(s_.jobs.size(), 0u) << "nothing recorded";
}

TEST_F(JobValidatorTest, APartitionThatTakesTheJobIsFoundElseTheLastReasonIsGiven) {
  JobSpec s = Spec(3);
  s.partitions = {"short", "long"};
  s.time_limit = Minutes(60);
  auto job = s_.validator.ValidateSubmission(kAlice, s);
  ASSERT_TRUE(job.has_value()) << job.error().message;
  EXPECT_EQ(job->partition, "short") << "the first named partition, though only long takes it";
  s.partitions = {"long", "short"};
  s.resources.gpus_per_node = 5;
  EXPECT_EQ(Error(s), "time_limit: 1:00:00 exceeds the maximum 30:00 of partition \"short\"");
  s.partitions = {"short"};
  s.time_limit = Minutes(10);
  EXPECT_EQ(Error(s),
            "resources.gpus: 5 GPUs exceed the limit of 2 per job in partition \"short\"");
  s.partitions = {"long"};
  EXPECT_EQ(Error(s),
            "resources.gpus: 5 GPUs per node requested, but no node of partition \"long\" has "
            "more than 4");
}

TEST_F(JobValidatorTest, TimeLimitChanges) {
  Job job;
  job.id = JobId(4);
  job.state = JobState::kRunning;
  job.partition = "short";
  job.time_limit = Minutes(20);
  auto check = [&](const api::Identity& who, Duration limit) {
    auto s = s_.validator.ValidateTimeLimit(who, job, limit);
    return s ? "" : s.error().message;
  };
  EXPECT_EQ(check(kAlice, Minutes(10)), "");
  EXPECT_EQ(check(kAlice, Seconds(0)), "job 4: time limit must be positive");
  EXPECT_EQ(check(kAlice, Minutes(25)),
            "job 4: only an administrator may raise a time limit (from 20:00 to 25:00)");
  EXPECT_EQ(check(kAdmin, Minutes(600)), "") << "past the partition's maximum too";
  job.time_limit = kUnlimited;
  EXPECT_EQ(check(kAlice, Minutes(31)),
            "job 4: time limit 31:00 exceeds the maximum 30:00 of partition \"short\"");
  job.state = JobState::kFailed;
  EXPECT_EQ(check(kAdmin, Minutes(1)),
            "job 4: FAILED: a time limit can only be changed while the job is pending or running");
}

}  // namespace
}  // namespace corral::controller::internal
