#include "sched/config.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include <toml++/toml.h>

#include "core/duration.h"
#include "core/hostlist.h"
#include "core/resources.h"
#include "sched/policy_factory.h"

namespace corral::sched {
namespace {

constexpr size_t kMaxHostsPerList = 1'000'000;

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string_view TypeName(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "nothing";
  }
}

// Reads the keys of one table of an owned section, remembering which were read so that
// `Finish` can reject the rest. Every error names the section (`where`) and the key.
class Section {
 public:
  Section(const toml::table& table, std::string where) : table_(table), where_(std::move(where)) {}

  const std::string& where() const { return where_; }
  bool Has(std::string_view key) const { return table_.contains(key); }

  tl::unexpected<Error> Bad(std::string_view key, std::string_view message) const {
    return InvalidArgument(where_ + ": " + std::string(key) + ": " + std::string(message));
  }

  const toml::node* Get(std::string_view key) {
    seen_.insert(std::string(key));
    return table_.get(key);
  }

  Status String(std::string_view key, std::string* out) {
    const toml::node* n = Get(key);
    if (n == nullptr) return {};
    if (!n->is_string()) return Expected(key, "a string", *n);
    *out = n->as_string()->get();
    return {};
  }

  Status Bool(std::string_view key, bool* out) {
    const toml::node* n = Get(key);
    if (n == nullptr) return {};
    if (!n->is_boolean()) return Expected(key, "a boolean", *n);
    *out = n->as_boolean()->get();
    return {};
  }

  template <typename T>
  Status Unsigned(std::string_view key, T* out, uint64_t max = std::numeric_limits<T>::max()) {
    const toml::node* n = Get(key);
    if (n == nullptr) return {};
    if (!n->is_integer()) return Expected(key, "an integer", *n);
    int64_t v = n->as_integer()->get();
    if (v < 0 || static_cast<uint64_t>(v) > max) {
      return Bad(key, std::to_string(v) + " is out of range 0.." + std::to_string(max));
    }
    *out = static_cast<T>(v);
    return {};
  }

  template <typename T>
  Status OptionalUnsigned(std::string_view key, std::optional<T>* out) {
    if (!Has(key)) {
      Get(key);
      return {};
    }
    T v{};
    CORRAL_RETURN_IF_ERROR(Unsigned(key, &v));
    *out = v;
    return {};
  }

  Status Double(std::string_view key, double* out, double min, double max) {
    const toml::node* n = Get(key);
    if (n == nullptr) return {};
    double v = 0;
    if (n->is_floating_point()) {
      v = n->as_floating_point()->get();
    } else if (n->is_integer()) {
      v = static_cast<double>(n->as_integer()->get());
    } else {
      return Expected(key, "a number", *n);
    }
    if (!(v >= min && v <= max)) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%g is out of range %g..%g", v, min, max);
      return Bad(key, buf);
    }
    *out = v;
    return {};
  }

  // A Slurm time ("1-00:00:00", "90", "UNLIMITED"); a bare integer is minutes.
  Status Time(std::string_view key, Duration* out) {
    const toml::node* n = Get(key);
    if (n == nullptr) return {};
    std::string text;
    if (n->is_string()) {
      text = n->as_string()->get();
    } else if (n->is_integer()) {
      text = std::to_string(n->as_integer()->get());
    } else {
      return Expected(key, "a time string such as \"1-00:00:00\"", *n);
    }
    auto d = ParseSlurmDuration(text);
    if (!d) return Bad(key, d.error().message);
    *out = *d;
    return {};
  }

  Status OptionalTime(std::string_view key, std::optional<Duration>* out) {
    if (!Has(key)) {
      Get(key);
      return {};
    }
    Duration d{};
    CORRAL_RETURN_IF_ERROR(Time(key, &d));
    *out = d;
    return {};
  }

  // A memory size ("4G", "512M"); a bare integer is megabytes.
  Status Memory(std::string_view key, uint64_t* out) {
    const toml::node* n = Get(key);
    if (n == nullptr) return {};
    if (n->is_integer()) {
      int64_t v = n->as_integer()->get();
      if (v < 0) return Bad(key, std::to_string(v) + " is negative");
      *out = static_cast<uint64_t>(v);
      return {};
    }
    if (!n->is_string()) return Expected(key, "a memory size such as \"4G\"", *n);
    auto mb = ParseMemoryMb(n->as_string()->get());
    if (!mb) return Bad(key, mb.error().message);
    *out = *mb;
    return {};
  }

  // An array of strings.
  Status Strings(std::string_view key, std::vector<std::string>* out) {
    const toml::node* n = Get(key);
    if (n == nullptr) return {};
    if (!n->is_array()) return Expected(key, "an array of strings", *n);
    out->clear();
    for (const toml::node& e : *n->as_array()) {
      if (!e.is_string()) return Expected(key, "an array of strings", e);
      out->push_back(e.as_string()->get());
    }
    return {};
  }

