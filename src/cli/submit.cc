// `corral submit`: sbatch's parser (cli/slurm/submit.h), with `#CORRAL` lines read as
// `#SBATCH` ones and Corral's --controller and --json (src/cli/sbatch.cc).
#include "cli/submit.h"

#include "cli/internal/slurm_cli.h"

namespace corral::cli {

int RunSubmitCommand(int argc, char** argv) { return internal::RunBatchSubmit(argc, argv, true); }

}  // namespace corral::cli
