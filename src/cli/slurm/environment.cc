#include "cli/slurm/environment.h"

#include "core/credential_env.h"
#include "core/strings.h"

namespace corral::slurm {
namespace {

constexpr EnvironmentOption kSbatchEnv[] = {
    {"SBATCH_ACCOUNT", "account"},
    {"SBATCH_ACCTG_FREQ", "acctg-freq"},
    {"SBATCH_ARRAY_INX", "array"},
    {"SBATCH_BATCH", "batch"},
    {"SBATCH_CLUSTERS", "cluster"},
    {"SLURM_CLUSTERS", "cluster"},
    {"SBATCH_CONSTRAINT", "constraint"},
    {"SBATCH_CONTAINER", "container"},
    {"SBATCH_CORE_SPEC", "core-spec"},
    {"SBATCH_CPUS_PER_GPU", "cpus-per-gpu"},
    {"SBATCH_DEBUG", "verbose"},
    {"SBATCH_DELAY_BOOT", "delay-boot"},
    {"SBATCH_DISTRIBUTION", "distribution"},
    {"SBATCH_ERROR", "error"},
    {"SBATCH_EXCLUSIVE", "exclusive"},
    {"SBATCH_EXPORT", "export"},
    {"SBATCH_GET_USER_ENV", "get-user-env"},
    {"SBATCH_GPU_BIND", "gpu-bind"},
    {"SBATCH_GPU_FREQ", "gpu-freq"},
    {"SBATCH_GPUS", "gpus"},
    {"SBATCH_GPUS_PER_NODE", "gpus-per-node"},
    {"SBATCH_GPUS_PER_TASK", "gpus-per-task"},
    {"SBATCH_GRES", "gres"},
    {"SBATCH_GRES_FLAGS", "gres-flags"},
    {"SBATCH_HINT", "hint"},
    {"SLURM_HINT", "hint"},
    {"SBATCH_IGNORE_PBS", "ignore-pbs"},
    {"SBATCH_INPUT", "input"},
    {"SBATCH_JOB_NAME", "job-name"},
    {"SBATCH_MEM_BIND", "mem-bind"},
    {"SBATCH_MEM_PER_CPU", "mem-per-cpu"},
    {"SBATCH_MEM_PER_GPU", "mem-per-gpu"},
    {"SBATCH_MEM_PER_NODE", "mem"},
    {"SBATCH_NETWORK", "network"},
    {"SBATCH_NO_KILL", "no-kill"},
    {"SBATCH_NO_REQUEUE", "no-requeue"},
    {"SBATCH_OPEN_MODE", "open-mode"},
    {"SBATCH_OUTPUT", "output"},
    {"SBATCH_OVERCOMMIT", "overcommit"},
    {"SBATCH_PARTITION", "partition"},
    {"SBATCH_POWER", "power"},
    {"SBATCH_PROFILE", "profile"},
    {"SBATCH_QOS", "qos"},
    {"SBATCH_REQ_SWITCH", "switches"},
    {"SBATCH_REQUEUE", "requeue"},
    {"SBATCH_RESERVATION", "reservation"},
    {"SBATCH_SIGNAL", "signal"},
    {"SBATCH_SPREAD_JOB", "spread-job"},
    {"SBATCH_THREAD_SPEC", "thread-spec"},
    {"SBATCH_THREADS_PER_CORE", "threads-per-core"},
    {"SBATCH_TIMELIMIT", "time"},
    {"SBATCH_USE_MIN_NODES", "use-min-nodes"},
    {"SBATCH_WAIT", "wait"},
    {"SBATCH_WAIT_ALL_NODES", "wait-all-nodes"},
    {"SBATCH_WCKEY", "wckey"},
};

// srun reads many SLURM_* variables, which inside an allocation carry the job's own values
// (that is how `srun` without options fills the allocation). Only those of options Corral
// handles are read.
constexpr EnvironmentOption kSrunEnv[] = {
    {"SLURM_ACCOUNT", "account"},
    {"SLURM_CONSTRAINT", "constraint"},
    {"SLURM_CPU_BIND", "cpu-bind"},
    {"SLURM_CPUS_PER_GPU", "cpus-per-gpu"},
    {"SRUN_CPUS_PER_TASK", "cpus-per-task"},
    {"SLURM_DEPENDENCY", "dependency"},
    {"SLURM_DISTRIBUTION", "distribution"},
    {"SLURM_EXACT", "exact"},
    {"SLURM_EXCLUSIVE", "exclusive"},
    {"SLURM_EXPORT_ENV", "export"},
    {"SRUN_EXPORT_ENV", "export"},
    {"SLURM_GPU_BIND", "gpu-bind"},
    {"SLURM_GPUS", "gpus"},
    {"SLURM_GPUS_PER_NODE", "gpus-per-node"},
    {"SLURM_GPUS_PER_TASK", "gpus-per-task"},
    {"SLURM_HINT", "hint"},
    {"SLURM_IMMEDIATE", "immediate"},
    {"SLURM_JOB_ID", "jobid"},
    {"SLURM_JOB_NUM_NODES", "nodes"},
    {"SLURM_NNODES", "nodes"},
    {"SLURM_KILL_BAD_EXIT", "kill-on-bad-exit"},
    {"SLURM_LABELIO", "label"},
    {"SLURM_MEM_PER_CPU", "mem-per-cpu"},
    {"SLURM_MEM_PER_GPU", "mem-per-gpu"},
    {"SLURM_MEM_PER_NODE", "mem"},
    {"SLURM_MPI_TYPE", "mpi"},
    {"SLURM_NPROCS", "ntasks"},
    {"SLURM_NTASKS", "ntasks"},
    {"SLURM_NTASKS_PER_NODE", "ntasks-per-node"},
    {"SLURM_OPEN_MODE", "open-mode"},
    {"SLURM_OVERLAP", "overlap"},
    {"SLURM_PARTITION", "partition"},
    {"SLURM_QOS", "qos"},
    {"SLURM_RESERVATION", "reservation"},
    {"SLURM_SIGNAL", "signal"},
    {"SLURM_STDERRMODE", "error"},
    {"SLURM_STDINMODE", "input"},
    {"SLURM_STDOUTMODE", "output"},
    {"SLURM_TIMELIMIT", "time"},
    {"SLURM_UNBUFFEREDIO", "unbuffered"},
    {"SLURM_WORKING_DIR", "chdir"},
};

// pyxis' variables (PyxisInputVariables).
constexpr const char* kSpankPrefix = "SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_";
constexpr EnvironmentOption kPyxisEnv[] = {
    {"PYXIS_CONTAINER_IMAGE", "container-image"},
    {"PYXIS_CONTAINER_MOUNTS", "container-mounts"},
    {"PYXIS_CONTAINER_WORKDIR", "container-workdir"},
    {"PYXIS_CONTAINER_NAME", "container-name"},
    {"PYXIS_CONTAINER_ENV", "container-env"},
    {"PYXIS_CONTAINER_MOUNT_HOME", "container-mount-home"},  // a boolean: 1/0, true/false
    {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_image", "container-image"},
    {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_mounts", "container-mounts"},
    {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_workdir", "container-workdir"},
    {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_name", "container-name"},
    {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_env", "container-env"},
    {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_mount_home", "container-mount-home"},
    {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_no_container_mount_home", "no-container-mount-home"},
};

constexpr EnvironmentOption kSallocEnv[] = {
    {"SALLOC_ACCOUNT", "account"},
    {"SALLOC_ACCTG_FREQ", "acctg-freq"},
    {"SALLOC_BELL", "bell"},
    {"SALLOC_BURST_BUFFER", "bb"},
    {"SALLOC_CLUSTERS", "cluster"},
    {"SLURM_CLUSTERS", "cluster"},
    {"SALLOC_CONSTRAINT", "constraint"},
    {"SALLOC_CONTAINER", "container"},
    {"SALLOC_CORE_SPEC", "core-spec"},
    {"SALLOC_CPUS_PER_GPU", "cpus-per-gpu"},
    {"SALLOC_DEBUG", "verbose"},
    {"SALLOC_DELAY_BOOT", "delay-boot"},
    {"SALLOC_EXCLUSIVE", "exclusive"},
    {"SALLOC_GPU_BIND", "gpu-bind"},
    {"SALLOC_GPU_FREQ", "gpu-freq"},
    {"SALLOC_GPUS", "gpus"},
    {"SALLOC_GPUS_PER_NODE", "gpus-per-node"},
    {"SALLOC_GPUS_PER_TASK", "gpus-per-task"},
    {"SALLOC_GRES", "gres"},
    {"SALLOC_GRES_FLAGS", "gres-flags"},
    {"SALLOC_HINT", "hint"},
    {"SLURM_HINT", "hint"},
    {"SALLOC_IMMEDIATE", "immediate"},
    {"SALLOC_KILL_CMD", "kill-command"},
    {"SALLOC_MEM_BIND", "mem-bind"},
    {"SALLOC_MEM_PER_CPU", "mem-per-cpu"},
    {"SALLOC_MEM_PER_GPU", "mem-per-gpu"},
    {"SALLOC_MEM_PER_NODE", "mem"},
    {"SALLOC_NETWORK", "network"},
    {"SALLOC_NO_BELL", "no-bell"},
    {"SALLOC_NO_KILL", "no-kill"},
    {"SALLOC_OVERCOMMIT", "overcommit"},
    {"SALLOC_PARTITION", "partition"},
    {"SALLOC_POWER", "power"},
    {"SALLOC_PROFILE", "profile"},
    {"SALLOC_QOS", "qos"},
    {"SALLOC_REQ_SWITCH", "switches"},
    {"SALLOC_RESERVATION", "reservation"},
    {"SALLOC_SIGNAL", "signal"},
    {"SALLOC_SPREAD_JOB", "spread-job"},
    {"SALLOC_THREAD_SPEC", "thread-spec"},
    {"SALLOC_THREADS_PER_CORE", "threads-per-core"},
    {"SALLOC_TIMELIMIT", "time"},
    {"SALLOC_USE_MIN_NODES", "use-min-nodes"},
    {"SALLOC_WAIT_ALL_NODES", "wait-all-nodes"},
    {"SALLOC_WCKEY", "wckey"},
};

}  // namespace

std::span<const EnvironmentOption> InputVariables(Command command) {
  switch (command) {
    case Command::kSbatch:
      return kSbatchEnv;
    case Command::kSrun:
      return kSrunEnv;
    case Command::kSalloc:
      return kSallocEnv;
  }
  return {};
}

std::span<const EnvironmentOption> PyxisInputVariables() { return kPyxisEnv; }

std::map<std::string, std::string> PyxisEnvironment(const ContainerSpec& c) {
  std::map<std::string, std::string> out;
  auto join = [](const std::vector<std::string>& items) {
    std::string s;
    for (const auto& i : items) s += (s.empty() ? "" : ",") + i;
    return s;
  };
  const std::string p = kSpankPrefix;
  if (!c.image.empty()) out[p + "container_image"] = c.image;
  if (!c.mounts.empty()) out[p + "container_mounts"] = join(c.mounts);
  if (!c.workdir.empty()) out[p + "container_workdir"] = c.workdir;
  if (!c.name.empty()) out[p + "container_name"] = c.name;
  if (!c.env.empty()) out[p + "container_env"] = join(c.env);
  if (!c.mount_home) out[p + "no_container_mount_home"] = "";
  return out;
}

Result<std::map<std::string, std::string>> ResolveExport(
    std::string_view value, const std::map<std::string, std::string>& environment) {
  std::map<std::string, std::string> out;
  std::vector<std::string> items = Split(value, ',');
  bool all = false, none = false;
  std::vector<std::string> rest;
  for (const auto& item : items) {
    std::string upper = Upper(item);
    if (upper == "ALL") {
      all = true;
    } else if (upper == "NONE") {
      none = true;
    } else if (item.empty()) {
      return InvalidArgument("invalid --export value \"" + std::string(value) + "\": empty item");
    } else {
      rest.push_back(item);
    }
  }
  if (none && (all || !rest.empty())) {
    return InvalidArgument("invalid --export value \"" + std::string(value) +
                           "\": NONE cannot be combined with variables");
  }
  if (all) {
    out = environment;
  } else {
    for (const auto& [k, v] : environment) {
      if (k.rfind("SLURM_", 0) == 0) out[k] = v;
    }
  }
  for (const auto& item : rest) {
    size_t eq = item.find('=');
    if (eq != std::string::npos) {
      out[item.substr(0, eq)] = item.substr(eq + 1);
    } else if (auto it = environment.find(item); it != environment.end()) {
      out[item] = it->second;
    }
  }
  // Credentials never travel into a job (docs/security.md, "Job credentials"): the job gets
  // its own.
  EraseCredentialVariables(out);
  return out;
}

}  // namespace corral::slurm
