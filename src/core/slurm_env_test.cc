#include "core/slurm_env.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

// A running job on node "vm" of cluster "anchor", as in the captures from a real Slurm
// 22.05.8 below (sbatch ... ./dump.sh, which printed `env | grep ^SLURM`).
Job BaseJob(uint64_t id, std::string name) {
  Job job;
  job.id = JobId(id);
  job.spec.name = std::move(name);
  job.spec.user = "root";
  job.spec.submit_dir = "/tmp/slenv";
  job.spec.submit_host = "vm";
  job.partition = "debug";
  job.state = JobState::kRunning;
  return job;
}

NodeAllocation Node(std::string name, uint32_t cpus, GpuSet gpus = GpuSet()) {
  NodeAllocation n;
  n.node_name = std::move(name);
  n.cpus = cpus;
  n.gpus = gpus;
  return n;
}

SlurmNodeContext Anchor() { return SlurmNodeContext{.cluster_name = "anchor"}; }

// Checks every variable of `want`, and that `env` has no other SLURM*/GPU variables.
void ExpectEnv(const EnvMap& env, const EnvMap& want) {
  for (const auto& [k, v] : want) {
    auto it = env.find(k);
    if (it == env.end()) {
      ADD_FAILURE() << "missing " << k << "=" << v;
    } else {
      EXPECT_EQ(it->second, v) << k;
    }
  }
  for (const auto& [k, v] : env) {
    if (want.count(k) == 0) ADD_FAILURE() << "unexpected " << k << "=" << v;
  }
}

EnvMap Common(const std::string& id, const std::string& name) {
  return {{"SLURM_JOB_ID", id},
          {"SLURM_JOBID", id},
          {"SLURM_JOB_NAME", name},
          {"SLURM_JOB_USER", "root"},
          {"SLURM_JOB_UID", "0"},
          {"SLURM_JOB_GID", "0"},
          {"SLURM_SUBMIT_DIR", "/tmp/slenv"},
          {"SLURM_SUBMIT_HOST", "vm"},
          {"SLURM_JOB_PARTITION", "debug"},
          {"SLURM_CLUSTER_NAME", "anchor"},
          {"SLURM_JOB_NODELIST", "vm"},
          {"SLURM_NODELIST", "vm"},
          // Set by slurmd when the job has nodes (the 22.05 peer of tests/slurm_diff prints it).
          {"SLURM_NODE_ALIASES", "(null)"},
          {"SLURM_NNODES", "1"},
          {"SLURM_JOB_NUM_NODES", "1"},
          {"SLURMD_NODENAME", "vm"},
          {"SLURM_TOPOLOGY_ADDR", "vm"},
          {"SLURM_TOPOLOGY_ADDR_PATTERN", "node"},
          {"SLURM_NODEID", "0"},
          {"SLURM_PROCID", "0"},
          {"SLURM_LOCALID", "0"},
          {"SLURM_GTIDS", "0"}};
}

// sbatch -J envA -n4 -c2 --gres=gpu:2 --mem=8G -t 10 (job 40, GPUs 0,1, 8 CPUs).
TEST(SlurmEnvTest, MatchesSlurmForTasksCpusGresAndMemory) {
  Job job = BaseJob(40, "envA");
  job.spec.resources.ntasks = 4;
  job.spec.resources.cpus_per_task = 2;
  job.spec.resources.gpus_per_node = 2;
  job.spec.resources.mem_per_node_mb = 8192;
  job.allocation.nodes = {Node("vm", 8, GpuSet(0b11))};
  EnvMap want = Common("40", "envA");
  want.insert({{"CUDA_VISIBLE_DEVICES", "0,1"},
               {"GPU_DEVICE_ORDINAL", "0,1"},
               {"ROCR_VISIBLE_DEVICES", "0,1"},
               {"ZE_AFFINITY_MASK", "0,1"},
               {"SLURM_CPUS_ON_NODE", "8"},
               {"SLURM_CPUS_PER_TASK", "2"},
               {"SLURM_GPUS_ON_NODE", "2"},
               {"SLURM_JOB_CPUS_PER_NODE", "8"},
               {"SLURM_JOB_GPUS", "0,1"},
               {"SLURM_MEM_PER_NODE", "8192"},
               {"SLURM_NPROCS", "4"},
               {"SLURM_NTASKS", "4"},
               {"SLURM_TASKS_PER_NODE", "4"}});
  ExpectEnv(SlurmBatchEnvironment(job, Anchor()), want);
}

