// `sacctmgr`'s KEY=VALUE settings (sacctmgr.h lists the keys): each turned into a field of an
// account, a user, a (user, account) association or a QOS record.
#include "cli/internal/sacctmgr_keys.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "cli/sacctmgr.h"
#include "core/duration.h"
#include "core/resources.h"
#include "core/strings.h"

namespace corral::cli::internal {
namespace {

template <typename T>
Status SetCount(std::optional<T>& field, const std::string& key, const std::string& v) {
  if (v == "-1") {
    field.reset();
    return {};
  }
  std::optional<uint64_t> n = ParseUint(v);
  if (!n || *n > std::numeric_limits<T>::max()) {
    return InvalidArgument(key + "=" + v + ": not a count");
  }
  field = static_cast<T>(*n);
  return {};
}

Status SetWall(std::optional<Duration>& field, const std::string& key, const std::string& v) {
  if (v == "-1") {
    field.reset();
    return {};
  }
  Result<Duration> d = ParseSlurmDuration(v);
  if (!d) return InvalidArgument(key + "=" + v + ": " + d.error().message);
  field = *d;
  return {};
}

template <typename T>
Status Narrow(const std::optional<uint64_t>& in, std::optional<T>& out, const std::string& what) {
  if (in && *in > std::numeric_limits<T>::max()) return InvalidArgument(what + ": too large");
  out = in ? std::optional<T>(static_cast<T>(*in)) : std::nullopt;
  return {};
}

Status SetGrpTres(Limits& l, const std::string& v) {
  std::optional<uint64_t> cpus = Wide(l.max_cpus), gpus = Wide(l.max_gpus), mem = l.max_mem_mb;
  CORRAL_RETURN_IF_ERROR(ParseTres(v, &cpus, &gpus, &mem));
  CORRAL_RETURN_IF_ERROR(Narrow(cpus, l.max_cpus, "GrpTRES cpu"));
  CORRAL_RETURN_IF_ERROR(Narrow(gpus, l.max_gpus, "GrpTRES gres/gpu"));
  l.max_mem_mb = mem;
  return {};
}

// A TRES list with only GPUs: MaxTRES, MaxTRESPerUser, GrpTRESMins.
template <typename T>
Status SetGpuTres(std::optional<T>& field, const std::string& key, const std::string& v) {
  std::optional<uint64_t> gpus = Wide(field);
  CORRAL_RETURN_IF_ERROR(ParseTres(v, nullptr, &gpus, nullptr));
  return Narrow(gpus, field, key);
}

// The keys every kind ignores or refuses alike. Returns true when `key` was one of them.
bool Common(const std::string& key, const std::string& value, Status* s) {
  if (key == "description" || key == "organization" || key == "cluster" || key == "clusters") {
    return true;  // one cluster; a description is the name
  }
  if (key == "partition" || key == "flags" || key == "adminlevel" || key == "grpwall" ||
      key == "maxtresmins" || key == "maxtrespernode" || key == "grptresrunmins" ||
      key == "priority_assoc") {
    *s = InvalidArgument(key + "=" + value + ": not supported by Corral (docs/governance.md)");
    return true;
  }
  return false;
}

Status SetLimitKey(Limits& l, const std::string& key, const std::string& v, bool* done) {
  *done = true;
  if (key == "grptres") return SetGrpTres(l, v);
  if (key == "grptresmins") return SetGpuTres(l.max_gpu_minutes, "GrpTRESMins", v);
  if (key == "maxtres" || key == "maxtresperjob") {
    return SetGpuTres(l.max_gpus_per_job, "MaxTRES", v);
  }
  if (key == "maxwall" || key == "maxwalldurationperjob") return SetWall(l.max_wall, key, v);
  *done = false;
  return {};
}

}  // namespace

Status SetAccountKey(AccountConfig& a, const std::string& key, const std::string& v) {
  Status s;
  if (Common(key, v, &s)) return s;
  bool done = false;
  CORRAL_RETURN_IF_ERROR(SetLimitKey(a.limits, key, v, &done));
  if (done) return {};
  if (key == "parent") {
    a.parent = EqualsIgnoreCase(v, "root") ? "" : v;
  } else if (key == "fairshare" || key == "shares") {
    std::optional<uint32_t> n;
    CORRAL_RETURN_IF_ERROR(SetCount(n, key, v));
    a.shares = n.value_or(1);
  } else if (key == "defaultqos") {
    a.default_qos = v == "-1" ? "" : v;
  } else if (key == "qos" || key == "qoslevel") {
    a.allowed_qos = SplitNonEmpty(v);
  } else if (key == "grpjobs") {
    return SetCount(a.limits.max_running_jobs, key, v);
  } else if (key == "grpsubmit" || key == "grpsubmitjobs") {
    return SetCount(a.limits.max_submitted_jobs, key, v);
  } else if (key == "maxjobs" || key == "maxsubmit" || key == "maxsubmitjobs") {
    return InvalidArgument(key +
                           " on an account (each user's limit in Slurm) is not supported: "
                           "use GrpJobs/GrpSubmit for the account, or set it on the users");
  } else {
    return InvalidArgument("unknown account field \"" + key + "\"");
  }
  return {};
}

Status SetUserKey(api::UserInfo& u, const std::string& key, const std::string& v) {
  Status s;
  if (Common(key, v, &s)) return s;
  bool done = false;
  CORRAL_RETURN_IF_ERROR(SetLimitKey(u.user.limits, key, v, &done));
  if (done) return {};
  if (key == "account" || key == "accounts") {
    for (const std::string& a : SplitNonEmpty(v)) {
      if (std::find(u.accounts.begin(), u.accounts.end(), a) == u.accounts.end())
        u.accounts.push_back(a);
    }
  } else if (key == "defaultaccount") {
    u.user.default_account = v;
  } else if (key == "fairshare" || key == "shares") {
    std::optional<uint32_t> n;
    CORRAL_RETURN_IF_ERROR(SetCount(n, key, v));
    u.user.shares = n.value_or(1);
  } else if (key == "maxjobs" || key == "grpjobs") {
    return SetCount(u.user.limits.max_running_jobs, key, v);
  } else if (key == "maxsubmit" || key == "maxsubmitjobs" || key == "grpsubmit" ||
             key == "grpsubmitjobs") {
    return SetCount(u.user.limits.max_submitted_jobs, key, v);
  } else {
    return InvalidArgument("unknown user field \"" + key + "\"");
  }
  return {};
}

// --- Limits of one (user, account) association (issue 16) ---

// Sets `key` in `l` when it is a limit an association takes; false when it is not one.
Result<bool> SetAssocLimitKey(Limits& l, const std::string& key, const std::string& v) {
  bool done = false;
  CORRAL_RETURN_IF_ERROR(SetLimitKey(l, key, v, &done));
  if (done) return true;
  if (key == "maxjobs" || key == "grpjobs") {
    CORRAL_RETURN_IF_ERROR(SetCount(l.max_running_jobs, key, v));
    return true;
  }
  if (key == "maxsubmit" || key == "maxsubmitjobs" || key == "grpsubmit" ||
      key == "grpsubmitjobs") {
    CORRAL_RETURN_IF_ERROR(SetCount(l.max_submitted_jobs, key, v));
    return true;
  }
  return false;
}

// The limits of `u`'s association with `account`, added (empty) when it has none.
Limits& AssocLimitsOf(UserConfig& u, const std::string& account) {
  for (AssociationLimits& al : u.association_limits) {
    if (al.account == account) return al.limits;
  }
  u.association_limits.push_back({.account = account, .limits = {}});
  return u.association_limits.back().limits;
}

// The accounts `pairs` name (account=A,B).
std::vector<std::string> NamedAccounts(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::vector<std::string> out;
  for (const auto& [key, v] : pairs) {
    if (key != "account" && key != "accounts") continue;
    for (const std::string& a : SplitNonEmpty(v)) out.push_back(a);
  }
  return out;
}

// Applies `set` to `u`: with `accounts`, the limits to those associations (Slurm's), the other
// keys to the user.
Status SetUserKeys(api::UserInfo& u, const std::vector<std::pair<std::string, std::string>>& set,
                   const std::vector<std::string>& accounts) {
  for (const auto& [key, v] : set) {
    bool assoc = false;
    for (const std::string& a : accounts) {
      CORRAL_ASSIGN_OR_RETURN(assoc, SetAssocLimitKey(AssocLimitsOf(u.user, a), key, v));
    }
    if (!assoc) CORRAL_RETURN_IF_ERROR(SetUserKey(u, key, v));
  }
  return {};
}

// A user row's limits as `show association` prints them: the association's own, else the
// user's (over all its accounts).
Limits ShownLimits(const UserConfig& u, const std::string& account) {
  const Limits* al = FindAssociationLimits(u, account);
  if (al == nullptr) return u.limits;
  Limits l = *al;
  const Limits& w = u.limits;
  if (!l.max_gpus) l.max_gpus = w.max_gpus;
  if (!l.max_running_jobs) l.max_running_jobs = w.max_running_jobs;
  if (!l.max_submitted_jobs) l.max_submitted_jobs = w.max_submitted_jobs;
  if (!l.max_gpu_minutes) l.max_gpu_minutes = w.max_gpu_minutes;
  if (!l.max_gpus_per_job) l.max_gpus_per_job = w.max_gpus_per_job;
  if (!l.max_cpus) l.max_cpus = w.max_cpus;
  if (!l.max_mem_mb) l.max_mem_mb = w.max_mem_mb;
  if (!l.max_wall) l.max_wall = w.max_wall;
  return l;
}

Status SetQosKey(QosConfig& q, const std::string& key, const std::string& v) {
  Status s;
  if (Common(key, v, &s)) return s;
  if (key == "grptres") return SetGrpTres(q.limits, v);
  if (key == "maxtres" || key == "maxtresperjob") {
    return SetGpuTres(q.limits.max_gpus_per_job, "MaxTRES", v);
  }
  if (key == "maxtrespu" || key == "maxtresperuser") {
    return SetGpuTres(q.per_user.max_gpus, "MaxTRESPerUser", v);
  }
  if (key == "grpjobs") return SetCount(q.limits.max_running_jobs, key, v);
  if (key == "grpsubmit" || key == "grpsubmitjobs") {
    return SetCount(q.limits.max_submitted_jobs, key, v);
  }
  if (key == "maxjobspu" || key == "maxjobsperuser") {
    return SetCount(q.per_user.max_running_jobs, key, v);
  }
  if (key == "maxsubmitpu" || key == "maxsubmitjobsperuser") {
    return SetCount(q.per_user.max_submitted_jobs, key, v);
  }
  if (key == "maxwall" || key == "maxwalldurationperjob") return SetWall(q.max_time, key, v);
  if (key == "gracetime") return SetWall(q.grace_time, key, v);
  if (key == "priority") {
    std::optional<uint32_t> n;
    CORRAL_RETURN_IF_ERROR(SetCount(n, key, v));
    q.priority = n.value_or(0);
    return {};
  }
  if (key == "preempt") {
    q.preempt = SplitNonEmpty(v);
    return {};
  }
  if (key == "preemptmode") {
    std::string m = Lower(v);
    if (m == "cluster") m = "requeue";
    std::optional<PreemptMode> mode = ParsePreemptMode(m);
    if (!mode) return InvalidArgument("PreemptMode=" + v + ": expected OFF, REQUEUE or CANCEL");
    q.preempt_mode = *mode;
    return {};
  }
  if (key == "usagefactor") {
    char* end = nullptr;
    double f = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size()) {
      return InvalidArgument("UsageFactor=" + v + ": not a number");
    }
    q.usage_factor = f;
    return {};
  }
  return InvalidArgument("unknown qos field \"" + key + "\"");
}


}  // namespace corral::cli::internal
