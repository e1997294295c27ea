#include "cli/governance.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <set>

#include "api/governance_codec.h"
#include "cli/budget.h"
#include "cli/table.h"
#include "core/duration.h"
#include "core/resources.h"
#include "core/strings.h"

namespace corral::cli {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "corral: error: %s\n", message.c_str());
  return 1;
}

int Usage(const std::string& kind, const std::string& message) {
  std::fprintf(stderr, "corral %s: %s (see `corral %s --help`)\n", kind.c_str(), message.c_str(),
               kind.c_str());
  return 2;
}

bool Clears(const std::string& v) { return v.empty() || v == "none" || v == "-1"; }

Result<uint64_t> Number(const std::string& key, const std::string& v, uint64_t max) {
  std::optional<uint64_t> n = ParseUint(v);
  if (!n || *n > max) {
    return InvalidArgument("--" + key + " " + v + ": expected a whole number up to " +
                           std::to_string(max));
  }
  return *n;
}

template <typename T>
Status SetOptional(std::optional<T>& field, const std::string& key, const std::string& v) {
  if (Clears(v)) {
    field.reset();
    return {};
  }
  CORRAL_ASSIGN_OR_RETURN(uint64_t n, Number(key, v, std::numeric_limits<T>::max()));
  field = static_cast<T>(n);
  return {};
}

Status SetTime(std::optional<Duration>& field, const std::string& key, const std::string& v) {
  if (Clears(v)) {
    field.reset();
    return {};
  }
  Result<Duration> d = ParseSlurmDuration(v);
  if (!d) return InvalidArgument("--" + key + " " + v + ": " + d.error().message);
  field = *d;
  return {};
}

// The flags of one kind of record: name -> how the value changes the record.
template <typename Record>
using Setters = std::map<std::string, std::function<Status(Record&, const std::string&)>>;

template <typename Record>
Status Apply(const Setters<Record>& setters, Limits Record::*limits,
             const std::map<std::string, std::string>& values, Record& r) {
  for (const auto& [key, value] : values) {
    if (auto it = setters.find(key); it != setters.end()) {
      CORRAL_RETURN_IF_ERROR(it->second(r, value));
      continue;
    }
    if (limits == nullptr) return InvalidArgument("--" + key + ": not an option of this command");
    Status s = SetLimit(r.*limits, key, value);
    if (!s && s.error().code != ErrorCode::kNotFound) return s;
    if (!s) return InvalidArgument("--" + key + ": not an option of this command");
  }
  return {};
}

const Setters<AccountConfig>& AccountSetters() {
  static const Setters<AccountConfig> s = {
      {"parent",
       [](AccountConfig& a, const std::string& v) -> Status {
         a.parent = v == "root" ? "" : v;
         return {};
       }},
      {"shares",
       [](AccountConfig& a, const std::string& v) -> Status {
         CORRAL_ASSIGN_OR_RETURN(uint64_t n, Number("shares", v, UINT32_MAX));
         a.shares = static_cast<uint32_t>(n);
         return {};
       }},
      {"guaranteed-gpus",
       [](AccountConfig& a, const std::string& v) -> Status {
         CORRAL_ASSIGN_OR_RETURN(uint64_t n, Number("guaranteed-gpus", v, UINT32_MAX));
         a.guaranteed_gpus = static_cast<uint32_t>(n);
         return {};
       }},
      {"default-qos",
       [](AccountConfig& a, const std::string& v) -> Status {
         a.default_qos = Clears(v) ? "" : v;
         return {};
       }},
      {"allowed-qos",
       [](AccountConfig& a, const std::string& v) -> Status {
         a.allowed_qos = SplitNonEmpty(v);
         return {};
       }},
  };
  return s;
}