  // A host-list expression ("gpu-[001-064]") or an array of them; expanded to names.
  Status HostList(std::string_view key, std::vector<std::string>* out) {
    const toml::node* n = Get(key);
    if (n == nullptr) return {};
    std::vector<std::string> exprs;
    if (n->is_string()) {
      exprs.push_back(n->as_string()->get());
    } else if (n->is_array()) {
      for (const toml::node& e : *n->as_array()) {
        if (!e.is_string()) return Expected(key, "a host list or an array of host lists", e);
        exprs.push_back(e.as_string()->get());
      }
    } else {
      return Expected(key, "a host list or an array of host lists", *n);
    }
    out->clear();
    for (const std::string& e : exprs) {
      auto names = ExpandHostList(e, kMaxHostsPerList);
      if (!names) return Bad(key, names.error().message);
      out->insert(out->end(), names->begin(), names->end());
    }
    return {};
  }

  // A date-time: TOML's own (`2026-12-01T08:00:00Z`; a local one is taken as UTC) or a string
  // "2026-12-01T08:00:00" in UTC.
  Status DateTime(std::string_view key, Timestamp* out) {
    const toml::node* n = Get(key);
    if (n == nullptr) return {};
    int y, mo, d, h = 0, mi = 0, s = 0;
    int64_t offset_minutes = 0;
    if (n->is_date_time()) {
      const toml::date_time& dt = n->as_date_time()->get();
      y = dt.date.year, mo = dt.date.month, d = dt.date.day;
      h = dt.time.hour, mi = dt.time.minute, s = dt.time.second;
      if (dt.offset) offset_minutes = dt.offset->minutes;
    } else if (n->is_date()) {
      const toml::date& dd = n->as_date()->get();
      y = dd.year, mo = dd.month, d = dd.day;
    } else if (n->is_string()) {
      const std::string& text = n->as_string()->get();
      char tail = 0;
      int got =
          std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &tail);
      if (!(got == 6 || (got == 7 && tail == 'Z')) || text.size() > 20) {
        return Bad(key,
                   "invalid date-time " + Quote(text) + ": expected YYYY-MM-DDTHH:MM:SS (UTC)");
      }
    } else {
      return Expected(key, "a date-time", *n);
    }
    std::chrono::year_month_day ymd{std::chrono::year(y),
                                    std::chrono::month(static_cast<unsigned>(mo)),
                                    std::chrono::day(static_cast<unsigned>(d))};
    if (!ymd.ok() || h > 23 || mi > 59 || s > 60 || h < 0 || mi < 0 || s < 0) {
      return Bad(key, "invalid date-time: no such date or time of day");
    }
    auto t = std::chrono::sys_days(ymd) + std::chrono::hours(h) + std::chrono::minutes(mi) +
             std::chrono::seconds(s) - std::chrono::minutes(offset_minutes);
    *out = std::chrono::time_point_cast<Duration>(t);
    return {};
  }

  // A sub-table (`[scheduler.backfill]`); nullptr if absent.
  Result<const toml::table*> Table(std::string_view key) {
    const toml::node* n = Get(key);
    if (n == nullptr) return static_cast<const toml::table*>(nullptr);
    if (!n->is_table()) return Expected(key, "a table", *n);
    return n->as_table();
  }

  // An array of tables (`[[topology.switch]]`); empty if absent.
  Result<std::vector<const toml::table*>> Tables(std::string_view key) {
    std::vector<const toml::table*> out;
    const toml::node* n = Get(key);
    if (n == nullptr) return out;
    if (!n->is_array()) return Expected(key, "an array of tables", *n);
    for (const toml::node& e : *n->as_array()) {
      if (!e.is_table()) return Expected(key, "an array of tables", e);
      out.push_back(e.as_table());
    }
    return out;
  }

  // Rejects keys that were never read.
  Status Finish() const {
    for (auto&& [k, v] : table_) {
      if (!seen_.count(std::string(k.str()))) {
        return InvalidArgument(where_ + ": unknown key " + Quote(k.str()));
      }
    }
    return {};
  }

 private:
  tl::unexpected<Error> Expected(std::string_view key, std::string_view what,
                                 const toml::node& n) const {
    return Bad(key, "expected " + std::string(what) + ", got " + std::string(TypeName(n)));
  }

  const toml::table& table_;
  std::string where_;
  std::set<std::string> seen_;
};

