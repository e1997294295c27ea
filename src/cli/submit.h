// `corral submit [options] script.sh [args]`: submits a batch script with sbatch's options and
// parser (one option parser for both: cli/slurm/submit.h), which may also be given as
// `#CORRAL` (or `#SBATCH`) lines at the top of the script; the command line wins. Also takes
// --controller URL and --json. Prints "Submitted batch job N".
#pragma once

namespace corral::cli {

// argv[0] is "submit". Returns 0 once submitted (with --wait, the job's exit status), 1 after
// an error (one line on stderr).
int RunSubmitCommand(int argc, char** argv);

}  // namespace corral::cli
