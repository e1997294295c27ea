#include "controller/internal/governance.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "core/duration.h"

namespace corral::controller::internal {
namespace {

constexpr std::string_view kAccount = "account";
constexpr std::string_view kUser = "user";
constexpr std::string_view kQos = "qos";
// Set once the store has held governance records: from then on the store is authoritative.
constexpr std::string_view kSeededMeta = "governance.seeded";

// Bounds of what a request may ask for: far above any real cluster, low enough that a typo
// (an extra digit or two) is caught and sums cannot overflow.
constexpr uint64_t kMaxShares = 1'000'000'000;
constexpr uint64_t kMaxGpus = 10'000'000;
constexpr uint64_t kMaxCpus = 1'000'000'000;
constexpr uint64_t kMaxMemMb = uint64_t{1} << 42;  // 4 EiB
constexpr uint64_t kMaxJobs = 100'000'000;
constexpr uint64_t kMaxGpuMinutes = uint64_t{1} << 50;
constexpr Duration kMaxWall = Minutes(int64_t{366} * 24 * 60);
constexpr double kMaxUsageFactor = 1e6;  // as corral.toml

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

// Names of accounts, users and QOS: 1-64 bytes of letters, digits, '.', '_', '-' and '@' (not
// first), as Unix user names and Slurm's account names are.
Status CheckName(std::string_view what, const std::string& name) {
  if (name.empty()) return InvalidArgument(std::string(what) + ": name: empty");
  if (name.size() > 64) {
    return InvalidArgument(std::string(what) + " " + Quote(name.substr(0, 64)) +
                           "...: name: longer than 64 bytes");
  }
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || (i > 0 && (c == '.' || c == '-' || c == '@'));
    if (!ok) {
      return InvalidArgument(std::string(what) + ": name: " + Quote(name) +
                             " may hold only letters, digits, '_', and '.', '-', '@' after the "
                             "first character");
    }
  }
  return {};
}

Status CheckMax(const std::string& where, std::string_view field, std::optional<uint64_t> v,
                uint64_t max) {
  if (v && *v > max) {
    return InvalidArgument(where + ": " + std::string(field) + ": " + std::to_string(*v) +
                           " is over the maximum " + std::to_string(max));
  }
  return {};
}

template <typename T>
std::optional<uint64_t> Widen(const std::optional<T>& v) {
  return v ? std::optional<uint64_t>(*v) : std::nullopt;
}

Status CheckLimits(const std::string& where, const Limits& l) {
  CORRAL_RETURN_IF_ERROR(CheckMax(where, "limits.max_gpus", Widen(l.max_gpus), kMaxGpus));
  CORRAL_RETURN_IF_ERROR(CheckMax(where, "limits.max_cpus", Widen(l.max_cpus), kMaxCpus));
  CORRAL_RETURN_IF_ERROR(CheckMax(where, "limits.max_mem_mb", l.max_mem_mb, kMaxMemMb));
  CORRAL_RETURN_IF_ERROR(
      CheckMax(where, "limits.max_running_jobs", Widen(l.max_running_jobs), kMaxJobs));
  CORRAL_RETURN_IF_ERROR(
      CheckMax(where, "limits.max_submitted_jobs", Widen(l.max_submitted_jobs), kMaxJobs));
  CORRAL_RETURN_IF_ERROR(
      CheckMax(where, "limits.max_gpu_minutes", l.max_gpu_minutes, kMaxGpuMinutes));
  CORRAL_RETURN_IF_ERROR(
      CheckMax(where, "limits.max_gpus_per_job", Widen(l.max_gpus_per_job), kMaxGpus));
  if (l.max_wall && (*l.max_wall <= Duration{0} || *l.max_wall > kMaxWall)) {
    return InvalidArgument(where + ": limits.max_wall: " + FormatSlurmDuration(*l.max_wall) +
                           " is not between 1 second and 366 days");
  }
  return {};
}

Status CheckShares(const std::string& where, uint32_t shares) {
  if (shares == 0) return InvalidArgument(where + ": shares: must be at least 1");
  return CheckMax(where, "shares", shares, kMaxShares);
}

// `file`'s sections as records: every user named by an account gets one.
void FromFile(const sched::SchedulerConfig& file, std::map<std::string, AccountConfig>* accounts,
              std::map<std::string, UserConfig>* users, std::map<std::string, QosConfig>* qos) {
  for (const AccountConfig& a : file.accounts) (*accounts)[a.name] = a;
  for (const UserConfig& u : file.users) (*users)[u.name] = u;
  for (const AccountConfig& a : file.accounts) {
    for (const std::string& u : a.users) {
      if (!users->count(u)) (*users)[u] = UserConfig{.name = u};
    }
    for (const std::string& u : a.coordinators) {  // coordinators (issue 16 item 2)
      if (!users->count(u)) (*users)[u] = UserConfig{.name = u};
    }
  }
  for (const QosConfig& q : file.qos) (*qos)[q.name] = q;
}

template <typename Map>
std::string FirstDifference(std::string_view kind, const Map& file, const Map& stored) {
  for (const auto& [name, rec] : file) {
    auto it = stored.find(name);
    if (it == stored.end()) return std::string(kind) + " " + Quote(name) + " is not in the store";
    if (!(it->second == rec)) return std::string(kind) + " " + Quote(name) + " differs";
  }
  for (const auto& [name, rec] : stored) {
    if (!file.count(name)) return std::string(kind) + " " + Quote(name) + " is not in the file";
  }
  return "";
}

template <typename Map, typename Encode>
void WriteChanges(std::string_view kind, const Map& before, const Map& after, Encode encode,
                  store::WriteBatch& writes) {
  for (const auto& [name, rec] : after) {
    auto it = before.find(name);
    if (it == before.end() || !(it->second == rec)) {
      writes.PutGovernance({std::string(kind), name, encode(rec)});
    }
  }
  for (const auto& [name, rec] : before) {
    if (!after.count(name)) writes.DeleteGovernance(std::string(kind), name);
  }
}

}  // namespace

