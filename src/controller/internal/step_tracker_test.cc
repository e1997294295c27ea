#include "controller/internal/step_tracker.h"

#include <variant>

#include <gtest/gtest.h>

#include "controller/testing/requests.h"
#include "core/testing/fake_clock.h"

namespace corral::controller::internal {
namespace {

class StepTrackerTest : public ::testing::Test {
 protected:
  StepTrackerTest() {
    for (const char* name : {"node01", "node02"}) {
      std::string address = std::string("http://10.0.0.") + name[5] + ":6901";
      nodes_.Register(testing::NodeRegistration(name, 4, address).inventory, clock_.Now(),
                      clock_.MonotonicNow());
    }
    // Job 1 runs 2 tasks on each node (generation 5).
    JobEntry e;
    e.job.id = jobs_.AllocateId();
    e.job.state = JobState::kPending;
    e.job.spec.resources.nodes = 2;
    e.job.spec.resources.ntasks = 4;
    e.job.spec.resources.ntasks_per_node = 2;
    e.job.allocation.generation = Generation(5);
    for (const char* name : {"node01", "node02"})
      e.job.allocation.nodes.push_back({.node_name = name, .cpus = 4, .gpus = GpuSet(0b11)});
    jobs_.Add(std::move(e));
    jobs_.SetState(*jobs_.Find(JobId(1)), JobState::kRunning);
    out_.writes.Clear();
  }

  const JobEntry& job() { return *jobs_.Find(JobId(1)); }

  api::JobEvent TaskExit(uint32_t step, uint32_t task, int code, int signal = 0) {
    return {.type = api::JobEventType::kTaskExited,
            .job = JobId(1),
            .generation = Generation(5),
            .exit_code = code,
            .signal = signal,
            .step = step,
            .task = task};
  }

  std::vector<OutgoingCommand> TakeOutbox() {
    std::vector<OutgoingCommand> out = std::move(out_.outbox);
    out_.outbox.clear();
    return out;
  }

  corral::testing::FakeClock clock_;
  Outputs out_;
  JobTable jobs_{out_};
  NodeTable nodes_{out_};
  StepTracker steps_{jobs_, nodes_, clock_, out_};
};

TEST_F(StepTrackerTest, AStepLaunchesOnEachOfItsNodesAndEndsWithItsLastTask) {
  StepSpec spec;
  spec.argv = {"train"};
  auto info = steps_.Create(job(), spec);
  ASSERT_TRUE(info.has_value()) << info.error().message;
  EXPECT_EQ(info->step, 0u);
  EXPECT_EQ(info->master_addr, "10.0.0.1");
  EXPECT_EQ(info->tasks.size(), 4u);
  auto out = TakeOutbox();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].to.node, "node01");
  EXPECT_EQ(out[1].to.node, "node02");
  EXPECT_EQ(std::get<api::StepLaunchRequest>(out[1].request).layout.tasks.size(), 4u);
  EXPECT_EQ(steps_.LiveNodes(JobId(1), Generation(5)), (std::set<std::string>{"node01", "node02"}));
  EXPECT_TRUE(steps_.LiveNodes(JobId(1), Generation(4)).empty()) << "another run's";

  EXPECT_FALSE(steps_.ApplyTaskEvent("node02", TaskExit(0, 0, 0))) << "task 0 runs on node01";
  EXPECT_TRUE(steps_.ApplyTaskEvent("node01", TaskExit(0, 0, 0)));
  EXPECT_FALSE(steps_.ApplyTaskEvent("node01", TaskExit(0, 0, 0))) << "already ended";
  EXPECT_TRUE(steps_.ApplyTaskEvent("node01", TaskExit(0, 1, 2)));
  EXPECT_EQ(steps_.LiveNodes(JobId(1), Generation(5)), (std::set<std::string>{"node02"}));
  EXPECT_TRUE(steps_.ApplyTaskEvent("node02", TaskExit(0, 2, 0, 9)));
  EXPECT_TRUE(steps_.TakeFinished().empty());
  EXPECT_TRUE(steps_.ApplyTaskEvent("node02", TaskExit(0, 3, 0)));
  const StepEntry* s = steps_.Find(JobId(1), 0);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->info.state, JobState::kFailed);
  EXPECT_EQ(s->info.exit_code, 128 + 9);
  EXPECT_EQ(s->info.reason, "task 1 on node01: exited with code 2");
  EXPECT_EQ(steps_.TakeFinished(), (std::vector<std::pair<JobId, uint32_t>>{{JobId(1), 0}}));
}

