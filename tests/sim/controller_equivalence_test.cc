// The simulator and the controller make the same decisions on the same snapshots.
//
// One workload is replayed twice: through the real `controller::Controller` (fake clock, memory
// store, jobs submitted and their exits reported at the simulated times) and through
// `sim::Simulate`. Both wrap the same policy in a recorder. Every pass must match: same time,
// same snapshot (the simulator's own fields `known_duration` and `attained_service` aside),
// same plan; and every job must start and end at the same time. The simulator runs without
// windows and skipped passes here, as the controller does; a second run with them must give
// the same job outcomes.
#include <map>
#include <memory>
#include <random>

#include <gtest/gtest.h>

#include "controller/controller.h"
#include "core/testing/fake_clock.h"
#include "sched/config.h"
#include "sched/policy_factory.h"
#include "sim/policy_options.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "sim/workload.h"
#include "store/memory_store.h"

namespace corral::sim {
namespace {

struct PassRecord {
  sched::ClusterSnapshot snapshot;
  Timestamp now;
  sched::Plan plan;
};

class RecordingPolicy final : public sched::Policy {
 public:
  RecordingPolicy(std::unique_ptr<sched::Policy> inner, std::vector<PassRecord>* log)
      : inner_(std::move(inner)), log_(log) {}
  sched::Plan Decide(const sched::ClusterSnapshot& s, Timestamp now) override {
    sched::Plan plan = inner_->Decide(s, now);
    log_->push_back({s, now, plan});
    return plan;
  }