void Governance::Start(const sched::SchedulerConfig& file) {
  accounts_.clear();
  users_.clear();
  qos_.clear();
  FromFile(file, &accounts_, &users_, &qos_);
}

Result<Governance::Recovered> Governance::Recover(
    const sched::SchedulerConfig& file, const std::vector<store::GovernanceRecord>& records,
    const std::map<std::string, std::string>& meta) {
  AccountMap file_accounts;
  UserMap file_users;
  QosMap file_qos;
  FromFile(file, &file_accounts, &file_users, &file_qos);
  Recovered r;
  if (!meta.count(std::string(kSeededMeta)) && records.empty()) {
    CORRAL_ASSIGN_OR_RETURN(r.config, Build(file, file_accounts, file_users, file_qos));
    WriteChanges(kAccount, AccountMap{}, file_accounts, api::EncodeAccount, out_.writes);
    WriteChanges(kUser, UserMap{}, file_users, api::EncodeUserConfig, out_.writes);
    WriteChanges(kQos, QosMap{}, file_qos, api::EncodeQos, out_.writes);
    out_.writes.PutMeta(std::string(kSeededMeta), "1");
    accounts_ = std::move(file_accounts);
    users_ = std::move(file_users);
    qos_ = std::move(file_qos);
    r.seeded = true;
    return r;
  }
  AccountMap accounts;
  UserMap users;
  QosMap qos;
  for (const store::GovernanceRecord& rec : records) {
    auto bad = [&](const Error& e) {
      return Internal("stored " + rec.kind + " " + Quote(rec.name) + ": " + e.message);
    };
    if (rec.kind == kAccount) {
      Result<AccountConfig> a = api::DecodeAccount(rec.body);
      if (!a) return bad(a.error());
      accounts[rec.name] = std::move(*a);
    } else if (rec.kind == kUser) {
      Result<UserConfig> u = api::DecodeUserConfig(rec.body);
      if (!u) return bad(u.error());
      users[rec.name] = std::move(*u);
    } else if (rec.kind == kQos) {
      Result<QosConfig> q = api::DecodeQos(rec.body);
      if (!q) return bad(q.error());
      qos[rec.name] = std::move(*q);
    }  // a kind a newer controller wrote: not ours to read
  }
  Result<sched::SchedulerConfig> built = Build(file, accounts, users, qos);
  if (!built) return Annotate(built.error(), "the store's accounts, users and qos");
  r.config = std::move(*built);
  for (std::string d :
       {FirstDifference(kAccount, file_accounts, accounts),
        FirstDifference(kUser, file_users, users), FirstDifference(kQos, file_qos, qos)}) {
    if (!d.empty() && r.differs.empty()) r.differs = std::move(d);
  }
  accounts_ = std::move(accounts);
  users_ = std::move(users);
  qos_ = std::move(qos);
  return r;
}

