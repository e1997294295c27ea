// The controller's /metrics at scale (issue 10): 1,000 nodes x 8 GPUs, 10,000 jobs (8,000
// running on one GPU each, 2,000 pending), 50 users in 10 accounts. Reports
//   collect: Controller::CollectMetrics, the time the state thread is held (goal: < 5 ms)
//   render:  RenderControllerMetrics + RenderTargets off the state thread (goal: < 50 ms)
// as mean, min and max wall time over --iterations (default 20), the collect's CPU time
// (this thread's: what a busy machine's other processes do not inflate), and the
// exposition's size.
//
//   metrics_bench [--nodes N] [--jobs N] [--iterations N]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "controller/controller.h"
#include "controller/metrics/render.h"
#include "core/clock.h"
#include "sched/first_fit_policy.h"
#include "store/memory_store.h"

using namespace corral;

namespace {

struct Figures {
  double sum_ms = 0;
  double min_ms = 1e300;
  double max_ms = 0;
  void Add(Duration d) { AddMs(ToSecondsF(d) * 1000); }
  void AddMs(double ms) {
    sum_ms += ms;
    min_ms = std::min(min_ms, ms);
    max_ms = std::max(max_ms, ms);
  }
};

// This thread's CPU time, in ms.
double ThreadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t nodes = 1000, jobs = 10000, iterations = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    uint32_t v = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
    if (std::strcmp(argv[i], "--nodes") == 0) nodes = v;
    if (std::strcmp(argv[i], "--jobs") == 0) jobs = v;
    if (std::strcmp(argv[i], "--iterations") == 0) iterations = std::max<uint32_t>(1, v);
  }
  const Clock& clock = SystemClock::Get();
  controller::ControllerConfig config;
  config.sched_min_interval = Millis(0);
  controller::Controller c(config,
                           std::vector<Partition>{Partition{.name = "gpu", .is_default = true}},
                           std::make_unique<sched::FirstFitPolicy>(), clock);
  store::MemoryStore store;
  if (!c.Recover(*store.Load())) return 1;
  for (uint32_t n = 0; n < nodes; ++n) {
    api::RegisterRequest r;
    char name[32];
    std::snprintf(name, sizeof name, "gpu%04u", n);
    r.inventory.name = name;
    r.inventory.address = std::string("http://10.0.") + std::to_string(n / 250) + "." +
                          std::to_string(n % 250 + 1) + ":6901";
    r.inventory.cpus = 128;
    r.inventory.memory_mb = 1024 * 1024;
    r.inventory.driver_version = n % 97 == 0 ? "535.104" : "550.54";
    r.inventory.cuda_version = "12.4";
    for (uint32_t g = 0; g < 8; ++g) r.inventory.gpus.push_back({.index = g, .model = "h100"});
    if (!c.Register(r)) return 1;
  }
  for (uint32_t j = 0; j < jobs; ++j) {
    api::Identity who{.user = "user" + std::to_string(j % 50),
                      .uid = 2000 + j % 50,
                      .gid = 2000,
                      .role = api::Role::kUser};
    JobSpec s;
    s.user = who.user;
    s.script = "#!/bin/sh\ntrue\n";
    s.working_dir = "/tmp";
    s.resources.gpus_per_node = 1;
    auto r = c.Submit(who, std::move(s));
    if (!r) {
      std::fprintf(stderr, "submit: %s\n", r.error().message.c_str());
      return 1;
    }
  }
  c.Schedule();
  (void)c.TakeWrites();
  (void)c.TakeOutbox();

  controller::metrics::ServiceFigures service;
  Figures collect, collect_cpu, render;
  size_t bytes = 0;
  for (uint32_t i = 0; i < iterations; ++i) {
    double cpu0 = ThreadCpuMs();
    MonoTime t0 = clock.MonotonicNow();
    controller::metrics::ClusterMetrics m = c.CollectMetrics();
    MonoTime t1 = clock.MonotonicNow();
    collect_cpu.AddMs(ThreadCpuMs() - cpu0);
    std::string text = controller::metrics::RenderControllerMetrics(m, service);
    std::string targets = controller::metrics::RenderTargets(m);
    MonoTime t2 = clock.MonotonicNow();
    collect.Add(t1 - t0);
    render.Add(t2 - t1);
    bytes = text.size() + targets.size();
  }
  std::printf("nodes=%u gpus=%u jobs=%u iterations=%u exposition_bytes=%zu\n", nodes, nodes * 8,
              jobs, iterations, bytes);
  std::printf("collect (state thread held): mean %.2f ms, max %.2f ms (min %.2f ms)\n",
              collect.sum_ms / iterations, collect.max_ms, collect.min_ms);
  std::printf("collect CPU time: mean %.2f ms, max %.2f ms\n", collect_cpu.sum_ms / iterations,
              collect_cpu.max_ms);
  std::printf("render (off the state thread): mean %.2f ms, max %.2f ms (min %.2f ms)\n",
              render.sum_ms / iterations, render.max_ms, render.min_ms);
  return 0;
}
