#include "store/testing/populated_records.h"

#include <string>

namespace corral::store::testing {
namespace {

std::string S(std::string_view base, uint32_t v) { return std::string(base) + std::to_string(v); }

}  // namespace

Job PopulatedJob(uint64_t id, uint32_t v) {
  Job j;
  j.id = JobId(id);
  JobSpec& s = j.spec;
  s.name = S("train \"llama\" ü ", v);
  s.user = S("alice", v % 3);
  s.uid = 1000 + v;
  s.gid = 2000 + v;
  s.account = S("ml-research", v % 2);
  s.qos = S("high", v);
  s.partitions = {S("a100", v), "h100", ""};
  // Bytes a text column could not hold: the script lives in a blob.
  s.script = "#!/bin/bash\n#SBATCH -G 8\nsrun python train.py --seed " + std::to_string(v) +
             std::string("\0\x01\xff", 3) + "\n";
  ResourceRequest& r = s.resources;
  r.nodes = 2 + v;
  r.nodes_max = 4 + v;
  r.ntasks = 16 + v;
  r.ntasks_per_node = 8 + v;
  r.cpus_per_task = 0;  // the default is 1
  r.mem_per_node_mb = 512'000 + v;
  r.mem_per_cpu_mb = 4'000 + v;
  r.mem_per_gpu_mb = 80'000 + v;
  r.gpus = 16 + v;
  r.gpus_per_node = 8 + v;
  r.gpus_per_task = 1 + v;
  r.cpus_per_gpu = 12 + v;
  r.gpu_type = "h100";
  r.exclusive = true;
  r.constraint = "ib&nvlink";
  r.nodelist = {"gpu01", S("gpu0", v + 2)};
  r.exclude = {"gpu99"};
  s.time_limit = Minutes(90 + v);
  s.working_dir = S("/home/alice/run", v);
  s.environment = {{"CUDA_LAUNCH_BLOCKING", "1"},
                   {"EMPTY", ""},
                   {"WITH=EQUALS", "a=b"},
                   {S("VAR", v), "line1\nline2"}};
  s.stdout_path = "/scratch/%x-%j.out";
  s.stderr_path = "/scratch/%x-%j.err";
  s.append_output = true;
  s.requeue = true;
  s.nice = -5 - static_cast<int32_t>(v);
  s.hold = true;
  s.begin_time = FromMicros(1'700'000'123'456'789 + v);
  s.dependencies = {Dependency{DependencyType::kAfterAny, {JobId(7), JobId(8 + v)}, Seconds(30)},
                    Dependency{DependencyType::kSingleton, {}, Duration(0)},
                    Dependency{DependencyType::kAfterCorr, {JobId(3)}, Duration(-1)}};
  s.dependency_any = true;
  s.signal = SignalSpec{10 + static_cast<int>(v), Seconds(120), true};
  s.container = ContainerSpec{S("nvcr.io/nvidia/pytorch:24.01", v),
                              {"/data:/data:ro", "/scratch:/scratch"},
                              "/workspace",
                              "pyxis_run",
                              {"HF_HOME", "WANDB_API_KEY"},
                              false};
  s.comment = S("comment ", v);
  s.reservation = "maint";
  s.mail_type = "END,FAIL";
  s.mail_user = "alice@example.org";
  s.submit_host = "login1";
  s.submit_dir = "/home/alice";
  s.array = "0-99%10";
  s.command = S("/home/alice/train.sh", v);
  s.stdin_path = "/home/alice/input.txt";
  s.script_args = {S("--seed=", v), ""};

  j.state = static_cast<JobState>(1 + v % 8);  // never the default kPending
  j.reason = S("NonZeroExitCode", v);
  j.submit_time = FromMicros(1'700'000'000'000'001 + v);
  j.eligible_time = FromMicros(1'700'000'000'500'002 + v);
  j.start_time = FromMicros(1'700'000'100'000'003 + v);
  j.end_time = FromMicros(1'700'003'700'000'004 + v);
  j.time_limit = v % 2 ? kUnlimited : Minutes(120);
  j.partition = S("a100", v);
  j.exit_code = 3 + static_cast<int32_t>(v);
  j.exit_signal = -9;  // not a real signal: checks that signs survive
  j.restart_count = 2 + v;
  j.allocation.generation = Generation(0xF000'0000'0000'0001ULL + v);
  j.allocation.nodes = {
      NodeAllocation{NodeId(3), "gpu03", 64, 512'000, GpuSet(0xff)},
      NodeAllocation{NodeId(4 + v), S("gpu0", 4 + v), 32, 256'000, GpuSet(1ULL << 63 | 0x0f)}};
  j.allocation.suspended = v % 2 == 0;
  j.allocation.suspend_time = FromMicros(1'700'002'500'000'007 + v);
  j.allocation.suspended_for = Seconds(61 + v);
  j.allocation.pre_suspend = Seconds(29 + v);
  j.array_job_id = JobId(id + 1000 + v);
  j.array_task_id = 17 + v;
  j.last_checkpoint = FromMicros(1'700'002'000'000'005 + v);
  j.usage = JobUsage{.gpu_seconds = 28'800.125 + v,
                     .gpu_util_mean = 87.3,
                     .gpu_util_max = 100.0 - 1e-9,
                     .gpu_mem_max_mb = 0xFFFF'FFFF'FFFF'FF00ULL + v,  // above INT64_MAX
                     .energy_joules = 1.5e7 + 0.25,
                     .cpu_seconds = 0.1 + v,
                     .max_rss_mb = 123'456 + v};
  // Every mark of the trace, on both clocks, one unset (it stays unset).
  j.trace.submitted = FromMicros(1'700'000'000'000'011 + v);
  j.trace.committed = FromMicros(1'700'000'000'001'012 + v);
  j.trace.scheduled = FromMicros(1'700'000'000'001'513 + v);
  j.trace.launch_sent = FromMicros(1'700'000'000'002'014 + v);
  j.trace.agent = AgentTrace{.launch_received = FromMicros(1'700'000'000'002'515 + v),
                             .cgroup_ready = FromMicros(1'700'000'000'003'016 + v),
                             .spawned = FromMicros(1'700'000'000'003'517 + v),
                             .exec = FromMicros(1'700'000'000'004'018 + v),
                             .exited = FromMicros(1'700'000'360'000'019 + v)};
  j.trace.reported = FromMicros(1'700'000'360'001'020 + v);
  return j;
}

Node PopulatedNode(uint32_t id, uint32_t v) {
  Node n;
  n.id = NodeId(id);
  NodeInventory& inv = n.inventory;
  inv.name = S("gpu", id);
  inv.address = "http://10.0.0." + std::to_string(id) + ":7001";
  inv.cpus = 128 + v;
  inv.memory_mb = 2'048'000 + v;
  for (uint32_t g = 0; g < 3; ++g) {
    inv.gpus.push_back(GpuInfo{.index = g,
                               .uuid = S("GPU-0000-", g + v),
                               .model = g == 2 ? "1g.10gb" : "h100",
                               .memory_mb = 81'559 + g,
                               .nvlink_peers = {(g + 1) % 3, (g + 2) % 3},
                               .numa_node = static_cast<int32_t>(g % 2)});
  }
  inv.features = {"ib", S("nvlink", v)};
  inv.numa_nodes = 2 + v;
  inv.gpu_backend = "simulated";
  inv.driver_version = "550.54.15";
  inv.cuda_version = "12.4";
  inv.agent_version = S("0.1.", v);
  n.registered = true;
  n.responding = true;
  n.drain = true;
  n.powered_down = true;
  n.reason = S("XID 79 on GPU ", v);
  n.reason_time = FromMicros(1'700'000'000'000'111 + v);
  n.last_heartbeat = FromMicros(1'700'000'000'000'222 + v);
  n.failed_gpus = GpuSet(0b100 | (uint64_t{1} << (v % 64)));
  return n;
}

Job RealisticJob(uint64_t id) {
  Job j;
  j.id = JobId(id);
  JobSpec& s = j.spec;
  s.name = "train-" + std::to_string(id % 1000);
  s.user = "user" + std::to_string(id % 50);
  s.uid = 10'000 + static_cast<uint32_t>(id % 50);
  s.gid = 10'000;
  s.account = "acct" + std::to_string(id % 10);
  s.partitions = {"gpu"};
  s.script =
      "#!/bin/bash\n#SBATCH --job-name=train\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n";
  s.script.Mutable() += "#SBATCH --time=04:00:00\n#SBATCH --output=/scratch/%u/%x-%j.out\n";
  s.script.Mutable() += "module load cuda/12.4 nccl\nsource ~/venv/bin/activate\n";
  s.script.Mutable() += "srun torchrun --nnodes=2 --nproc-per-node=8 train.py --config cfg/run" +
                        std::to_string(id) + ".yaml\n";
  s.script.Mutable().resize(300, '#');
  s.resources.nodes = 2;
  s.resources.ntasks = 2;
  s.resources.gpus_per_node = 8;
  s.resources.cpus_per_task = 32;
  s.resources.mem_per_node_mb = 512'000;
  s.time_limit = Minutes(240);
  s.working_dir = "/home/user" + std::to_string(id % 50) + "/project";
  s.environment = {{"PATH", "/usr/local/bin:/usr/bin:/bin"},
                   {"HOME", "/home/user" + std::to_string(id % 50)},
                   {"CUDA_HOME", "/usr/local/cuda"},
                   {"NCCL_DEBUG", "WARN"},
                   {"OMP_NUM_THREADS", "8"}};
  s.stdout_path = "/scratch/%u/%x-%j.out";
  s.submit_host = "login1";
  s.submit_dir = s.working_dir;
  j.state = JobState::kCompleted;
  j.reason = "None";
  j.submit_time = FromMicros(1'700'000'000'000'000 + static_cast<int64_t>(id) * 1'000'000);
  j.eligible_time = j.submit_time;
  j.start_time = j.submit_time + Seconds(60);
  j.end_time = j.start_time + Minutes(90);
  j.time_limit = Minutes(240);
  j.partition = "gpu";
  j.allocation.generation = Generation(id);
  j.allocation.nodes = {
      NodeAllocation{NodeId(static_cast<uint32_t>(id % 500)), "gpu" + std::to_string(id % 500), 64,
                     512'000, GpuSet::FirstN(8)},
      NodeAllocation{NodeId(static_cast<uint32_t>(id % 500 + 1)),
                     "gpu" + std::to_string(id % 500 + 1), 64, 512'000, GpuSet::FirstN(8)}};
  j.usage = JobUsage{.gpu_seconds = 86'400,
                     .gpu_util_mean = 81.5,
                     .gpu_util_max = 100,
                     .gpu_mem_max_mb = 79'000,
                     .energy_joules = 2.9e7,
                     .cpu_seconds = 40'000,
                     .max_rss_mb = 200'000};
  return j;
}

}  // namespace corral::store::testing
