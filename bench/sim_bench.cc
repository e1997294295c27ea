// The simulator's speed: whole-trace replays through each policy.
//
//   BM_Replay/<trace>/<cluster>/<policy>   the shared traces (../shared/traces, or
//                                          $CORRAL_TRACES_DIR), skipped when absent:
//                                          philly_pollux on 352 x 8 (2,816 GPUs, uncontended)
//                                          and 48 x 8 (contended); alibaba_openb_2023 on its
//                                          own 1,213 nodes (6,212 GPUs) and on 4 x 8 (its mean
//                                          demand is 17 GPUs, its peak 70)
//   BM_ReplaySynthetic/<policy>            20,000 random jobs on 16 x 8 GPUs (always runs)
//
// One iteration is one whole replay; counters: passes (calls to Decide), pending jobs handed
// to Decide per pass, jobs per second of replay. `corral sim --profile` prints the same.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include <benchmark/benchmark.h>

#include "sched/policy_factory.h"
#include "sim/cluster.h"
#include "sim/policy_options.h"
#include "sim/simulator.h"
#include "sim/trace.h"
#include "sim/workload.h"

namespace corral::sim {
namespace {

const char* const kPolicies[] = {"fifo", "backfill", "default", "las", "sjf"};

std::string TracesDir() {
  const char* env = std::getenv("CORRAL_TRACES_DIR");
  return env != nullptr ? env : CORRAL_SOURCE_DIR "/../shared/traces";
}

void Replay(benchmark::State& state, const Trace& trace, const std::string& cluster,
            const std::string& name) {
  auto spec = ParseClusterShortForm(cluster);
  if (!spec) {
    state.SkipWithError(spec.error().message.c_str());
    return;
  }
  std::vector<sched::NodeView> nodes = BuildNodes(*spec);
  sched::SchedulerConfig config = sched::DefaultSchedulerConfig();
  config.priority.weight_fairshare = 10000;  // as `corral sim` without --config
  auto workload = BuildWorkload(trace, nodes, config, {});
  if (!workload) {
    state.SkipWithError(workload.error().message.c_str());
    return;
  }
  SimStats stats;
  for (auto _ : state) {
    auto policy = sched::MakePolicy(name, config);
    SimOptions o = OptionsForPolicy(name, **policy, config);
    auto r = Simulate(*workload, nodes, config, **policy, o);
    if (!r) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    stats = r->stats;
  }
  state.counters["passes"] = static_cast<double>(stats.passes);
  state.counters["pending_per_pass"] =
      stats.passes > 0 ? static_cast<double>(stats.pending_seen) / static_cast<double>(stats.passes)
                       : 0;
  state.counters["jobs_per_s"] = benchmark::Counter(static_cast<double>(trace.jobs.size()),
                                                    benchmark::Counter::kIsIterationInvariantRate);
}

const Trace* LoadTrace(const std::string& file) {
  std::ifstream in(TracesDir() + "/" + file);
  if (!in) return nullptr;
  std::stringstream ss;
  ss << in.rdbuf();
  auto t = ParseTraceCsv(ss.str(), file);
  return t ? new Trace(std::move(*t)) : nullptr;  // lives for the whole run
}

const Trace& SyntheticTrace() {
  static const Trace* trace = [] {
    std::mt19937_64 rng(42);
    std::string csv = "job_id,submit_time_s,duration_s,num_gpus,user,queue\n";
    int64_t t = 0;
    const int gpus[] = {1, 1, 1, 1, 1, 2, 4, 8, 16};
    for (int i = 0; i < 20000; ++i) {
      t += static_cast<int64_t>(rng() % 120);
      int64_t d = 1 + static_cast<int64_t>(std::exp(static_cast<double>(rng() % 1000) / 100.0));
      csv += std::to_string(i) + "," + std::to_string(t) + "," + std::to_string(d) + "," +
             std::to_string(gpus[rng() % 9]) + ",u" + std::to_string(rng() % 20) + ",q" +
             std::to_string(rng() % 4) + "\n";
    }
    return new Trace(*ParseTraceCsv(csv));
  }();
  return *trace;
}

void Register() {
  for (const char* policy : kPolicies) {
    benchmark::RegisterBenchmark((std::string("BM_ReplaySynthetic/") + policy).c_str(),
                                 [policy](benchmark::State& s) {
                                   Replay(s, SyntheticTrace(), "nodes=16,gpus_per_node=8", policy);
                                 })
        ->Unit(benchmark::kSecond)
        ->Iterations(1);
  }
  struct Case {
    const char* trace;
    const char* file;
    const char* label;
    const char* cluster;
  };
  const Case cases[] = {
      {"philly", "philly_pollux.csv", "352x8", "nodes=352,gpus_per_node=8,model=v100"},
      {"philly", "philly_pollux.csv", "48x8", "nodes=48,gpus_per_node=8,model=v100"},
      // Alibaba's own 1,213 nodes (bench/sim_bench_alibaba.toml), and 4 x 8 (contended).
      {"alibaba", "alibaba_openb_2023.csv", "1213nodes",
       "nodes=549,gpus_per_node=8,model=g2,name=g2;nodes=387,gpus_per_node=2,model=t4,name=t4x2;"
       "nodes=131,gpus_per_node=2,model=p100,name=p100x2;nodes=39,gpus_per_node=8,model=g3,name=g3;"
       "nodes=28,gpus_per_node=4,model=v100m16,name=v100m16x4;nodes=21,gpus_per_node=8,model="
       "v100m32,name=v100m32x8;nodes=19,gpus_per_node=1,model=v100m16,name=v100m16x1;nodes=17,gpus_"
       "per_node=4,model=t4,name=t4x4;nodes=9,gpus_per_node=4,model=v100m32,name=v100m32x4;nodes=8,"
       "gpus_per_node=8,model=v100m16,name=v100m16x8;nodes=3,gpus_per_node=1,model=p100,name="
       "p100x1;nodes=2,gpus_per_node=1,model=a10,name=a10"},
      {"alibaba", "alibaba_openb_2023.csv", "4x8", "nodes=4,gpus_per_node=8,model=g2"},
  };
  for (const Case& c : cases) {
    const Trace* trace = LoadTrace(c.file);
    for (const char* policy : kPolicies) {
      std::string name = std::string("BM_Replay/") + c.trace + "/" + c.label + "/" + policy;
      std::string cluster = c.cluster;
      benchmark::RegisterBenchmark(name.c_str(),
                                   [trace, cluster, policy](benchmark::State& s) {
                                     if (trace == nullptr) {
                                       s.SkipWithError("trace not found (set CORRAL_TRACES_DIR)");
                                       return;
                                     }
                                     Replay(s, *trace, cluster, policy);
                                   })
          ->Unit(benchmark::kSecond)
          ->Iterations(1);
    }
  }
}

}  // namespace
}  // namespace corral::sim

int main(int argc, char** argv) {
  corral::sim::Register();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
