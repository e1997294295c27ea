// Who may use a partition (issue 16 item 2): Slurm's AllowAccounts, DenyAccounts, AllowGroups
// and AllowQos (core/partition.h). Used at submit by the controller (every partition a job
// names must let it in, as Slurm with EnforcePartLimits=ALL) and by the scheduler when it
// places a job. The texts are Slurm 22.05's (its job reasons), checked against the peer:
//   Job's account not permitted to use this partition (gpu allows nlp,vision not bio)
//   Job's account not permitted to use this partition (gpu denies bio including bio)
//   Job's QOS not permitted to use this partition (gpu allows high not normal)
//   User's group not permitted to use this partition
// Accounts are compared by name: a sub-account of an allowed account is not allowed (as in
// Slurm).
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "core/partition.h"

namespace corral {

// "" when a job of `account` may use `p`, else Slurm's reason.
std::string PartitionAccountDenial(const Partition& p, const std::string& account);
// "" when a job of QOS `qos` may use `p`, else Slurm's reason.
std::string PartitionQosDenial(const Partition& p, const std::string& qos);
// Whether a user in `groups` (the names of every group the user is a member of) may use `p`.
bool PartitionGroupsAllow(const Partition& p, const std::vector<std::string>& groups);

}  // namespace corral
