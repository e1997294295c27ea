// `corral account|user|qos`: accounts, users (with their associations) and QOS as data
// (docs/governance.md), changed live on the controller.
//
//   corral account add NAME [--parent P] [--shares N] [--guaranteed-gpus N] [LIMITS]
//                           [--default-qos Q] [--allowed-qos Q,..]
//   corral account modify NAME [the same options]
//   corral user add NAME --account A[,B..] [--default-account A] [--shares N] [LIMITS]
//   corral user modify NAME [--account A,..] [--add-account A] [--remove-account A] ...
//   corral qos add NAME [--priority N] [--preempt Q,..] [--preempt-mode off|requeue|cancel]
//                       [--grace-time T] [--usage-factor F] [--max-time T] [LIMITS]
//                       [--max-gpus-per-user N] [--max-running-jobs-per-user N]
//                       [--max-submitted-jobs-per-user N]
//   corral account|user|qos delete NAME... | show NAME... | list
//   corral account coordinator add|remove ACCOUNT USER[,USER..]   (issue 16 item 2)
//
// LIMITS: --max-gpus, --max-cpus, --max-mem (MB, or 64G), --max-running-jobs,
// --max-submitted-jobs, --max-gpu-minutes, --max-gpus-per-job, --max-wall (a Slurm time);
// "none" (or -1, as sacctmgr) clears one. `modify` reads the record, changes what is given
// and writes it back. Changes are for admins and, on their own accounts, the accounts'
// coordinators (docs/governance.md); everyone may show and list.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli/client.h"
#include "core/governance.h"
#include "core/result.h"

namespace corral::cli {

// The value flags of `corral account|user|qos` (for the argument parser).
std::vector<std::string> GovernanceFlags();

// `kind` is "account", "user" or "qos"; `positional` starts with the verb. Returns 0, 1 (an
// error) or 2 (a usage error).
int Governance(Client& client, const std::string& kind, const std::vector<std::string>& positional,
               const std::map<std::string, std::string>& values, bool json);

// Sets one limit of `l` from a flag's or a sacctmgr field's value: `key` is the flag's name
// without the leading "--" ("max-gpus"). Returns kNotFound when `key` is no limit,
// kInvalidArgument for a bad value. "none", "-1" and "" clear the limit.
Status SetLimit(Limits& l, const std::string& key, const std::string& value);

}  // namespace corral::cli
