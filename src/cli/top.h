// `corral top [--interval S] [--once] [--json] [-u USER,..] [-p PARTITION,..]`: a live terminal
// view of the nodes, their GPUs and the queue (docs/metrics-jobs.md). The frame itself is
// internal/top_view.h's.
//
// Not thread-safe (process-wide state: the terminal, signals, stdout).
#pragma once

namespace corral::cli {

// argv[0] is "top". Returns the exit status: 0, 1 after an error (--once), 2 for a usage
// error.
int RunTopCommand(int argc, char** argv);

}  // namespace corral::cli
