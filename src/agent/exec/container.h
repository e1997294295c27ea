// Containers: the command that runs a job's batch script — or one task of a step (`srun
// --container-image`) — inside its image (`--container-image`) with the configured runtime —
// podman, docker, apptainer/singularity or enroot — with only the job's (the task's) GPUs
// passed through, its working directory, script, output directories and requested mounts
// bind-mounted, and its environment carried.
//
// Images are written as pyxis (enroot) writes them, `[USER@][REGISTRY#]IMAGE[:TAG]` or a
// path, and translated for the runtime (`RuntimeImage`). Mount flags may be separated with
// '+' as pyxis allows ("ro+rprivate").
//
// GPU pass-through per runtime (`ContainerConfig::gpus`):
//   podman    "cdi": --device nvidia.com/gpu=UUID (a CDI spec from `nvidia-ctk cdi generate`)
//   docker    "cdi" likewise (Docker 25+), or "gpus": --gpus device=UUID,...
//   enroot    "env": NVIDIA_VISIBLE_DEVICES=UUID,... for its NVIDIA hook
//   apptainer/singularity  "nv": --nv with NVIDIA_VISIBLE_DEVICES; the job's device cgroup
//             keeps the other GPUs closed
//   any       "devices": --device for each of the job's device files (podman, docker), or
//             "none" (no GPU flags; NVIDIA_VISIBLE_DEVICES only).
// Inside a container that was given exactly its GPUs, CUDA_VISIBLE_DEVICES counts from 0.
//
// Who runs what: podman and docker run as the agent (root) with `--user UID:GID`, so the job's
// processes run as its user; apptainer, singularity and enroot run as the job's user.
// podman and docker keep the container's processes in cgroups of their own: the job's memory
// and CPUs are passed as --memory and --cpuset-cpus, and the container is removed
// (`rm --force`) when the job ends. apptainer, singularity and enroot run inside the job's
// cgroup.
//
// Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/gpu.h"
#include "core/job.h"
#include "core/result.h"

namespace corral::agent {

struct ContainerConfig {
  std::string runtime;                  // "" = jobs with an image are refused
  std::string runtime_path;             // default: the runtime's name, searched in PATH
  std::string gpus = "auto";            // auto | cdi | gpus | env | nv | devices | none
  std::vector<std::string> extra_args;  // added before the image (e.g. "--network=host")
  std::vector<std::string> env;         // "NAME=value" for the runtime itself (CONTAINERS_CONF=...)
};

struct ContainerLaunch {
  JobId job;
  std::string node;
  std::string image;
  std::string script;  // host path of the batch script
  // A step task: the program and its arguments, run as they are inside the image (argv[0]
  // looked up in the image's PATH); `script` is then unused.
  std::vector<std::string> command;
  // podman/docker: the container's name; "" = the spec's name, else corral-NODE-JOB.
  std::string instance;
  std::string workdir;                   // host working directory (mounted at the same path)
  std::vector<std::string> output_dirs;  // directories of the output files
  std::vector<std::string> env;          // the job's environment, "NAME=value"
  std::optional<uint32_t> uid;           // the job's user when the agent switches ids
  std::optional<uint32_t> gid;
  std::string home;                       // the user's home (mounted when the spec asks)
  std::vector<GpuInfo> gpus;              // the job's GPUs on this node
  std::vector<std::string> device_files;  // their device files
  uint64_t memory_mb = 0;                 // podman/docker: --memory (0 = none)
  std::vector<uint32_t> cpus;             // podman/docker: --cpuset-cpus (empty = none)
  ContainerSpec spec;                     // image, mounts, workdir, env names, mount_home
};

struct ContainerCommand {
  std::vector<std::string> argv;     // argv[0] is the runtime (a path, or a name for PATH)
  std::vector<std::string> env;      // the runtime's own environment
  bool runs_as_user = false;         // the runtime itself runs as the job's user
  std::string name;                  // the container's name ("" when the runtime has none)
  std::vector<std::string> cleanup;  // a command that removes the container after the job
};

// The image reference `runtime` takes for a pyxis-style `image`:
//   enroot            unchanged
//   podman, docker    "REGISTRY#IMAGE" -> "REGISTRY/IMAGE", a "USER@" prefix dropped (the
//                     runtime's own credentials are used)
//   apptainer, singularity  the same with "docker://" before it, unless `image` is a path
//                     (starts with '/' or '.') or already has a scheme ("docker://", "oras://")
std::string RuntimeImage(const std::string& runtime, const std::string& image);

// The command that runs `launch.script` (or `launch.command`) in the image. Returns
// kInvalidArgument for a mount that is not "SRC:DST[:FLAGS]" with absolute paths,
// kFailedPrecondition when no runtime is configured or a runtime name or GPU mode is unknown.
Result<ContainerCommand> BuildContainerCommand(const ContainerConfig& config,
                                               const ContainerLaunch& launch);

// The runtime's path: `config.runtime_path`, else `config.runtime` found in PATH. Returns
// kFailedPrecondition naming it when it is not there.
Result<std::string> FindRuntime(const ContainerConfig& config);

}  // namespace corral::agent
