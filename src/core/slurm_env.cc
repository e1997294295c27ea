#include "core/slurm_env.h"

#include <algorithm>

#include "core/array_spec.h"
#include "core/hostlist.h"

namespace corral {
namespace {

std::string Join(const std::vector<uint32_t>& v) {
  std::string out;
  for (uint32_t x : v) {
    if (!out.empty()) out += ',';
    out += std::to_string(x);
  }
  return out;
}

// The GPU list a process sees: the node's own indices, or their positions among `visible`
// when the agent hides every other GPU.
std::string VisibleDevices(GpuSet gpus, GpuSet visible, bool constrained) {
  if (!constrained) return gpus.ToString();
  std::vector<uint32_t> positions;
  uint32_t pos = 0;
  for (uint32_t g : visible.ToVector()) {
    if (gpus.contains(g)) positions.push_back(pos);
    ++pos;
  }
  return Join(positions);
}

void SetGpuVariables(EnvMap* env, const std::string& list) {
  (*env)["CUDA_VISIBLE_DEVICES"] = list;
  (*env)["GPU_DEVICE_ORDINAL"] = list;
  (*env)["ROCR_VISIBLE_DEVICES"] = list;
  (*env)["ZE_AFFINITY_MASK"] = list;
}

// Sets `name` from the request unless the job's own environment already carries it (Slurm's
// sbatch puts the option-derived variables there when the option was given).
void SetOption(EnvMap* env, const Job& job, const std::string& name, const std::string& value) {
  if (job.spec.environment->count(name) == 0) (*env)[name] = value;
}

bool NtasksGiven(const Job& job) {
  return job.spec.environment->count("SLURM_NTASKS") > 0 || job.spec.resources.ntasks > 1;
}

}  // namespace

std::string FormatSlurmCounts(const std::vector<uint32_t>& counts) {
  std::string out;
  size_t i = 0;
  while (i < counts.size()) {
    size_t j = i;
    while (j + 1 < counts.size() && counts[j + 1] == counts[i]) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(counts[i]);
    if (j > i) out += "(x" + std::to_string(j - i + 1) + ")";
    i = j + 1;
  }
  return out;
}

std::vector<uint32_t> SlurmTasksPerNode(const Job& job) {
  const ResourceRequest& r = job.spec.resources;
  const auto& nodes = job.allocation.nodes;
  size_t n = nodes.empty() ? std::max<uint32_t>(r.nodes, 1) : nodes.size();
  std::vector<uint32_t> out(n, 1);
  if (r.ntasks_per_node > 0) {
    std::fill(out.begin(), out.end(), r.ntasks_per_node);
  } else if (NtasksGiven(job)) {
    uint32_t base = r.ntasks / static_cast<uint32_t>(n);
    uint32_t extra = r.ntasks % static_cast<uint32_t>(n);
    for (size_t i = 0; i < n; ++i) out[i] = base + (i < extra ? 1 : 0);
  } else if (!nodes.empty()) {
    uint32_t cpt = std::max<uint32_t>(r.cpus_per_task, 1);
    for (size_t i = 0; i < n; ++i) out[i] = std::max<uint32_t>(nodes[i].cpus / cpt, 1);
  }
  return out;
}

EnvMap SlurmBatchEnvironment(const Job& job, const SlurmNodeContext& node) {
  EnvMap env;
  const JobSpec& spec = job.spec;
  const ResourceRequest& r = spec.resources;
  const auto& nodes = job.allocation.nodes;
  std::string id = job.id.ToString();

  env["SLURM_JOB_ID"] = id;
  env["SLURM_JOBID"] = id;
  env["SLURM_JOB_NAME"] = spec.name;
  env["SLURM_JOB_USER"] = spec.user;
  env["SLURM_JOB_UID"] = std::to_string(spec.uid);
  env["SLURM_JOB_GID"] = std::to_string(spec.gid);
  if (!spec.submit_dir.empty()) env["SLURM_SUBMIT_DIR"] = spec.submit_dir;
  if (!spec.submit_host.empty()) env["SLURM_SUBMIT_HOST"] = spec.submit_host;
  std::string partition = job.partition;
  if (partition.empty() && !spec.partitions.empty()) partition = spec.partitions.front();
  if (!partition.empty()) env["SLURM_JOB_PARTITION"] = partition;
  if (!spec.account.empty()) env["SLURM_JOB_ACCOUNT"] = spec.account;
  if (!spec.qos.empty()) env["SLURM_JOB_QOS"] = spec.qos;
  if (!spec.reservation.empty()) env["SLURM_JOB_RESERVATION"] = spec.reservation;
  if (job.restart_count > 0) env["SLURM_RESTART_COUNT"] = std::to_string(job.restart_count);
  if (!node.cluster_name.empty()) env["SLURM_CLUSTER_NAME"] = node.cluster_name;

  if (job.array_task_id.has_value()) {
    env["SLURM_ARRAY_JOB_ID"] = job.array_job_id.ToString();
    env["SLURM_ARRAY_TASK_ID"] = std::to_string(*job.array_task_id);
    ArraySpec array;
    if (auto parsed = ParseArraySpec(spec.array, 0xffffffffu); parsed.has_value()) {
      array = std::move(*parsed);
    } else {
      array.indices = {*job.array_task_id};
    }
    env["SLURM_ARRAY_TASK_COUNT"] = std::to_string(array.indices.size());
    env["SLURM_ARRAY_TASK_MIN"] = std::to_string(array.indices.front());
    env["SLURM_ARRAY_TASK_MAX"] = std::to_string(array.indices.back());
    env["SLURM_ARRAY_TASK_STEP"] = std::to_string(array.step);
  }

  // Option-derived variables, for jobs whose environment does not carry them already.
  if (r.ntasks > 1) {
    SetOption(&env, job, "SLURM_NTASKS", std::to_string(r.ntasks));
    SetOption(&env, job, "SLURM_NPROCS", std::to_string(r.ntasks));
  }
  if (r.cpus_per_task > 1)
    SetOption(&env, job, "SLURM_CPUS_PER_TASK", std::to_string(r.cpus_per_task));
  if (r.ntasks_per_node > 0) {
    SetOption(&env, job, "SLURM_NTASKS_PER_NODE", std::to_string(r.ntasks_per_node));
  }
  if (r.mem_per_node_mb > 0 && r.mem_per_node_mb != kWholeNodeMemory) {
    SetOption(&env, job, "SLURM_MEM_PER_NODE", std::to_string(r.mem_per_node_mb));
  }
  if (r.mem_per_cpu_mb > 0)
    SetOption(&env, job, "SLURM_MEM_PER_CPU", std::to_string(r.mem_per_cpu_mb));
  if (r.mem_per_gpu_mb > 0)
    SetOption(&env, job, "SLURM_MEM_PER_GPU", std::to_string(r.mem_per_gpu_mb));
  if (r.gpus > 0) SetOption(&env, job, "SLURM_GPUS", std::to_string(r.gpus));
  if (r.gpus_per_task > 0)
    SetOption(&env, job, "SLURM_GPUS_PER_TASK", std::to_string(r.gpus_per_task));
  if (r.cpus_per_gpu > 0)
    SetOption(&env, job, "SLURM_CPUS_PER_GPU", std::to_string(r.cpus_per_gpu));

  size_t node_count = nodes.empty() ? std::max<uint32_t>(r.nodes, 1) : nodes.size();
  env["SLURM_NNODES"] = std::to_string(node_count);
  env["SLURM_JOB_NUM_NODES"] = std::to_string(node_count);
  env["SLURM_TASKS_PER_NODE"] = FormatSlurmCounts(SlurmTasksPerNode(job));
  env["SLURM_NODEID"] = std::to_string(node.node_index);
  env["SLURM_PROCID"] = "0";
  env["SLURM_LOCALID"] = "0";
  env["SLURM_GTIDS"] = "0";
  if (nodes.empty()) return env;

  std::string nodelist = CompressHostList(job.allocation.NodeNames());
  env["SLURM_JOB_NODELIST"] = nodelist;
  env["SLURM_NODELIST"] = nodelist;
  std::vector<uint32_t> cpus;
  for (const auto& n : nodes) cpus.push_back(n.cpus);
  env["SLURM_JOB_CPUS_PER_NODE"] = FormatSlurmCounts(cpus);
  env["SLURM_NODE_ALIASES"] = "(null)";  // no cloud node aliases, as slurmd prints none
  if (node.node_index >= nodes.size()) return env;

  const NodeAllocation& here = nodes[node.node_index];
  env["SLURMD_NODENAME"] = here.node_name;
  env["SLURM_TOPOLOGY_ADDR"] = here.node_name;
  env["SLURM_TOPOLOGY_ADDR_PATTERN"] = "node";
  env["SLURM_CPUS_ON_NODE"] = std::to_string(here.cpus);
  if (!here.gpus.empty()) {
    env["SLURM_GPUS_ON_NODE"] = std::to_string(here.gpus.size());
    env["SLURM_JOB_GPUS"] = here.gpus.ToString();
    SetGpuVariables(&env, VisibleDevices(here.gpus, here.gpus, node.devices_constrained));
  }
  return env;
}

EnvMap SlurmTaskEnvironment(const Job& job, const SlurmStepLayout& step, uint32_t rank,
                            const SlurmNodeContext& node) {
  // Find the step node that runs `rank` and the first rank on it.
  size_t k = 0;
  uint32_t first = 0;
  uint32_t total = 0;
  for (uint32_t t : step.tasks_per_node) total += t;
  while (k + 1 < step.tasks_per_node.size() && rank >= first + step.tasks_per_node[k]) {
    first += step.tasks_per_node[k];
    ++k;
  }
  SlurmNodeContext here = node;
  if (k < step.nodes.size()) here.node_index = step.nodes[k];
  EnvMap env = SlurmBatchEnvironment(job, here);

  std::vector<std::string> names;
  for (size_t i : step.nodes) {
    if (i < job.allocation.nodes.size()) names.push_back(job.allocation.nodes[i].node_name);
  }
  std::string step_nodelist = CompressHostList(names);
  std::string step_tasks = FormatSlurmCounts(step.tasks_per_node);
  env["SLURM_NTASKS"] = std::to_string(total);
  env["SLURM_NPROCS"] = std::to_string(total);
  env["SLURM_NNODES"] = std::to_string(step.nodes.size());
  env["SLURM_NODELIST"] = step_nodelist;
  env["SLURM_TASKS_PER_NODE"] = step_tasks;
  env["SLURM_STEP_ID"] = std::to_string(step.step_id);
  env["SLURM_STEPID"] = std::to_string(step.step_id);
  env["SLURM_STEP_NODELIST"] = step_nodelist;
  env["SLURM_STEP_NUM_NODES"] = std::to_string(step.nodes.size());
  env["SLURM_STEP_NUM_TASKS"] = std::to_string(total);
  env["SLURM_STEP_TASKS_PER_NODE"] = step_tasks;
  env["SLURM_DISTRIBUTION"] = step.cyclic ? "cyclic" : "block";
  if (step.cpus_per_task > 0) env["SLURM_CPUS_PER_TASK"] = std::to_string(step.cpus_per_task);
  env["SLURM_PROCID"] = std::to_string(rank);
  env["SLURM_NODEID"] = std::to_string(k);
  uint32_t local = rank - first;
  env["SLURM_LOCALID"] = std::to_string(local);
  std::vector<uint32_t> gtids;
  uint32_t on_node = k < step.tasks_per_node.size() ? step.tasks_per_node[k] : 0;
  for (uint32_t t = 0; t < on_node; ++t) gtids.push_back(first + t);
  env["SLURM_GTIDS"] = Join(gtids);

  GpuSet step_gpus = k < step.gpus.size() ? step.gpus[k] : GpuSet();
  if (!step_gpus.empty()) {
    GpuSet task_gpus = step_gpus;
    if (step.gpus_per_task > 0) {
      std::vector<uint32_t> all = step_gpus.ToVector();
      task_gpus = GpuSet();
      for (uint32_t g = 0; g < step.gpus_per_task; ++g) {
        task_gpus.insert(all[(static_cast<size_t>(local) * step.gpus_per_task + g) % all.size()]);
      }
    }
    env["SLURM_STEP_GPUS"] = task_gpus.ToString();
    SetGpuVariables(&env, VisibleDevices(task_gpus, step_gpus, node.devices_constrained));
  }
  return env;
}

}  // namespace corral
