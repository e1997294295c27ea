// One full scheduling pass of the policy engine (priority + fair share + limits + placement +
// preemption + backfill) on a synthetic but realistic cluster:
//   - <nodes> nodes x 8 H100 (NVSwitch, 2 NUMA nodes), 128 CPUs, 2 TB; leaf switches of 32
//     nodes under spines of 16 leaves; partitions "train" (all nodes) and "inference" (the
//     last quarter, higher tier);
//   - about half of the GPUs busy with 1-8 GPU jobs ending over the next day, 10% of them in
//     the preemptible "scavenger" QOS;
//   - <pending> jobs: 1 GPU 35%, 2 GPUs 20%, 4 GPUs 20%, 8 GPUs 15%, 2-16 node x 8 GPU gang
//     jobs 10%; 64 users in 8 accounts under 3 parents with fair-share usage; QOS normal 80%,
//     high 15% (may preempt scavenger), scavenger 5%; time limits 30 min to 1 day.
// Cases are BM_SchedulePass/<nodes>/<pending> with the default configuration (at most 10,000
// jobs examined per pass) and BM_SchedulePassExamineAll/<nodes>/<pending> (every job examined).
// Fixed seed: every run measures the same input.
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "core/time.h"
#include "sched/config.h"
#include "sched/scheduler.h"
#include "sched/snapshot.h"
#include "sched/testing/cluster_builder.h"

namespace corral::sched {
namespace {

constexpr uint32_t kGpusPerNode = 8;

std::string NodeName(uint32_t i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "gpu%05u", i);
  return buf;
}

SchedulerConfig BenchConfig(uint32_t nodes) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.partitions.clear();
  Partition train{.name = "train", .is_default = true, .max_time = Minutes(3 * 24 * 60)};
  Partition inference{.name = "inference", .max_time = Minutes(24 * 60), .priority_tier = 2};
  for (uint32_t i = nodes - nodes / 4; i < nodes; ++i) inference.nodes.push_back(NodeName(i));
  c.partitions = {train, inference};
  c.priority = PriorityConfig{.weight_age = 1000,
                              .weight_fairshare = 10000,
                              .weight_job_size = 500,
                              .weight_partition = 1000,
                              .weight_qos = 2000};
  const char* parents[] = {"research", "product", "infra"};
  for (const char* p : parents) c.accounts.push_back(AccountConfig{.name = p, .shares = 10});
  for (int a = 0; a < 8; ++a) {
    AccountConfig acct{.name = "team" + std::to_string(a),
                       .parent = parents[a % 3],
                       .shares = static_cast<uint32_t>(1 + a % 4)};
    acct.limits.max_gpus = nodes * kGpusPerNode / 4;
    for (int u = a; u < 64; u += 8) acct.users.push_back("user" + std::to_string(u));
    c.accounts.push_back(acct);
  }
  c.qos = {QosConfig{.name = "normal", .priority = 10},
           QosConfig{.name = "high",
                     .priority = 100,
                     .preempt = {"scavenger"},
                     .preempt_mode = PreemptMode::kOff},
           QosConfig{.name = "scavenger", .priority = 0, .usage_factor = 0}};
  c.qos[1].per_user.max_gpus = 512;
  for (uint32_t leaf = 0; leaf * 32 < nodes; ++leaf) {
    SwitchConfig s{.name = "leaf" + std::to_string(leaf)};
    for (uint32_t i = leaf * 32; i < std::min(nodes, leaf * 32 + 32); ++i)
      s.nodes.push_back(NodeName(i));
    c.switches.push_back(std::move(s));
  }
  uint32_t leaves = static_cast<uint32_t>(c.switches.size());
  for (uint32_t spine = 0; spine * 16 < leaves; ++spine) {
    SwitchConfig s{.name = "spine" + std::to_string(spine)};
    for (uint32_t l = spine * 16; l < std::min(leaves, spine * 16 + 16); ++l)
      s.switches.push_back("leaf" + std::to_string(l));
    c.switches.push_back(std::move(s));
  }
  return c;
}

