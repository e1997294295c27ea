#include "agent/exec/task_env.h"

#include <algorithm>
#include <map>

#include "core/hostlist.h"
#include "core/slurm_env.h"

namespace corral::agent {
namespace {

// {2,2,2,1} -> "2(x3),1", as SLURM_TASKS_PER_NODE.
std::string CompressCounts(const std::vector<uint32_t>& counts) {
  std::string out;
  for (size_t i = 0; i < counts.size();) {
    size_t j = i;
    while (j < counts.size() && counts[j] == counts[i]) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(counts[i]);
    if (j - i > 1) out += "(x" + std::to_string(j - i) + ")";
    i = j;
  }
  return out;
}

}  // namespace

std::vector<std::string> BuildTaskEnvironment(const Job& job, uint32_t step, const StepSpec& spec,
                                              const StepLayout& layout, const StepTask& task,
                                              const JobEnvContext& ctx) {
  Job base = job;
  if (!spec.environment.empty()) base.spec.environment = spec.environment;
  std::map<std::string, std::string> env;
  JobEnvContext job_ctx = ctx;
  job_ctx.master_vars = false;  // MASTER_ADDR/MASTER_PORT are the step's, set below
  for (const std::string& kv : BuildJobEnvironment(base, job_ctx)) {
    size_t eq = kv.find('=');
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  const auto n = static_cast<uint32_t>(layout.tasks.size());
  uint32_t local =
      task.node_rank < layout.tasks_per_node.size() ? layout.tasks_per_node[task.node_rank] : 1;
  // The torchrun-style variables: `corral run`'s (and a container's, as pyxis' PyTorch hook
  // sets them), never srun's (Slurm sets none); never over the user's own value.
  const std::map<std::string, std::string>& exported = base.spec.environment;
  const bool torchrun = !spec.slurm || !spec.container.image.empty();
  auto set2 = [&](const char* a, const char* b, const std::string& v, const char* twin) {
    env[b] = v;
    if (torchrun && !UserSetVariable(exported, a, twin)) {
      env[a] = v;
    } else if (auto it = exported.find(a); it != exported.end()) {
      env[a] = it->second;
    } else {
      env.erase(a);
    }
  };
  set2("WORLD_SIZE", "CORRAL_NTASKS", std::to_string(n), "");
  set2("RANK", "CORRAL_PROCID", std::to_string(task.rank), "");
  set2("LOCAL_RANK", "CORRAL_LOCALID", std::to_string(task.local_rank), "");
  set2("NODE_RANK", "CORRAL_NODEID", std::to_string(task.node_rank), "");
  set2("LOCAL_WORLD_SIZE", "CORRAL_LOCAL_NTASKS", std::to_string(local), "");
  if (ctx.master_port != 0) {
    set2("MASTER_ADDR", "CORRAL_MASTER_ADDR", ctx.master_addr, "CORRAL_MASTER_ADDR");
    set2("MASTER_PORT", "CORRAL_MASTER_PORT", std::to_string(ctx.master_port),
         "CORRAL_MASTER_PORT");
  }
  env["CORRAL_STEP_ID"] = std::to_string(step);
  env["CORRAL_STEP_NUM_TASKS"] = std::to_string(n);
  env["CORRAL_STEP_NUM_NODES"] = std::to_string(layout.nodes.size());
  env["CORRAL_STEP_NODELIST"] = CompressHostList(layout.nodes);
  env["CORRAL_STEP_TASKS_PER_NODE"] = CompressCounts(layout.tasks_per_node);
  env["CORRAL_CPUS_PER_TASK"] = std::to_string(layout.cpus_per_task);
  // Slurm's variables of the task (SLURM_PROCID, SLURM_STEP_ID, ...), for scripts written for
  // srun; the GPUs keep the node's own indices.
  SlurmStepLayout slurm{
      .step_id = step, .gpus_per_task = spec.gpus_per_task, .cpus_per_task = spec.cpus_per_task};
  for (const std::string& name : layout.nodes) {
    for (size_t i = 0; i < job.allocation.nodes.size(); ++i) {
      if (job.allocation.nodes[i].node_name != name) continue;
      slurm.nodes.push_back(i);
      slurm.gpus.push_back(job.allocation.nodes[i].gpus);
    }
  }
  slurm.tasks_per_node = layout.tasks_per_node;
  if (slurm.nodes.size() == layout.nodes.size()) {
    for (auto& [k, v] : SlurmTaskEnvironment(base, slurm, task.rank,
                                             SlurmNodeContext{.cluster_name = ctx.cluster_name})) {
      if (k.rfind("SLURM_", 0) == 0) env[k] = std::move(v);
    }
  }
  // What slurmstepd sets for the batch step only: a task has it when its caller exported it
  // (srun inside a batch script), not outside a batch job.
  for (const char* name : {"ENVIRONMENT", "TMPDIR", "SLURM_NODE_ALIASES"}) {
    if (auto it = base.spec.environment->find(name); it != base.spec.environment.end()) {
      env[name] = it->second;
    } else {
      env.erase(name);
    }
  }
  env["CORRAL_STEP_GPUS"] = task.gpus.ToString();
  env["CUDA_VISIBLE_DEVICES"] = CudaVisibleDevices(task.gpus, ctx.gpus);  // MIG: UUIDs
  if (spec.gpus_per_task > 0) env["CORRAL_GPUS_PER_TASK"] = std::to_string(spec.gpus_per_task);
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace corral::agent
