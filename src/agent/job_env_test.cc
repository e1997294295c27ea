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

}  // namespace
}  // namespace corral::agent
