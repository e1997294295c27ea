#include "sim/simulator.h"

#include <random>

#include <gtest/gtest.h>

#include "sched/las_policy.h"
#include "sched/policy_factory.h"
#include "sched/sjf_policy.h"
#include "sim/cluster.h"
#include "sim/metrics.h"
#include "sim/policy_options.h"

namespace corral::sim {
namespace {

const std::string kHeader = "job_id,submit_time_s,duration_s,num_gpus,user,queue,time_limit_s\n";

struct Scenario {
  Workload workload;
  std::vector<sched::NodeView> nodes;
  sched::SchedulerConfig config = sched::DefaultSchedulerConfig();
};

Scenario Make(const std::string& rows, const std::string& cluster, WorkloadOptions wopt = {}) {
  Scenario s;
  auto trace = ParseTraceCsv(kHeader + rows);
  EXPECT_TRUE(trace.has_value()) << trace.error().message;
  s.nodes = BuildNodes(*ParseClusterShortForm(cluster));
  auto w = BuildWorkload(*trace, s.nodes, s.config, wopt);
  EXPECT_TRUE(w.has_value()) << w.error().message;
  s.workload = std::move(*w);
  return s;
}

// The simulator's options for `name`, as `corral sim` sets them; without windows on request.
SimOptions OptionsFor(const std::string& name, const sched::Policy* policy, bool window) {
  SimOptions o = OptionsForPolicy(name, *policy, sched::DefaultSchedulerConfig());
  o.window.enabled &= window;
  return o;
}

SimResult RunPolicy(const Scenario& s, const std::string& name, SimOptions* custom = nullptr,
                    bool window = true) {
  auto policy = sched::MakePolicy(name, s.config);
  EXPECT_TRUE(policy.has_value()) << policy.error().message;
  SimOptions o = custom != nullptr ? *custom : OptionsFor(name, policy->get(), window);
  if (custom == nullptr) o.verify_windows = window;
  auto r = Simulate(s.workload, s.nodes, s.config, **policy, o);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return r.has_value() ? std::move(*r) : SimResult();
}

double Seconds(const SimResult& r, Timestamp t) { return ToSecondsF(t - r.start); }

// Three jobs on one 4-GPU node where EASY backfill provably beats FIFO: A (2 GPUs, 0-100 s)
// runs; B (4 GPUs) must wait for A; C (2 GPUs, 50 s, limit 60 s) fits beside A and ends before
// B's reservation at 100 s.
TEST(SimulatorTest, BackfillBeatsFifoOnThreeJobs) {
  Scenario s = Make(
      "1,0,100,2,u,q,100\n"
      "2,1,100,4,u,q,200\n"
      "3,2,50,2,u,q,60\n",
      "nodes=1,gpus_per_node=4");
  SimResult fifo = RunPolicy(s, "fifo");
  SimResult backfill = RunPolicy(s, "backfill");
  // FIFO: A 0-100, B 100-200, C 200-250.
  EXPECT_EQ(Seconds(fifo, fifo.outcomes[1].first_start), 100);
  EXPECT_EQ(Seconds(fifo, fifo.outcomes[2].first_start), 200);
  EXPECT_EQ(Seconds(fifo, fifo.outcomes[2].end), 250);
  // Backfill: C 2-52, B still 100-200.
  EXPECT_EQ(Seconds(backfill, backfill.outcomes[2].first_start), 2);
  EXPECT_EQ(Seconds(backfill, backfill.outcomes[2].end), 52);
  EXPECT_EQ(Seconds(backfill, backfill.outcomes[1].first_start), 100);
  PolicyMetrics mf = ComputeMetrics("fifo", s.workload, fifo);
  PolicyMetrics mb = ComputeMetrics("backfill", s.workload, backfill);
  EXPECT_DOUBLE_EQ(mf.mean_jct_s, (100.0 + 199 + 248) / 3);
  EXPECT_DOUBLE_EQ(mb.mean_jct_s, (100.0 + 199 + 50) / 3);
  EXPECT_DOUBLE_EQ(mf.makespan_s, 250);
  EXPECT_DOUBLE_EQ(mb.makespan_s, 200);
}

TEST(SimulatorTest, SjfRunsTheShortJobFirst) {
  Scenario s = Make(
      "1,0,100,4,u,q,\n"
      "2,1,500,4,u,q,\n"
      "3,2,10,4,u,q,\n",
      "nodes=1,gpus_per_node=4");
  SimResult r = RunPolicy(s, "sjf");
  EXPECT_EQ(Seconds(r, r.outcomes[2].first_start), 100);  // before job 2, submitted earlier
  EXPECT_EQ(Seconds(r, r.outcomes[1].first_start), 110);
}

TEST(SimulatorTest, TimeLimitEndsAJobAsTimeout) {
  Scenario s = Make("1,0,500,1,u,q,60\n", "nodes=1,gpus_per_node=1");
  SimResult r = RunPolicy(s, "fifo");
  EXPECT_EQ(r.outcomes[0].end_kind, JobEnd::kTimeout);
  EXPECT_EQ(Seconds(r, r.outcomes[0].end), 60);
  EXPECT_EQ(ComputeMetrics("fifo", s.workload, r).timeouts, 1u);
}

TEST(SimulatorTest, RefusedJobsAreNeverQueued) {
  Scenario s = Make("1,0,10,16,u,q,\n2,0,10,1,u,q,\n", "nodes=1,gpus_per_node=8");
  SimResult r = RunPolicy(s, "backfill");
  EXPECT_EQ(r.outcomes[0].end_kind, JobEnd::kRefused);
  EXPECT_EQ(r.outcomes[1].end_kind, JobEnd::kCompleted);
}

// A random workload on a small, busy cluster.
std::string RandomRows(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::string rows;
  int64_t t = 0;
  const int gpus[] = {1, 1, 1, 1, 2, 4, 8, 16};
  for (int i = 0; i < n; ++i) {
    t += static_cast<int64_t>(rng() % 300);
    int64_t d = 1 + static_cast<int64_t>(rng() % 3) * static_cast<int64_t>(rng() % 4000);
    rows += std::to_string(1000 + i) + "," + std::to_string(t) + "," + std::to_string(d) + "," +
            std::to_string(gpus[rng() % 8]) + ",user" + std::to_string(rng() % 3) + ",vc" +
            std::to_string(rng() % 3) + ",\n";
  }
  return rows;
}

// Every job finishes exactly once, and without preemption the allocated GPU-time is the sum of
// the jobs' GPU-time.
TEST(SimulatorTest, ConservesJobsAndGpuTime) {
  Scenario s = Make(RandomRows(7, 300), "nodes=3,gpus_per_node=8");
  double expected = 0;
  for (const SimJob& j : s.workload.jobs) expected += j.gpus * ToSecondsF(j.duration);
  for (const char* name : {"fifo", "backfill", "default", "sjf"}) {
    SimResult r = RunPolicy(s, name);
    double sum = 0;
    for (size_t i = 0; i < r.outcomes.size(); ++i) {
      const JobOutcome& o = r.outcomes[i];
      EXPECT_EQ(o.end_kind, JobEnd::kCompleted) << name << " job " << i;
      EXPECT_EQ(o.end - o.first_start, s.workload.jobs[i].duration) << name;
      EXPECT_GE(o.first_start, o.submit);
      sum += o.gpu_seconds;
    }
    EXPECT_NEAR(sum, expected, 1e-6 * expected) << name;
    EXPECT_NEAR(r.allocated_gpu_seconds, expected, 1e-6 * expected) << name;
    EXPECT_EQ(r.stats.starts, s.workload.jobs.size()) << name;
    ASSERT_FALSE(r.timeline.empty());
    EXPECT_EQ(r.timeline.back().allocated_gpus, 0u);
    EXPECT_EQ(r.timeline.back().pending_jobs, 0u);
  }
}

// LAS preempts; every job still ends exactly once, and GPU-time = useful + lost.
TEST(SimulatorTest, PreemptionKeepsWorkUpToTheLastCheckpoint) {
  Scenario s = Make(RandomRows(11, 300), "nodes=3,gpus_per_node=8");
  double useful = 0;
  for (const SimJob& j : s.workload.jobs) useful += j.gpus * ToSecondsF(j.duration);
  for (Duration checkpoint : {Duration(0), Minutes(10)}) {
    auto las = sched::LasPolicy::Create(s.config, {.thresholds_gpu_seconds = {600, 6000}});
    ASSERT_TRUE(las.has_value());
    SimOptions o = OptionsFor("las", las->get(), true);
    o.verify_windows = true;
    o.checkpoint_interval = checkpoint;
    auto r = Simulate(s.workload, s.nodes, s.config, **las, o);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    double lost = 0, total = 0;
    uint32_t preemptions = 0;
    for (const JobOutcome& out : r->outcomes) {
      EXPECT_EQ(out.end_kind, JobEnd::kCompleted);
      lost += out.lost_gpu_seconds;
      total += out.gpu_seconds;
      preemptions += out.preemptions;
    }
    EXPECT_GT(preemptions, 0u);
    EXPECT_EQ(preemptions, r->stats.preemptions);
    EXPECT_NEAR(total, useful + lost, 1e-6 * total);
    EXPECT_NEAR(r->allocated_gpu_seconds, total, 1e-6 * total);
  }
}

// Windows and skipped passes change nothing: every policy gives the same outcomes with and
// without them (and `verify_windows` compared each windowed pass with the full one).
TEST(SimulatorTest, WindowsAndSkippedPassesAreExact) {
  for (uint64_t seed : {1, 2, 3}) {
    Scenario s =
        Make(RandomRows(seed, 400), "nodes=2,gpus_per_node=8;nodes=2,gpus_per_node=4,model=t4");
    for (const char* name : {"fifo", "backfill", "default", "sjf", "las"}) {
      SimResult fast = RunPolicy(s, name);
      auto policy = sched::MakePolicy(name, s.config);
      SimOptions slow = OptionsFor(name, policy->get(), false);
      slow.skip_idle_passes = false;
      SimResult full = RunPolicy(s, name, &slow);
      ASSERT_EQ(fast.outcomes.size(), full.outcomes.size());
      for (size_t i = 0; i < fast.outcomes.size(); ++i) {
        EXPECT_EQ(fast.outcomes[i].first_start, full.outcomes[i].first_start)
            << name << " seed " << seed << " job " << i;
        EXPECT_EQ(fast.outcomes[i].end, full.outcomes[i].end)
            << name << " seed " << seed << " job " << i;
      }
    }
  }
}

// The same with `max_jobs_per_pass` below the queue length: the engine examines only the first
// jobs of its order, and windows must be taken from those (or the pass run in full).
TEST(SimulatorTest, WindowsRespectMaxJobsPerPass) {
  Scenario s = Make(RandomRows(4, 400), "nodes=2,gpus_per_node=8");
  s.config.max_jobs_per_pass = 15;
  for (const char* name : {"fifo", "backfill", "default", "sjf", "las"}) {
    SimResult fast = RunPolicy(s, name);
    auto policy = sched::MakePolicy(name, s.config);
    SimOptions slow = OptionsFor(name, policy->get(), false);
    slow.skip_idle_passes = false;
    SimResult full = RunPolicy(s, name, &slow);
    ASSERT_EQ(fast.outcomes.size(), full.outcomes.size());
    for (size_t i = 0; i < fast.outcomes.size(); ++i) {
      EXPECT_EQ(fast.outcomes[i].first_start, full.outcomes[i].first_start) << name << " job " << i;
    }
    EXPECT_GT(fast.stats.window_retries + fast.stats.skipped_passes, 0u) << name;
  }
}

TEST(SimulatorTest, SameInputSameResult) {
  Scenario s = Make(RandomRows(5, 300), "nodes=3,gpus_per_node=8");
  for (const char* name : {"default", "las"}) {
    SimResult a = RunPolicy(s, name);
    SimResult b = RunPolicy(s, name);
    EXPECT_EQ(FormatMetricsCsv({ComputeMetrics(name, s.workload, a)}),
              FormatMetricsCsv({ComputeMetrics(name, s.workload, b)}));
    EXPECT_EQ(a.timeline, b.timeline);
  }
}

// A policy that breaks its contract is reported, not applied.
class DoubleBooking final : public sched::Policy {
 public:
  sched::Plan Decide(const sched::ClusterSnapshot& s, Timestamp) override {
    sched::Plan p;
    for (const auto& job : s.pending) {
      p.starts.push_back(
          {.job = job.id,
           .partition = "main",
           .nodes = {{.node = s.nodes[0].id, .node_name = s.nodes[0].name, .gpus = GpuSet(1)}}});
    }
    return p;
  }
};

TEST(SimulatorTest, ReportsAPlanThatCannotBeApplied) {
  Scenario s = Make("1,0,100,1,u,q,\n2,5,100,1,u,q,\n", "nodes=1,gpus_per_node=4");
  DoubleBooking policy;
  auto r = Simulate(s.workload, s.nodes, s.config, policy, SimOptions());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInternal);
  EXPECT_NE(r.error().message.find("plan starts job 2 on GPUs 0 of gpu-001, not all free"),
            std::string::npos)
      << r.error().message;
}

TEST(SimulatorTest, PeriodicPassesAndProgress) {
  Scenario s = Make(RandomRows(3, 50), "nodes=2,gpus_per_node=8");
  auto policy = sched::MakePolicy("backfill", s.config);
  SimOptions o;
  o.periodic_pass = Minutes(5);
  std::vector<double> progress;
  o.progress = [&](double f) { progress.push_back(f); };
  auto r = Simulate(s.workload, s.nodes, s.config, **policy, o);
  ASSERT_TRUE(r.has_value());
  for (const JobOutcome& out : r->outcomes) EXPECT_EQ(out.end_kind, JobEnd::kCompleted);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back(), 1.0);
  EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
}

}  // namespace
}  // namespace corral::sim