// Reads `name` first so that every later error can name the entry.
Result<std::string> EntryName(const toml::table& t, std::string_view section, size_t index) {
  std::string where = "[[" + std::string(section) + "]] #" + std::to_string(index + 1);
  const toml::node* n = t.get("name");
  if (n == nullptr) return InvalidArgument(where + ": missing key \"name\"");
  if (!n->is_string()) {
    return InvalidArgument(where + ": name: expected a string, got " + std::string(TypeName(*n)));
  }
  std::string name = n->as_string()->get();
  if (name.empty()) return InvalidArgument(where + ": name: must not be empty");
  for (char c : name) {
    if (static_cast<unsigned char>(c) <= ' ' || c == '"' || c == ',') {
      return InvalidArgument(where + ": name: " + Quote(name) + " has an invalid character");
    }
  }
  return name;
}

std::string EntryWhere(std::string_view section, std::string_view name) {
  return "[[" + std::string(section) + "]] " + Quote(name);
}

Status ReadLimits(Section& s, Limits* l, std::string_view suffix = "", bool minutes = true) {
  auto key = [&](std::string_view base) { return std::string(base) + std::string(suffix); };
  CORRAL_RETURN_IF_ERROR(s.OptionalUnsigned(key("max_gpus"), &l->max_gpus));
  CORRAL_RETURN_IF_ERROR(s.OptionalUnsigned(key("max_running_jobs"), &l->max_running_jobs));
  CORRAL_RETURN_IF_ERROR(s.OptionalUnsigned(key("max_submitted_jobs"), &l->max_submitted_jobs));
  if (minutes)
    CORRAL_RETURN_IF_ERROR(s.OptionalUnsigned(key("max_gpu_minutes"), &l->max_gpu_minutes));
  if (suffix.empty()) {
    CORRAL_RETURN_IF_ERROR(s.OptionalUnsigned("max_gpus_per_job", &l->max_gpus_per_job));
    CORRAL_RETURN_IF_ERROR(s.OptionalUnsigned("max_cpus", &l->max_cpus));
    if (s.Has("max_mem")) {
      uint64_t mb = 0;
      CORRAL_RETURN_IF_ERROR(s.Memory("max_mem", &mb));
      l->max_mem_mb = mb;
    } else {
      s.Get("max_mem");
    }
  }
  // A QOS's wall limit is its `max_time`.
  if (minutes) CORRAL_RETURN_IF_ERROR(s.OptionalTime("max_wall", &l->max_wall));
  return {};
}