const Setters<api::UserInfo>& UserSetters() {
  static const Setters<api::UserInfo> s = {
      {"account",
       [](api::UserInfo& u, const std::string& v) -> Status {
         u.accounts = SplitNonEmpty(v);
         std::erase_if(u.user.association_limits, [&u](const AssociationLimits& al) {
           return std::find(u.accounts.begin(), u.accounts.end(), al.account) == u.accounts.end();
         });
         return {};
       }},
      {"add-account",
       [](api::UserInfo& u, const std::string& v) -> Status {
         for (const std::string& a : SplitNonEmpty(v)) {
           if (std::find(u.accounts.begin(), u.accounts.end(), a) == u.accounts.end())
             u.accounts.push_back(a);
         }
         return {};
       }},
      {"remove-account",
       [](api::UserInfo& u, const std::string& v) -> Status {
         for (const std::string& a : SplitNonEmpty(v)) {
           std::erase(u.accounts, a);
           std::erase_if(u.user.association_limits,
                         [&a](const AssociationLimits& al) { return al.account == a; });
           if (u.user.default_account == a) u.user.default_account.clear();
         }
         return {};
       }},
      {"default-account",
       [](api::UserInfo& u, const std::string& v) -> Status {
         u.user.default_account = v;
         return {};
       }},
      {"shares",
       [](api::UserInfo& u, const std::string& v) -> Status {
         CORRAL_ASSIGN_OR_RETURN(uint64_t n, Number("shares", v, UINT32_MAX));
         u.user.shares = static_cast<uint32_t>(n);
         return {};
       }},
  };
  return s;
}

const Setters<QosConfig>& QosSetters() {
  static const Setters<QosConfig> s = {
      {"priority",
       [](QosConfig& q, const std::string& v) -> Status {
         CORRAL_ASSIGN_OR_RETURN(uint64_t n, Number("priority", v, UINT32_MAX));
         q.priority = static_cast<uint32_t>(n);
         return {};
       }},
      {"preempt",
       [](QosConfig& q, const std::string& v) -> Status {
         q.preempt = SplitNonEmpty(v);
         return {};
       }},
      {"preempt-mode",
       [](QosConfig& q, const std::string& v) -> Status {
         std::optional<PreemptMode> m = ParsePreemptMode(Lower(v));
         if (!m)
           return InvalidArgument("--preempt-mode " + v + ": expected off, requeue or cancel");
         q.preempt_mode = *m;
         return {};
       }},
      {"grace-time",
       [](QosConfig& q, const std::string& v) -> Status {
         return SetTime(q.grace_time, "grace-time", v);
       }},
      {"max-time",
       [](QosConfig& q, const std::string& v) -> Status {
         return SetTime(q.max_time, "max-time", v);
       }},
      {"usage-factor",
       [](QosConfig& q, const std::string& v) -> Status {
         char* end = nullptr;
         double f = std::strtod(v.c_str(), &end);
         if (v.empty() || end != v.c_str() + v.size() || !(f >= 0)) {
           return InvalidArgument("--usage-factor " + v + ": expected a number >= 0");
         }
         q.usage_factor = f;
         return {};
       }},
      {"max-gpus-per-user",
       [](QosConfig& q, const std::string& v) -> Status {
         return SetOptional(q.per_user.max_gpus, "max-gpus-per-user", v);
       }},
      {"max-running-jobs-per-user",
       [](QosConfig& q, const std::string& v) -> Status {
         return SetOptional(q.per_user.max_running_jobs, "max-running-jobs-per-user", v);
       }},
      {"max-submitted-jobs-per-user",
       [](QosConfig& q, const std::string& v) -> Status {
         return SetOptional(q.per_user.max_submitted_jobs, "max-submitted-jobs-per-user", v);
       }},
  };
  return s;
}

template <typename T>
std::string Opt(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "";
}
std::string OptTime(const std::optional<Duration>& v) { return v ? FormatSlurmDuration(*v) : ""; }

// The limit columns of the tables, in this order.
std::vector<std::string> LimitHeaders() {
  return {"MAX_GPUS",   "MAX_CPUS",    "MAX_MEM_MB",   "MAX_RUN",
          "MAX_SUBMIT", "GPU_MINUTES", "GPUS_PER_JOB", "MAX_WALL"};
}
std::vector<std::string> LimitCells(const Limits& l) {
  return {Opt(l.max_gpus),         Opt(l.max_cpus),           Opt(l.max_mem_mb),
          Opt(l.max_running_jobs), Opt(l.max_submitted_jobs), Opt(l.max_gpu_minutes),
          Opt(l.max_gpus_per_job), OptTime(l.max_wall)};
}
std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void PrintAccounts(const std::vector<AccountConfig>& list) {
  Table t(Concat(
      {"ACCOUNT", "PARENT", "SHARES", "GUARANTEED_GPUS", "DEFAULT_QOS", "ALLOWED_QOS", "USERS"},
      Concat(LimitHeaders(), {"COORDINATORS"})));
  for (const AccountConfig& a : list) {
    t.Add(Concat({a.name, a.parent.empty() ? "root" : a.parent, std::to_string(a.shares),
                  std::to_string(a.guaranteed_gpus), a.default_qos, Join(a.allowed_qos, ","),
                  Join(a.users, ",")},
                 Concat(LimitCells(a.limits), {Join(a.coordinators, ",")})));
  }
  std::fputs(t.Render().c_str(), stdout);
}

