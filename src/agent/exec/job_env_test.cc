#include "agent/exec/job_env.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "agent/exec/task_env.h"
#include "agent/gpu/gpu_backend.h"

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
  j.spec.environment = {{"HOME", "/home/alice"},
                        {"CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"},
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

// --export=NONE (SLURM_GET_USER_ENV=1): the passwd part of the login environment Slurm loads,
// and slurmstepd's ENVIRONMENT and TMPDIR, as the peer showed (tests/slurm_diff, 40).
TEST(JobEnvTest, ExportNoneGetsTheLoginBasicsAndSlurmstepdsVariables) {
  Job j = TwoNodeJob();
  j.spec.environment = {{"SLURM_GET_USER_ENV", "1"}, {"SLURM_EXPORT_ENV", "NONE"}};
  auto env = BuildJobEnvironment(
      j, {.node_name = "node01", .login_home = "/home/alice", .login_shell = "/bin/zsh"});
  EXPECT_EQ(Get(env, "HOME"), "/home/alice");
  EXPECT_EQ(Get(env, "SHELL"), "/bin/zsh");
  EXPECT_EQ(Get(env, "USER"), "alice");
  EXPECT_EQ(Get(env, "LOGNAME"), "alice");
  EXPECT_EQ(Get(env, "MAIL"), "/var/mail/alice");
  EXPECT_EQ(Get(env, "ENVIRONMENT"), "BATCH");
  EXPECT_EQ(Get(env, "TMPDIR"), "/tmp");
  // With everything exported the submitted values stand, and no login part is added.
  j.spec.environment = {{"TMPDIR", "/scratch"}, {"HOME", "/h"}};
  env = BuildJobEnvironment(j, {.node_name = "node01", .login_shell = "/bin/zsh"});
  EXPECT_EQ(Get(env, "TMPDIR"), "/scratch");
  EXPECT_EQ(Get(env, "HOME"), "/h");
  EXPECT_EQ(Get(env, "SHELL"), "<unset>");
}

// MASTER_ADDR/MASTER_PORT never replace the user's own (a submitted value that is not the
// CORRAL_ twin Corral set); CORRAL_MASTER_* always.
TEST(JobEnvTest, MasterAddrNeverOverTheUsers) {
  Job j = TwoNodeJob();
  JobEnvContext ctx{.node_name = "node01", .master_addr = "10.0.0.1", .master_port = 29500};
  auto env = BuildJobEnvironment(j, ctx);
  EXPECT_EQ(Get(env, "MASTER_ADDR"), "10.0.0.1");
  EXPECT_EQ(Get(env, "MASTER_PORT"), "29500");
  j.spec.environment.Mutable()["MASTER_PORT"] = "1234";
  j.spec.environment.Mutable()["MASTER_ADDR"] = "10.0.0.9";
  j.spec.environment.Mutable()["CORRAL_MASTER_ADDR"] = "10.0.0.9";  // Corral's, from an outer job
  env = BuildJobEnvironment(j, ctx);
  EXPECT_EQ(Get(env, "MASTER_PORT"), "1234");
  EXPECT_EQ(Get(env, "CORRAL_MASTER_PORT"), "29500");
  EXPECT_EQ(Get(env, "MASTER_ADDR"), "10.0.0.1");
}

TEST(JobEnvTest, SetsCorralVariablesAndExactGpus) {
  auto env =
      BuildJobEnvironment(TwoNodeJob(), {.node_name = "node01", .controller_url = "http://c:1"});
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
  j.spec.environment.Mutable()["SLURM_JOB_ID"] = "7";  // submitted from inside another job
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

// MIG: CUDA numbers a MIG device by no index of ours, so CUDA_VISIBLE_DEVICES names the
// slices by UUID (and a whole GPU of the same node by its own), for the batch step and for
// step tasks. The inventory comes from the fake NVML library's MIG devices: GPU 0 split into
// two slices (indices 0 and 1), GPU 1 whole (index 2, CUDA's 1).
TEST(JobEnvTest, MigSlicesAreVisibleByUuid) {
  namespace fs = std::filesystem;
  char tmpl[] = "/tmp/corral-mig-env-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::ofstream(dir + "/gpus") << "gpu NVIDIA A100-SXM4-40GB|GPU-aaaa|00000000:1B:00.0|0|40960|-\n"
                                  "gpu NVIDIA A100-SXM4-40GB|GPU-bbbb|00000000:3B:00.0|1|40960|-\n"
                                  "mig 0|NVIDIA A100-SXM4-40GB MIG 3g.20gb|MIG-1111|19968|1|0\n"
                                  "mig 0|NVIDIA A100-SXM4-40GB MIG 3g.20gb|MIG-2222|19968|2|0\n";
  setenv("CORRAL_FAKE_NVML", (dir + "/gpus").c_str(), 1);
  NvmlConfig nvml;
  nvml.library = CORRAL_FAKE_NVML_PATH;
  nvml.sysfs_root = dir + "/sys";
  nvml.dev_root = dir + "/dev";
  auto backend = MakeNvmlGpuBackend(nvml);
  ASSERT_TRUE(backend.has_value()) << backend.error().message;
  auto gpus = (*backend)->Discover();
  ASSERT_TRUE(gpus.has_value());
  ASSERT_EQ(gpus->size(), 3u);
  ASSERT_EQ((*gpus)[1].uuid, "MIG-2222");

  Job j = TwoNodeJob();
  j.allocation.nodes[0].gpus = GpuSet(0b010);  // the second slice
  j.allocation.nodes[1].gpus = GpuSet(0b101);  // a slice and the whole GPU
  JobEnvContext ctx{.node_name = "node01", .gpus = *gpus};
  auto env = BuildJobEnvironment(j, ctx);
  EXPECT_EQ(Get(env, "CUDA_VISIBLE_DEVICES"), "MIG-2222");
  EXPECT_EQ(Get(env, "CORRAL_JOB_GPUS"), "1");  // Corral's (and Slurm's) own indices stay
  EXPECT_EQ(Get(env, "SLURM_JOB_GPUS"), "1");
  ctx.node_name = "node02";
  EXPECT_EQ(Get(BuildJobEnvironment(j, ctx), "CUDA_VISIBLE_DEVICES"), "MIG-1111,GPU-bbbb");

  // Step tasks: the node's GPUs, or each task's own with --gpus-per-task.
  j.allocation.nodes[0].gpus = GpuSet(0b011);
  StepSpec spec;
  spec.argv = {"nvidia-smi"};
  spec.ntasks_per_node = 2;
  spec.gpus_per_task = 1;
  auto layout = PlanStep(j, spec);
  ASSERT_TRUE(layout.has_value()) << layout.error().message;
  std::vector<std::string> seen;
  for (const StepTask& t : layout->tasks) {
    if (t.node != "node02") continue;
    auto task_env = BuildTaskEnvironment(j, 0, spec, *layout, t, ctx);
    seen.push_back(Get(task_env, "CUDA_VISIBLE_DEVICES"));
    EXPECT_EQ(Get(task_env, "CORRAL_STEP_GPUS"), t.gpus.ToString());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"MIG-1111", "GPU-bbbb"}));
  spec.gpus_per_task = 0;
  spec.ntasks_per_node = 1;
  layout = PlanStep(j, spec);
  ASSERT_TRUE(layout.has_value());
  EXPECT_EQ(
      Get(BuildTaskEnvironment(j, 0, spec, *layout, layout->tasks[1], ctx), "CUDA_VISIBLE_DEVICES"),
      "MIG-1111,GPU-bbbb");

  // Without MIG slices on the node: indices, as before.
  std::vector<GpuInfo> whole = {{.index = 0, .uuid = "GPU-aaaa"},
                                {.index = 1, .uuid = "GPU-bbbb"},
                                {.index = 2, .uuid = "GPU-cccc"}};
  EXPECT_EQ(CudaVisibleDevices(GpuSet(0b101), whole), "0,2");
  EXPECT_EQ(CudaVisibleDevices(GpuSet(), *gpus), "");
  unsetenv("CORRAL_FAKE_NVML");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace corral::agent
