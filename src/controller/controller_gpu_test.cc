// Controller: per-job GPU series from heartbeats (internal/gpu_stats_book.h), kept in the
// store across restarts, and the GPU-waste policy applied from Tick on a FakeClock.
#include <gtest/gtest.h>

#include "controller/controller.h"
#include "controller/testing/controller_test_base.h"
#include "controller/testing/requests.h"

namespace corral::controller {
namespace {

using testing::CommandsOf;
using testing::NodeRegistration;

class ControllerGpuTest : public testing::ControllerTestBase {
 protected:
  ControllerGpuTest() { Start(); }

  void Start() {
    ControllerConfig config = TestConfig();
    config.node_timeout = Seconds(3600);
    config.gpu_waste.defaults = {.enabled = true,
                                 .threshold = 5,
                                 .window = Seconds(60),
                                 .action = GpuWasteAction::kCancel,
                                 .grace = Seconds(30)};
    StartController(config);
    Register(NodeRegistration("node01", 4, "http://node01:6901", running_));
    Flush();
  }

  Job StartJob() {
    Job j = SubmitAndStart(testing::BatchJob(1, 1, "sleep 1000"));
    running_.push_back({j.id, j.allocation.generation});
    return j;
  }

  // node01's heartbeat with one reading of each of `util`'s jobs' GPUs, 10 s later; then Tick.
  void Beat(const std::map<JobId, double>& util) {
    clock_.Advance(Seconds(10));
    api::HeartbeatRequest req{.node = "node01", .running = running_};
    for (const auto& [id, u] : util) {
      Job j = Get(id);
      for (uint32_t g : j.allocation.nodes.at(0).gpus.ToVector()) {
        req.gpu_samples.push_back({.gpu = g,
                                   .job = id,
                                   .time = clock_.Now(),
                                   .utilization = u,
                                   .memory_used_mb = u > 50 ? 60000u : 600u,
                                   .power_watts = 70 + 6 * u,
                                   .energy_mj = ++energy_[id] * 1'000'000});
      }
    }
    ASSERT_TRUE(controller_->Heartbeat(req).has_value());
    controller_->Tick();
  }

