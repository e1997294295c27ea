// Encode and decode cost of the API's JSON codecs: one typical job, and `squeue`'s answer for
// 1,000 jobs. Run: build/bench/codec_bench
#include <cstdint>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "api/json_codec.h"
#include "api/messages.h"
#include "core/job.h"
#include "core/time.h"

namespace corral::api {
namespace {

// A running single-node 8-GPU training job, as `GET /api/v1/jobs/{id}` returns it: a short batch
// script and the environment `sbatch --export=ALL` captures (about 40 variables).
JobInfo TypicalJob(uint64_t id) {
  JobInfo info;
  Job& j = info.job;
  j.id = JobId(id);
  JobSpec& s = j.spec;
  s.name = "train-llama-7b";
  s.user = "alice";
  s.uid = 1001;
  s.gid = 1001;
  s.account = "nlp";
  s.qos = "normal";
  s.partitions = {"h100"};
  s.script =
      "#!/bin/bash\n"
      "#SBATCH --job-name=train-llama-7b\n"
      "#SBATCH --gpus-per-node=8\n"
      "#SBATCH --time=2-00:00:00\n"
      "#SBATCH --signal=B:USR1@300\n"
      "module load cuda/12.4\n"
      "source ~/venvs/llm/bin/activate\n"
      "export NCCL_DEBUG=WARN\n"
      "srun torchrun --nproc-per-node=8 train.py --config configs/7b.yaml \\\n"
      "  --resume-from-checkpoint latest --output-dir /scratch/alice/runs/$SLURM_JOB_ID\n";
  s.resources.gpus_per_node = 8;
  s.resources.cpus_per_task = 96;
  s.resources.mem_per_node_mb = 1'000'000;
  s.resources.gpu_type = "h100";
  s.time_limit = Seconds(2 * 86400);
  s.working_dir = "/home/alice/llm";
  for (int i = 0; i < 40; ++i) {
    s.environment.Mutable()["VAR_" + std::to_string(i)] =
        "/some/typical/value/of/an/environment/variable";
  }
  s.stdout_path = "logs/%x-%j.out";
  s.signal = SignalSpec{.signal = 10, .before = Seconds(300), .batch_only = true};
  s.submit_host = "login1";
  s.submit_dir = "/home/alice/llm";
  j.state = JobState::kRunning;
  j.reason = "None";
  j.submit_time = FromMicros(1'795'971'063'000'123);
  j.eligible_time = j.submit_time;
  j.start_time = j.submit_time + Seconds(42);
  j.time_limit = Seconds(2 * 86400);
  j.partition = "h100";
  j.allocation.generation = Generation(id * 3);
  j.allocation.nodes.push_back(NodeAllocation{.node = NodeId(7),
                                              .node_name = "gpu07",
                                              .cpus = 96,
                                              .mem_mb = 1'000'000,
                                              .gpus = GpuSet::FirstN(8)});
  j.usage.gpu_seconds = 123456.5;
  j.usage.gpu_util_mean = 87.3;
  j.usage.gpu_util_max = 100;
  info.estimated_start = j.start_time;
  return info;
}

std::vector<JobInfo> TypicalJobs(size_t n) {
  std::vector<JobInfo> jobs;
  jobs.reserve(n);
  for (size_t i = 0; i < n; ++i) jobs.push_back(TypicalJob(1000 + i));
  return jobs;
}

void BM_EncodeJob(benchmark::State& state) {
  JobInfo job = TypicalJob(4242);
  size_t bytes = 0;
  for (auto _ : state) {
    std::string json = EncodeJobInfo(job);
    bytes += json.size();
    benchmark::DoNotOptimize(json);
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_EncodeJob);

void BM_DecodeJob(benchmark::State& state) {
  std::string json = EncodeJobInfo(TypicalJob(4242));
  for (auto _ : state) {
    auto job = DecodeJobInfo(json);
    if (!job.has_value()) state.SkipWithError(job.error().message.c_str());
    benchmark::DoNotOptimize(job);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
}
BENCHMARK(BM_DecodeJob);

void BM_EncodeDecodeJob(benchmark::State& state) {
  JobInfo job = TypicalJob(4242);
  for (auto _ : state) {
    auto back = DecodeJobInfo(EncodeJobInfo(job));
    if (!back.has_value()) state.SkipWithError(back.error().message.c_str());
    benchmark::DoNotOptimize(back);
  }
}
BENCHMARK(BM_EncodeDecodeJob);

// The strict request path: a submission (`POST /api/v1/jobs`).
void BM_DecodeJobSpecStrict(benchmark::State& state) {
  std::string json = EncodeJobSpec(TypicalJob(4242).job.spec);
  for (auto _ : state) {
    auto spec = DecodeJobSpec(json);
    if (!spec.has_value()) state.SkipWithError(spec.error().message.c_str());
    benchmark::DoNotOptimize(spec);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
}
BENCHMARK(BM_DecodeJobSpecStrict);

void BM_EncodeJobList(benchmark::State& state) {
  std::vector<JobInfo> jobs = TypicalJobs(static_cast<size_t>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    std::string json = EncodeJobInfoList(jobs);
    bytes += json.size();
    benchmark::DoNotOptimize(json);
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_EncodeJobList)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_DecodeJobList(benchmark::State& state) {
  std::string json = EncodeJobInfoList(TypicalJobs(static_cast<size_t>(state.range(0))));
  for (auto _ : state) {
    auto jobs = DecodeJobInfoList(json);
    if (!jobs.has_value()) state.SkipWithError(jobs.error().message.c_str());
    benchmark::DoNotOptimize(jobs);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_DecodeJobList)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_EncodeDecodeJobList(benchmark::State& state) {
  std::vector<JobInfo> jobs = TypicalJobs(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    auto back = DecodeJobInfoList(EncodeJobInfoList(jobs));
    if (!back.has_value()) state.SkipWithError(back.error().message.c_str());
    benchmark::DoNotOptimize(back);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_EncodeDecodeJobList)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace corral::api

BENCHMARK_MAIN();
