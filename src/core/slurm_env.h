// The Slurm environment of a job, as Slurm 22.05's slurmd and slurmstepd set it (checked
// against a real 22.05.8): what the agent adds to a job's batch step and to each task of an
// `srun` step, so that scripts that read SLURM_JOB_ID, SLURM_JOB_NODELIST,
// SLURM_TASKS_PER_NODE, CUDA_VISIBLE_DEVICES, ... run unchanged.
//
// Where the variables come from, as in Slurm:
//   - From the allocation (computed here): SLURM_JOB_ID/JOBID, SLURM_JOB_NAME, SLURM_JOB_NODELIST
//     and SLURM_NODELIST (Slurm's compressed host list, in allocation order, so the first host
//     is the batch host), SLURM_NNODES, SLURM_JOB_NUM_NODES, SLURM_TASKS_PER_NODE ("2(x3),1"),
//     SLURM_JOB_CPUS_PER_NODE, SLURM_CPUS_ON_NODE, SLURM_GPUS_ON_NODE, SLURM_JOB_GPUS,
//     CUDA_VISIBLE_DEVICES (and GPU_DEVICE_ORDINAL, ROCR_VISIBLE_DEVICES, ZE_AFFINITY_MASK, as
//     Slurm's gres/gpu plugin sets them), SLURM_ARRAY_*, SLURM_JOB_PARTITION, SLURM_JOB_ACCOUNT,
//     SLURM_JOB_QOS, SLURM_JOB_RESERVATION, SLURM_JOB_USER/UID/GID, SLURM_SUBMIT_DIR/HOST,
//     SLURM_RESTART_COUNT (once requeued), SLURM_CLUSTER_NAME, SLURMD_NODENAME, SLURM_NODEID,
//     SLURM_PROCID, SLURM_LOCALID, SLURM_GTIDS, SLURM_TOPOLOGY_ADDR(_PATTERN).
//   - From the options: Slurm's sbatch puts SLURM_NTASKS, SLURM_NPROCS, SLURM_CPUS_PER_TASK,
//     SLURM_NTASKS_PER_NODE, SLURM_MEM_PER_NODE/CPU/GPU, SLURM_GPUS, SLURM_GPUS_PER_NODE/TASK,
//     SLURM_CPUS_PER_GPU, SLURM_OPEN_MODE, SLURM_EXPORT_ENV, ... into the job's environment
//     when, and only when, the option was given; Corral's sbatch does the same
//     (`JobSpec::environment`). For jobs submitted another way, the functions here add the
//     unambiguous ones (a value other than the default) when the job's environment lacks them.
//
// `--mem=0` ("all the memory of each node") is represented in `ResourceRequest::mem_per_node_mb`
// by `kWholeNodeMemory` (core/resources.h); SLURM_MEM_PER_NODE is then not set, as in Slurm.
//
// Pure functions of their arguments (no I/O, no clock); thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/gpu.h"
#include "core/job.h"

namespace corral {

using EnvMap = std::map<std::string, std::string>;

// What the agent knows about the node it starts a job on.
struct SlurmNodeContext {
  std::string cluster_name;  // SLURM_CLUSTER_NAME; omitted when empty
  size_t node_index = 0;     // this node's position in `job.allocation.nodes` (0 = batch host)
  // True when the agent hides the GPUs a job does not hold (device cgroup), so that CUDA numbers
  // the visible ones from 0; false when every GPU stays visible and CUDA_VISIBLE_DEVICES must
  // name the node's own indices (Slurm without ConstrainDevices).
  bool devices_constrained = false;
};

// The variables of the job's batch step (run on `job.allocation.nodes[node.node_index]`).
// Node-dependent variables are left out when the allocation has no such node.
EnvMap SlurmBatchEnvironment(const Job& job, const SlurmNodeContext& node);

// How an `srun` step spreads over the allocation.
struct SlurmStepLayout {
  uint32_t step_id = 0;
  std::vector<size_t> nodes;             // positions in `job.allocation.nodes`, in order
  std::vector<uint32_t> tasks_per_node;  // one count per entry of `nodes`
  std::vector<GpuSet> gpus;              // the step's GPUs on each entry of `nodes`
  uint32_t gpus_per_task = 0;            // --gpus-per-task: bind each task to this many
  uint32_t cpus_per_task = 0;            // -c (0 = not given)
  bool cyclic = false;                   // SLURM_DISTRIBUTION=cyclic instead of block
};

// The variables of task `rank` (its global rank in the step, block distribution: ranks fill
// the first node, then the next) of `step`: the batch variables of its node, with the
// step's SLURM_NTASKS/NPROCS, SLURM_NNODES, SLURM_NODELIST, SLURM_TASKS_PER_NODE, and
// SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURM_STEP_ID/STEPID, SLURM_STEP_NODELIST,
// SLURM_STEP_NUM_NODES, SLURM_STEP_NUM_TASKS, SLURM_STEP_TASKS_PER_NODE, SLURM_STEP_GPUS, and the
// task's CUDA_VISIBLE_DEVICES (its own GPUs with --gpus-per-task, else the step's).
// Requires: `rank` < the sum of `step.tasks_per_node`; the vectors of `step` of equal length.
EnvMap SlurmTaskEnvironment(const Job& job, const SlurmStepLayout& step, uint32_t rank,
                            const SlurmNodeContext& node);

// Slurm's compressed count list: {2,2,2,1} -> "2(x3),1"; {} -> "".
std::string FormatSlurmCounts(const std::vector<uint32_t>& counts);

// Tasks on each node of the job's batch allocation, as SLURM_TASKS_PER_NODE shows them:
// --ntasks-per-node on every node; else, when a task count was asked for, the tasks spread in
// blocks (the first nodes take one more); else each node's CPUs divided by --cpus-per-task.
std::vector<uint32_t> SlurmTasksPerNode(const Job& job);

}  // namespace corral
