// `corral <command>`: the client commands (submit, queue, show, cancel, nodes, partitions,
// wait, drain, resume, requeue, hold, release) and `corral dev`.
#pragma once

namespace corral::cli {

// Runs a client command; argv[0] is the command name. Returns the process exit status:
// 0 on success, 1 after an error (one line on stderr), 2 for a usage error; `wait` returns the
// job's exit status.
int RunClientCommand(int argc, char** argv);

// `corral dev`: a controller and N agents on loopback until Ctrl-C. argv[0] is "dev".
int RunDevCommand(int argc, char** argv);
// `corral ca init|issue-controller|issue-node`: the cluster's PKI. argv[0] is "ca".
int RunCaCommand(int argc, char** argv);

// The usage text of `corral` as a whole.
void PrintUsage();

}  // namespace corral::cli
