// `sacctmgr`'s KEY=VALUE settings (sacctmgr.h lists the keys, docs/governance.md what each
// sets): account, user, association and QOS fields. Keys are lower case; -1 clears a limit.
// Each returns kInvalidArgument naming the key and value it refuses.
//
// Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/governance_codec.h"
#include "core/governance.h"
#include "core/result.h"

namespace corral::cli::internal {

template <typename T>
std::optional<uint64_t> Wide(const std::optional<T>& v) {
  return v ? std::optional<uint64_t>(*v) : std::nullopt;
}

Status SetAccountKey(AccountConfig& a, const std::string& key, const std::string& v);
Status SetUserKey(api::UserInfo& u, const std::string& key, const std::string& v);
Status SetQosKey(QosConfig& q, const std::string& key, const std::string& v);

// --- Limits of one (user, account) association (issue 16) ---
// Sets `key` in `l` when it is a limit an association takes (GrpTRES, GrpTRESMins, MaxTRES,
// MaxWall, MaxJobs/GrpJobs, MaxSubmit(Jobs)/GrpSubmit(Jobs)); false when it is not one.
Result<bool> SetAssocLimitKey(Limits& l, const std::string& key, const std::string& v);
// The limits of `u`'s association with `account`, added (empty) when it has none.
Limits& AssocLimitsOf(UserConfig& u, const std::string& account);
// The accounts `pairs` name (account=A,B or accounts=).
std::vector<std::string> NamedAccounts(
    const std::vector<std::pair<std::string, std::string>>& pairs);
// Applies `set` to `u`: with `accounts`, the limits to those associations (as Slurm's `add
// user U account=A MaxJobs=N`), every other key to the user.
Status SetUserKeys(api::UserInfo& u, const std::vector<std::pair<std::string, std::string>>& set,
                   const std::vector<std::string>& accounts);
// A user row's limits as `show association` prints them: the association's own, else the
// user's (over all its accounts).
Limits ShownLimits(const UserConfig& u, const std::string& account);

}  // namespace corral::cli::internal