std::vector<AccountConfig> Governance::Accounts() const {
  std::vector<AccountConfig> out;
  for (const auto& [name, a] : accounts_) out.push_back(a);
  return out;
}

std::vector<api::UserInfo> Governance::Users() const {
  std::map<std::string, api::UserInfo> out;
  for (const auto& [name, u] : users_) out[name].user = u;
  for (const auto& [name, a] : accounts_) {
    for (const std::string& u : a.users) {
      api::UserInfo& info = out[u];
      if (info.user.name.empty()) info.user.name = u;
      info.accounts.push_back(name);  // accounts_ is ordered: sorted
    }
  }
  std::vector<api::UserInfo> list;
  for (auto& [name, info] : out) list.push_back(std::move(info));
  return list;
}

std::vector<QosConfig> Governance::Qos() const {
  std::vector<QosConfig> out;
  for (const auto& [name, q] : qos_) out.push_back(q);
  return out;
}

Result<AccountConfig> Governance::Account(const std::string& name) const {
  auto it = accounts_.find(name);
  if (it == accounts_.end()) return NotFound("account " + Quote(name) + ": no such account");
  return it->second;
}

Result<api::UserInfo> Governance::User(const std::string& name) const {
  for (api::UserInfo& u : Users()) {
    if (u.user.name == name) return std::move(u);
  }
  return NotFound("user " + Quote(name) + ": no such user");
}

Result<QosConfig> Governance::OneQos(const std::string& name) const {
  auto it = qos_.find(name);
  if (it == qos_.end()) return NotFound("qos " + Quote(name) + ": no such qos");
  return it->second;
}

std::vector<std::string> Governance::AccountChain(const std::string& account) const {
  std::vector<std::string> chain;
  for (auto it = accounts_.find(account); it != accounts_.end() && chain.size() <= accounts_.size();
       it = accounts_.find(it->second.parent)) {
    chain.push_back(it->first);
    if (it->second.parent.empty()) break;
  }
  return chain;
}

