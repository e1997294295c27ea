#include "agent/exec/task_env.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace corral::agent {
namespace {

std::string Get(const std::vector<std::string>& env, const std::string& name) {
  for (const auto& kv : env) {
    if (kv.rfind(name + "=", 0) == 0) return kv.substr(name.size() + 1);
  }
  return "<unset>";
}

Job TwoNodeJob() {
  Job j;
  j.id = JobId(42);
  j.spec.name = "train";
  j.spec.user = "alice";
  j.spec.working_dir = "/home/alice/run";
  j.spec.environment = {{"SUBMITTED", "1"}};
  j.spec.resources.nodes = 2;
  j.allocation.generation = Generation(7);
  j.allocation.nodes = {{NodeId(1), "node01", 8, 0, GpuSet(0b1111)},
                        {NodeId(2), "node02", 8, 0, GpuSet(0b11110000)}};
  return j;
}

TEST(TaskEnvTest, RankVariablesAndTheirCorralTwins) {
  Job j = TwoNodeJob();
  StepSpec spec;
  spec.argv = {"python3", "train.py"};
  spec.ntasks_per_node = 2;
  spec.gpus_per_task = 2;
  spec.environment = {
      {"FROM_CALLER", "yes"}, {"CORRAL_NODENAME", "node01"}, {"CUDA_VISIBLE_DEVICES", "0,1,2,3"}};
  StepLayout layout = *PlanStep(j, spec);
  const StepTask& t = layout.tasks[3];  // node02, local rank 1
  auto env = BuildTaskEnvironment(j, 5, spec, layout, t,
                                  {.node_name = "node02",
                                   .controller_url = "http://c:1",
                                   .master_addr = "10.0.0.1",
                                   .master_port = 29542,
                                   .checkpoint_dir = "/home/alice/run/.corral/checkpoints/42"});
  EXPECT_TRUE(std::is_sorted(env.begin(), env.end()));
  EXPECT_EQ(Get(env, "WORLD_SIZE"), "4");
  EXPECT_EQ(Get(env, "RANK"), "3");
  EXPECT_EQ(Get(env, "LOCAL_RANK"), "1");
  EXPECT_EQ(Get(env, "NODE_RANK"), "1");
  EXPECT_EQ(Get(env, "LOCAL_WORLD_SIZE"), "2");
  EXPECT_EQ(Get(env, "MASTER_ADDR"), "10.0.0.1");
  EXPECT_EQ(Get(env, "MASTER_PORT"), "29542");
  EXPECT_EQ(Get(env, "CORRAL_NTASKS"), "4");
  EXPECT_EQ(Get(env, "CORRAL_PROCID"), "3");
  EXPECT_EQ(Get(env, "CORRAL_LOCALID"), "1");
  EXPECT_EQ(Get(env, "CORRAL_NODEID"), "1");
  EXPECT_EQ(Get(env, "CORRAL_LOCAL_NTASKS"), "2");
  EXPECT_EQ(Get(env, "CORRAL_MASTER_ADDR"), "10.0.0.1");
  EXPECT_EQ(Get(env, "CORRAL_MASTER_PORT"), "29542");
  EXPECT_EQ(Get(env, "CORRAL_STEP_ID"), "5");
  EXPECT_EQ(Get(env, "CORRAL_STEP_NUM_TASKS"), "4");
  EXPECT_EQ(Get(env, "CORRAL_STEP_NUM_NODES"), "2");
  EXPECT_EQ(Get(env, "CORRAL_STEP_NODELIST"), "node[01-02]");
  EXPECT_EQ(Get(env, "CORRAL_STEP_TASKS_PER_NODE"), "2(x2)");
  EXPECT_EQ(Get(env, "CORRAL_GPUS_PER_TASK"), "2");
  // The task's own GPUs, not the node's nor the caller's.
  EXPECT_EQ(Get(env, "CUDA_VISIBLE_DEVICES"), "6,7");
  EXPECT_EQ(Get(env, "CORRAL_STEP_GPUS"), "6,7");
  EXPECT_EQ(Get(env, "CORRAL_JOB_GPUS"), "4,5,6,7");
  // The node's own variables win over the caller's exported ones.
  EXPECT_EQ(Get(env, "CORRAL_NODENAME"), "node02");
  EXPECT_EQ(Get(env, "CORRAL_JOB_ID"), "42");
  EXPECT_EQ(Get(env, "CORRAL_CHECKPOINT_DIR"), "/home/alice/run/.corral/checkpoints/42");
  // The caller's environment is the base; the submitted one is not added to it.
  EXPECT_EQ(Get(env, "FROM_CALLER"), "yes");
  EXPECT_EQ(Get(env, "SUBMITTED"), "<unset>");
  // And Slurm's names, for scripts written for srun.
  EXPECT_EQ(Get(env, "SLURM_PROCID"), "3");
  EXPECT_EQ(Get(env, "SLURM_LOCALID"), "1");
  EXPECT_EQ(Get(env, "SLURM_NODEID"), "1");
  EXPECT_EQ(Get(env, "SLURM_STEP_ID"), "5");
  EXPECT_EQ(Get(env, "SLURM_NTASKS"), "4");
  EXPECT_EQ(Get(env, "SLURM_STEP_NODELIST"), "node[01-02]");
  EXPECT_EQ(Get(env, "SLURM_STEP_GPUS"), "6,7");
}

TEST(TaskEnvTest, WithoutACallerEnvironmentTheJobsIsUsedAndAllNodeGpusAreVisible) {
  Job j = TwoNodeJob();
  StepSpec spec;
  spec.argv = {"hostname"};
  StepLayout layout = *PlanStep(j, spec);
  auto env = BuildTaskEnvironment(j, 0, spec, layout, layout.tasks[0], {.node_name = "node01"});
  EXPECT_EQ(Get(env, "SUBMITTED"), "1");
  EXPECT_EQ(Get(env, "CUDA_VISIBLE_DEVICES"), "0,1,2,3");
  EXPECT_EQ(Get(env, "CORRAL_GPUS_PER_TASK"), "<unset>");
  EXPECT_EQ(Get(env, "MASTER_PORT"), "<unset>");
  EXPECT_EQ(Get(env, "WORLD_SIZE"), "2");
  EXPECT_EQ(Get(env, "CORRAL_STEP_TASKS_PER_NODE"), "1(x2)");
}

// srun (StepSpec::slurm): Slurm's variables and the caller's exported ones, no torchrun-style
// ones; a launcher's own MASTER_ADDR/WORLD_SIZE pass through untouched.
TEST(TaskEnvTest, SrunStepsGetNoTorchrunVariablesAndKeepTheUsersOwn) {
  Job j = TwoNodeJob();
  StepSpec spec;
  spec.argv = {"torchrun", "train.py"};
  spec.slurm = true;
  spec.environment = {{"MASTER_ADDR", "node01"}, {"WORLD_SIZE", "16"}, {"PATH", "/bin"}};
  StepLayout layout = *PlanStep(j, spec);
  JobEnvContext ctx{.node_name = "node02", .master_addr = "10.0.0.1", .master_port = 29542};
  auto env = BuildTaskEnvironment(j, 0, spec, layout, layout.tasks[1], ctx);
  EXPECT_EQ(Get(env, "MASTER_ADDR"), "node01");
  EXPECT_EQ(Get(env, "WORLD_SIZE"), "16");
  for (const char* unset : {"MASTER_PORT", "RANK", "LOCAL_RANK", "NODE_RANK", "LOCAL_WORLD_SIZE"})
    EXPECT_EQ(Get(env, unset), "<unset>") << unset;
  EXPECT_EQ(Get(env, "SLURM_PROCID"), "1");
  EXPECT_EQ(Get(env, "SLURM_NODEID"), "1");
  EXPECT_EQ(Get(env, "CORRAL_MASTER_PORT"), "29542");
}

// corral run sets them, but never over a value the caller exported; a value Corral set in the
// job (equal to its CORRAL_ twin) is not the user's and is replaced by the step's.
TEST(TaskEnvTest, CorralRunNeverOverwritesTheUsersTorchrunVariables) {
  Job j = TwoNodeJob();
  StepSpec spec;
  spec.argv = {"python3", "train.py"};
  spec.environment = {{"WORLD_SIZE", "16"},        {"RANK", "5"},
                      {"MASTER_ADDR", "10.9.9.9"}, {"CORRAL_MASTER_ADDR", "10.9.9.9"},
                      {"MASTER_PORT", "1234"},     {"CORRAL_MASTER_PORT", "29000"}};
  StepLayout layout = *PlanStep(j, spec);
  JobEnvContext ctx{.node_name = "node02", .master_addr = "10.0.0.1", .master_port = 29542};
  auto env = BuildTaskEnvironment(j, 0, spec, layout, layout.tasks[1], ctx);
  EXPECT_EQ(Get(env, "WORLD_SIZE"), "16");
  EXPECT_EQ(Get(env, "RANK"), "5");
  EXPECT_EQ(Get(env, "LOCAL_RANK"), "0");          // not exported: set
  EXPECT_EQ(Get(env, "MASTER_ADDR"), "10.0.0.1");  // the job's own, exported again: replaced
  EXPECT_EQ(Get(env, "MASTER_PORT"), "1234");      // the user's
  EXPECT_EQ(Get(env, "CORRAL_NTASKS"), "2");
  EXPECT_EQ(Get(env, "CORRAL_PROCID"), "1");
}

// In a container, srun's tasks get them as pyxis' PyTorch hook sets them.
TEST(TaskEnvTest, SrunInAContainerGetsTheTorchrunVariables) {
  Job j = TwoNodeJob();
  StepSpec spec;
  spec.argv = {"python3", "train.py"};
  spec.slurm = true;
  spec.container.image = "nvcr.io#nvidia/pytorch:24.01-py3";
  spec.environment = {{"PATH", "/bin"}};
  StepLayout layout = *PlanStep(j, spec);
  JobEnvContext ctx{.node_name = "node02", .master_addr = "10.0.0.1", .master_port = 29542};
  auto env = BuildTaskEnvironment(j, 0, spec, layout, layout.tasks[1], ctx);
  EXPECT_EQ(Get(env, "RANK"), "1");
  EXPECT_EQ(Get(env, "MASTER_ADDR"), "10.0.0.1");
}

}  // namespace
}  // namespace corral::agent
