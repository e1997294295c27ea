// `corral run [options] CMD ARGS...`: launches a step of the job it runs in (CORRAL_JOB_ID, or
// --jobid) on the job's nodes, like Slurm's `srun` inside an allocation, and returns when every
// task has ended: 0 when all succeeded, else the highest task exit code (128 + signal for a
// task killed by one).
//
// Options (Slurm's names): -N/--nodes, -n/--ntasks, --ntasks-per-node, -c/--cpus-per-task,
// --gpus-per-task, -O/--overcommit, -K/--kill-on-bad-exit[=0|1], -l/--label,
// --export=ALL|NONE|VAR[=value],..., -D/--chdir, -o/--output and -e/--error (a file pattern on
// each node instead of forwarding), --jobid, --controller, --json, -u/--unbuffered (accepted;
// output is always forwarded as it comes, whole lines at a time).
//
// Output: unless -o is given, the tasks' stdout and stderr come back here (the agents send
// them to a small HTTP server this command runs for the step's life, on the job's node it runs
// on) and go to this command's stdout and stderr, line by line, prefixed with "RANK: " under
// -l. Inside a batch script that is the job's output file, as with srun. SIGINT, SIGTERM and
// SIGHUP cancel the step (its tasks get SIGTERM, then SIGKILL after the agent's grace).
#pragma once

namespace corral::cli {

// argv[0] is "run". Returns the exit status described above; 1 after an error (one line on
// stderr), 2 for a usage error.
int RunStepCommand(int argc, char** argv);

}  // namespace corral::cli