Result<sched::SchedulerConfig> Governance::PutAccount(const sched::SchedulerConfig& base,
                                                      AccountConfig a, bool create) {
  CORRAL_RETURN_IF_ERROR(CheckName("account", a.name));
  const std::string where = "account " + Quote(a.name);
  auto it = accounts_.find(a.name);
  if (create && it != accounts_.end()) {
    return MakeError(ErrorCode::kAlreadyExists, where + ": already exists");
  }
  if (!create && it == accounts_.end()) return NotFound(where + ": no such account");
  CORRAL_RETURN_IF_ERROR(CheckShares(where, a.shares));
  CORRAL_RETURN_IF_ERROR(CheckMax(where, "guaranteed_gpus", a.guaranteed_gpus, kMaxGpus));
  CORRAL_RETURN_IF_ERROR(CheckLimits(where, a.limits));
  if (a.budget) CORRAL_RETURN_IF_ERROR(ValidateBudget(where, *a.budget));  // issue 16 item 5
  if (a.parent == a.name) return InvalidArgument(where + ": parent: an account cannot be its own");
  if (!a.parent.empty() && !accounts_.count(a.parent)) {
    return InvalidArgument(where + ": parent: no such account " + Quote(a.parent));
  }
  for (const std::string& q : a.allowed_qos) {
    if (!qos_.count(q)) return InvalidArgument(where + ": allowed_qos: no such qos " + Quote(q));
  }
  if (!a.default_qos.empty() && !qos_.count(a.default_qos)) {
    return InvalidArgument(where + ": default_qos: no such qos " + Quote(a.default_qos));
  }
  // Members are changed through the users (their associations); a new account starts with
  // the users the request lists, which must exist.
  if (create) {
    std::sort(a.users.begin(), a.users.end());
    a.users.erase(std::unique(a.users.begin(), a.users.end()), a.users.end());
    for (const std::string& u : a.users) {
      if (!users_.count(u)) return InvalidArgument(where + ": users: no such user " + Quote(u));
    }
  } else {
    a.users = it->second.users;
  }
  // Coordinators change through their own routes; a new account may name existing users.
  if (create) {
    std::sort(a.coordinators.begin(), a.coordinators.end());
    a.coordinators.erase(std::unique(a.coordinators.begin(), a.coordinators.end()),
                         a.coordinators.end());
    for (const std::string& u : a.coordinators) {
      if (!users_.count(u)) {
        return InvalidArgument(where + ": coordinators: no such user " + Quote(u));
      }
    }
  } else {
    a.coordinators = it->second.coordinators;
  }
  AccountMap accounts = accounts_;
  accounts[a.name] = std::move(a);
  return Commit(base, std::move(accounts), users_, qos_);
}

Result<sched::SchedulerConfig> Governance::PutUser(const sched::SchedulerConfig& base,
                                                   api::UserInfo u, bool create) {
  UserConfig& cfg = u.user;
  CORRAL_RETURN_IF_ERROR(CheckName("user", cfg.name));
  const std::string where = "user " + Quote(cfg.name);
  bool exists = users_.count(cfg.name) > 0;
  if (create && exists) return MakeError(ErrorCode::kAlreadyExists, where + ": already exists");
  if (!create && !exists) return NotFound(where + ": no such user");
  CORRAL_RETURN_IF_ERROR(CheckShares(where, cfg.shares));
  CORRAL_RETURN_IF_ERROR(CheckLimits(where, cfg.limits));
  std::set<std::string> wanted(u.accounts.begin(), u.accounts.end());
  for (const std::string& a : wanted) {
    if (!accounts_.count(a))
      return InvalidArgument(where + ": accounts: no such account " + Quote(a));
  }
  if (cfg.default_account.empty() && !u.accounts.empty()) cfg.default_account = u.accounts.front();
  if (!cfg.default_account.empty() && !wanted.count(cfg.default_account)) {
    return InvalidArgument(where + ": default_account: " + Quote(cfg.default_account) +
                           " is not one of its accounts");
  }
  // Limits per association (issue 16): one per account of the user, sorted; none kept empty.
  std::erase_if(cfg.association_limits,
                [](const AssociationLimits& al) { return al.limits == Limits{}; });
  std::sort(cfg.association_limits.begin(), cfg.association_limits.end(),
            [](const AssociationLimits& x, const AssociationLimits& y) {
              return x.account < y.account;
            });
  for (size_t i = 0; i < cfg.association_limits.size(); ++i) {
    const std::string& a = cfg.association_limits[i].account;
    if (i > 0 && cfg.association_limits[i - 1].account == a) {
      return InvalidArgument(where + ": association_limits: account " + Quote(a) +
                             " is given twice");
    }
    if (!wanted.count(a)) {
      return InvalidArgument(where + ": association_limits: " + Quote(a) +
                             " is not one of its accounts");
    }
    CORRAL_RETURN_IF_ERROR(
        CheckLimits(where + " in account " + Quote(a), cfg.association_limits[i].limits));
  }
  AccountMap accounts = accounts_;
  for (auto& [name, a] : accounts) {
    auto at = std::find(a.users.begin(), a.users.end(), cfg.name);
    if (wanted.count(name) && at == a.users.end()) {
      a.users.push_back(cfg.name);
      std::sort(a.users.begin(), a.users.end());
    } else if (!wanted.count(name) && at != a.users.end()) {
      a.users.erase(at);
    }
  }
  UserMap users = users_;
  users[cfg.name] = cfg;
  return Commit(base, std::move(accounts), std::move(users), qos_);
}