  std::vector<api::RunningJobRef> running_;
  std::map<JobId, uint64_t> energy_;
};

TEST_F(ControllerGpuTest, HeartbeatSamplesBecomeAJobsGpuStats) {
  Job busy = StartJob();
  for (int i = 0; i < 6; ++i) Beat({{busy.id, 95}});
  auto stats = controller_->GpuStats(busy.id, std::nullopt);
  ASSERT_TRUE(stats.has_value()) << stats.error().message;
  ASSERT_EQ(stats->gpus.size(), 1u);
  const api::GpuStatsGpu& g = stats->gpus[0];
  EXPECT_EQ(g.node, "node01");
  EXPECT_EQ(g.model, "h100");
  EXPECT_EQ(g.samples, 6u);
  EXPECT_DOUBLE_EQ(g.util_mean, 95);
  EXPECT_EQ(g.mem_max_mb, 60000u);
  EXPECT_DOUBLE_EQ(g.energy_joules, 5000);  // 1 kJ per reading after the first
  EXPECT_TRUE(controller_->GetJob(busy.id)->gpu_waste.empty());
  // A reading of a GPU the job does not hold, or of an unknown job, is dropped.
  api::HeartbeatRequest stray{.node = "node01", .running = running_};
  stray.gpu_samples.push_back({.gpu = 3, .job = busy.id, .time = clock_.Now() + Seconds(1)});
  stray.gpu_samples.push_back({.gpu = 0, .job = JobId(999), .time = clock_.Now() + Seconds(1)});
  ASSERT_TRUE(controller_->Heartbeat(stray).has_value());
  EXPECT_EQ(controller_->GpuStats(busy.id, std::nullopt)->gpus.size(), 1u);
  EXPECT_FALSE(controller_->GpuStats(JobId(999), std::nullopt).has_value());
}

TEST_F(ControllerGpuTest, SeriesAreStoredAndSurviveARestart) {
  Job busy = StartJob();
  for (int i = 0; i < 8; ++i) Beat({{busy.id, 95}});  // 80 s: past the persist interval
  Flush();
  auto stored = store_.GetGpuSeries(busy.id);
  ASSERT_TRUE(stored.has_value() && stored->has_value());
  Start();  // a restart recovered from the store
  for (int i = 0; i < 2; ++i) Beat({{busy.id, 95}});
  auto stats = controller_->GpuStats(busy.id, std::nullopt);
  ASSERT_TRUE(stats.has_value());
  ASSERT_EQ(stats->gpus.size(), 1u);
  EXPECT_GE(stats->gpus[0].samples, 8u);  // what was stored, and the new readings
}

TEST_F(ControllerGpuTest, AnIdleJobIsFlaggedThenCancelledAfterTheGraceABusyOneIsNot) {
  Job busy = StartJob();
  Job idle = StartJob();
  for (int i = 0; i < 5; ++i) Beat({{busy.id, 95}, {idle.id, 0}});
  EXPECT_TRUE(controller_->GetJob(idle.id)->gpu_waste.empty());  // 40 s idle: not yet
  for (int i = 0; i < 3; ++i) Beat({{busy.id, 95}, {idle.id, 0}});
  std::string note = controller_->GetJob(idle.id)->gpu_waste;
  EXPECT_NE(note.find("under 5% utilisation"), std::string::npos) << note;
  EXPECT_TRUE(controller_->GetJob(busy.id)->gpu_waste.empty());
  EXPECT_EQ(controller_->GpuWasteFlags().size(), 1u);
  // /metrics: the flagged job with its policy's action, and the flag counted.
  metrics::ClusterMetrics m = controller_->CollectMetrics();
  ASSERT_EQ(m.waste.size(), 1u);
  EXPECT_EQ(m.waste[0].job, idle.id);
  EXPECT_EQ(m.waste[0].user, idle.spec.user);
  EXPECT_EQ(m.waste[0].action, GpuWasteAction::kCancel);
  EXPECT_EQ(m.waste_actions, (metrics::WasteActions{1, 0, 0}));
  EXPECT_TRUE(CommandsOf<api::CancelRequest>(Flush()).empty());  // in its grace
  // The flag is stored with the series.
  auto stored = store_.GetGpuSeries(idle.id);
  ASSERT_TRUE(stored.has_value() && stored->has_value());
  EXPECT_NE(DecodeGpuSeries(**stored)->waste_flagged, Timestamp{});
  std::vector<OutgoingCommand> sent;
  for (int i = 0; i < 4; ++i) {
    Beat({{busy.id, 95}, {idle.id, 0}});
    for (auto& c : Flush()) sent.push_back(c);
  }
  auto cancels = CommandsOf<api::CancelRequest>(sent);
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(testing::As<api::CancelRequest>(cancels[0]).job, idle.id);
  ASSERT_TRUE(
      controller_->HandleEvents(testing::JobExit("node01", Get(idle.id), 0, 15)).has_value());
  controller_->Tick();
  EXPECT_EQ(Get(idle.id).state, JobState::kCancelled);
  EXPECT_EQ(Get(busy.id).state, JobState::kRunning);
  EXPECT_FALSE(controller_->GetJob(idle.id)->gpu_waste.empty());  // still shown after its end
  m = controller_->CollectMetrics();
  EXPECT_TRUE(m.waste.empty());  // no longer running
  EXPECT_EQ(m.waste_actions, (metrics::WasteActions{1, 1, 0}));
}

TEST_F(ControllerGpuTest, ANotifyOnlyPolicyFlagsAndLeavesTheJobRunning) {
  ControllerConfig config = TestConfig();
  config.node_timeout = Seconds(3600);
  config.gpu_waste.defaults.window = Seconds(60);
  StartController(config);
  Register(NodeRegistration("node01", 4, "http://node01:6901"));
  Flush();
  Job idle = StartJob();
  std::vector<OutgoingCommand> sent;
  for (int i = 0; i < 20; ++i) {
    Beat({{idle.id, 0}});
    for (auto& c : Flush()) sent.push_back(c);
  }
  EXPECT_FALSE(controller_->GetJob(idle.id)->gpu_waste.empty());
  EXPECT_TRUE(CommandsOf<api::CancelRequest>(sent).empty());
  EXPECT_EQ(Get(idle.id).state, JobState::kRunning);
}

}  // namespace
}  // namespace corral::controller