// sbatch -J envB -a 1-7:3%2 --mem-per-cpu=100 (task 4 of array 41 is job 47).
TEST(SlurmEnvTest, MatchesSlurmForArrayTasks) {
  Job job = BaseJob(47, "envB");
  job.spec.array = "1-7:3%2";
  job.array_job_id = JobId(41);
  job.array_task_id = 4;
  job.spec.resources.mem_per_cpu_mb = 100;
  job.allocation.nodes = {Node("vm", 1)};
  EnvMap want = Common("47", "envB");
  want.insert({{"SLURM_ARRAY_JOB_ID", "41"},
               {"SLURM_ARRAY_TASK_COUNT", "3"},
               {"SLURM_ARRAY_TASK_ID", "4"},
               {"SLURM_ARRAY_TASK_MAX", "7"},
               {"SLURM_ARRAY_TASK_MIN", "1"},
               {"SLURM_ARRAY_TASK_STEP", "3"},
               {"SLURM_CPUS_ON_NODE", "1"},
               {"SLURM_JOB_CPUS_PER_NODE", "1"},
               {"SLURM_MEM_PER_CPU", "100"},
               {"SLURM_TASKS_PER_NODE", "1"}});
  ExpectEnv(SlurmBatchEnvironment(job, Anchor()), want);
  // -a 1,3,5-6: step 1; -a 1-7:3,20: step 3, count 4.
  job.spec.array = "1,3,5-6";
  EXPECT_EQ(SlurmBatchEnvironment(job, Anchor())["SLURM_ARRAY_TASK_STEP"], "1");
  EXPECT_EQ(SlurmBatchEnvironment(job, Anchor())["SLURM_ARRAY_TASK_COUNT"], "4");
  job.spec.array = "1-7:3,20";
  EXPECT_EQ(SlurmBatchEnvironment(job, Anchor())["SLURM_ARRAY_TASK_STEP"], "3");
  EXPECT_EQ(SlurmBatchEnvironment(job, Anchor())["SLURM_ARRAY_TASK_MAX"], "20");
}

// sbatch --exclusive --ntasks-per-node=3 (job 43): all 64 CPUs and 8 GPUs of the node.
TEST(SlurmEnvTest, ExclusiveJobSeesTheWholeNode) {
  Job job = BaseJob(43, "envD");
  job.spec.resources.exclusive = true;
  job.spec.resources.ntasks_per_node = 3;
  job.spec.environment = {{"SLURM_NTASKS", "3"}, {"SLURM_NPROCS", "3"}};
  job.allocation.nodes = {Node("vm", 64, GpuSet::FirstN(8))};
  EnvMap env = SlurmBatchEnvironment(job, Anchor());
  EXPECT_EQ(env["SLURM_CPUS_ON_NODE"], "64");
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "64");
  EXPECT_EQ(env["SLURM_GPUS_ON_NODE"], "8");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,1,2,3,4,5,6,7");
  EXPECT_EQ(env["SLURM_NTASKS_PER_NODE"], "3");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "3");
  // Already in the job's environment (set by sbatch): not repeated.
  EXPECT_EQ(env.count("SLURM_NTASKS"), 0u);
}

// sbatch -G 3 --cpus-per-gpu=2 --mem-per-gpu=1G (job 44): no -n, so tasks = CPUs.
TEST(SlurmEnvTest, TasksPerNodeFollowCpusWithoutATaskCount) {
  Job job = BaseJob(44, "envE");
  job.spec.resources.gpus = 3;
  job.spec.resources.cpus_per_gpu = 2;
  job.spec.resources.mem_per_gpu_mb = 1024;
  job.allocation.nodes = {Node("vm", 6, GpuSet(0b111))};
  EnvMap env = SlurmBatchEnvironment(job, Anchor());
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "6");
  EXPECT_EQ(env["SLURM_GPUS"], "3");
  EXPECT_EQ(env["SLURM_CPUS_PER_GPU"], "2");
  EXPECT_EQ(env["SLURM_MEM_PER_GPU"], "1024");
  EXPECT_EQ(env.count("SLURM_NTASKS"), 0u);
}

