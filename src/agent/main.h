// `corral agent --config agent.toml`: the node agent's entry point.
#pragma once

namespace corral::agent {

// Runs the agent until SIGINT or SIGTERM. `argv[0]` is "agent". Returns the exit status:
// 0 after a clean stop, 1 for a bad config or when it cannot start (one clear line on stderr).
int RunAgentCommand(int argc, char** argv);

}  // namespace corral::agent
