// The environment of sbatch, srun and salloc, both ways: the input variables each command
// reads as options (SBATCH_*, SALLOC_*, srun's SLURM_*, pyxis'), and the job's environment:
// --export resolved against the submitting one, and pyxis' options as the job's steps
// inherit them.
//
// Pure functions; thread-safe.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>

#include "cli/slurm/options.h"
#include "core/job.h"
#include "core/result.h"

namespace corral::slurm {

// An input environment variable that stands for an option ("SBATCH_ACCOUNT" for --account).
struct EnvironmentOption {
  const char* variable;
  const char* option;  // the option's canonical long name
};

// The input variables of `command`, in the order they are applied (a later one wins over an
// earlier one for the same option; the command line wins over them all, and they over
// #SBATCH directives). srun reads many SLURM_* variables, which inside an allocation carry the
// job's own values: that is how `srun` without options fills the allocation.
std::span<const EnvironmentOption> InputVariables(Command command);

// pyxis' options as srun inherits them, the later overriding the earlier (the command line
// overrides both): pyxis' own PYXIS_CONTAINER_* defaults, then the options given to the
// enclosing sbatch or salloc, which Slurm passes to the job's environment as SPANK variables
// (`PyxisEnvironment`). PYXIS_CONTAINER_MOUNT_HOME is a boolean (1/0, true/false, yes/no).
std::span<const EnvironmentOption> PyxisInputVariables();

// The variables through which the steps of a job inherit its pyxis options, as Slurm passes
// SPANK options to a job's environment: SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_image,
// ..._container_mounts, ..._container_workdir, ..._container_name, ..._container_env (lists
// joined with ','), and ..._no_container_mount_home (empty) when the home is not mounted.
// Set by sbatch in the job's environment and by salloc in its command's; read by srun.
std::map<std::string, std::string> PyxisEnvironment(const ContainerSpec& container);

// Resolves `--export` against the submitting environment, as Slurm does: "ALL" (the default)
// copies everything, "NONE" only SLURM_* variables, "VAR1,VAR2=value" the SLURM_* variables plus
// those named (values given are used as is, others copied), "ALL,VAR=value" everything plus the
// values given. CORRAL_TOKEN, CORRAL_KEY_FILE and CORRAL_JOB_CREDENTIAL are never exported
// (a job gets its own credential). Returns kInvalidArgument for an empty item or "NONE"
// combined with variables.
Result<std::map<std::string, std::string>> ResolveExport(
    std::string_view value, const std::map<std::string, std::string>& environment);

}  // namespace corral::slurm
