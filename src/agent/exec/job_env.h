// The environment a job's batch step runs with: the submitted environment, then Corral's own
// variables (which win over submitted ones of the same name).
//
//   CUDA_VISIBLE_DEVICES   the GPU indices allocated on this node ("0,1"); "" when none. On
//                          a node with MIG slices, the UUIDs instead ("MIG-...", "GPU-..."
//                          for a whole GPU): CUDA numbers a MIG device by no index of ours
//   CORRAL_JOB_ID, CORRAL_JOB_NAME, CORRAL_JOB_USER, CORRAL_JOB_ACCOUNT, CORRAL_JOB_PARTITION
//   CORRAL_NODENAME        this node
//   CORRAL_NODELIST        every node of the allocation, host-list form ("node[01-02]")
//   CORRAL_NNODES          the number of nodes
//   CORRAL_GPUS            the job's GPUs over all nodes (a count)
//   CORRAL_GPUS_ON_NODE    the job's GPUs on this node (a count)
//   CORRAL_JOB_GPUS        the job's GPU indices on this node (like SLURM_JOB_GPUS)
//   CORRAL_CPUS_ON_NODE, CORRAL_NTASKS, CORRAL_RESTART_COUNT, CORRAL_SUBMIT_DIR
//   CORRAL_CONTROLLER      the controller's URL (so a job can submit jobs)
//   CORRAL_CA_FILE         the cluster CA that verifies it (an https:// controller)
//   CORRAL_JOB_CREDENTIAL  the job's own credential (docs/security.md, "Job credentials"):
//                          what `corral`, srun, scontrol run inside the job authenticate with
//   MASTER_ADDR, MASTER_PORT (and CORRAL_MASTER_ADDR, CORRAL_MASTER_PORT): the rendezvous of
//                          distributed training: the first node's address and the job's port;
//                          never over a value the user submitted (UserSetVariable)
//   CORRAL_CHECKPOINT_DIR  the job's checkpoint directory, the same across restarts
//   ENVIRONMENT=BATCH, TMPDIR (/tmp unless submitted), as slurmstepd sets them
//   HOME, SHELL, USER, LOGNAME, MAIL (/var/mail/USER): where the submitted environment has
//                          SLURM_GET_USER_ENV=1 (sbatch --export=NONE or a list of names) and
//                          lacks them, from the user's passwd entry (`login_*`), the part of
//                          the login environment Slurm loads there that does not need a shell
//   SLURM_*                what Slurm's slurmd sets for a batch step (core/slurm_env.h:
//                          SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE, ...), so
//                          that Slurm scripts run unchanged; they win over submitted ones
//
// Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/gpu.h"
#include "core/job.h"

namespace corral::agent {

struct JobEnvContext {
  std::string node_name;
  std::string controller_url;
  std::string ca_file;         // "" = no CORRAL_CA_FILE
  std::string job_credential;  // "" = no CORRAL_JOB_CREDENTIAL
  std::string master_addr;  // with `master_port` != 0: MASTER_ADDR/MASTER_PORT
  uint32_t master_port = 0;
  std::string checkpoint_dir;  // "" = no CORRAL_CHECKPOINT_DIR
  std::string cluster_name;    // SLURM_CLUSTER_NAME ("" = not set)
  std::vector<GpuInfo> gpus;   // the node's GPUs (its inventory), for their UUIDs
  // The job user's passwd entry on this node, for a job that asks for the user's login
  // environment (SLURM_GET_USER_ENV=1: sbatch --export=NONE or a list): "" = unknown.
  std::string login_home;
  std::string login_shell;
  bool master_vars = true;  // false: CORRAL_MASTER_ADDR/PORT only, not MASTER_ADDR/PORT
};

// CUDA_VISIBLE_DEVICES for `gpus` of a node whose devices are `inventory`: their indices
// ("0,1"), or, when `inventory` holds a MIG slice (a "MIG-" UUID), each one's UUID (a whole
// GPU's "GPU-..." too: the agent's indices then count slices, CUDA's do not).
std::string CudaVisibleDevices(GpuSet gpus, const std::vector<GpuInfo>& inventory);

// Whether `submitted` (a submitted or exported environment) holds the user's own `name`: it
// holds `name`, and not with the value of `twin` (the CORRAL_ variable Corral sets beside it,
// so a value Corral set in the job, exported again to a step, is not the user's). An empty
// `twin` = any value is the user's.
bool UserSetVariable(const std::map<std::string, std::string>& submitted, const std::string& name,
                     const std::string& twin);

// Returns "NAME=value" strings, sorted by name. Requires: `node_name` is one of the job's
// allocated nodes.
std::vector<std::string> BuildJobEnvironment(const Job& job, const JobEnvContext& ctx);

}  // namespace corral::agent
