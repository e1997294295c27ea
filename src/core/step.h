// Job steps: what `corral run` launches inside a running job's allocation (Slurm's `srun`
// steps), how a step's tasks are laid out over the allocation's nodes, and the rendezvous
// values distributed training reads (MASTER_ADDR, MASTER_PORT, ranks).
//
// A job's processes are named by (job, step, task): the batch script is step `kBatchStepId`
// task 0; the steps of `corral run` are numbered from 0 per job, and their tasks by global rank.
//
// Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/gpu.h"
#include "core/ids.h"
#include "core/job.h"
#include "core/result.h"

namespace corral {

// The step id of a job's batch script (Slurm's SLURM_BATCH_SCRIPT, 0xfffffffb).
inline constexpr uint32_t kBatchStepId = 0xFFFFFFFBu;
// In a request about a job's steps: every step of the job.
inline constexpr uint32_t kAllSteps = 0xFFFFFFFFu;
// The default range of MASTER_PORT (agents may configure another).
inline constexpr uint32_t kDefaultMasterPortMin = 29500;
inline constexpr uint32_t kDefaultMasterPortMax = 30499;

// What `corral run` asks for (POST /api/v1/jobs/{id}/steps). Zero means "not given".
struct StepSpec {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up in the task's PATH
  std::string working_dir;        // "" = the job's working directory
  // The tasks' base environment (the caller's exported environment); empty = the job's
  // submitted one. Corral's own variables are set over it on each node.
  std::map<std::string, std::string> environment;
  uint32_t nodes = 0;             // -N: the first N nodes of the allocation; 0 = see PlanStep
  // Placement inside the allocation (srun -w, -x, -r): nodes the step must use, nodes it must
  // not use, and the index of the allocation's node it starts at (-1 = not given).
  std::vector<std::string> nodelist;
  std::vector<std::string> exclude;
  int32_t relative = -1;
  uint32_t ntasks = 0;            // -n
  uint32_t ntasks_per_node = 0;   // --ntasks-per-node
  uint32_t cpus_per_task = 0;     // -c; 0 = the job's
  uint32_t gpus_per_task = 0;     // --gpus-per-task: bind each task to this many GPUs
  bool overcommit = false;        // -O: allow more CPUs than the node's share of the job
  bool kill_on_bad_exit = false;  // -K: a task that fails ends the whole step
  // Where tasks write when their output is not forwarded to the caller: a Slurm file-name
  // pattern (core/output_pattern.h: %j %s %t %n %N ...), relative to the working directory;
  // "" = append to the job's own output file.
  std::string stdout_path;
  std::string stderr_path;  // "" = with stdout
  // Output forwarding: the caller (`corral run`) listens on `io_port` of node `io_node` and
  // takes chunks that present `io_token`. `io_port` 0 = no forwarding.
  std::string io_node;
  uint32_t io_port = 0;
  std::string io_token;
  uint32_t master_port = 0;  // 0 = the job's (see MasterPortCandidate)
  // pyxis' options (srun --container-image ...): each task runs in this image with the node's
  // container runtime. An empty image with a name takes the image of the job's earlier step
  // of that name (the controller fills it in). Empty = no container.
  ContainerSpec container;
  // Launched as Slurm's srun: the tasks get Slurm's variables and the caller's exported ones
  // only, not the torchrun-style WORLD_SIZE, RANK, MASTER_ADDR, ... of `corral run` (unless
  // in a container, as pyxis' PyTorch hook sets them).
  bool slurm = false;
  // srun --pty: task 0 runs in a pseudo-terminal that the agent opens for it (its controlling
  // terminal), whose input, output and window size travel over the step's I/O server
  // (api/step_io.h); the other tasks' stdin, stdout and stderr are /dev/null, as in Slurm.
  // Needs `io_port` (the output forwarded) and no container.
  bool pty = false;
  bool operator==(const StepSpec&) const = default;
};

// One task of a step.
struct StepTask {
  uint32_t rank = 0;        // RANK / CORRAL_PROCID: 0 .. ntasks-1
  uint32_t node_rank = 0;   // NODE_RANK / CORRAL_NODEID: its node's index in the step
  uint32_t local_rank = 0;  // LOCAL_RANK / CORRAL_LOCALID: among its node's tasks
  std::string node;
  GpuSet gpus;  // its CUDA_VISIBLE_DEVICES
  bool operator==(const StepTask&) const = default;
};

// Where a step's tasks run.
struct StepLayout {
  std::vector<std::string> nodes;        // the step's nodes, in allocation order
  std::vector<uint32_t> tasks_per_node;  // one count per entry of `nodes`
  std::vector<StepTask> tasks;           // by rank; block distribution
  uint32_t cpus_per_task = 1;
  bool operator==(const StepLayout&) const = default;
};

// Lays a step out over `job`'s allocation, as srun does inside an allocation:
//   1. Tasks: `spec.ntasks`; else `ntasks_per_node` x nodes; else the job's own task count
//      (its --ntasks-per-node x nodes, or --ntasks) when the step uses every node; else one
//      per node.
//   2. Nodes: `spec.nodes`; else the nodes of `nodelist`; else enough nodes for `ntasks` at
//      `ntasks_per_node`; else every node of the allocation, but never more nodes than
//      tasks. The candidates are the allocation's nodes from index `relative` (0 when not
//      given) less those of `exclude`; the step takes every node of `nodelist`, then the first
//      other candidates, in allocation order (so without placement options the batch host
//      is node 0 and holds rank 0).
//   3. Block distribution: ranks fill node 0 first. With `ntasks_per_node` each node takes
//      that many (the last may take fewer); otherwise the tasks are spread evenly, the first
//      nodes taking one more when they do not divide.
//   4. GPUs: with `gpus_per_task` g, local task l gets the node's allocated GPUs [l*g, l*g+g)
//      in index order; otherwise every task sees all the job's GPUs on its node.
// Returns kFailedPrecondition when the job has no allocation, kInvalidArgument naming the
// option when the request cannot fit: a `nodelist` node that is not the job's (or is
// excluded, or before `relative`), `relative` past the last node, more nodes than
// candidates, fewer tasks than nodes asked, more tasks than `ntasks_per_node` allows, more
// CPUs (tasks x cpus_per_task) than the job holds on a node (unless `overcommit`), more GPUs
// than it holds there, or no program.
Result<StepLayout> PlanStep(const Job& job, const StepSpec& spec);

// The deterministic MASTER_PORT candidate of `job` within [lo, hi]: lo + job % (hi - lo + 1).
// The first node's agent checks it is free and takes the next free one in the range if not.
// Requires: 0 < lo <= hi <= 65535.
uint32_t MasterPortCandidate(JobId job, uint32_t lo, uint32_t hi);

// The address other nodes reach a node at, for MASTER_ADDR and output forwarding: the host of
// its agent's URL ("http://HOST:PORT"), or `node_name` when that host is a wildcard address
// (0.0.0.0, ::) or missing.
std::string RendezvousHost(const std::string& agent_url, const std::string& node_name);

// The per-job checkpoint directory, the same across restarts: `<root>/<job id>` when `root`
// is given, else `<working dir>/.corral/checkpoints/<job id>`.
std::string CheckpointDirectory(const Job& job, const std::string& root);

}  // namespace corral
