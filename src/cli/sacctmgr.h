// `sacctmgr` on top of Corral's accounts, users and QOS (docs/slurm.md, docs/governance.md):
//
//   sacctmgr [-i] [-n] [-P|-p] [-Q] add|create account|user|qos NAME[,NAME..] [KEY=VALUE..]
//   sacctmgr [-i] modify|update account|user|qos [where] NAME|name=NAME.. set KEY=VALUE..
//   sacctmgr [-i] delete|remove account|user|qos [where] NAME|name=NAME.. [account=A]
//   sacctmgr [-n] [-P|-p] show|list account|user|qos|association [where ...] [format=F,..]
//
// Keys (case-insensitive, as Slurm's): Parent, Fairshare (Shares), DefaultQOS, QOS (the
// allowed list), Account and DefaultAccount (users), GrpTRES (gres/gpu, cpu, mem), GrpTRESMins
// (gres/gpu), GrpJobs and MaxJobs (running jobs), GrpSubmit(Jobs) and MaxSubmit(Jobs),
// MaxWall, MaxTRES (gres/gpu per job); for QOS also Priority, Preempt, PreemptMode, GraceTime,
// UsageFactor, MaxTRESPerUser (MaxTRESPU), MaxJobsPerUser (MaxJobsPU), MaxSubmitJobsPerUser
// (MaxSubmitPU); -1 clears a limit. Description, Organization and Cluster are accepted and not
// kept (Corral has one cluster; an account's description is its name).
//
// Corral's association limits are an account's (over its subtree: Slurm's Grp* and, inherited
// by its users, Max*), a user's (over all its accounts) and a (user, account) association's
// (`modify user U where account=A set ...`, and the limits of `add user U account=A ...`);
// `show association` prints each account, then each (account, user) with the association's
// limits, the user's where it has none of a kind. A change is sent only after the
// confirmation Slurm asks for ("Would you like to commit changes? (y/N)"), or at once with -i.
//
// Not thread-safe (reads stdin).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/governance.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::cli {

// A TRES list as sacctmgr prints it: "cpu=64,gres/gpu=8,mem=100G" (cpu, gres/gpu, mem; memory
// in M unless a whole number of G/T). Empty when no part is set.
std::string FormatTres(std::optional<uint64_t> cpus, std::optional<uint64_t> gpus,
                       std::optional<uint64_t> mem_mb);

// Parses a TRES list ("gres/gpu=8,cpu=64,mem=100G"; "gpu" also for "gres/gpu"; -1 clears)
// into the fields given (null: that TRES is refused). Returns kInvalidArgument naming the
// part.
Status ParseTres(std::string_view text, std::optional<uint64_t>* cpus,
                 std::optional<uint64_t>* gpus, std::optional<uint64_t>* mem_mb);

// A duration as sacctmgr prints MaxWall and GraceTime: "01:00:00", "2-00:00:00".
std::string FormatSacctmgrTime(Duration d);

// Renders rows as sacctmgr does: without `parsable`, each cell right-aligned to its column's
// width (cut with '+' when longer) and followed by a blank, with a header and dashes unless
// `noheader`; with `parsable`, cells joined by '|' (and one after the last with
// `trailing_bar`, -p).
std::string RenderSacctmgr(const std::vector<std::string>& headers, const std::vector<int>& widths,
                           const std::vector<std::vector<std::string>>& rows, bool noheader,
                           bool parsable, bool trailing_bar);

// --- Account coordinators (issue 16 item 2; sacctmgr_coord.cc) ---
//   sacctmgr [-i] add coordinator account=A[,B..] names=U[,V..]
//   sacctmgr [-i] remove coordinator account=A[,B..] names=U[,V..]
//   sacctmgr show account withcoord [format=Account,...,Coordinators]
// print what Slurm 22.05 prints. `withcoord` lists for each account its coordinators and
// those of the accounts above it (a coordinator coordinates the subtree), as Slurm does.

// The coordinators of `account` in `all`: its own and its ancestors', sorted, joined by ','.
std::string InheritedCoordinators(const std::vector<AccountConfig>& all,
                                  const std::string& account);

class Client;
namespace internal {
// Asks Slurm's "Would you like to commit changes?" on stdin unless `immediate`; true to go on.
bool ConfirmCommit(bool immediate);
// `verb` is "add" or "delete"; `accounts` and `users` as the command line named them.
int SacctmgrCoordinator(Client& client, const std::string& verb,
                        const std::vector<std::string>& accounts,
                        const std::vector<std::string>& users, bool immediate, bool quiet);
}  // namespace internal

}  // namespace corral::cli