// sbatch --gpus-per-node=2 --mem=0 (job 45): no SLURM_MEM_PER_NODE for the whole node.
TEST(SlurmEnvTest, WholeNodeMemorySetsNoMemoryVariable) {
  Job job = BaseJob(45, "envF");
  job.spec.resources.mem_per_node_mb = kWholeNodeMemory;
  job.allocation.nodes = {Node("vm", 1, GpuSet(0b11000))};
  EnvMap env = SlurmBatchEnvironment(job, Anchor());
  EXPECT_EQ(env.count("SLURM_MEM_PER_NODE"), 0u);
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "3,4");
  EXPECT_EQ(env["SLURM_JOB_GPUS"], "3,4");
  SlurmNodeContext constrained = Anchor();
  constrained.devices_constrained = true;
  EXPECT_EQ(SlurmBatchEnvironment(job, constrained)["CUDA_VISIBLE_DEVICES"], "0,1");
  EXPECT_EQ(SlurmBatchEnvironment(job, constrained)["SLURM_JOB_GPUS"], "3,4");
}

TEST(SlurmEnvTest, AccountQosReservationAndRestartCount) {
  Job job = BaseJob(70, "wrap");
  job.allocation.nodes = {Node("vm", 1)};
  EnvMap env = SlurmBatchEnvironment(job, Anchor());
  EXPECT_EQ(env.count("SLURM_RESTART_COUNT"), 0u);
  EXPECT_EQ(env.count("SLURM_JOB_ACCOUNT"), 0u);
  job.restart_count = 1;
  job.spec.account = "foo";
  job.spec.qos = "high";
  job.spec.reservation = "maint";
  env = SlurmBatchEnvironment(job, Anchor());
  EXPECT_EQ(env["SLURM_RESTART_COUNT"], "1");  // after `scontrol requeue`, as in Slurm
  EXPECT_EQ(env["SLURM_JOB_ACCOUNT"], "foo");
  EXPECT_EQ(env["SLURM_JOB_QOS"], "high");
  EXPECT_EQ(env["SLURM_JOB_RESERVATION"], "maint");
}

TEST(SlurmEnvTest, MultiNodeListsAndCounts) {
  Job job = BaseJob(9, "ddp");
  job.spec.resources.nodes = 4;
  job.spec.resources.ntasks = 7;
  job.allocation.nodes = {Node("gpu-03", 8), Node("gpu-01", 8), Node("gpu-02", 8),
                          Node("gpu-07", 4)};
  EnvMap env = SlurmBatchEnvironment(job, Anchor());
  // The batch host stays first.
  EXPECT_EQ(env["SLURM_JOB_NODELIST"], "gpu-[03,01-02,07]");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "2(x3),1");
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "8(x3),4");
  EXPECT_EQ(env["SLURM_NNODES"], "4");
  EXPECT_EQ(env["SLURMD_NODENAME"], "gpu-03");
  SlurmNodeContext second = Anchor();
  second.node_index = 1;
  EXPECT_EQ(SlurmBatchEnvironment(job, second)["SLURMD_NODENAME"], "gpu-01");
  EXPECT_EQ(SlurmBatchEnvironment(job, second)["SLURM_NODEID"], "1");
  job.spec.resources.ntasks_per_node = 2;
  EXPECT_EQ(SlurmBatchEnvironment(job, Anchor())["SLURM_TASKS_PER_NODE"], "2(x4)");
}

TEST(SlurmEnvTest, FormatsCounts) {
  EXPECT_EQ(FormatSlurmCounts({2, 2, 2, 1}), "2(x3),1");
  EXPECT_EQ(FormatSlurmCounts({1, 2, 1}), "1,2,1");
  EXPECT_EQ(FormatSlurmCounts({4}), "4");
  EXPECT_EQ(FormatSlurmCounts({}), "");
}