TEST_F(StepTrackerTest, StoredStepsComeBackAndGoWithTheirJob) {
  StepSpec spec;
  spec.argv = {"true"};
  ASSERT_TRUE(steps_.Create(job(), spec).has_value());
  ASSERT_TRUE(steps_.Create(job(), spec).has_value());
  ASSERT_TRUE(steps_.Cancel(JobId(1), 1).has_value());
  EXPECT_EQ(steps_.Cancel(JobId(1), 7).error().code, ErrorCode::kNotFound);
  steps_.PutDirty();
  ASSERT_EQ(out_.writes.size(), 1u);
  const auto& put = std::get<store::WriteBatch::PutMetaOp>(out_.writes.ops()[0]);
  EXPECT_EQ(put.key, "steps/1");
  EXPECT_EQ(put.value.rfind("next 2\n0 0 {", 0), 0u) << put.value;

  // A new tracker over the same stored meta knows both steps, and step 1's cancel.
  StepTracker recovered(jobs_, nodes_, clock_, out_);
  recovered.Recover({{put.key, put.value}, {"steps/77", "next 1\n"}, {"steps/x", "junk"}});
  EXPECT_EQ(recovered.List(JobId(1)).size(), 2u);
  EXPECT_TRUE(recovered.Find(JobId(1), 1)->cancel_requested);
  EXPECT_EQ(std::get<store::WriteBatch::DeleteMetaOp>(out_.writes.ops().back()).key, "steps/77")
      << "a job that does not run: its record goes";
  StepSpec next;
  next.argv = {"true"};
  EXPECT_EQ(recovered.Create(job(), next)->step, 2u);

  // The job ends: its running steps end CANCELLED and are stopped; the record goes.
  TakeOutbox();
  recovered.EndStepsOfJob(JobId(1), "job 1 ended");
  EXPECT_EQ(recovered.Find(JobId(1), 0)->info.state, JobState::kCancelled);
  EXPECT_EQ(recovered.Find(JobId(1), 0)->info.reason, "job 1 ended");
  EXPECT_EQ(recovered.TakeFinished().size(), 3u);
  EXPECT_EQ(TakeOutbox().size(), 6u) << "every step, on both nodes";
  jobs_.SetState(*jobs_.Find(JobId(1)), JobState::kCompleted);
  out_.writes.Clear();
  recovered.PutDirty();
  ASSERT_EQ(out_.writes.size(), 1u);
  EXPECT_EQ(std::get<store::WriteBatch::DeleteMetaOp>(out_.writes.ops()[0]).key, "steps/1");
}

TEST_F(StepTrackerTest, CreateChecksTheLayoutTheContainerAndTheIoNode) {
  StepSpec big;
  big.argv = {"true"};
  big.nodes = 3;
  EXPECT_EQ(steps_.Create(job(), big).error().message,
            "nodes: 3 requested, but job 1 holds only 2");
  StepSpec named;
  named.argv = {"true"};
  named.container.name = "train";
  EXPECT_EQ(steps_.Create(job(), named).error().code, ErrorCode::kInvalidArgument);
  StepSpec hostile;
  hostile.argv = {"true"};
  hostile.container.image = "-v/:/host";
  auto refused = steps_.Create(job(), hostile);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message.rfind("container.image: ", 0), 0u) << refused.error().message;
  StepSpec io;
  io.argv = {"true"};
  io.io_port = 5000;
  io.io_node = "node09";
  EXPECT_EQ(steps_.Create(job(), io).error().message, "io_node: \"node09\" is not a node of job 1");
  io.io_port = 70000;
  EXPECT_EQ(steps_.Create(job(), io).error().message, "io_port: 70000 is not a port");
  EXPECT_TRUE(out_.outbox.empty());
  EXPECT_TRUE(steps_.List(JobId(1)).empty());
}

}  // namespace
}  // namespace corral::controller::internal