Status ParseScheduler(const toml::table& t, SchedulerConfig* c, bool* default_qos_given) {
  Section s(t, "[scheduler]");
  CORRAL_RETURN_IF_ERROR(s.String("policy", &c->policy));
  CORRAL_RETURN_IF_ERROR(s.Unsigned("seed", &c->seed));
  *default_qos_given = s.Has("default_qos");
  CORRAL_RETURN_IF_ERROR(s.String("default_qos", &c->default_qos));
  CORRAL_RETURN_IF_ERROR(s.Unsigned("max_jobs_per_pass", &c->max_jobs_per_pass));
  if (c->policy.empty()) return s.Bad("policy", "must not be empty");
  if (!IsRegisteredPolicy(c->policy)) {
    std::string known;
    for (const PolicyInfo& p : RegisteredPolicies())
      known += (known.empty() ? "" : ", ") + std::string(p.name);
    return s.Bad("policy", "no such policy " + Quote(c->policy) + " (known: " + known + ")");
  }

  CORRAL_ASSIGN_OR_RETURN(const toml::table* prio, s.Table("priority"));
  if (prio != nullptr) {
    Section p(*prio, "[scheduler.priority]");
    PriorityConfig& pc = c->priority;
    CORRAL_RETURN_IF_ERROR(p.Unsigned("weight_age", &pc.weight_age, 1'000'000'000));
    CORRAL_RETURN_IF_ERROR(p.Unsigned("weight_fairshare", &pc.weight_fairshare, 1'000'000'000));
    CORRAL_RETURN_IF_ERROR(p.Unsigned("weight_job_size", &pc.weight_job_size, 1'000'000'000));
    CORRAL_RETURN_IF_ERROR(p.Unsigned("weight_partition", &pc.weight_partition, 1'000'000'000));
    CORRAL_RETURN_IF_ERROR(p.Unsigned("weight_qos", &pc.weight_qos, 1'000'000'000));
    CORRAL_RETURN_IF_ERROR(p.Time("max_age", &pc.max_age));
    CORRAL_RETURN_IF_ERROR(p.Bool("favor_small", &pc.favor_small));
    if (pc.max_age.count() <= 0) return p.Bad("max_age", "must be positive");
    CORRAL_RETURN_IF_ERROR(p.Finish());
  }
  CORRAL_ASSIGN_OR_RETURN(const toml::table* fs, s.Table("fairshare"));
  if (fs != nullptr) {
    Section f(*fs, "[scheduler.fairshare]");
    FairShareConfig& fc = c->fairshare;
    CORRAL_RETURN_IF_ERROR(f.Time("half_life", &fc.half_life));
    CORRAL_RETURN_IF_ERROR(f.Time("usage_period", &fc.usage_period));
    CORRAL_RETURN_IF_ERROR(f.Double("weight_gpu", &fc.weight_gpu, 0, 1e9));
    CORRAL_RETURN_IF_ERROR(f.Double("weight_cpu", &fc.weight_cpu, 0, 1e9));
    CORRAL_RETURN_IF_ERROR(f.Double("weight_mem_gb", &fc.weight_mem_gb, 0, 1e9));
    if (fc.usage_period.count() <= 0) return f.Bad("usage_period", "must be positive");
    CORRAL_RETURN_IF_ERROR(f.Finish());
  }
  CORRAL_ASSIGN_OR_RETURN(const toml::table* bf, s.Table("backfill"));
  if (bf != nullptr) {
    Section b(*bf, "[scheduler.backfill]");
    BackfillConfig& bc = c->backfill;
    CORRAL_RETURN_IF_ERROR(b.Bool("enabled", &bc.enabled));
    CORRAL_RETURN_IF_ERROR(b.Unsigned("reservations", &bc.reservations, 100'000));
    CORRAL_RETURN_IF_ERROR(b.Time("window", &bc.window));
    if (bc.window.count() <= 0) return b.Bad("window", "must be positive");
    CORRAL_RETURN_IF_ERROR(b.Finish());
  }
  CORRAL_ASSIGN_OR_RETURN(const toml::table* pre, s.Table("preemption"));
  if (pre != nullptr) {
    Section p(*pre, "[scheduler.preemption]");
    PreemptionConfig& pc = c->preemption;
    CORRAL_RETURN_IF_ERROR(p.Bool("enabled", &pc.enabled));
    CORRAL_RETURN_IF_ERROR(p.Time("grace_time", &pc.grace_time));
    CORRAL_RETURN_IF_ERROR(p.Bool("reclaim", &pc.reclaim));
    CORRAL_RETURN_IF_ERROR(
        p.Unsigned("max_preemptors_per_pass", &pc.max_preemptors_per_pass, 100'000));
    if (pc.grace_time == kUnlimited) return p.Bad("grace_time", "must be finite");
    CORRAL_RETURN_IF_ERROR(p.Finish());
  }
  return s.Finish();
}

Result<Partition> ParsePartition(const toml::table& t, size_t index) {
  CORRAL_ASSIGN_OR_RETURN(std::string name, EntryName(t, "partition", index));
  Section s(t, EntryWhere("partition", name));
  Partition p;
  p.name = name;
  s.Get("name");
  CORRAL_RETURN_IF_ERROR(s.HostList("nodes", &p.nodes));
  CORRAL_RETURN_IF_ERROR(s.Bool("default", &p.is_default));
  std::string state = "up";
  CORRAL_RETURN_IF_ERROR(s.String("state", &state));
  if (state == "up" || state == "UP") {
    p.up = true;
  } else if (state == "down" || state == "DOWN") {
    p.up = false;
  } else {
    return s.Bad("state", "invalid state " + Quote(state) + ": expected \"up\" or \"down\"");
  }
  CORRAL_RETURN_IF_ERROR(s.Time("default_time", &p.default_time));
  CORRAL_RETURN_IF_ERROR(s.Time("max_time", &p.max_time));
  CORRAL_RETURN_IF_ERROR(s.Unsigned("max_gpus_per_job", &p.max_gpus_per_job));
  CORRAL_RETURN_IF_ERROR(s.Unsigned("max_nodes_per_job", &p.max_nodes_per_job));
  CORRAL_RETURN_IF_ERROR(s.Unsigned("priority_tier", &p.priority_tier, 65535));
  CORRAL_RETURN_IF_ERROR(s.Memory("def_mem_per_cpu", &p.def_mem_per_cpu_mb));
  CORRAL_RETURN_IF_ERROR(s.Strings("allowed_accounts", &p.allowed_accounts));
  // Access (issue 16 item 2), spelled as in slurm.conf; AllowAccounts is allowed_accounts.
  if (s.Has("allowed_accounts") && s.Has("AllowAccounts")) {
    return s.Bad("AllowAccounts", "give allowed_accounts or AllowAccounts, not both");
  }
  CORRAL_RETURN_IF_ERROR(s.Strings("AllowAccounts", &p.allowed_accounts));
  CORRAL_RETURN_IF_ERROR(s.Strings("DenyAccounts", &p.deny_accounts));
  CORRAL_RETURN_IF_ERROR(s.Strings("AllowGroups", &p.allowed_groups));
  CORRAL_RETURN_IF_ERROR(s.Strings("AllowQos", &p.allowed_qos));
  if (!p.allowed_accounts.empty() && !p.deny_accounts.empty()) {
    return s.Bad("DenyAccounts",
                 "give AllowAccounts or DenyAccounts, not both (Slurm ignores "
                 "DenyAccounts when AllowAccounts is set)");
  }
  if (p.default_time.count() <= 0) return s.Bad("default_time", "must be positive");
  if (p.max_time.count() <= 0) return s.Bad("max_time", "must be positive");
  // As in Slurm, a partition without a default time gives jobs its maximum.
  if (!s.Has("default_time")) p.default_time = p.max_time;
  if (p.default_time > p.max_time) {
    return s.Bad("default_time", FormatSlurmDuration(p.default_time) + " exceeds max_time " +
                                     FormatSlurmDuration(p.max_time));
  }
  CORRAL_RETURN_IF_ERROR(s.Finish());
  return p;
}

Result<AccountConfig> ParseAccount(const toml::table& t, size_t index) {
  CORRAL_ASSIGN_OR_RETURN(std::string name, EntryName(t, "account", index));
  Section s(t, EntryWhere("account", name));
  AccountConfig a;
  a.name = name;
  s.Get("name");
  CORRAL_RETURN_IF_ERROR(s.String("parent", &a.parent));
  CORRAL_RETURN_IF_ERROR(s.Unsigned("shares", &a.shares, 1'000'000'000));
  CORRAL_RETURN_IF_ERROR(s.Unsigned("guaranteed_gpus", &a.guaranteed_gpus));
  CORRAL_RETURN_IF_ERROR(ReadLimits(s, &a.limits));
  CORRAL_RETURN_IF_ERROR(s.Strings("users", &a.users));
  CORRAL_RETURN_IF_ERROR(s.String("default_qos", &a.default_qos));
  CORRAL_RETURN_IF_ERROR(s.Strings("allowed_qos", &a.allowed_qos));
  CORRAL_RETURN_IF_ERROR(s.Strings("coordinators", &a.coordinators));  // issue 16 item 2
  if (a.parent == "root") a.parent.clear();
  if (a.name == "root") return s.Bad("name", "\"root\" is the implicit top of the tree");
  if (a.shares == 0) return s.Bad("shares", "must be at least 1");
  CORRAL_RETURN_IF_ERROR(s.Finish());
  return a;
}

Result<UserConfig> ParseUser(const toml::table& t, size_t index) {
  CORRAL_ASSIGN_OR_RETURN(std::string name, EntryName(t, "user", index));
  Section s(t, EntryWhere("user", name));
  UserConfig u;
  u.name = name;
  s.Get("name");
  CORRAL_RETURN_IF_ERROR(s.Unsigned("shares", &u.shares, 1'000'000'000));
  CORRAL_RETURN_IF_ERROR(s.String("default_account", &u.default_account));
  CORRAL_RETURN_IF_ERROR(ReadLimits(s, &u.limits));
  if (u.shares == 0) return s.Bad("shares", "must be at least 1");
  CORRAL_RETURN_IF_ERROR(s.Finish());
  return u;
}

Result<QosConfig> ParseQos(const toml::table& t, size_t index) {
  CORRAL_ASSIGN_OR_RETURN(std::string name, EntryName(t, "qos", index));
  Section s(t, EntryWhere("qos", name));
  QosConfig q;
  q.name = name;
  s.Get("name");
  CORRAL_RETURN_IF_ERROR(s.Unsigned("priority", &q.priority, 1'000'000'000));
  CORRAL_RETURN_IF_ERROR(s.Strings("preempt", &q.preempt));
  std::string mode = "requeue";
  CORRAL_RETURN_IF_ERROR(s.String("preempt_mode", &mode));
  if (mode == "off") {
    q.preempt_mode = PreemptMode::kOff;
  } else if (mode == "requeue") {
    q.preempt_mode = PreemptMode::kRequeue;
  } else if (mode == "cancel") {
    q.preempt_mode = PreemptMode::kCancel;
  } else {
    return s.Bad("preempt_mode",
                 "invalid mode " + Quote(mode) + ": expected \"off\", \"requeue\" or \"cancel\"");
  }
  CORRAL_RETURN_IF_ERROR(s.OptionalTime("grace_time", &q.grace_time));
  if (q.grace_time && *q.grace_time == kUnlimited) return s.Bad("grace_time", "must be finite");
  CORRAL_RETURN_IF_ERROR(s.Double("usage_factor", &q.usage_factor, 0, 1e6));
  CORRAL_RETURN_IF_ERROR(s.OptionalTime("max_time", &q.max_time));
  // Usage is kept per account and user, not per QOS: no GPU-minute limits here.
  CORRAL_RETURN_IF_ERROR(ReadLimits(s, &q.limits, "", /*minutes=*/false));
  CORRAL_RETURN_IF_ERROR(ReadLimits(s, &q.per_user, "_per_user", /*minutes=*/false));
  CORRAL_RETURN_IF_ERROR(s.Finish());
  return q;
}

Result<Reservation> ParseReservation(const toml::table& t, size_t index) {
  CORRAL_ASSIGN_OR_RETURN(std::string name, EntryName(t, "reservation", index));
  Section s(t, EntryWhere("reservation", name));
  Reservation r;
  r.name = name;
  s.Get("name");
  if (!s.Has("nodes")) return InvalidArgument(s.where() + ": missing key \"nodes\"");
  CORRAL_RETURN_IF_ERROR(s.HostList("nodes", &r.nodes));
  if (!s.Has("start")) return InvalidArgument(s.where() + ": missing key \"start\"");
  CORRAL_RETURN_IF_ERROR(s.DateTime("start", &r.start));
  bool has_end = s.Has("end"), has_duration = s.Has("duration");
  if (has_end && has_duration) {
    return InvalidArgument(s.where() + ": give either \"end\" or \"duration\", not both");
  }
  if (has_end) {
    CORRAL_RETURN_IF_ERROR(s.DateTime("end", &r.end));
    if (r.end <= r.start) return s.Bad("end", "must be after start");
  } else {
    s.Get("end");
  }
  if (has_duration) {
    Duration d{};
    CORRAL_RETURN_IF_ERROR(s.Time("duration", &d));
    if (d.count() <= 0) return s.Bad("duration", "must be positive");
    r.end = d == kUnlimited ? Timestamp::max() : r.start + d;
  } else {
    s.Get("duration");
  }
  CORRAL_RETURN_IF_ERROR(s.Strings("users", &r.users));
  CORRAL_RETURN_IF_ERROR(s.Strings("accounts", &r.accounts));
  CORRAL_RETURN_IF_ERROR(s.Bool("maintenance", &r.maintenance));
  if (r.nodes.empty()) return s.Bad("nodes", "must name at least one node");
  CORRAL_RETURN_IF_ERROR(s.Finish());
  return r;
}

Status ParseTopology(const toml::table& t, SchedulerConfig* c) {
  Section s(t, "[topology]");
  CORRAL_ASSIGN_OR_RETURN(std::vector<const toml::table*> switches, s.Tables("switch"));
  CORRAL_RETURN_IF_ERROR(s.Finish());
  for (size_t i = 0; i < switches.size(); ++i) {
    CORRAL_ASSIGN_OR_RETURN(std::string name, EntryName(*switches[i], "topology.switch", i));
    Section w(*switches[i], EntryWhere("topology.switch", name));
    SwitchConfig sw;
    sw.name = name;
    w.Get("name");
    CORRAL_RETURN_IF_ERROR(w.HostList("nodes", &sw.nodes));
    CORRAL_RETURN_IF_ERROR(w.HostList("switches", &sw.switches));
    if (sw.nodes.empty() == sw.switches.empty()) {
      return InvalidArgument(w.where() +
                             ": give exactly one of \"nodes\" (a leaf) or \"switches\"");
    }
    CORRAL_RETURN_IF_ERROR(w.Finish());
    c->switches.push_back(std::move(sw));
  }
  return {};
}

template <typename T>
Status CheckUnique(const std::vector<T>& v, std::string_view section) {
  std::set<std::string_view> seen;
  for (const T& e : v) {
    if (!seen.insert(e.name).second) {
      return InvalidArgument(EntryWhere(section, e.name) + ": defined twice");
    }
  }
  return {};
}

Status ParseAll(const toml::table& root, SchedulerConfig* c) {
  bool default_qos_given = false;
  if (const toml::node* n = root.get("scheduler")) {
    if (!n->is_table())
      return InvalidArgument("scheduler: expected a table, got " + std::string(TypeName(*n)));
    CORRAL_RETURN_IF_ERROR(ParseScheduler(*n->as_table(), c, &default_qos_given));
  }
  // The owned arrays of tables.
  auto tables = [&](std::string_view key) -> Result<std::vector<const toml::table*>> {
    std::vector<const toml::table*> out;
    const toml::node* n = root.get(key);
    if (n == nullptr) return out;
    auto bad = [&](const toml::node& x) {
      return InvalidArgument(std::string(key) + ": expected an array of tables ([[" +
                             std::string(key) + "]]), got " + std::string(TypeName(x)));
    };
    if (!n->is_array()) return bad(*n);
    for (const toml::node& e : *n->as_array()) {
      if (!e.is_table()) return bad(e);
      out.push_back(e.as_table());
    }
    return out;
  };
  CORRAL_ASSIGN_OR_RETURN(auto partitions, tables("partition"));
  if (!partitions.empty()) c->partitions.clear();
  for (size_t i = 0; i < partitions.size(); ++i) {
    CORRAL_ASSIGN_OR_RETURN(Partition p, ParsePartition(*partitions[i], i));
    c->partitions.push_back(std::move(p));
  }
  CORRAL_ASSIGN_OR_RETURN(auto accounts, tables("account"));
  for (size_t i = 0; i < accounts.size(); ++i) {
    CORRAL_ASSIGN_OR_RETURN(AccountConfig a, ParseAccount(*accounts[i], i));
    c->accounts.push_back(std::move(a));
  }
  CORRAL_ASSIGN_OR_RETURN(auto users, tables("user"));
  for (size_t i = 0; i < users.size(); ++i) {
    CORRAL_ASSIGN_OR_RETURN(UserConfig u, ParseUser(*users[i], i));
    c->users.push_back(std::move(u));
  }
  CORRAL_ASSIGN_OR_RETURN(auto qos, tables("qos"));
  if (!qos.empty()) {
    c->qos.clear();
    for (size_t i = 0; i < qos.size(); ++i) {
      CORRAL_ASSIGN_OR_RETURN(QosConfig q, ParseQos(*qos[i], i));
      c->qos.push_back(std::move(q));
    }
    // Without an explicit default, "normal" if there is one, else the first QOS.
    if (!default_qos_given && std::none_of(c->qos.begin(), c->qos.end(), [&](const QosConfig& q) {
          return q.name == c->default_qos;
        })) {
      c->default_qos = c->qos.front().name;
    }
  }
  CORRAL_ASSIGN_OR_RETURN(auto reservations, tables("reservation"));
  for (size_t i = 0; i < reservations.size(); ++i) {
    CORRAL_ASSIGN_OR_RETURN(Reservation r, ParseReservation(*reservations[i], i));
    c->reservations.push_back(std::move(r));
  }
  if (const toml::node* n = root.get("topology")) {
    if (!n->is_table())
      return InvalidArgument("topology: expected a table, got " + std::string(TypeName(*n)));
    CORRAL_RETURN_IF_ERROR(ParseTopology(*n->as_table(), c));
  }
  // A single partition is the default one even when the file does not say so.
  if (!partitions.empty() && std::none_of(c->partitions.begin(), c->partitions.end(),
                                          [](const Partition& p) { return p.is_default; })) {
    c->partitions.front().is_default = true;
  }
  return ValidateSchedulerConfig(*c);
}

}  // namespace

SchedulerConfig DefaultSchedulerConfig() {
  SchedulerConfig c;
  c.partitions.push_back(Partition{.name = "main", .is_default = true});
  c.qos.push_back(QosConfig{.name = "normal"});
  return c;
}

Result<SchedulerConfig> ParseSchedulerConfig(std::string_view toml_text,
                                             std::string_view source_name) {
  std::string source(source_name);
  toml::table root;
  try {
    root = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    const toml::source_position& pos = e.source().begin;
    return InvalidArgument(source + ":" + std::to_string(pos.line) + ":" +
                           std::to_string(pos.column) + ": " + std::string(e.description()));
  }
  SchedulerConfig c = DefaultSchedulerConfig();
  Status st = ParseAll(root, &c);
  if (!st) return Annotate(st.error(), source);
  return c;
}

Status ValidateSchedulerConfig(const SchedulerConfig& c) {
  CORRAL_RETURN_IF_ERROR(CheckUnique(c.partitions, "partition"));
  CORRAL_RETURN_IF_ERROR(CheckUnique(c.accounts, "account"));
  CORRAL_RETURN_IF_ERROR(CheckUnique(c.users, "user"));
  CORRAL_RETURN_IF_ERROR(CheckUnique(c.qos, "qos"));
  CORRAL_RETURN_IF_ERROR(CheckUnique(c.reservations, "reservation"));
  CORRAL_RETURN_IF_ERROR(CheckUnique(c.switches, "topology.switch"));
  if (c.partitions.empty()) return InvalidArgument("no partition defined");
  if (c.qos.empty()) return InvalidArgument("no qos defined");

  std::map<std::string_view, const AccountConfig*> accounts;
  for (const AccountConfig& a : c.accounts) accounts[a.name] = &a;
  std::set<std::string_view> qos;
  for (const QosConfig& q : c.qos) qos.insert(q.name);

  if (!qos.count(c.default_qos)) {
    return InvalidArgument("[scheduler]: default_qos: " + Quote(c.default_qos) +
                           " is not a defined qos");
  }
  for (const Partition& p : c.partitions) {
    for (const std::string& a : p.allowed_accounts) {
      if (!accounts.count(a)) {
        return InvalidArgument(EntryWhere("partition", p.name) +
                               ": allowed_accounts: no such account " + Quote(a));
      }
    }
    // Access (issue 16 item 2).
    for (const std::string& a : p.deny_accounts) {
      if (!accounts.count(a)) {
        return InvalidArgument(EntryWhere("partition", p.name) +
                               ": DenyAccounts: no such account " + Quote(a));
      }
    }
    for (const std::string& q : p.allowed_qos) {
      if (!qos.count(q)) {
        return InvalidArgument(EntryWhere("partition", p.name) + ": AllowQos: no such qos " +
                               Quote(q));
      }
    }
  }
  for (const AccountConfig& a : c.accounts) {
    if (!a.parent.empty() && !accounts.count(a.parent)) {
      return InvalidArgument(EntryWhere("account", a.name) + ": parent: no such account " +
                             Quote(a.parent));
    }
  }
  for (const AccountConfig& a : c.accounts) {
    std::string where = EntryWhere("account", a.name);
    // Walk up: a cycle returns to `a` within accounts.size() steps.
    const AccountConfig* cur = &a;
    for (size_t steps = 0; !cur->parent.empty(); ++steps) {
      if (steps > c.accounts.size())
        return InvalidArgument(where + ": parent: the account tree has a cycle");
      cur = accounts.at(cur->parent);
    }
    if (!a.default_qos.empty() && !qos.count(a.default_qos)) {
      return InvalidArgument(where + ": default_qos: no such qos " + Quote(a.default_qos));
    }
    for (const std::string& q : a.allowed_qos) {
      if (!qos.count(q)) return InvalidArgument(where + ": allowed_qos: no such qos " + Quote(q));
    }
    if (!a.default_qos.empty() && !a.allowed_qos.empty() &&
        std::find(a.allowed_qos.begin(), a.allowed_qos.end(), a.default_qos) ==
            a.allowed_qos.end()) {
      return InvalidArgument(where + ": default_qos: " + Quote(a.default_qos) +
                             " is not in allowed_qos");
    }
  }
  for (const UserConfig& u : c.users) {
    if (!u.default_account.empty() && !accounts.count(u.default_account)) {
      return InvalidArgument(EntryWhere("user", u.name) + ": default_account: no such account " +
                             Quote(u.default_account));
    }
    for (const AssociationLimits& al : u.association_limits) {
      if (!accounts.count(al.account)) {
        return InvalidArgument(EntryWhere("user", u.name) +
                               ": association_limits: no such account " + Quote(al.account));
      }
    }
  }
  for (const QosConfig& q : c.qos) {
    for (const std::string& p : q.preempt) {
      if (!qos.count(p))
        return InvalidArgument(EntryWhere("qos", q.name) + ": preempt: no such qos " + Quote(p));
      if (p == q.name)
        return InvalidArgument(EntryWhere("qos", q.name) +
                               ": preempt: a qos cannot preempt itself");
    }
  }
  for (const Reservation& r : c.reservations) {
    for (const std::string& a : r.accounts) {
      if (!c.accounts.empty() && !accounts.count(a)) {
        return InvalidArgument(EntryWhere("reservation", r.name) + ": accounts: no such account " +
                               Quote(a));
      }
    }
  }
  // Topology: children exist, each switch and node has one parent, no cycles.
  std::map<std::string_view, const SwitchConfig*> switches;
  for (const SwitchConfig& s : c.switches) switches[s.name] = &s;
  std::map<std::string_view, std::string_view> parent_of;
  std::set<std::string_view> node_seen;
  for (const SwitchConfig& s : c.switches) {
    std::string where = EntryWhere("topology.switch", s.name);
    for (const std::string& child : s.switches) {
      if (!switches.count(child))
        return InvalidArgument(where + ": switches: no such switch " + Quote(child));
      auto [it, fresh] = parent_of.emplace(child, s.name);
      if (!fresh) {
        return InvalidArgument(where + ": switches: " + Quote(child) + " is already under " +
                               Quote(it->second));
      }
    }
    for (const std::string& n : s.nodes) {
      if (!node_seen.insert(n).second) {
        return InvalidArgument(where + ": nodes: node " + Quote(n) + " is under two leaf switches");
      }
    }
  }
  for (const SwitchConfig& s : c.switches) {
    std::string_view cur = s.name;
    for (size_t steps = 0; parent_of.count(cur); ++steps) {
      if (steps > c.switches.size()) {
        return InvalidArgument(EntryWhere("topology.switch", s.name) +
                               ": switches: the topology has a cycle");
      }
      cur = parent_of.at(cur);
    }
  }
  return {};
}

const Partition* DefaultPartition(const SchedulerConfig& config) {
  for (const Partition& p : config.partitions) {
    if (p.is_default) return &p;
  }
  return config.partitions.empty() ? nullptr : &config.partitions.front();
}

std::string DefaultQos(const SchedulerConfig& config, std::string_view account) {
  std::string_view cur = account;
  for (size_t steps = 0; !cur.empty() && steps <= config.accounts.size(); ++steps) {
    auto it = std::find_if(config.accounts.begin(), config.accounts.end(),
                           [&](const AccountConfig& a) { return a.name == cur; });
    if (it == config.accounts.end()) break;
    if (!it->default_qos.empty()) return it->default_qos;
    cur = it->parent;
  }
  return config.default_qos;
}

}  // namespace corral::sched
