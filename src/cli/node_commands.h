// `corral node SUBCOMMAND`: node administration beyond drain/resume — per-GPU health.
//
//   corral node resume-gpu NODE GPU     return a failed GPU to service (admins)
//   corral node inject NODE --gpu N [--xid X] [--ecc N] [--temperature C] [--power W]
//                       [--util P] [--memory-used MB] [--row-remap-failure] [--vanish]
//                       [--back] [--clear]
//                                       inject a fault into a node's simulated GPU (admins)
#pragma once

namespace corral::cli {

// argv[0] is "node". Returns the exit status: 0, 1 after an error, 2 for a usage error.
int RunNodeCommand(int argc, char** argv);

}  // namespace corral::cli