 private:
  std::unique_ptr<sched::Policy> inner_;
  std::vector<PassRecord>* log_;
};

const Timestamp kStart = Timestamp(Seconds(1'704'067'200));

NodeInventory Inventory(int i) {
  NodeInventory inv;
  inv.name = "n" + std::to_string(i);
  inv.address = "http://127.0.0.1:1/" + inv.name;
  inv.cpus = 64;
  inv.memory_mb = 512 * 1024;
  for (uint32_t g = 0; g < 4; ++g) inv.gpus.push_back({.index = g, .model = "h100"});
  return inv;
}

// The node as the controller puts it in a snapshot (idle, registered, responding).
sched::NodeView ViewOf(const NodeInventory& inv, NodeId id) {
  sched::NodeView v;
  v.id = id;
  v.name = inv.name;
  v.cpus = inv.cpus;
  v.mem_mb = inv.memory_mb;
  v.gpus = inv.gpus;
  for (const GpuInfo& g : inv.gpus) v.usable_gpus.insert(g.index);
  v.schedulable = true;
  return v;
}

std::string RandomTrace(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string csv = "job_id,submit_time_s,duration_s,num_gpus,user,queue,time_limit_s\n";
  int64_t t = 0;
  const int gpus[] = {1, 1, 2, 4, 8};
  for (int i = 0; i < 60; ++i) {
    t += static_cast<int64_t>(rng() % 120);
    int64_t d = 10 + static_cast<int64_t>(rng() % 900);
    int64_t limit = d + static_cast<int64_t>(rng() % 600);
    if (i % 17 == 5) limit = d / 2;  // ends by its limit
    csv += std::to_string(i + 1) + "," + std::to_string(t) + "," + std::to_string(d) + "," +
           std::to_string(gpus[rng() % 5]) + ",user" + std::to_string(rng() % 3) + ",acct" +
           std::to_string(rng() % 2) + "," + std::to_string(limit) + "\n";
  }
  return csv;
}

struct Replay {
  std::vector<PassRecord> passes;
  std::map<uint64_t, std::pair<Timestamp, Timestamp>> runs;  // job id -> (start, end)
};

// Drives the controller through `w`: submits at submit times, exits at start + run time (or
// the limit), one scheduling pass per time at which something happened.
Replay RunController(const std::string& policy, const Workload& w,
                     const sched::SchedulerConfig& config, int nodes) {
  Replay out;
  testing::FakeClock clock(kStart);
  store::MemoryStore store;
  controller::ControllerConfig cc;
  cc.sched_min_interval = Duration(0);
  auto inner = sched::MakePolicy(policy, config);
  EXPECT_TRUE(inner.has_value());
  controller::Controller ctl(
      cc, config, std::make_unique<RecordingPolicy>(std::move(*inner), &out.passes), clock);
  EXPECT_TRUE(ctl.Recover(*store.Load()).has_value());
  for (int i = 1; i <= nodes; ++i) {
    api::RegisterRequest req;
    req.inventory = Inventory(i);
    auto r = ctl.Register(req);
    EXPECT_TRUE(r.has_value()) << r.error().message;
  }
  EXPECT_TRUE(store.Write(ctl.TakeWrites()).has_value());
  ctl.TakeOutbox();

  std::map<uint64_t, Timestamp> ends;  // running jobs
  size_t next = 0;
  while (next < w.jobs.size() || !ends.empty()) {
    Timestamp t = Timestamp::max();
    if (next < w.jobs.size()) t = kStart + w.jobs[next].submit;
    for (const auto& [id, end] : ends) t = std::min(t, end);
    clock.Set(t);
    for (auto it = ends.begin(); it != ends.end();) {
      if (it->second != t) {
        ++it;
        continue;
      }
      Job j = ctl.GetJob(JobId(it->first))->job;
      const SimJob& sj = w.jobs[it->first - 1];
      api::JobEvent ev{.type = api::JobEventType::kExited,
                       .job = j.id,
                       .generation = j.allocation.generation,
                       .time = t,
                       .exit_code = 0,
                       .timed_out = sj.view.time_limit < sj.duration};
      EXPECT_TRUE(
          ctl.HandleEvents({.node = j.allocation.nodes[0].node_name, .events = {ev}}).has_value());
      out.runs[it->first].second = t;
      it = ends.erase(it);
    }
    while (next < w.jobs.size() && kStart + w.jobs[next].submit == t) {
      const SimJob& sj = w.jobs[next];
      JobSpec spec;
      spec.script = "#!/bin/sh\ntrue\n";
      spec.working_dir = "/tmp";
      spec.user = sj.user;
      spec.account = sj.view.account;
      spec.partitions = sj.view.partitions;
      spec.resources = sj.view.resources;
      spec.time_limit = sj.view.time_limit;
      spec.requeue = true;  // as the simulator assumes of trace jobs
      auto r = ctl.Submit({.user = sj.user, .uid = 1000, .gid = 1000}, spec);
      EXPECT_TRUE(r.has_value()) << r.error().message;
      if (r) {
        EXPECT_EQ(r->job_id, sj.id)
            << "the controller numbers jobs in submit order, as the simulator";
      }
      ++next;
    }
    ctl.Schedule();
    for (const SimJob& sj : w.jobs) {
      if (out.runs.count(sj.id.value) || kStart + sj.submit > t) continue;
      Job j = ctl.GetJob(sj.id)->job;
      if (j.state != JobState::kRunning) continue;
      out.runs[sj.id.value] = {j.start_time, {}};
      ends[sj.id.value] = j.start_time + std::min(sj.duration, sj.view.time_limit);
    }
    EXPECT_TRUE(store.Write(ctl.TakeWrites()).has_value());
    ctl.TakeOutbox();
  }
  return out;
}

Replay RunSimulator(const std::string& policy, const Workload& w,
                    const sched::SchedulerConfig& config, int nodes, bool fast) {
  Replay out;
  std::vector<sched::NodeView> views;
  for (int i = 1; i <= nodes; ++i)
    views.push_back(ViewOf(Inventory(i), NodeId(static_cast<uint32_t>(i))));
  auto inner = sched::MakePolicy(policy, config);
  EXPECT_TRUE(inner.has_value());
  RecordingPolicy recorder(std::move(*inner), &out.passes);
  SimOptions opt = OptionsForPolicy(policy, recorder, config);
  opt.start = kStart;
  opt.skip_idle_passes = fast;
  opt.window.enabled &= fast;
  opt.verify_windows = fast;
  opt.track_usage = true;  // the controller always keeps it
  auto r = Simulate(w, views, config, recorder, opt);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  if (!r) return out;
  for (const JobOutcome& o : r->outcomes) out.runs[o.id.value] = {o.first_start, o.end};
  return out;
}

// The fields of two pending views that differ, by name (gtest prints the views as bytes).
std::string Differences(const sched::PendingJobView& a, const sched::PendingJobView& b) {
  std::string out;
  auto check = [&](bool same, const char* name) {
    if (!same) out += std::string(out.empty() ? "" : ", ") + name;
  };
  check(a.id == b.id, "id");
  check(a.user == b.user, "user");
  check(a.account == b.account, "account");
  check(a.qos == b.qos, "qos");
  check(a.partitions == b.partitions, "partitions");
  check(a.resources == b.resources, "resources");
  check(a.time_limit == b.time_limit, "time_limit");
  check(a.submit_time == b.submit_time, "submit_time");
  check(a.nice == b.nice, "nice");
  check(a.held == b.held, "held");
  check(a.name == b.name, "name");
  check(a.held_by_admin == b.held_by_admin, "held_by_admin");
  check(a.eligible_time == b.eligible_time, "eligible_time");
  check(a.begin_time == b.begin_time, "begin_time");
  check(a.dependencies == b.dependencies, "dependencies");
  check(a.reservation == b.reservation, "reservation");
  check(a.array_job_id == b.array_job_id && a.array_task_id == b.array_task_id &&
            a.array_max_running == b.array_max_running,
        "array");
  check(a.restart_count == b.restart_count, "restart_count");
  check(a.known_duration == b.known_duration, "known_duration");
  check(a.attained_service == b.attained_service, "attained_service");
  return out;
}

std::string Differences(const sched::RunningJobView& a, const sched::RunningJobView& b) {
  std::string out;
  auto check = [&](bool same, const char* name) {
    if (!same) out += std::string(out.empty() ? "" : ", ") + name;
  };
  check(a.id == b.id, "id");
  check(a.user == b.user && a.account == b.account && a.qos == b.qos, "user/account/qos");
  check(a.partition == b.partition, "partition");
  check(a.start_time == b.start_time, "start_time");
  check(a.expected_end == b.expected_end, "expected_end");
  check(a.allocation == b.allocation, "allocation");
  check(a.name == b.name, "name");
  check(a.last_checkpoint == b.last_checkpoint, "last_checkpoint");
  check(a.requeue_allowed == b.requeue_allowed, "requeue_allowed");
  check(a.preempt_deadline == b.preempt_deadline && a.preempted_for == b.preempted_for,
        "preemption");
  check(a.array_job_id == b.array_job_id, "array_job_id");
  return out;
}

void ExpectSameSnapshot(sched::ClusterSnapshot sim, const sched::ClusterSnapshot& ctl,
                        const std::string& where) {
  for (sched::PendingJobView& p : sim.pending) {
    p.known_duration.reset();  // the simulator's own (SJF oracle, LAS)
    p.attained_service = Duration(0);
  }
  EXPECT_EQ(sim.nodes, ctl.nodes) << where;
  EXPECT_EQ(sim.partitions, ctl.partitions) << where;
  ASSERT_EQ(sim.running.size(), ctl.running.size()) << where;
  for (size_t i = 0; i < sim.running.size(); ++i) {
    EXPECT_TRUE(sim.running[i] == ctl.running[i])
        << where << ", running job " << sim.running[i].id.ToString() << " differs in "
        << Differences(sim.running[i], ctl.running[i]);
  }
  ASSERT_EQ(sim.pending.size(), ctl.pending.size()) << where;
  for (size_t i = 0; i < sim.pending.size(); ++i) {
    EXPECT_TRUE(sim.pending[i] == ctl.pending[i])
        << where << ", pending job " << sim.pending[i].id.ToString() << " differs in "
        << Differences(sim.pending[i], ctl.pending[i]);
  }
  EXPECT_EQ(sim.finished, ctl.finished) << where;
  EXPECT_EQ(sim.usage, ctl.usage) << where;
  EXPECT_EQ(sim.reservations, ctl.reservations) << where;
}

class ControllerEquivalenceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ControllerEquivalenceTest, SamePassesSamePlansSameRuns) {
  const std::string policy = GetParam();
  const int kNodes = 3;
  sched::SchedulerConfig config = sched::DefaultSchedulerConfig();
  for (uint64_t seed : {1, 2}) {
    auto trace = ParseTraceCsv(RandomTrace(seed));
    ASSERT_TRUE(trace.has_value()) << trace.error().message;
    std::vector<sched::NodeView> views;
    for (int i = 1; i <= kNodes; ++i)
      views.push_back(ViewOf(Inventory(i), NodeId(static_cast<uint32_t>(i))));
    auto w = BuildWorkload(*trace, views, config, {});
    ASSERT_TRUE(w.has_value()) << w.error().message;
    ASSERT_EQ(w->refused, 0u);

    Replay ctl = RunController(policy, *w, config, kNodes);
    Replay sim = RunSimulator(policy, *w, config, kNodes, /*fast=*/false);
    ASSERT_EQ(sim.passes.size(), ctl.passes.size()) << policy << " seed " << seed;
    EXPECT_GT(sim.passes.size(), 30u) << "a busy enough workload";
    for (size_t p = 0; p < sim.passes.size(); ++p) {
      const std::string where = policy + " seed " + std::to_string(seed) + " pass " +
                                std::to_string(p) + " at " + FormatTimestamp(sim.passes[p].now);
      ASSERT_EQ(sim.passes[p].now, ctl.passes[p].now) << where;
      ExpectSameSnapshot(sim.passes[p].snapshot, ctl.passes[p].snapshot, where);
      EXPECT_EQ(sim.passes[p].plan, ctl.passes[p].plan) << where;
      if (::testing::Test::HasFailure()) return;  // the first difference is the one to read
    }
    EXPECT_EQ(sim.runs, ctl.runs);
    // Windows and skipped passes (verified against full passes) change no run.
    Replay fast = RunSimulator(policy, *w, config, kNodes, /*fast=*/true);
    EXPECT_EQ(fast.runs, ctl.runs);
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, ControllerEquivalenceTest,
                         ::testing::Values("fifo", "backfill", "default"));

}  // namespace
}  // namespace corral::sim
