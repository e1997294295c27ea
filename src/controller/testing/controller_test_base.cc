#include "controller/testing/controller_test_base.h"

#include "sched/first_fit_policy.h"

namespace corral::controller::testing {

ControllerConfig ControllerTestBase::TestConfig() {
  ControllerConfig config;
  config.heartbeat_interval = Seconds(1);
  config.node_timeout = Seconds(5);
  config.sched_min_interval = Millis(0);
  config.user_ids = testing::TestUserIds;
  return config;
}

void ControllerTestBase::StartController(ControllerConfig config,
                                         sched::SchedulerConfig sched_config,
                                         std::unique_ptr<sched::Policy> policy) {
  if (policy == nullptr) policy = std::make_unique<sched::FirstFitPolicy>();
  controller_ = std::make_unique<Controller>(std::move(config), std::move(sched_config),
                                             std::move(policy), clock_);
  RecoverFromStore();
}

void ControllerTestBase::StartController(ControllerConfig config, std::vector<Partition> partitions,
                                         std::unique_ptr<sched::Policy> policy) {
  if (policy == nullptr) policy = std::make_unique<sched::FirstFitPolicy>();
  controller_ = std::make_unique<Controller>(std::move(config), std::move(partitions),
                                             std::move(policy), clock_);
  RecoverFromStore();
}

void ControllerTestBase::RecoverFromStore() {
  auto state = store_.Load();
  ASSERT_TRUE(state.has_value()) << state.error().message;
  auto recovered = controller_->Recover(std::move(*state));
  ASSERT_TRUE(recovered.has_value()) << recovered.error().message;
}

std::vector<OutgoingCommand> ControllerTestBase::Flush() {
  auto written = store_.Write(controller_->TakeWrites());
  EXPECT_TRUE(written.has_value()) << written.error().message;
  controller_->OnCommitted();
  return controller_->TakeOutbox();
}

api::RegisterResponse ControllerTestBase::Register(const api::RegisterRequest& request) {
  auto r = controller_->Register(request);
  EXPECT_TRUE(r.has_value()) << request.inventory.name << ": " << r.error().message;
  return r ? *r : api::RegisterResponse{};
}

JobId ControllerTestBase::Submit(JobSpec spec, const api::Identity& who) {
  auto r = controller_->Submit(who, std::move(spec));
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return r ? r->job_id : JobId();
}

Job ControllerTestBase::SubmitAndStart(JobSpec spec) {
  JobId id = Submit(std::move(spec));
  controller_->Tick();
  Flush();
  Job j = Get(id);
  EXPECT_EQ(j.state, JobState::kRunning);
  return j;
}

}  // namespace corral::controller::testing
