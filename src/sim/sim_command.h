// `corral sim`: the command line of the simulator (`corral sim --help`, docs/simulator.md).
//
// Thread-compatible; reads files, writes stdout/stderr and the requested output files.
#pragma once

namespace corral::sim {

// Runs `corral sim` with `argv[0]` = "sim". Returns the process exit status: 0 on success, 2 for
// bad usage or input, 1 when a run fails (the policy broke its contract).
int RunSimCommand(int argc, char** argv);

}  // namespace corral::sim
