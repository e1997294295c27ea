// `corral controller --config corral.toml`: the controller daemon's entry point.
#pragma once

namespace corral::controller {

// Runs the controller until SIGINT or SIGTERM. `argv[0]` is "controller". Returns the exit
// status: 0 after a clean stop, 1 for a bad config or when it cannot start (one clear line on
// stderr).
int RunControllerCommand(int argc, char** argv);

}  // namespace corral::controller
