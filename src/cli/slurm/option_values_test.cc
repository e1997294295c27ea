// The values of sbatch's options (option_values.h): memory, output names, dependencies, node
// and task counts, GPUs, time limits and signals, through ParseSbatch and alone.
#include "cli/slurm/option_values.h"

#include <gtest/gtest.h>

#include "cli/slurm/testing/sbatch_cases.h"
#include "core/slurm_env.h"

namespace corral::slurm {
namespace {

using testing::Case;
using testing::Min;
using testing::RunCases;

// Where a comment names a job, the same script was submitted to a real Slurm 22.05.8 and
// `scontrol show job` showed the values checked.
TEST(SbatchOptionValuesTest, TableOfValues) {
  const std::vector<Case> cases = {
      {"memory with K/M/G/T, either case, optional B; bare number is MB",
       {"#SBATCH --mem=4g"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.mem_per_node_mb, 4096u);
         EXPECT_EQ(r.spec.environment->at("SLURM_MEM_PER_NODE"), "4096");
       }},
      {"--mem=4GB",
       {"#SBATCH --mem=4GB"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.resources.mem_per_node_mb, 4096u); }},
      {"--mem=1T",
       {"#SBATCH --mem=1T"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.resources.mem_per_node_mb, 1048576u); }},
      {"--mem=1500 (megabytes)",
       {"#SBATCH --mem=1500"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.resources.mem_per_node_mb, 1500u); }},
      {"--mem=2048K",
       {"#SBATCH --mem=2048K"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.resources.mem_per_node_mb, 2u); }},
      {"--mem=0 is the whole node (job 45: no SLURM_MEM_PER_NODE)",
       {"#SBATCH --mem=0"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.mem_per_node_mb, kWholeNodeMemory);
         EXPECT_EQ(r.spec.environment->count("SLURM_MEM_PER_NODE"), 0u);
       }},
      {"--mem-per-cpu and --mem-per-gpu",
       {"#SBATCH --mem-per-gpu=80G"},
       {"--cpus-per-gpu=8"},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.mem_per_gpu_mb, 81920u);
         EXPECT_EQ(r.spec.resources.cpus_per_gpu, 8u);
         EXPECT_EQ(r.spec.environment->at("SLURM_MEM_PER_GPU"), "81920");
         EXPECT_EQ(r.spec.environment->at("SLURM_CPUS_PER_GPU"), "8");
       }},
      {"memory from the command line beats the environment",
       {},
       {"--mem-per-cpu=2G"},
       {{"SBATCH_MEM_PER_NODE", "3G"}},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.mem_per_cpu_mb, 2048u);
         EXPECT_EQ(r.spec.resources.mem_per_node_mb, 0u);
       }},
      {"SBATCH_MEM_PER_NODE alone (Slurm: MinMemoryNode=3G)",
       {},
       {},
       {{"SBATCH_MEM_PER_NODE", "3G"}},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.resources.mem_per_node_mb, 3072u); }},
      {"%a outside an array and zero padding are kept for the node",
       {"#SBATCH -o run_%3a_%j.out"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.stdout_path, "run_%3a_%j.out"); }},
      {"default output names",
       {},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.stdout_path, "slurm-%j.out");
         EXPECT_EQ(r.spec.stderr_path, "");
       }},
      {"default output of an array",
       {"#SBATCH --array=0-15:4%2"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.stdout_path, "slurm-%A_%a.out");
         EXPECT_EQ(r.spec.array, "0-15:4%2");
       }},
      {"-o none is /dev/null",
       {"#SBATCH -o none -e NONE"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.stdout_path, "/dev/null");
         EXPECT_EQ(r.spec.stderr_path, "/dev/null");
       }},
      {"a job submitting its successor",
       {},
       {"--dependency=afterok:4242"},
       {},
       [](const SubmitRequest& r) {
         ASSERT_EQ(r.spec.dependencies.size(), 1u);
         EXPECT_EQ(r.spec.dependencies[0].type, DependencyType::kAfterOk);
         EXPECT_EQ(r.spec.dependencies[0].jobs, (std::vector<JobId>{JobId(4242)}));
       }},
      {"dependencies joined with ?",
       {"#SBATCH -d afterok:1?afternotok:2"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_TRUE(r.spec.dependency_any);
         EXPECT_EQ(r.spec.dependencies.size(), 2u);
       }},
      {"singleton",
       {"#SBATCH --dependency=singleton"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.dependencies[0].type, DependencyType::kSingleton);
       }},
      {"-N min-max",
       {"#SBATCH -N1-3"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.nodes, 1u);
         EXPECT_EQ(r.spec.resources.nodes_max, 3u);
       }},
      {"-N2-3 alone: a task per minimum node (Slurm: NumNodes=2-3 NumTasks=2)",
       {},
       {"-N2-3"},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.ntasks, 2u);
         EXPECT_EQ(r.spec.environment->count("SLURM_NTASKS"), 0u);
       }},
      {"-N2 -n1: Slurm warns and uses one node",
       {},
       {"-N2", "-n1"},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.nodes, 1u);
         ASSERT_EQ(r.warnings.size(), 1u);
         EXPECT_EQ(r.warnings[0],
                   "sbatch: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1");
       }},
      {"-N3 --ntasks-per-node=2 gives 6 tasks (Slurm: NumTasks=6)",
       {},
       {"-N3", "--ntasks-per-node=2"},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.ntasks, 6u);
         EXPECT_EQ(r.spec.environment->at("SLURM_NTASKS"), "6");
         EXPECT_EQ(r.spec.environment->at("SLURM_NTASKS_PER_NODE"), "2");
       }},
      {"-N2 without -n: one task per node, SLURM_NTASKS not set",
       {"#SBATCH -N 2"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.ntasks, 2u);
         EXPECT_EQ(r.spec.environment->count("SLURM_NTASKS"), 0u);
       }},
      {"-w counts towards -N",
       {"#SBATCH -w gpu-[01-03]"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.nodes, 3u);
         EXPECT_EQ(r.spec.resources.nodelist,
                   (std::vector<std::string>{"gpu-01", "gpu-02", "gpu-03"}));
       }},
      {"-x excludes",
       {"#SBATCH -x node[7,9]"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.exclude, (std::vector<std::string>{"node7", "node9"}));
       }},
      {"--gres=gpu:N",
       {"#SBATCH --gres=gpu:2"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.gpus_per_node, 2u);
         EXPECT_EQ(r.spec.environment->count("SLURM_GPUS_PER_NODE"), 0u);
       }},
      {"--gres=gpu:type:N",
       {"#SBATCH --gres=gpu:a100:4"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.gpus_per_node, 4u);
         EXPECT_EQ(r.spec.resources.gpu_type, "a100");
       }},
      {"--gres=gpu means one GPU",
       {"#SBATCH --gres=gpu"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.resources.gpus_per_node, 1u); }},
      {"--gres=gpu:h100 means one GPU of that type",
       {"#SBATCH --gres=gpu:h100"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.gpus_per_node, 1u);
         EXPECT_EQ(r.spec.resources.gpu_type, "h100");
       }},
      {"-G type:N",
       {"#SBATCH -G a100:4"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.gpus, 4u);
         EXPECT_EQ(r.spec.resources.gpu_type, "a100");
         EXPECT_EQ(r.spec.environment->at("SLURM_GPUS"), "a100:4");
       }},
      {"--gpus-per-node with a type",
       {"#SBATCH --gpus-per-node=h100:8 -N2"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.gpus_per_node, 8u);
         EXPECT_EQ(r.spec.resources.gpu_type, "h100");
         EXPECT_EQ(r.spec.environment->at("SLURM_GPUS_PER_NODE"), "h100:8");
       }},
      {"--gpus-per-task and -c",
       {"#SBATCH --gpus-per-task=1 -n4 -c8"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.resources.gpus_per_task, 1u);
         EXPECT_EQ(r.spec.resources.cpus_per_task, 8u);
         EXPECT_EQ(r.spec.environment->at("SLURM_CPUS_PER_TASK"), "8");
         EXPECT_EQ(r.spec.environment->at("SLURM_GPUS_PER_TASK"), "1");
         EXPECT_EQ(r.spec.environment->at("SLURM_NTASKS"), "4");
       }},
      {"-t minutes",
       {"#SBATCH -t 90"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.time_limit, Min(90)); }},
      {"-t 0:30 rounds up to a minute",
       {"#SBATCH -t 0:30"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.time_limit, Min(1)); }},
      {"-t 1:2:3 rounds up (Slurm: 01:03:00)",
       {"#SBATCH --time=1:2:3"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.time_limit, Min(63)); }},
      {"-t D-H:M:S",
       {"#SBATCH --time=2-12:30:00"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.time_limit, Min((2 * 24 + 12) * 60 + 30)); }},
      {"-t 5- (days)",
       {"#SBATCH -t 5-"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.time_limit, Min(5 * 24 * 60)); }},
      {"-t 0 and UNLIMITED are no limit",
       {"#SBATCH -t 0"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.time_limit, kUnlimited); }},
      {"-t infinite",
       {"#SBATCH -t infinite"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.time_limit, kUnlimited); }},
      {"--signal=B:USR1@60 --requeue",
       {"#SBATCH --signal=B:USR1@60", "#SBATCH --requeue"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.signal.signal, 10);
         EXPECT_TRUE(r.spec.signal.batch_only);
         EXPECT_EQ(r.spec.signal.before, std::chrono::seconds(60));
         EXPECT_TRUE(r.spec.requeue);
       }},
      {"--signal=SIGTERM@120 and a bare number",
       {"#SBATCH --signal=SIGTERM@120"},
       {"--signal=12"},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.signal.signal, 12);
         EXPECT_FALSE(r.spec.signal.batch_only);
         EXPECT_EQ(r.spec.signal.before, std::chrono::seconds(60));
       }},
      {"--no-requeue after --requeue",
       {"#SBATCH --requeue"},
       {"--no-requeue"},
       {},
       [](const SubmitRequest& r) { EXPECT_FALSE(r.spec.requeue); }},
  };
  RunCases(cases);
}

TEST(TimeLimitTest, ParsesLikeSlurm) {
  EXPECT_EQ(*ParseTimeLimit("30"), Min(30));
  EXPECT_EQ(*ParseTimeLimit("1-0"), Min(24 * 60));
  EXPECT_EQ(*ParseTimeLimit("1-2:3"), Min(26 * 60 + 3));
  EXPECT_EQ(*ParseTimeLimit("UNLIMITED"), kUnlimited);
  EXPECT_FALSE(ParseTimeLimit("soon").has_value());
}

}  // namespace
}  // namespace corral::slurm
