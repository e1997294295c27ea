// The environment of one task of a `corral run` step: the job's environment on the task's node
// (job_env.h: CUDA_VISIBLE_DEVICES, CORRAL_JOB_ID, ..., MASTER_ADDR/PORT, the checkpoint
// directory), built over the step's base environment (the caller's exported variables, or the
// job's submitted ones), plus the rank variables of distributed training and their CORRAL_*
// twins:
//
//   WORLD_SIZE        CORRAL_NTASKS, CORRAL_STEP_NUM_TASKS   tasks in the step
//   RANK              CORRAL_PROCID                          the task's global rank
//   LOCAL_RANK        CORRAL_LOCALID                         its rank among its node's tasks
//   NODE_RANK         CORRAL_NODEID                          its node's index in the step
//   LOCAL_WORLD_SIZE  CORRAL_LOCAL_NTASKS                    tasks of the step on its node
//   MASTER_ADDR       CORRAL_MASTER_ADDR                     the step's first node
//   MASTER_PORT       CORRAL_MASTER_PORT                     the job's rendezvous port
//   (the first of each pair only for `corral run`'s steps, not srun's (`StepSpec::slurm`)
//   unless they run in a container, as pyxis' PyTorch hook sets them; and never over the
//   value the caller exported, job_env.h's UserSetVariable: a user's WORLD_SIZE stays)
//   CORRAL_STEP_ID, CORRAL_STEP_NUM_NODES, CORRAL_STEP_NODELIST (host-list form),
//   CORRAL_STEP_TASKS_PER_NODE ("2(x3),1"), CORRAL_CPUS_PER_TASK, CORRAL_STEP_GPUS and
//   CUDA_VISIBLE_DEVICES (the task's own GPUs with --gpus-per-task, else the job's on the node;
//   MIG slices by UUID, as for the batch step),
//   CORRAL_GPUS_PER_TASK (with --gpus-per-task), and Slurm's variables of the task
//   (core/slurm_env.h: SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURM_STEP_ID, SLURM_NTASKS,
//   SLURM_STEP_NODELIST, ...), for scripts written for srun.
//
// Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/exec/job_env.h"
#include "core/job.h"
#include "core/step.h"

namespace corral::agent {

// Returns "NAME=value" strings, sorted by name. `ctx` is the task's node (its `master_*`
// fields are the step's rendezvous). Requires: `task` is one of `layout.tasks`.
std::vector<std::string> BuildTaskEnvironment(const Job& job, uint32_t step, const StepSpec& spec,
                                              const StepLayout& layout, const StepTask& task,
                                              const JobEnvContext& ctx);

}  // namespace corral::agent