// sbatch -n2 -c2 --gres=gpu:2 -J tj --wrap 'srun -n2 --gpus-per-task=1 ...; srun -n1 ...'
// (job 163): the variables each task printed.
TEST(SlurmEnvTest, MatchesSlurmForSrunTasks) {
  Job job = BaseJob(163, "tj");
  job.spec.resources.ntasks = 2;
  job.spec.resources.cpus_per_task = 2;
  job.spec.resources.gpus_per_node = 2;
  job.allocation.nodes = {Node("vm", 4, GpuSet(0b11))};
  SlurmStepLayout step{.step_id = 0,
                       .nodes = {0},
                       .tasks_per_node = {2},
                       .gpus = {GpuSet(0b11)},
                       .gpus_per_task = 1,
                       .cpus_per_task = 2};
  EnvMap want = Common("163", "tj");
  want.insert({{"CUDA_VISIBLE_DEVICES", "1"},
               {"GPU_DEVICE_ORDINAL", "1"},
               {"ROCR_VISIBLE_DEVICES", "1"},
               {"ZE_AFFINITY_MASK", "1"},
               {"SLURM_CPUS_ON_NODE", "4"},
               {"SLURM_CPUS_PER_TASK", "2"},
               {"SLURM_DISTRIBUTION", "block"},
               {"SLURM_GPUS_ON_NODE", "2"},
               {"SLURM_JOB_CPUS_PER_NODE", "4"},
               {"SLURM_JOB_GPUS", "0,1"},
               {"SLURM_NPROCS", "2"},
               {"SLURM_NTASKS", "2"},
               {"SLURM_STEPID", "0"},
               {"SLURM_STEP_GPUS", "1"},
               {"SLURM_STEP_ID", "0"},
               {"SLURM_STEP_NODELIST", "vm"},
               {"SLURM_STEP_NUM_NODES", "1"},
               {"SLURM_STEP_NUM_TASKS", "2"},
               {"SLURM_STEP_TASKS_PER_NODE", "2"},
               {"SLURM_TASKS_PER_NODE", "2"}});
  want["SLURM_PROCID"] = "1";
  want["SLURM_LOCALID"] = "1";
  want["SLURM_GTIDS"] = "0,1";
  ExpectEnv(SlurmTaskEnvironment(job, step, 1, Anchor()), want);
  EXPECT_EQ(SlurmTaskEnvironment(job, step, 0, Anchor())["CUDA_VISIBLE_DEVICES"], "0");

  // The second srun (-n1, no binding): the step's GPUs, one task.
  SlurmStepLayout one{.step_id = 1, .nodes = {0}, .tasks_per_node = {1}, .gpus = {GpuSet(0b11)}};
  EnvMap env = SlurmTaskEnvironment(job, one, 0, Anchor());
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,1");
  EXPECT_EQ(env["SLURM_STEP_GPUS"], "0,1");
  EXPECT_EQ(env["SLURM_NTASKS"], "1");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "1");
  EXPECT_EQ(env["SLURM_STEP_ID"], "1");
  EXPECT_EQ(env["SLURM_GTIDS"], "0");
}

TEST(SlurmEnvTest, SrunTasksOverSeveralNodes) {
  Job job = BaseJob(5, "ddp");
  job.allocation.nodes = {Node("n1", 8, GpuSet(0b1111)), Node("n2", 8, GpuSet(0b1111))};
  SlurmStepLayout step{.step_id = 0,
                       .nodes = {0, 1},
                       .tasks_per_node = {4, 4},
                       .gpus = {GpuSet(0b1111), GpuSet(0b1111)},
                       .gpus_per_task = 1};
  EnvMap env = SlurmTaskEnvironment(job, step, 6, Anchor());
  EXPECT_EQ(env["SLURM_PROCID"], "6");
  EXPECT_EQ(env["SLURM_LOCALID"], "2");
  EXPECT_EQ(env["SLURM_NODEID"], "1");
  EXPECT_EQ(env["SLURMD_NODENAME"], "n2");
  EXPECT_EQ(env["SLURM_GTIDS"], "4,5,6,7");
  EXPECT_EQ(env["SLURM_STEP_NODELIST"], "n[1-2]");
  EXPECT_EQ(env["SLURM_STEP_TASKS_PER_NODE"], "4(x2)");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "2");
  SlurmNodeContext constrained = Anchor();
  constrained.devices_constrained = true;
  step.gpus = {GpuSet(0b11110000), GpuSet(0b11110000)};
  EXPECT_EQ(SlurmTaskEnvironment(job, step, 6, constrained)["CUDA_VISIBLE_DEVICES"], "2");
  EXPECT_EQ(SlurmTaskEnvironment(job, step, 6, constrained)["SLURM_STEP_GPUS"], "6");
}

}  // namespace
}  // namespace corral
