// sbatch / srun / salloc option handling, as Slurm 22.05 does it, producing a `JobSpec` ready
// for Corral's API plus the settings that stay on the client.
//
// Sources and precedence (as in Slurm): options on the command line override SBATCH_* /
// SALLOC_* / SLURM_* input environment variables (environment.h), which override #SBATCH
// directives (directives.h); within one source the last occurrence wins. Options are read with
// glibc's getopt_long over Slurm's complete option table (options.h), whose entries also apply
// them, whatever their source.
//
// Options Corral does not support are refused with an error naming the option and where it
// came from; a few with no effect on Corral (--hint, --mpi, --cpu-bind, --propagate,
// --acctg-freq, --oversubscribe, --profile, --bell, ...) are accepted and listed in
// `ClientOptions::ignored`. docs/slurm.md lists them all.
//
// Error messages are the complete line Slurm would print on stderr ("sbatch: error: ...",
// "sbatch: unrecognized option '--foo'"), without the newline.
//
// Pure functions: the caller passes the environment, the working directory, the user and the
// clock; nothing is read from the process. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/slurm/options.h"
#include "core/job.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::slurm {

// What the caller knows about the submitting process.
struct SubmitContext {
  std::map<std::string, std::string> environment;  // the caller's environment
  std::string cwd;                                 // absolute
  std::string user;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string hostname;  // short host name (SLURM_SUBMIT_HOST)
  Timestamp now{};
  int64_t utc_offset_seconds = 0;  // the local zone, for --begin
  int nice = 0;                    // the caller's nice value (SLURM_PRIO_PROCESS)
  // `corral submit`: --time keeps its seconds. sbatch/srun/salloc round a limit up to whole
  // minutes, as Slurm does ("-t 0:30" is one minute).
  bool exact_time_limits = false;
};

// Settings that stay on the client.
struct ClientOptions {
  // sbatch
  bool parsable = false;                 // --parsable: print "ID" (or "ID;cluster") only
  bool wait = false;                     // -W/--wait: wait for the job to end, exit with its code
  bool test_only = false;                // --test-only
  std::string script_path;               // the script operand ("" = stdin, or --wrap)
  std::vector<std::string> script_args;  // its arguments
  std::string wrap;                      // --wrap command ("" = none)
  // all
  bool help = false;
  bool usage = false;
  bool version = false;
  bool quiet = false;
  int verbose = 0;
  std::vector<std::string> ignored;  // accepted options without effect, "--hint=nomultithread"
  // srun / salloc
  std::optional<uint64_t> jobid;         // run as a step of this job (--jobid, SLURM_JOB_ID)
  std::vector<std::string> command;      // the program and its arguments
  bool label = false;                    // srun -l: prefix output lines with the task id
  bool unbuffered = false;               // srun -u
  bool pty = false;                      // srun --pty: task 0 in a terminal
  std::optional<bool> kill_on_bad_exit;  // srun -K[0|1]
  std::optional<uint32_t> relative;      // srun -r N: the step starts at node N of the job
  bool overlap = false;                  // srun --overlap
  bool exact = false;                    // srun --exact
  bool whole = false;                    // srun --whole
  bool no_shell = false;                 // salloc --no-shell
  std::optional<uint32_t> immediate;     // -I[secs]: give up unless resources come that soon
  std::string input;                     // -i: "" = default, "none" -> "/dev/null"
  std::string gpu_bind;                  // --gpu-bind (srun applies it to tasks)
  std::string distribution;              // -m block|cyclic...
  bool operator==(const ClientOptions&) const = default;
};

struct SubmitRequest {
  JobSpec spec;
  ClientOptions client;
  std::vector<std::string> warnings;  // non-fatal lines Slurm prints too ("sbatch: Warning: ...")
};

// First look at sbatch's command line: which script to read (`script_path`, "" = stdin) or
// whether `--wrap` was given, and --help/--usage/--version. Returns the scanner's errors.
Result<ClientOptions> ScanSbatchCommandLine(const std::vector<std::string>& args);

// Builds the job of `sbatch ARGS`. `script` is the text of the script the caller read (from
// `script_path`, or stdin); it is ignored with --wrap.
// Returns kInvalidArgument for a malformed option, value or script (empty, no "#!", DOS line
// breaks, NUL bytes), kUnimplemented for an option Corral does not support.
Result<SubmitRequest> ParseSbatch(const std::vector<std::string>& args, std::string_view script,
                                  const SubmitContext& ctx);

// Builds the job or step of `srun ARGS` (a step of `client.jobid` when set: inside an
// allocation SLURM_JOB_ID, SLURM_NTASKS, SLURM_NNODES... of the environment act as defaults).
// Same errors as ParseSbatch; kInvalidArgument when no command is given.
Result<SubmitRequest> ParseSrun(const std::vector<std::string>& args, const SubmitContext& ctx);

// Builds the allocation of `salloc ARGS` (`client.command` may be empty: the caller starts
// the user's shell). Same errors as ParseSbatch.
Result<SubmitRequest> ParseSalloc(const std::vector<std::string>& args, const SubmitContext& ctx);

}  // namespace corral::slurm
