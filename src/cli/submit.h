// `corral submit [options] script.sh`: submits a batch script. Options use Slurm's long names
// and may also be given as `#CORRAL` (or `#SBATCH`) lines at the top of the script; the
// command line wins. Prints "Submitted batch job N".
#pragma once

namespace corral::cli {

int RunSubmitCommand(int argc, char** argv);

}  // namespace corral::cli
