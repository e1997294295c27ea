// Hierarchical fair share: Slurm's "fair tree" ranking of users over an account tree.
//
// Algorithm (`ComputeFairTree`):
//   1. Build the tree: the root, the configured accounts (with their shares) and, under each
//      account, its users as leaves (a user's shares come from its `[[user]]` entry, default 1).
//      Associations that appear only in usage or in `extra` are added: an unknown account as a
//      child of the root with 1 share, an unknown user as a leaf with its configured shares.
//   2. Usage of a leaf is its `AssociationUsage::decayed_usage`; an account's usage is the sum
//      over its subtree.
//   3. Among siblings, the level fair share of each is LF = S / U, with S its shares divided by
//      the siblings' total shares and U its usage divided by the siblings' total usage
//      (LF = infinity when U is 0).
//   4. Depth-first from the root, visit siblings in decreasing LF. Siblings with equal LF form one
//      group: a group of users gets one rank; a group with accounts in it is replaced by its users
//      and the children of its accounts, merged and ranked together (Slurm's tie rule), so that
//      with no usage at all every user ties. Ties inside a sort are broken by name.
//   5. With n users in all and r the number of users ranked ahead of a user, its factor is
//      (n - r) / n: the top user gets 1, the last gets 1/n.
//
// Work-conserving by construction: the factor only orders jobs; idle shares are used by anyone.
// Pure and deterministic. Thread-compatible.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sched/config.h"
#include "sched/snapshot.h"

namespace corral::sched {

struct FairShareEntry {
  std::string account;
  std::string user;
  double factor = 0;           // in (0, 1]
  double level_fairshare = 0;  // the user's LF among its account's users (infinity if no usage)
  uint32_t rank = 0;           // 1 = first
  bool operator==(const FairShareEntry&) const = default;
};

// One node of the tree as Slurm's sshare shows it.
struct ShareTreeNode {
  std::string account;           // the account; for a user, its account; "root" for the root
  std::string user;              // "" for the root and accounts
  uint32_t depth = 0;            // 0 = the root
  double shares = 0;             // raw shares (0 for the root)
  double norm_shares = 0;        // shares over its siblings' total (1 for the root)
  double usage = 0;              // decayed usage of the node and its subtree
  double effective_usage = 0;    // usage over its siblings' total (step 3's U)
  double level_fairshare = 0;    // step 3's LF (infinity when U is 0)
  double factor = 0;             // users: the fair-share factor of step 5; 0 for accounts
  bool operator==(const ShareTreeNode&) const = default;
};

// Ranks every user of the tree; see the file comment. `extra` lists (account, user) pairs that
// must be ranked even without configuration or usage (the associations of queued jobs).
// Returns the entries sorted by (account, user).
std::vector<FairShareEntry> ComputeFairTree(
    const SchedulerConfig& config, const std::vector<AssociationUsage>& usage,
    const std::vector<std::pair<std::string, std::string>>& extra = {});

// The whole tree (`sshare`): the same tree and ranking as `ComputeFairTree`, every node depth
// first from the root, a node's users before its sub-accounts, each by name.
std::vector<ShareTreeNode> ComputeShareTree(
    const SchedulerConfig& config, const std::vector<AssociationUsage>& usage,
    const std::vector<std::pair<std::string, std::string>>& extra = {});

}  // namespace corral::sched