Result<sched::SchedulerConfig> Governance::PutQos(const sched::SchedulerConfig& base, QosConfig q,
                                                  bool create) {
  CORRAL_RETURN_IF_ERROR(CheckName("qos", q.name));
  const std::string where = "qos " + Quote(q.name);
  bool exists = qos_.count(q.name) > 0;
  if (create && exists) return MakeError(ErrorCode::kAlreadyExists, where + ": already exists");
  if (!create && !exists) return NotFound(where + ": no such qos");
  CORRAL_RETURN_IF_ERROR(CheckLimits(where, q.limits));
  CORRAL_RETURN_IF_ERROR(CheckLimits(where + " per_user", q.per_user));
  // Usage is kept per account and user, not per QOS; a QOS's wall limit is its max_time.
  for (const Limits* l : {&q.limits, &q.per_user}) {
    if (l->max_gpu_minutes) {
      return InvalidArgument(where +
                             ": max_gpu_minutes: not a QOS limit (usage is kept per "
                             "account and user)");
    }
    if (l->max_wall) return InvalidArgument(where + ": max_wall: a QOS's is its max_time");
  }
  if (q.per_user.max_cpus || q.per_user.max_mem_mb || q.per_user.max_gpus_per_job) {
    return InvalidArgument(where +
                           ": per_user: only max_gpus, max_running_jobs and "
                           "max_submitted_jobs are limits per user of a QOS");
  }
  if (!std::isfinite(q.usage_factor) || q.usage_factor < 0 || q.usage_factor > kMaxUsageFactor) {
    return InvalidArgument(where + ": usage_factor: must be between 0 and 1000000");
  }
  if (q.max_time && (*q.max_time <= Duration{0} || *q.max_time > kMaxWall)) {
    return InvalidArgument(where + ": max_time: " + FormatSlurmDuration(*q.max_time) +
                           " is not between 1 second and 366 days");
  }
  if (q.grace_time && (*q.grace_time < Duration{0} || *q.grace_time > Minutes(7 * 24 * 60))) {
    return InvalidArgument(where + ": grace_time: must be between 0 and 7 days");
  }
  for (const std::string& p : q.preempt) {
    if (p != q.name && !qos_.count(p)) {
      return InvalidArgument(where + ": preempt: no such qos " + Quote(p));
    }
  }
  QosMap qos = qos_;
  qos[q.name] = std::move(q);
  return Commit(base, accounts_, users_, std::move(qos));
}

Result<sched::SchedulerConfig> Governance::DeleteAccount(const sched::SchedulerConfig& base,
                                                         const std::string& name,
                                                         const ActiveUse& use) {
  auto it = accounts_.find(name);
  const std::string where = "account " + Quote(name);
  if (it == accounts_.end()) return NotFound(where + ": no such account");
  for (const auto& [child, a] : accounts_) {
    if (a.parent == name) {
      return FailedPrecondition(where + ": still has sub-account " + Quote(child) +
                                "; delete or move it first");
    }
  }
  if (!it->second.users.empty()) {
    return FailedPrecondition(where + ": still has " + std::to_string(it->second.users.size()) +
                              " user(s), the first " + Quote(it->second.users.front()) +
                              "; remove them from it first");
  }
  if (uint32_t n = use.account_jobs(name); n > 0) {
    return FailedPrecondition(where + ": " + std::to_string(n) +
                              " pending or running job(s) use it; cancel them first");
  }
  AccountMap accounts = accounts_;
  accounts.erase(name);
  return Commit(base, std::move(accounts), users_, qos_);
}

