// The Slurm front end: when the `corral` binary is called through a link named `sbatch`,
// `srun`, `salloc`, `squeue`, `sinfo`, `sacct`, `scontrol`, `scancel` or `seff` (busybox-style: the
// base name of argv[0]), it behaves like that Slurm 22.05 command on top of Corral's API
// (docs/slurm.md).
//
// Not thread-safe (the commands read process-wide state: the environment, getopt).
#pragma once

#include <string_view>

namespace corral::cli {

// Whether `name` (a base name, "sbatch") is one of the Slurm commands.
bool IsSlurmCommand(std::string_view name);

// Runs the Slurm command `name` with `argv` (argv[0] the command as called). Returns the
// process exit status, as the Slurm command would.
// Requires: IsSlurmCommand(name).
int RunSlurmCommand(std::string_view name, int argc, char** argv);

}  // namespace corral::cli
