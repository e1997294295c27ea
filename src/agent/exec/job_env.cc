#include "agent/exec/job_env.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/credential_env.h"
#include "core/hostlist.h"
#include "core/slurm_env.h"

namespace corral::agent {

std::string CudaVisibleDevices(GpuSet gpus, const std::vector<GpuInfo>& inventory) {
  bool mig = std::any_of(inventory.begin(), inventory.end(),
                         [](const GpuInfo& g) { return g.uuid.rfind("MIG-", 0) == 0; });
  if (!mig) return gpus.ToString();
  std::string out;
  for (uint32_t i : gpus.ToVector()) {
    auto g = std::find_if(inventory.begin(), inventory.end(),
                          [&](const GpuInfo& x) { return x.index == i; });
    if (!out.empty()) out += ',';
    out += g != inventory.end() && !g->uuid.empty() ? g->uuid : std::to_string(i);
  }
  return out;
}

bool UserSetVariable(const std::map<std::string, std::string>& submitted, const std::string& name,
                     const std::string& twin) {
  auto it = submitted.find(name);
  if (it == submitted.end()) return false;
  if (twin.empty()) return true;
  auto t = submitted.find(twin);
  return t == submitted.end() || t->second != it->second;
}

std::vector<std::string> BuildJobEnvironment(const Job& job, const JobEnvContext& ctx) {
  std::map<std::string, std::string> env(job.spec.environment.begin(), job.spec.environment.end());
  const NodeAllocation* here = nullptr;
  uint32_t total_gpus = 0;
  for (const auto& na : job.allocation.nodes) {
    total_gpus += na.gpus.size();
    if (na.node_name == ctx.node_name) here = &na;
  }
  GpuSet gpus = here != nullptr ? here->gpus : GpuSet();
  if (!env.contains("PATH")) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  if (!env.contains("TMPDIR")) env["TMPDIR"] = "/tmp";
  env["ENVIRONMENT"] = "BATCH";
  if (auto g = env.find("SLURM_GET_USER_ENV"); g != env.end() && g->second == "1") {
    // The login environment Slurm loads for --export=NONE (or a list): its passwd part.
    const std::string& user = job.spec.user;
    if (!ctx.login_home.empty()) env.emplace("HOME", ctx.login_home);
    if (!ctx.login_shell.empty()) env.emplace("SHELL", ctx.login_shell);
    if (!user.empty()) {
      env.emplace("USER", user);
      env.emplace("LOGNAME", user);
      env.emplace("MAIL", "/var/mail/" + user);
    }
  }
  env["CUDA_VISIBLE_DEVICES"] = gpus.ToString();
  env["CORRAL_JOB_ID"] = job.id.ToString();
  env["CORRAL_JOB_NAME"] = job.spec.name;
  env["CORRAL_JOB_USER"] = job.spec.user;
  env["CORRAL_JOB_ACCOUNT"] = job.spec.account;
  env["CORRAL_JOB_PARTITION"] = job.partition;
  env["CORRAL_NODENAME"] = ctx.node_name;
  env["CORRAL_NODELIST"] = CompressHostList(job.allocation.NodeNames());
  env["CORRAL_NNODES"] = std::to_string(job.allocation.nodes.size());
  env["CORRAL_GPUS"] = std::to_string(total_gpus);
  env["CORRAL_GPUS_ON_NODE"] = std::to_string(gpus.size());
  env["CORRAL_JOB_GPUS"] = gpus.ToString();
  env["CORRAL_CPUS_ON_NODE"] = std::to_string(here != nullptr ? here->cpus : 0);
  env["CORRAL_NTASKS"] = std::to_string(job.spec.resources.ntasks);
  env["CORRAL_RESTART_COUNT"] = std::to_string(job.restart_count);
  env["CORRAL_SUBMIT_DIR"] =
      job.spec.submit_dir.empty() ? job.spec.working_dir : job.spec.submit_dir;
  if (!ctx.controller_url.empty()) env["CORRAL_CONTROLLER"] = ctx.controller_url;
  if (!ctx.ca_file.empty()) env["CORRAL_CA_FILE"] = ctx.ca_file;
  // The job's credential replaces whatever credential the submitter's environment held.
  EraseCredentialVariables(env);
  if (!ctx.job_credential.empty()) env["CORRAL_JOB_CREDENTIAL"] = ctx.job_credential;
  if (ctx.master_port != 0) {
    // MASTER_ADDR/MASTER_PORT, never over the user's (a submitted value that is not the
    // CORRAL_ twin a job's own environment carried).
    const std::string port = std::to_string(ctx.master_port);
    for (const auto& [name, twin, value] :
         {std::tuple{"MASTER_ADDR", "CORRAL_MASTER_ADDR", ctx.master_addr},
          std::tuple{"MASTER_PORT", "CORRAL_MASTER_PORT", port}}) {
      if (ctx.master_vars && !UserSetVariable(job.spec.environment, name, twin)) env[name] = value;
      env[twin] = value;
    }
  }
  if (!ctx.checkpoint_dir.empty()) env["CORRAL_CHECKPOINT_DIR"] = ctx.checkpoint_dir;
  // Slurm's variables (the GPUs keep the node's own indices, as CUDA_VISIBLE_DEVICES above).
  SlurmNodeContext slurm{.cluster_name = ctx.cluster_name};
  for (size_t i = 0; i < job.allocation.nodes.size(); ++i) {
    if (&job.allocation.nodes[i] == here) slurm.node_index = i;
  }
  for (auto& [k, v] : SlurmBatchEnvironment(job, slurm)) env[k] = std::move(v);
  if (!gpus.empty())
    env["CUDA_VISIBLE_DEVICES"] = CudaVisibleDevices(gpus, ctx.gpus);  // MIG: UUIDs
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace corral::agent
