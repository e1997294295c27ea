// Containers: the command that runs a job's batch script — or one task of a step (`srun
// --container-image`) — inside its image (`--container-image`) with the configured runtime —
// podman, docker, apptainer/singularity or enroot — with only the job's (the task's) GPUs
// passed through, its working directory, script, output directories and requested mounts
// bind-mounted, and its environment carried.
//
// Everything a user gives is hostile here: podman and docker run as root. The image and the
// mounts are parsed by core/container_spec.h and the command is built from the parsed parts;
// every option is one `--name=value` argument; the image comes after `--`, after every option;
// for podman and docker the job's `--user=UID:GID` is the last option (nothing after it can
// override it) with `--security-opt=no-new-privileges` and `--cap-drop=ALL`, never
// `--privileged`; the environment's values never appear in argv (readable in /proc by every
// local user): podman and docker read them from a 0600 env file (`ContainerCommand::env_file`,
// written by the caller, container_host.h), enroot from its own environment (it runs as the
// user), apptainer from APPTAINERENV_ variables. Container names are the agent's own
// (`ContainerName`: user, job, run, step, task and node), never the user's `--container-name`,
// so that the agent only ever removes containers it made.
//
// Images are written as pyxis (enroot) writes them, `[USER@][REGISTRY#]IMAGE[:TAG]`, as OCI
// references or as paths, and translated for the runtime (`RuntimeImage`). Mount flags may be
// separated with '+' as pyxis allows ("ro+rprivate").
//
// GPU pass-through per runtime (`ContainerConfig::gpus`):
//   podman    "cdi": --device=nvidia.com/gpu=UUID (a CDI spec from `nvidia-ctk cdi generate`)
//   docker    "cdi" likewise (Docker 25+), or "gpus": --gpus=device=UUID,...
//   enroot    "env": NVIDIA_VISIBLE_DEVICES=UUID,... for its NVIDIA hook
//   apptainer/singularity  "nv": --nv with NVIDIA_VISIBLE_DEVICES; the job's device cgroup
//             keeps the other GPUs closed
//   any       "devices": --device for each of the job's device files (podman, docker), or
//             "none" (no GPU flags; NVIDIA_VISIBLE_DEVICES only).
// Inside a container that was given exactly its GPUs, CUDA_VISIBLE_DEVICES counts from 0.
//
// Who runs what: rootful podman and docker run as the agent (root) with `--user UID:GID` and
// the user's groups (`--group-add`), in cgroups of their own: the job's memory, CPUs and pids
// limit go as --memory, --cpuset-cpus and --pids-limit, and the container is removed (`rm
// --force`) when the job ends. Rootless podman (`[container] rootless`), apptainer,
// singularity and enroot run as the job's user inside the job's cgroup (rootless podman with
// `--userns=keep-id --cgroups=disabled`).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/container_spec.h"
#include "core/gpu.h"
#include "core/ids.h"
#include "core/job.h"
#include "core/result.h"

