// What the Slurm front end's commands (src/cli/sbatch.cc, srun.cc, squeue.cc, ...) share: the
// submitting process's context, the local time zone, group names, resolving Slurm job id
// arguments against the controller, and the commands' entry points for the dispatcher
// (cli/slurm_front.h). Internal to cli.
//
// Not thread-safe (reads and changes process-wide state: the environment, getopt).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api/messages.h"
#include "cli/client.h"
#include "cli/slurm/job_ids.h"
#include "cli/slurm/submit.h"
#include "core/result.h"

namespace corral::cli::internal {

// The submitting process as the Slurm parsers see it: its environment, working directory,
// user, short host name, the time, the local zone and its nice value.
slurm::SubmitContext ProcessContext();

// The process environment as a map.
std::map<std::string, std::string> ProcessEnvironment();

// Seconds east of UTC of the local time zone now.
int64_t LocalUtcOffset();

// A group's name ("" when unknown: the renderers then print the number).
std::string GroupName(uint32_t gid);

// Connects to the controller (CORRAL_CONTROLLER, or the dev cluster); on failure prints
// "PROG: error: ..." and returns null.
std::unique_ptr<Client> ConnectOrReport(const std::string& prog);

// Prints "PROG: error: MESSAGE" (MESSAGE already starting with "PROG: " is printed as is).
void PrintError(const std::string& prog, const std::string& message);

// Prints "slurm 22.05.8 (corral 0.1.0)", as every Slurm command's -V does.
void PrintVersion();

// The jobs `specs` name (`12` — for an array's job id, every task of the array —, `12_3`,
// `12_[1-5]`, `12_*`), in job id order. Ids that match nothing are listed in `missing` (as
// the user wrote them). Returns the controller's error.
Result<std::vector<api::JobInfo>> ResolveJobIds(Client& client,
                                                const std::vector<slurm::JobIdSpec>& specs,
                                                std::vector<std::string>* missing);

// The exit status of a job that ended, as `sbatch --wait` and `corral wait` return it.
int JobExitStatus(const Job& job);

// Entry points; argv[0] is the command's name. They return the process exit status.
// `sbatch`, or `corral submit` (which also takes --controller URL and --json, and reads
// `#CORRAL` lines as `#SBATCH` ones) when `corral_submit`.
int RunBatchSubmit(int argc, char** argv, bool corral_submit);
int RunSbatch(int argc, char** argv);
int RunSrun(int argc, char** argv);
int RunSalloc(int argc, char** argv);
int RunSqueue(int argc, char** argv);
int RunSinfo(int argc, char** argv);
int RunSacct(int argc, char** argv);
int RunSacctmgr(int argc, char** argv);  // cli/sacctmgr.h
int RunScontrol(int argc, char** argv);
int RunScancel(int argc, char** argv);
int RunSdiag(int argc, char** argv);
// `sstat` and `sbcast` (sstat.cc, sbcast.cc).
int RunSstat(int argc, char** argv);
int RunSbcast(int argc, char** argv);
// `seff JOB` (cli/jobstats.cc).
int RunSeff(int argc, char** argv);
// `sreport`, `sshare`, `sprio` (cli/reports.cc; docs/slurm.md).
int RunSreport(int argc, char** argv);
int RunSshare(int argc, char** argv);
int RunSprio(int argc, char** argv);

}  // namespace corral::cli::internal
