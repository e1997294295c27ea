#include "api/testing/full_messages.h"

#include <limits>
#include <string>
#include <vector>

#include "core/duration.h"

namespace corral::api::fixtures {

// 2026-11-29T16:51:03.000123Z and a few seconds later. Wire durations are whole seconds.
Timestamp At(int64_t plus_seconds) {
  return FromMicros(1'795'971'063'000'123 + plus_seconds * 1'000'000);
}

// One helper per type, each setting every field to a value that differs from its default, so
// that a field the codec forgets makes the round trip fail.

ResourceRequest FullResourceRequest() {
  ResourceRequest r;
  r.nodes = 2;
  r.nodes_max = 4;
  r.ntasks = 16;
  r.ntasks_per_node = 8;
  r.cpus_per_task = 3;
  r.mem_per_node_mb = 512'000;
  r.mem_per_cpu_mb = 4096;
  r.mem_per_gpu_mb = 81'920;
  r.gpus = 16;
  r.gpus_per_node = 8;
  r.gpus_per_task = 1;
  r.cpus_per_gpu = 6;
  r.gpu_type = "h100";
  r.exclusive = true;
  r.constraint = "ib&h100";
  r.nodelist = {"gpu01", "gpu02"};
  r.exclude = {"gpu13"};
  return r;
}

Dependency FullDependency() {
  return Dependency{
      .type = DependencyType::kAfterCorr, .jobs = {JobId(7), JobId(9)}, .delay = Seconds(300)};
}

SignalSpec FullSignalSpec() {
  return SignalSpec{.signal = 10, .before = Seconds(120), .batch_only = true};
}

ContainerSpec FullContainerSpec() {
  return ContainerSpec{.image = "nvcr.io#nvidia/pytorch:24.05-py3",
                       .mounts = {"/data:/data:ro", "/scratch:/scratch"},
                       .workdir = "/workspace",
                       .name = "train",
                       .env = {"WANDB_API_KEY", "HF_HOME"},
                       .mount_home = false};
}

JobSpec FullJobSpec() {
  JobSpec s;
  s.name = "llama-finetune";
  s.user = "alice";
  s.uid = 1001;
  s.gid = 1002;
  s.account = "nlp";
  s.qos = "high";
  s.partitions = {"h100", "a100"};
  s.script = "#!/bin/bash\nsrun python train.py --lr 3e-4 \"$@\"\n\techo \xc3\xa9t\xc3\xa9\n";
  s.resources = FullResourceRequest();
  s.time_limit = Seconds(2 * 86400 + 3600);
  s.working_dir = "/home/alice/llama";
  s.environment = {{"PATH", "/usr/bin:/bin"}, {"NCCL_DEBUG", "INFO"}, {"EMPTY", ""}};
  s.stdout_path = "logs/%x-%j.out";
  s.stderr_path = "logs/%x-%j.err";
  s.append_output = true;
  s.requeue = true;
  s.nice = -5;
  s.hold = true;
  s.begin_time = At(3600);
  s.dependencies = {FullDependency(), Dependency{.type = DependencyType::kSingleton}};
  s.dependency_any = true;
  s.signal = FullSignalSpec();
  s.container = FullContainerSpec();
  s.comment = "sweep 3/10";
  s.reservation = "maint";
  s.mail_type = "END,FAIL";
  s.mail_user = "alice@example.org";
  s.submit_host = "login1";
  s.submit_dir = "/home/alice";
  s.array = "0-99%10";
  s.command = "/home/alice/llama/train.sh";
  s.script_args = {"--lr", "3e-4", ""};
  s.stdin_path = "/home/alice/llama/input.txt";
  return s;
}

NodeAllocation FullNodeAllocation(uint32_t i) {
  return NodeAllocation{
      .node = NodeId(i + 1),
      .node_name = "gpu0" + std::to_string(i + 1),
      .cpus = 48,
      .mem_mb = 256'000,
      .gpus = GpuSet((1ULL << 0) | (1ULL << 2) | (1ULL << 60) | (1ULL << 61) | (1ULL << 63))};
}

Allocation FullAllocation() {
  return Allocation{.generation = Generation(77),
                    .nodes = {FullNodeAllocation(0), FullNodeAllocation(1)},
                    .suspended = true,
                    .suspend_time = At(26),
                    .suspended_for = Seconds(95),
                    .pre_suspend = Seconds(33)};
}

JobUsage FullJobUsage() {
  return JobUsage{.gpu_seconds = 123456.5,
                  .gpu_util_mean = 87.25,
                  .gpu_util_max = 100,
                  .gpu_mem_max_mb = 79'000,
                  .energy_joules = 1.5e9,
                  .cpu_seconds = 0.1,
                  .max_rss_mb = 123'456};
}

Job FullJob() {
  Job j;
  j.id = JobId(4242);
  j.spec = FullJobSpec();
  j.state = JobState::kOutOfMemory;
  j.reason = "OutOfMemory";
  j.submit_time = At(0);
  j.eligible_time = At(10);
  j.start_time = At(20);
  j.end_time = At(30);
  j.time_limit = Seconds(7200);
  j.partition = "h100";
  j.exit_code = 137;
  j.exit_signal = 9;
  j.restart_count = 2;
  j.allocation = FullAllocation();
  j.array_job_id = JobId(4200);
  j.array_task_id = 42;
  j.last_checkpoint = At(25);
  j.usage = FullJobUsage();
  return j;
}

GpuInfo FullGpuInfo(uint32_t i) {
  return GpuInfo{.index = i,
                 .uuid = "GPU-5a1b2c3d-0000-1111-2222-33334444555" + std::to_string(i),
                 .model = "h100",
                 .memory_mb = 81'559,
                 .nvlink_peers = {(i + 1) % 8, (i + 2) % 8},
                 .numa_node = 1};
}

NodeInventory FullNodeInventory() {
  NodeInventory n;
  n.name = "gpu01";
  n.address = "http://10.0.0.11:7001";
  n.cpus = 112;
  n.memory_mb = 2'063'000;
  n.gpus = {FullGpuInfo(1), FullGpuInfo(2)};  // index 0 is a default value
  n.features = {"ib", "h100", "nvswitch"};
  n.numa_nodes = 2;
  n.gpu_backend = "nvml";
  n.driver_version = "550.54.15";
  n.cuda_version = "12.4";
  n.agent_version = "0.1.0";
  return n;
}

Node FullNode() {
  Node n;
  n.id = NodeId(3);
  n.inventory = FullNodeInventory();
  n.registered = true;
  n.responding = true;
  n.drain = true;
  n.powered_down = true;
  n.reason = "xid 79 on GPU 3";
  n.reason_time = At(-60);
  n.last_heartbeat = At(-1);
  n.failed_gpus = GpuSet(0b1000);
  return n;
}

Partition FullPartition() {
  return Partition{.name = "h100",
                   .nodes = {"gpu[01-16]", "gpu99"},
                   .is_default = true,
                   .up = false,
                   .default_time = Seconds(3600),
                   .max_time = Seconds(7 * 86400),
                   .max_gpus_per_job = 64,
                   .max_nodes_per_job = 8,
                   .priority_tier = 3,
                   .def_mem_per_cpu_mb = 8192,
                   .allowed_accounts = {"nlp", "vision"},
                   .deny_accounts = {"guests"},  // issue 16 item 2 (Slurm ignores it with allow)
                   .allowed_groups = {"ml"},
                   .allowed_qos = {"normal", "high"}};
}

SubmitResponse FullSubmitResponse() {
  return SubmitResponse{.job_id = JobId(100), .task_ids = {JobId(100), JobId(101), JobId(102)}};
}

JobInfo FullJobInfo() {
  return JobInfo{.job = FullJob(),
                 .reason_detail = "waiting for 8 h100 GPUs",
                 .estimated_start = At(7200),
                 .priority = 4242,
                 .gpu_waste = "GPUs gpu01:0 under 5% utilisation for 30m"};
}

NodeInfo FullNodeInfo() {
  return NodeInfo{
      .node = FullNode(),
      .state = NodeState::kDraining,
      .alloc_cpus = 96,
      .alloc_mem_mb = 1'000'000,
      .alloc_gpus = GpuSet(0b0111),
      .jobs = {JobId(4242), JobId(4243)},
      .partitions = {"h100", "all"},
      .gpu_problems = {{.gpu = 3, .reason = "XID 79 (GPU has fallen off the bus)", .latched = true},
                       {.gpu = 5, .reason = "temperature 97 C over 90 C"}},
      .node_problem = "health script: ERROR: nhc: /scratch is full"};
}

PartitionInfo FullPartitionInfo() {
  return PartitionInfo{
      .partition = FullPartition(), .total_cpus = 1792, .total_gpus = 128, .alloc_gpus = 40};
}

DrainRequest FullDrainRequest() { return DrainRequest{.reason = "replace GPU 3"}; }

RunningJobRef FullRunningJobRef(uint64_t i) {
  return RunningJobRef{.job = JobId(4242 + i), .generation = Generation(77 + i)};
}

RegisterRequest FullRegisterRequest() {
  return RegisterRequest{.inventory = FullNodeInventory(),
                         .running = {FullRunningJobRef(0), FullRunningJobRef(1)}};
}

RegisterResponse FullRegisterResponse() {
  return RegisterResponse{.node_id = NodeId(3),
                          .heartbeat_interval = Seconds(15),
                          .kill = {FullRunningJobRef(5)},
                          .cluster_name = "selene"};
}

HeartbeatRequest FullHeartbeatRequest() {
  return HeartbeatRequest{
      .node = "gpu01",
      .running = {FullRunningJobRef(0)},
      .gpu_samples = {{.gpu = 3,
                       .job = JobId(4242),
                       .time = Timestamp(Duration(1'764'620'000'123'456)),
                       .utilization = 87.5,
                       .memory_used_mb = 9216,
                       .power_watts = 412.25,
                       .energy_mj = 123'456'789'012}},
      .gpu_problems = {{.gpu = 2, .reason = "row remapping failed", .latched = false},
                       {.gpu = 7, .reason = "XID 48 (double-bit ECC error)", .latched = true}},
      .node_problem = "cannot read the GPUs",
      .auto_resume = true};
}

HeartbeatResponse FullHeartbeatResponse() {
  return HeartbeatResponse{
      .reregister = true, .kill = {FullRunningJobRef(2)}, .clear_gpus = {1, 6}};
}

JobEvent FullJobEvent() {
  return JobEvent{.type = JobEventType::kLaunchFailed,
                  .job = JobId(4242),
                  .generation = Generation(77),
                  .time = At(40),
                  .exit_code = 1,
                  .signal = 15,
                  .timed_out = true,
                  .cancelled = true,
                  .out_of_memory = true,
                  .message = "exec /bin/bash: permission denied",
                  .usage = FullJobUsage(),
                  .step = 3,
                  .task = 5,
                  .master_port = 29542,
                  .gpu_failure = "gpu 3: XID 79 (GPU has fallen off the bus)",
                  .trace = AgentTrace{.launch_received = At(41),
                                      .cgroup_ready = At(42),
                                      .spawned = At(43),
                                      .exec = At(44),
                                      .exited = At(45)}};
}

InjectRequest FullInjectRequest() {
  return InjectRequest{.gpu = 3,
                       .xid = 79,
                       .ecc_uncorrectable = 2,
                       .temperature_c = 91.5,
                       .power_watts = 650,
                       .utilization = 87.5,
                       .memory_used_mb = 40000,
                       .row_remap_failure = true,
                       .vanished = false,
                       .clear = true};
}

JobEventsRequest FullJobEventsRequest() {
  JobEvent started{
      .type = JobEventType::kStarted, .job = JobId(1), .generation = Generation(2), .time = At(1)};
  return JobEventsRequest{.node = "gpu01", .events = {FullJobEvent(), started}};
}

LaunchRequest FullLaunchRequest() {
  return LaunchRequest{
      .job = FullJob(), .controller_url = "http://ctl:6817", .job_credential = "a.b.c"};
}

SignalRequest FullSignalRequest() {
  return SignalRequest{
      .job = JobId(4242), .generation = Generation(77), .signal = 10, .batch_only = true,
      .suspend = true};
}

StepSpec FullStepSpec() {
  return StepSpec{.argv = {"python3", "train.py", "--lr=3e-4"},
                  .working_dir = "/home/alice/run",
                  .environment = {{"OMP_NUM_THREADS", "8"}},
                  .nodes = 2,
                  .nodelist = {"gpu01", "gpu03"},
                  .exclude = {"gpu02"},
                  .relative = 1,
                  .ntasks = 16,
                  .ntasks_per_node = 8,
                  .cpus_per_task = 4,
                  .gpus_per_task = 1,
                  .overcommit = true,
                  .kill_on_bad_exit = true,
                  .stdout_path = "out-%t.log",
                  .stderr_path = "err-%t.log",
                  .io_node = "gpu01",
                  .io_port = 40123,
                  .io_token = "0123abcd",
                  .master_port = 29542,
                  .container = FullContainerSpec(),
                  .slurm = true,
                  .pty = true};
}

StepTask FullStepTask() {
  return StepTask{
      .rank = 9, .node_rank = 1, .local_rank = 1, .node = "gpu02", .gpus = GpuSet(0b110)};
}

StepLayout FullStepLayout() {
  return StepLayout{.nodes = {"gpu01", "gpu02"},
                    .tasks_per_node = {8, 8},
                    .tasks = {FullStepTask()},
                    .cpus_per_task = 4};
}

StepInfo FullStepInfo() {
  return StepInfo{.job = JobId(4242),
                  .step = 3,
                  .generation = Generation(77),
                  .state = JobState::kFailed,
                  .reason = "task 9 on gpu02: exited with code 2",
                  .argv = {"python3", "train.py"},
                  .master_addr = "10.0.0.1",
                  .master_port = 29542,
                  .nodes = {"gpu01", "gpu02"},
                  .tasks_per_node = {8, 8},
                  .cpus_per_task = 4,
                  .kill_on_bad_exit = true,
                  .container = FullContainerSpec(),
                  .start_time = At(50),
                  .end_time = At(60),
                  .exit_code = 2,
                  .tasks = {StepTaskInfo{.task = FullStepTask(),
                                         .ended = true,
                                         .exit_code = 2,
                                         .signal = 9,
                                         .message = "could not start"}}};
}

StepLaunchRequest FullStepLaunchRequest() {
  return StepLaunchRequest{.job = FullJob(),
                           .step = 3,
                           .spec = FullStepSpec(),
                           .layout = FullStepLayout(),
                           .master_addr = "10.0.0.1",
                           .master_port = 29542,
                           .io_url = "http://10.0.0.1:40123",
                           .controller_url = "http://ctl:6817",
                           .job_credential = "a.b.c"};
}

StepSignalRequest FullStepSignalRequest() {
  return StepSignalRequest{
      .job = JobId(4242), .generation = Generation(77), .step = 3, .signal = 10, .suspend = true};
}

CancelRequest FullCancelRequest() {
  return CancelRequest{.job = JobId(4242), .generation = Generation(77)};
}

TimeLimitRequest FullTimeLimitRequest() {
  return TimeLimitRequest{
      .job = JobId(4242), .generation = Generation(77), .time_limit = Seconds(5400)};
}
}  // namespace corral::api::fixtures