void PrintUsers(const std::vector<api::UserInfo>& list) {
  Table t(Concat({"USER", "DEFAULT_ACCOUNT", "ACCOUNTS", "SHARES"}, LimitHeaders()));
  for (const api::UserInfo& u : list) {
    t.Add(Concat(
        {u.user.name, u.user.default_account, Join(u.accounts, ","), std::to_string(u.user.shares)},
        LimitCells(u.user.limits)));
  }
  std::fputs(t.Render().c_str(), stdout);
  // The limits of single associations (issue 16), when any user has some.
  Table assoc(Concat({"USER", "ACCOUNT"}, LimitHeaders()));
  bool any = false;
  for (const api::UserInfo& u : list) {
    for (const AssociationLimits& al : u.user.association_limits) {
      assoc.Add(Concat({u.user.name, al.account}, LimitCells(al.limits)));
      any = true;
    }
  }
  if (any) std::printf("\nLimits of single associations (the user's jobs in that account):\n%s",
                       assoc.Render().c_str());
}

void PrintQos(const std::vector<QosConfig>& list) {
  Table t(Concat({"QOS", "PRIORITY", "PREEMPT", "PREEMPT_MODE", "GRACE_TIME", "USAGE_FACTOR",
                  "MAX_TIME", "GPUS_PER_USER", "RUN_PER_USER"},
                 LimitHeaders()));
  for (const QosConfig& q : list) {
    char factor[32];
    std::snprintf(factor, sizeof factor, "%g", q.usage_factor);
    t.Add(Concat({q.name, std::to_string(q.priority), Join(q.preempt, ","),
                  std::string(PreemptModeName(q.preempt_mode)), OptTime(q.grace_time), factor,
                  OptTime(q.max_time), Opt(q.per_user.max_gpus), Opt(q.per_user.max_running_jobs)},
                 LimitCells(q.limits)));
  }
  std::fputs(t.Render().c_str(), stdout);
}

// One kind's codec, setters and printer.
template <typename Record>
struct Kind {
  std::string path;  // "accounts", "users", "qos"
  std::string (*encode)(const Record&);
  Result<Record> (*decode)(std::string_view);
  Result<std::vector<Record>> (*decode_list)(std::string_view);
  std::string (*encode_list)(const std::vector<Record>&);
  std::string& (*name)(Record&);
  const Setters<Record>& (*setters)();
  Limits Record::*limits;
  void (*print)(const std::vector<Record>&);
};

template <typename Record>
int Run(Client& client, const std::string& kind_name, const Kind<Record>& k,
        const std::vector<std::string>& positional,
        const std::map<std::string, std::string>& values, bool json) {
  const std::string verb = positional.empty() ? "list" : positional[0];
  std::vector<std::string> names(positional.begin() + (positional.empty() ? 0 : 1),
                                 positional.end());
  if (verb == "list") {
    if (!names.empty() || !values.empty()) return Usage(kind_name, "list takes no arguments");
    auto body = client.GovernanceGet(k.path, "");
    if (!body) return Fail(body.error().message);
    auto list = k.decode_list(*body);
    if (!list) return Fail(list.error().message);
    if (json) {
      std::printf("%s\n", k.encode_list(*list).c_str());
    } else {
      k.print(*list);
    }
    return 0;
  }
  if (names.empty()) return Usage(kind_name, verb + ": give a name");
  if (verb == "show") {
    std::vector<Record> list;
    for (const std::string& n : names) {
      auto body = client.GovernanceGet(k.path, n);
      if (!body) return Fail(body.error().message);
      auto r = k.decode(*body);
      if (!r) return Fail(r.error().message);
      list.push_back(std::move(*r));
    }
    if (json) {
      for (const Record& r : list) std::printf("%s\n", k.encode(r).c_str());
    } else {
      k.print(list);
    }
    return 0;
  }
  if (verb == "delete") {
    for (const std::string& n : names) {
      if (Status s = client.GovernanceDelete(k.path, n); !s) return Fail(s.error().message);
      if (!json) std::printf("%s %s deleted\n", kind_name.c_str(), n.c_str());
    }
    return 0;
  }
  if (verb != "add" && verb != "modify") {
    return Usage(kind_name, "unknown verb \"" + verb + "\" (add, modify, delete, show, list)");
  }
  if (names.size() != 1) return Usage(kind_name, verb + ": give one name");
  Record r{};
  if (verb == "modify") {
    auto body = client.GovernanceGet(k.path, names[0]);
    if (!body) return Fail(body.error().message);
    auto current = k.decode(*body);
    if (!current) return Fail(current.error().message);
    r = std::move(*current);
  }
  k.name(r) = names[0];
  if (Status s = Apply(k.setters(), k.limits, values, r); !s) {
    return Usage(kind_name, s.error().message);
  }
  auto body = client.GovernancePut(k.path, names[0], k.encode(r), verb == "add");
  if (!body) return Fail(body.error().message);
  auto stored = k.decode(*body);
  if (!stored) return Fail(stored.error().message);
  if (json) {
    std::printf("%s\n", k.encode(*stored).c_str());
  } else {
    std::printf("%s %s %s\n", kind_name.c_str(), names[0].c_str(),
                verb == "add" ? "added" : "modified");
  }
  return 0;
}

}  // namespace