namespace corral::agent {

struct ContainerConfig {
  std::string runtime;                  // "" = jobs with an image are refused
  std::string runtime_path;             // default: the runtime's name, searched in PATH
  std::string gpus = "auto";            // auto | cdi | gpus | env | nv | devices | none
  std::vector<std::string> extra_args;  // added before the job's user (e.g. "--network=host")
  std::vector<std::string> env;         // "NAME=value" for the runtime itself (CONTAINERS_CONF=...)
  // podman only: "off" (the agent's podman, as root), "auto" (rootless as the job's user when
  // it has /etc/subuid and /etc/subgid ranges, else as root), "always" (rootless, or refused).
  std::string rootless = "off";
  // The sources a job may bind-mount (`--container-mounts`), by path prefix (a directory and
  // what is under it): read-only, or read-write too. Checked on the resolved source, as the
  // job's user (container_host.h). Empty: no requested mount is allowed.
  std::vector<std::string> allow_mounts;
  std::vector<std::string> allow_rw_mounts;
};

// One bind mount of a container.
struct BindMount {
  enum class Origin {
    kAgent,      // the agent's own directory (the batch script's): trusted
    kJob,        // the job's own paths (working directory, output directories, home):
                 // checked as the user
    kRequested,  // `--container-mounts`: checked as the user and against the allow-list
  };
  std::string source;
  std::string target;
  std::vector<std::string> options;  // "ro", "rprivate", ...
  Origin origin = Origin::kJob;
  bool operator==(const BindMount&) const = default;
};

struct ContainerLaunch {
  JobId job;
  std::string node;
  std::string script;  // host path of the batch script
  // A step task: the program and its arguments, run as they are inside the image (argv[0]
  // looked up in the image's PATH); `script` is then unused.
  std::vector<std::string> command;
  std::string name;                      // podman/docker: the container's name (ContainerName)
  std::string workdir;                   // host working directory (mounted at the same path)
  std::vector<std::string> output_dirs;  // directories of the output files
  // The bind mounts as they are passed (PlanMounts, then checked and resolved by the caller).
  std::vector<BindMount> mounts;
  std::vector<std::string> env;  // the job's environment, "NAME=value"
  std::optional<uint32_t> uid;   // the job's user when the agent switches ids
  std::optional<uint32_t> gid;
  std::vector<uint32_t> groups;           // the user's supplementary groups (--group-add)
  bool rootless = false;                  // podman as the job's user
  std::string home;                       // the user's home (mounted when the spec asks)
  std::vector<GpuInfo> gpus;              // the job's GPUs on this node
  std::vector<std::string> device_files;  // their device files
  uint64_t memory_mb = 0;                 // rootful podman/docker: --memory (0 = none)
  std::vector<uint32_t> cpus;             // rootful podman/docker: --cpuset-cpus (empty = none)
  uint64_t pids_max = 0;                  // rootful podman/docker: --pids-limit (0 = none)
  std::string env_file;                   // podman/docker: where ContainerCommand::env_file goes
  ContainerSpec spec;                     // image, mounts, workdir, env names, mount_home
};

struct ContainerCommand {
  std::vector<std::string> argv;  // argv[0] is the runtime (a path, or a name for PATH)
  // The runtime's own environment on top of the agent's PATH and HOME (a name here replaces
  // those): `[container] env`, then enroot's and apptainer's job variables.
  std::vector<std::string> env;
  // podman/docker: the lines of `ContainerLaunch::env_file` ("NAME=value"), for the caller to
  // write (mode 0600, before the runtime starts).
  std::vector<std::string> env_file;
  // Variables that cannot be carried: a name or value the runtime's format cannot hold (a
  // newline in a value, a blank in a name, ...). The caller logs them.
  std::vector<std::string> dropped_env;
  bool runs_as_user = false;         // the runtime itself runs as the job's user
  std::string name;                  // the container's name ("" when the runtime has none)
  std::vector<std::string> cleanup;  // a command that removes the container after the job
};

// The name of a container the agent makes: corral-USER-JOB-GENERATION-batch-NODE for a batch
// script, corral-USER-JOB-GENERATION-STEP-TASK-NODE for a step task; USER with every byte
// outside [A-Za-z0-9_.-] as '_' and at most 32 of them; `node` the agent's instance (its name
// and a hash of its state directory). Every byte of the result is in [A-Za-z0-9_.-].
std::string ContainerName(const std::string& user, JobId job, Generation generation,
                          std::optional<std::pair<uint32_t, uint32_t>> step_task,
                          const std::string& node);

// The image reference `runtime` takes for `image` (parsed by ParseImageReference):
//   enroot            as written (validated)
//   podman, docker    REGISTRY/IMAGE[:TAG][@DIGEST] (a pyxis "REGISTRY#IMAGE" with '/', a
//                     "USER@" dropped: the runtime's own credentials are used; "docker://"
//                     dropped); an image file or another scheme is refused
//   apptainer, singularity  the same with "docker://" before it, an image file as it is, or
//                     the scheme given ("oras://", "library://")
// Returns kInvalidArgument for an image outside the grammar or one the runtime cannot take.
Result<std::string> RuntimeImage(const std::string& runtime, const std::string& image);

// The bind mounts of `launch` before they are checked: the working directory, the script's
// directory at /corral/job (read-only; batch scripts only), output directories outside the
// working directory, `launch.spec.mounts` as given (the allow-list and the read-only rule
// apply to their resolved sources: container_host.h), and the home directory when the spec
// asks; the first mount of each target wins. Returns kInvalidArgument naming a bad mount.
Result<std::vector<BindMount>> PlanMounts(const ContainerLaunch& launch);

// The command that runs `launch.script` (or `launch.command`) in the image with
// `launch.mounts`. Returns kInvalidArgument for a bad image, working directory or mount,
// kFailedPrecondition when no runtime is configured or a runtime name or GPU mode is unknown.
Result<ContainerCommand> BuildContainerCommand(const ContainerConfig& config,
                                               const ContainerLaunch& launch);

// The runtime's path: `config.runtime_path`, else `config.runtime` found in PATH. Returns
// kFailedPrecondition naming it when it is not there.
Result<std::string> FindRuntime(const ContainerConfig& config);

}  // namespace corral::agent
