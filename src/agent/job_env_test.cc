#include "agent/job_env.h"

#include <gtest/gtest.h>

#include <algorithm>

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
  j.spec.environment = {{"HOME", "/home/alice"}, {"CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"},
                        {"CORRAL_JOB_ID", "spoofed"}};
  j.spec.resources.nodes = 2;
  j.partition = "gpu";
  j.restart_count = 2;
  GpuSet a, b;
  a.insert(2);
  a.insert(5);
  b.insert(0);
  b.insert(1);
  j.allocation.generation = Generation(7);
  j.allocation.nodes = {{NodeId(1), "node01", 4, 0, a}, {NodeId(2), "node02", 4, 0, b}};
  return j;
}

TEST(JobEnvTest, SetsCorralVariablesAndExactGpus) {
  auto env = BuildJobEnvironment(TwoNodeJob(), {.node_name = "node01", .controller_url = "http://c:1"});
  EXPECT_EQ(Get(env, "CUDA_VISIBLE_DEVICES"), "2,5");
  EXPECT_EQ(Get(env, "CORRAL_JOB_ID"), "42");
  EXPECT_EQ(Get(env, "CORRAL_NODENAME"), "node01");
  EXPECT_EQ(Get(env, "CORRAL_NODELIST"), "node[01-02]");
  EXPECT_EQ(Get(env, "CORRAL_NNODES"), "2");
  EXPECT_EQ(Get(env, "CORRAL_GPUS"), "4");
  EXPECT_EQ(Get(env, "CORRAL_GPUS_ON_NODE"), "2");
  EXPECT_EQ(Get(env, "CORRAL_JOB_GPUS"), "2,5");
  EXPECT_EQ(Get(env, "CORRAL_RESTART_COUNT"), "2");
  EXPECT_EQ(Get(env, "CORRAL_CONTROLLER"), "http://c:1");
  EXPECT_EQ(Get(env, "HOME"), "/home/alice");  // submitted variables pass through
  EXPECT_EQ(Get(env, "PATH"), "/usr/local/bin:/usr/bin:/bin");
  EXPECT_TRUE(std::is_sorted(env.begin(), env.end()));
}

TEST(JobEnvTest, NoGpusMeansNoneVisible) {
  Job j = TwoNodeJob();
  j.allocation.nodes[1].gpus = GpuSet();
  auto env = BuildJobEnvironment(j, {.node_name = "node02", .controller_url = ""});
  EXPECT_EQ(Get(env, "CUDA_VISIBLE_DEVICES"), "");
  EXPECT_EQ(Get(env, "CORRAL_CONTROLLER"), "<unset>");
}

TEST(JobEnvTest, SetsSlurmVariablesOfTheBatchStep) {
  Job j = TwoNodeJob();
  j.spec.environment["SLURM_JOB_ID"] = "7";  // submitted from inside another job
  j.spec.submit_dir = "/home/alice/llama";
  j.spec.submit_host = "login1";
  j.spec.account = "nlp";
  auto env = BuildJobEnvironment(j, {.node_name = "node02", .cluster_name = "selene"});
  EXPECT_EQ(Get(env, "SLURM_JOB_ID"), "42");
  EXPECT_EQ(Get(env, "SLURM_JOBID"), "42");
  EXPECT_EQ(Get(env, "SLURM_JOB_NAME"), "train");
  EXPECT_EQ(Get(env, "SLURM_JOB_NODELIST"), "node[01-02]");
  EXPECT_EQ(Get(env, "SLURM_NODELIST"), "node[01-02]");
  EXPECT_EQ(Get(env, "SLURM_NNODES"), "2");
  EXPECT_EQ(Get(env, "SLURM_JOB_NUM_NODES"), "2");
  EXPECT_EQ(Get(env, "SLURM_NODEID"), "1");  // node02 is the second node
  EXPECT_EQ(Get(env, "SLURMD_NODENAME"), "node02");
  EXPECT_EQ(Get(env, "SLURM_CPUS_ON_NODE"), "4");
  EXPECT_EQ(Get(env, "SLURM_GPUS_ON_NODE"), "2");
  EXPECT_EQ(Get(env, "SLURM_JOB_GPUS"), "0,1");
  EXPECT_EQ(Get(env, "CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(Get(env, "SLURM_JOB_PARTITION"), "gpu");
  EXPECT_EQ(Get(env, "SLURM_JOB_ACCOUNT"), "nlp");
  EXPECT_EQ(Get(env, "SLURM_JOB_USER"), "alice");
  EXPECT_EQ(Get(env, "SLURM_SUBMIT_DIR"), "/home/alice/llama");
  EXPECT_EQ(Get(env, "SLURM_SUBMIT_HOST"), "login1");
  EXPECT_EQ(Get(env, "SLURM_RESTART_COUNT"), "2");
  EXPECT_EQ(Get(env, "SLURM_CLUSTER_NAME"), "selene");
  EXPECT_EQ(Get(env, "SLURM_ARRAY_TASK_ID"), "<unset>");
  EXPECT_EQ(Get(env, "CORRAL_JOB_ID"), "42");

  j.array_job_id = JobId(40);
  j.array_task_id = 2;
  j.spec.array = "0-6:2%2";
  env = BuildJobEnvironment(j, {.node_name = "node01"});
  EXPECT_EQ(Get(env, "SLURM_ARRAY_JOB_ID"), "40");
  EXPECT_EQ(Get(env, "SLURM_ARRAY_TASK_ID"), "2");
  EXPECT_EQ(Get(env, "SLURM_ARRAY_TASK_COUNT"), "4");
  EXPECT_EQ(Get(env, "SLURM_ARRAY_TASK_MAX"), "6");
  EXPECT_EQ(Get(env, "SLURM_ARRAY_TASK_STEP"), "2");
  EXPECT_EQ(Get(env, "SLURM_CLUSTER_NAME"), "<unset>");
  EXPECT_EQ(Get(env, "SLURM_NODEID"), "0");
}

}  // namespace
}  // namespace corral::agent
