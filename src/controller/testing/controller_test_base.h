// ControllerTestBase: the fixture every controller test starts from. A `Controller` on a
// `FakeClock` and a `MemoryStore`, driven as `ControllerService` drives it: what it recorded
// is written to the store before its outbox is read (`Flush`), and a restart is a new
// controller recovered from that store (`StartController` again).
//
// Test-only; not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/controller.h"
#include "controller/testing/requests.h"
#include "core/testing/fake_clock.h"
#include "sched/config.h"
#include "sched/policy.h"
#include "store/memory_store.h"

namespace corral::controller::testing {

class ControllerTestBase : public ::testing::Test {
 protected:
  // Heartbeats every second, nodes DOWN after 5 s without one, no least time between passes.
  static ControllerConfig TestConfig();

  // A new controller over `store_` (a restart when one ran already), recovered from it.
  // A null `policy` is first fit.
  void StartController(ControllerConfig config, sched::SchedulerConfig sched_config,
                       std::unique_ptr<sched::Policy> policy = nullptr);
  // With the default scheduling configuration and these partitions.
  void StartController(ControllerConfig config, std::vector<Partition> partitions = {},
                       std::unique_ptr<sched::Policy> policy = nullptr);

  // Writes what the controller recorded to the store, tells it so (`OnCommitted`) and returns
  // its outbox.
  std::vector<OutgoingCommand> Flush();

  // Registers a node (expecting it to be accepted) and returns the reply.
  api::RegisterResponse Register(const api::RegisterRequest& request);
  // Submits `spec` as `who` (expecting it to be accepted) and returns the job's id.
  JobId Submit(JobSpec spec, const api::Identity& who = kAlice);
  // Submits `spec` as alice, runs a pass and flushes; expects the job to run.
  Job SubmitAndStart(JobSpec spec);

  Job Get(JobId id) { return controller_->GetJob(id)->job; }
  api::NodeInfo Node(const std::string& name) { return *controller_->GetNode(name); }

 private:
  void RecoverFromStore();

 protected:
  corral::testing::FakeClock clock_;
  store::MemoryStore store_;
  std::unique_ptr<Controller> controller_;
};

}  // namespace corral::controller::testing