Status SetLimit(Limits& l, const std::string& key, const std::string& v) {
  if (key == "max-gpus") return SetOptional(l.max_gpus, key, v);
  if (key == "max-cpus") return SetOptional(l.max_cpus, key, v);
  if (key == "max-running-jobs") return SetOptional(l.max_running_jobs, key, v);
  if (key == "max-submitted-jobs") return SetOptional(l.max_submitted_jobs, key, v);
  if (key == "max-gpu-minutes") return SetOptional(l.max_gpu_minutes, key, v);
  if (key == "max-gpus-per-job") return SetOptional(l.max_gpus_per_job, key, v);
  if (key == "max-wall") return SetTime(l.max_wall, key, v);
  if (key == "max-mem") {
    if (Clears(v)) {
      l.max_mem_mb.reset();
      return {};
    }
    Result<uint64_t> mb = ParseMemoryMb(v);
    if (!mb) return InvalidArgument("--max-mem " + v + ": " + mb.error().message);
    l.max_mem_mb = *mb;
    return {};
  }
  return NotFound("--" + key + ": no such limit");
}

std::vector<std::string> GovernanceFlags() {
  std::set<std::string> flags = {
      "in-account",  // `corral user modify U --in-account A --max-...` (issue 16)
      "max-gpus",           "max-cpus",        "max-mem",          "max-running-jobs",
      "max-submitted-jobs", "max-gpu-minutes", "max-gpus-per-job", "max-wall"};
  for (const auto& [k, v] : AccountSetters()) flags.insert(k);
  for (const auto& [k, v] : UserSetters()) flags.insert(k);
  for (const auto& [k, v] : QosSetters()) flags.insert(k);
  for (const std::string& k : BudgetFlags()) flags.insert(k);  // `corral account budget`
  return {flags.begin(), flags.end()};
}