ClusterSnapshot BenchSnapshot(uint32_t nodes, uint32_t pending, Timestamp now) {
  std::mt19937_64 rng(42);
  auto uniform = [&](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  ClusterSnapshot s;
  s.partitions = BenchConfig(nodes).partitions;
  uint64_t next_running = 1'000'000'000;
  for (uint32_t i = 0; i < nodes; ++i) {
    NodeView n = testing::MakeNode(i + 1, NodeName(i), kGpusPerNode, "h100", 128, 2 * 1024 * 1024);
    // Half the GPUs busy on average, in 1, 2 and 4 GPU jobs (8 on a fully busy node).
    uint32_t busy = static_cast<uint32_t>(uniform(0, kGpusPerNode));
    uint32_t g = 0;
    while (g < busy) {
      uint32_t size = busy - g >= 4 && uniform(0, 1) ? 4 : (busy - g >= 2 && uniform(0, 1) ? 2 : 1);
      if (busy == kGpusPerNode && g == 0 && uniform(0, 2) == 0) size = kGpusPerNode;
      GpuSet gpus;
      for (uint32_t k = 0; k < size; ++k) gpus.insert(g + k);
      g += size;
      Timestamp start = now - Seconds(static_cast<int64_t>(uniform(60, 86400)));
      RunningJobView r = testing::Occupy(&n, next_running++, gpus, start,
                                         now + Seconds(static_cast<int64_t>(uniform(600, 86400))),
                                         8 * size, 64 * 1024 * size);
      uint64_t u = uniform(0, 63);
      r.user = "user" + std::to_string(u);
      r.account = "team" + std::to_string(u % 8);
      r.qos = uniform(0, 9) == 0 ? "scavenger" : "normal";
      r.partition = "train";
      s.running.push_back(std::move(r));
    }
    s.nodes.push_back(std::move(n));
  }
  std::sort(s.running.begin(), s.running.end(),
            [](const RunningJobView& a, const RunningJobView& b) { return a.id < b.id; });
  const Duration limits[] = {Minutes(30), Minutes(60), Minutes(240), Minutes(1440)};
  for (uint32_t k = 0; k < pending; ++k) {
    uint64_t roll = uniform(0, 99);
    uint32_t n_nodes = 1, gpus = 1;
    if (roll < 35) {
      gpus = 1;
    } else if (roll < 55) {
      gpus = 2;
    } else if (roll < 75) {
      gpus = 4;
    } else if (roll < 90) {
      gpus = 8;
    } else {
      n_nodes = static_cast<uint32_t>(2u << uniform(0, 3));  // 2, 4, 8, 16 nodes
      gpus = 8;
    }
    PendingJobView j = testing::MakeJob(k + 1, n_nodes, gpus, limits[uniform(0, 3)], "train");
    if (n_nodes == 1 && uniform(0, 9) == 0) j.partitions = {"inference", "train"};
    uint64_t u = uniform(0, 63);
    j.user = "user" + std::to_string(u);
    j.account = "team" + std::to_string(u % 8);
    uint64_t q = uniform(0, 99);
    j.qos = q < 80 ? "normal" : (q < 95 ? "high" : "scavenger");
    j.resources.cpus_per_task = 8 * gpus;
    j.resources.mem_per_node_mb = 64 * 1024 * gpus;
    // Ids are given in submit order: submitted over the last three days, oldest first.
    j.submit_time = now - Seconds(3 * 86400) +
                    Duration(static_cast<int64_t>(k) * 3 * 86400'000'000LL / pending);
    s.pending.push_back(std::move(j));
  }
  for (int u = 0; u < 64; ++u) {
    s.usage.push_back({.account = "team" + std::to_string(u % 8),
                       .user = "user" + std::to_string(u),
                       .decayed_usage = static_cast<double>(uniform(0, 1'000'000'000))});
  }
  return s;
}

// `cold`: a new Scheduler for every pass, so nothing is kept from an earlier pass (the node
// index, pools and work nodes a Scheduler keeps between passes while its nodes do not change).
// Otherwise one Scheduler repeats the pass on the same snapshot, as a controller's scheduler
// does between passes on a cluster whose nodes changed little.
void RunPass(benchmark::State& state, uint32_t max_jobs_per_pass, bool cold = false) {
  const uint32_t nodes = static_cast<uint32_t>(state.range(0));
  const uint32_t pending = static_cast<uint32_t>(state.range(1));
  const Timestamp now = FromMicros(1'800'000'000'000'000);
  ClusterSnapshot snapshot = BenchSnapshot(nodes, pending, now);
  SchedulerConfig config = BenchConfig(nodes);
  config.max_jobs_per_pass = max_jobs_per_pass;
  Scheduler scheduler(config);
  Plan plan;
  for (auto _ : state) {
    if (cold) {
      Scheduler fresh(config);
      plan = fresh.Decide(snapshot, now);
    } else {
      plan = scheduler.Decide(snapshot, now);
    }
    benchmark::DoNotOptimize(plan);
  }
  state.counters["starts"] = static_cast<double>(plan.starts.size());
  state.counters["reserved"] = static_cast<double>(plan.reservations.size());
  state.counters["preempted"] = static_cast<double>(plan.preemptions.size());
  state.counters["running"] = static_cast<double>(snapshot.running.size());
}

// The default configuration: the first 10,000 pending jobs (by priority) are examined.
void BM_SchedulePass(benchmark::State& state) {
  RunPass(state, SchedulerConfig().max_jobs_per_pass);
}

// As BM_SchedulePass, with nothing kept from an earlier pass.
void BM_SchedulePassCold(benchmark::State& state) {
  RunPass(state, SchedulerConfig().max_jobs_per_pass, /*cold=*/true);
}

// Every pending job examined and explained (max_jobs_per_pass = 0).
void BM_SchedulePassExamineAll(benchmark::State& state) { RunPass(state, 0); }

BENCHMARK(BM_SchedulePass)
    ->Args({1000, 10000})
    ->Args({1000, 50000})
    ->Args({10000, 10000})
    ->Args({10000, 50000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SchedulePassCold)
    ->Args({1000, 10000})
    ->Args({10000, 50000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SchedulePassExamineAll)
    ->Args({1000, 50000})
    ->Args({10000, 50000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace corral::sched

BENCHMARK_MAIN();