Result<sched::SchedulerConfig> Governance::DeleteUser(const sched::SchedulerConfig& base,
                                                      const std::string& name,
                                                      const ActiveUse& use) {
  const std::string where = "user " + Quote(name);
  bool listed = std::any_of(accounts_.begin(), accounts_.end(), [&](const auto& kv) {
    return std::find(kv.second.users.begin(), kv.second.users.end(), name) != kv.second.users.end();
  });
  if (!users_.count(name) && !listed) return NotFound(where + ": no such user");
  if (uint32_t n = use.user_jobs(name); n > 0) {
    return FailedPrecondition(where + ": " + std::to_string(n) +
                              " pending or running job(s); cancel them first");
  }
  AccountMap accounts = accounts_;
  for (auto& [acct, a] : accounts) {
    std::erase(a.users, name);
    std::erase(a.coordinators, name);  // coordinators (issue 16 item 2)
  }
  UserMap users = users_;
  users.erase(name);
  return Commit(base, std::move(accounts), std::move(users), qos_);
}

Result<sched::SchedulerConfig> Governance::DeleteQos(const sched::SchedulerConfig& base,
                                                     const std::string& name,
                                                     const ActiveUse& use) {
  const std::string where = "qos " + Quote(name);
  if (!qos_.count(name)) return NotFound(where + ": no such qos");
  if (name == base.default_qos) {
    return FailedPrecondition(where + ": it is the default_qos of [scheduler] in corral.toml");
  }
  if (uint32_t n = use.qos_jobs(name); n > 0) {
    return FailedPrecondition(where + ": " + std::to_string(n) +
                              " pending or running job(s) use it; cancel them first");
  }
  QosMap qos = qos_;
  qos.erase(name);
  return Commit(base, accounts_, users_, std::move(qos));
}

Result<sched::SchedulerConfig> Governance::Build(const sched::SchedulerConfig& base,
                                                 const AccountMap& accounts, const UserMap& users,
                                                 const QosMap& qos) {
  sched::SchedulerConfig c = base;
  c.accounts.clear();
  c.users.clear();
  c.qos.clear();
  // Parents before children (the scheduler's invariant): repeatedly take the accounts whose
  // parent is placed; what is left is a loop or hangs under an unknown account.
  std::set<std::string> placed;
  while (placed.size() < accounts.size()) {
    size_t before = placed.size();
    for (const auto& [name, a] : accounts) {
      if (placed.count(name)) continue;
      if (a.parent.empty() || placed.count(a.parent)) {
        c.accounts.push_back(a);
        placed.insert(name);
      }
    }
    if (placed.size() == before) {
      for (const auto& [name, a] : accounts) {
        if (placed.count(name)) continue;
        if (!accounts.count(a.parent)) {
          return InvalidArgument("account " + Quote(name) + ": parent: no such account " +
                                 Quote(a.parent));
        }
        return InvalidArgument("account " + Quote(name) + ": parent: " + Quote(a.parent) +
                               " would make a loop in the account tree");
      }
    }
  }
  for (const auto& [name, u] : users) c.users.push_back(u);
  for (const auto& [name, q] : qos) c.qos.push_back(q);
  CORRAL_RETURN_IF_ERROR(sched::ValidateSchedulerConfig(c));
  return c;
}

Result<sched::SchedulerConfig> Governance::Commit(const sched::SchedulerConfig& base,
                                                  AccountMap accounts, UserMap users, QosMap qos) {
  CORRAL_ASSIGN_OR_RETURN(sched::SchedulerConfig c, Build(base, accounts, users, qos));
  WriteChanges(kAccount, accounts_, accounts, api::EncodeAccount, out_.writes);
  WriteChanges(kUser, users_, users, api::EncodeUserConfig, out_.writes);
  WriteChanges(kQos, qos_, qos, api::EncodeQos, out_.writes);
  out_.writes.PutMeta(std::string(kSeededMeta), "1");
  accounts_ = std::move(accounts);
  users_ = std::move(users);
  qos_ = std::move(qos);
  return c;
}

}  // namespace corral::controller::internal
