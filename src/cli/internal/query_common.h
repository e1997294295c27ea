// What squeue, sinfo, sacct, scontrol and scancel share (src/cli/squeue.cc, ...): user and
// state names as their options take them, job id lists, the job filters of -u/-A/-p/-n/-q/-t/-w,
// and reporting a scan of their option table. Internal to cli.
//
// Not thread-safe (reads the environment; prints).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cli/internal/command_options.h"
#include "cli/internal/slurm_cli.h"
#include "cli/slurm/job_ids.h"
#include "core/job.h"
#include "core/result.h"

namespace corral::cli::internal {

// The variable's value, "" when unset.
std::string Env(const char* name);

// The user running the command.
std::string Me();

// The names of a -u list ("alice,1000"): numeric uids resolved to names, as Slurm's -u takes
// both.
std::vector<std::string> UserNames(const std::string& list);

// The nodes of a host list ("node[1-3]"). Returns kInvalidArgument "`message`LIST" when it
// is not one.
Result<std::vector<std::string>> NodeNames(const std::string& list, const std::string& message);

bool Contains(const std::vector<std::string>& v, const std::string& s);

// -t/--states of squeue, sacct and scancel: names or short codes, any case; "all" sets `*all`.
// Returns kInvalidArgument ("Invalid job state specified: X").
Result<std::vector<JobState>> ParseStates(const std::vector<std::string>& names, bool* all);

// The API's names of `states` ("PENDING").
std::vector<std::string> StateNames(const std::vector<JobState>& states);

// The jobs `args` name (each a Slurm job id list). Returns kInvalidArgument
// "`message`ARG" for the first that is not one.
Result<std::vector<slurm::JobIdSpec>> ParseJobIdArgs(const std::vector<std::string>& args,
                                                     const std::string& message);

// The client-side filters of the query commands; an empty list matches everything.
struct JobFilter {
  std::vector<std::string> users, accounts, partitions, names, qos, nodes;
  std::vector<JobState> states;
  bool running_on_nodes = false;  // squeue -w: running jobs only
  // Of running jobs, those suspended or not (`-t S` / `-t R`; both unless only one is named).
  bool show_running = true;
  bool show_suspended = true;
  void SetRunningStates(const std::vector<std::string>& state_names);
  bool Matches(const Job& job) const;
};

// Reports a scan of a query command's table: getopt's refusal ("PROG: unrecognized option
// '--x'", then "Try ..."), a handler's error ("PROG: error: ..."), or the help and version the
// scan stopped at (`usage`, then the table's `options_help` lines). Returns the exit status when
// the command ends here, nullopt when it goes on.
std::optional<int> ReportScan(const std::string& prog, const slurm::OptionScan& scan,
                              const QueryArgs& args, const std::string& usage,
                              const std::string& options_help);

// The words of argv (argv[0] included).
std::vector<std::string> Words(int argc, char** argv);

// True, after printing "PROG: error: ..." (PrintError), when `r` holds an error.
template <typename T>
bool Failed(const std::string& prog, const Result<T>& r) {
  if (r.has_value()) return false;
  PrintError(prog, r.error().message);
  return true;
}

// Handlers every query table has.
template <typename Args>
Status SetHelp(Args& a, const std::string&) {
  a.help = true;
  return {};
}
template <typename Args>
Status SetVersion(Args& a, const std::string&) {
  a.version = true;
  return {};
}
template <typename Args>
Status SetJson(Args& a, const std::string&) {
  a.json = true;
  return {};
}
// The --help, --usage, --version and --json entries of the query tables.
template <typename Args>
inline constexpr slurm::CommandOption<Args> kHelpOption = {
    .name = "help", .apply = SetHelp<Args>, .help = "this help", .stops = true};
template <typename Args>
inline constexpr slurm::CommandOption<Args> kUsageOption = {
    .name = "usage", .apply = SetHelp<Args>, .help = "this help", .stops = true};
template <typename Args>
inline constexpr slurm::CommandOption<Args> kVersionOption = {.name = "version",
                                                              .letter = 'V',
                                                              .apply = SetVersion<Args>,
                                                              .help = "print the version",
                                                              .stops = true};
template <typename Args>
inline constexpr slurm::CommandOption<Args> kJsonOption = {
    .name = "json", .apply = SetJson<Args>, .help = "Corral's JSON records instead of the text"};

// -u LIST (names or uids) and --me.
template <typename Args>
Status SetUsers(Args& a, const std::string& v) {
  a.users = UserNames(v);
  return {};
}
template <typename Args>
Status SetMe(Args& a, const std::string&) {
  a.users = {Me()};
  return {};
}
// A host list into the field `kMember`; `kMessage` starts the error of a bad one.
inline constexpr char kInvalidNodeName[] = "Invalid node name specified: ";
inline constexpr char kInvalidNodeList[] = "Invalid node list: ";
template <auto kMember, const char* kMessage>
Status SetNodes(typename slurm::internal::ClassOf<decltype(kMember)>::type& a,
                const std::string& v) {
  CORRAL_ASSIGN_OR_RETURN(a.*kMember, NodeNames(v, kMessage));
  return {};
}

}  // namespace corral::cli::internal