namespace {

// --- Account coordinators (issue 16 item 2) ---
// `corral account coordinator add|remove ACCOUNT USER[,USER..]`; `positional` starts with
// "coordinator".
int Coordinators(Client& client, const std::vector<std::string>& positional, bool json) {
  const std::string usage = "coordinator add|remove ACCOUNT USER[,USER..]";
  if (positional.size() != 4) return Usage("account", usage);
  const std::string& verb = positional[1];
  const std::string& account = positional[2];
  std::vector<std::string> users = SplitNonEmpty(positional[3]);
  if (users.empty()) return Usage("account", usage);
  Result<std::string> stored;
  if (verb == "add") {
    stored = client.AddCoordinators(account, users);
  } else if (verb == "remove" || verb == "delete") {
    for (const std::string& u : users) {
      stored = client.RemoveCoordinator(account, u);
      if (!stored) break;
    }
  } else {
    return Usage("account", "unknown verb \"" + verb + "\" (" + usage + ")");
  }
  if (!stored) return Fail(stored.error().message);
  if (json) {
    std::printf("%s\n", stored->c_str());
  } else {
    auto a = api::DecodeAccount(*stored);
    std::printf("account %s: coordinators %s\n", account.c_str(),
                a && !a->coordinators.empty() ? Join(a->coordinators, ",").c_str() : "(none)");
  }
  return 0;
}

// `corral user modify USER --in-account ACCOUNT --max-...`: the limits of that one association
// (issue 16), not the user's over all its accounts.
int UserAssociationLimits(Client& client, const std::vector<std::string>& positional,
                          const std::map<std::string, std::string>& values, bool json) {
  const std::string usage = "modify USER --in-account ACCOUNT --max-...";
  if (positional.size() != 2 || positional[0] != "modify") return Usage("user", usage);
  const std::string& name = positional[1];
  const std::string& account = values.at("in-account");
  auto body = client.GovernanceGet("users", name);
  if (!body) return Fail(body.error().message);
  auto u = api::DecodeUser(*body);
  if (!u) return Fail(u.error().message);
  Limits* l = nullptr;
  for (AssociationLimits& al : u->user.association_limits) {
    if (al.account == account) l = &al.limits;
  }
  if (l == nullptr) {
    u->user.association_limits.push_back({.account = account, .limits = {}});
    l = &u->user.association_limits.back().limits;
  }
  for (const auto& [key, value] : values) {
    if (key == "in-account") continue;
    Status s = SetLimit(*l, key, value);
    if (!s) {
      return Usage("user", s.error().code == ErrorCode::kNotFound
                               ? "--" + key + ": not a limit (with --in-account only limits)"
                               : s.error().message);
    }
  }
  auto stored = client.GovernancePut("users", name, api::EncodeUser(*u), false);
  if (!stored) return Fail(stored.error().message);
  if (json) {
    std::printf("%s\n", stored->c_str());
  } else {
    std::printf("user %s in account %s modified\n", name.c_str(), account.c_str());
  }
  return 0;
}

}  // namespace

int Governance(Client& client, const std::string& kind, const std::vector<std::string>& positional,
               const std::map<std::string, std::string>& values, bool json) {
  if (kind == "account" && !positional.empty() && positional[0] == "budget") {  // budget.h
    return AccountBudget(client, {positional.begin() + 1, positional.end()}, values, json);
  }
  if (kind == "account" && !positional.empty() && positional[0] == "coordinator") {
    return Coordinators(client, positional, json);
  }
  if (kind == "account") {
    static const Kind<AccountConfig> k{"accounts",
                                       api::EncodeAccount,
                                       api::DecodeAccount,
                                       api::DecodeAccountList,
                                       api::EncodeAccountList,
                                       [](AccountConfig& a) -> std::string& { return a.name; },
                                       AccountSetters,
                                       &AccountConfig::limits,
                                       PrintAccounts};
    int rc = Run(client, kind, k, positional, values, json);
    // `show`: the budgets' spend and what is left (budget.h).
    if (rc == 0 && !json && positional.size() > 1 && positional[0] == "show") {
      std::string error = PrintBudgetsOf(client, {positional.begin() + 1, positional.end()});
      if (!error.empty()) return Fail(error);
    }
    return rc;
  }
  if (kind == "user" && values.count("in-account")) {
    return UserAssociationLimits(client, positional, values, json);
  }
  if (kind == "user") {
    // Limits of a user are `user.limits`: applied through a setter table of their own.
    static const Setters<api::UserInfo> with_limits = [] {
      Setters<api::UserInfo> s = UserSetters();
      for (const char* limit :
           {"max-gpus", "max-cpus", "max-mem", "max-running-jobs", "max-submitted-jobs",
            "max-gpu-minutes", "max-gpus-per-job", "max-wall"}) {
        std::string key = limit;
        s[key] = [key](api::UserInfo& u, const std::string& v) {
          return SetLimit(u.user.limits, key, v);
        };
      }
      return s;
    }();
    static const Kind<api::UserInfo> k{
        "users",
        api::EncodeUser,
        api::DecodeUser,
        api::DecodeUserList,
        api::EncodeUserList,
        [](api::UserInfo& u) -> std::string& { return u.user.name; },
        []() -> const Setters<api::UserInfo>& { return with_limits; },
        nullptr,
        PrintUsers};
    return Run(client, kind, k, positional, values, json);
  }
  static const Kind<QosConfig> k{"qos",
                                 api::EncodeQos,
                                 api::DecodeQos,
                                 api::DecodeQosList,
                                 api::EncodeQosList,
                                 [](QosConfig& q) -> std::string& { return q.name; },
                                 QosSetters,
                                 &QosConfig::limits,
                                 PrintQos};
  return Run(client, kind, k, positional, values, json);
}

}  // namespace corral::cli
