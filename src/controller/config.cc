#include "controller/config.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "api/private_file.h"
#include "api/transport_policy.h"

namespace corral::controller {
namespace {

// Top-level sections parsed by sched (sched/config.h) from the same file.
const std::set<std::string> kSchedulingSections = {"scheduler", "partition",   "account", "user",
                                                   "qos",       "reservation", "topology"};

class Reader {
 public:
  Reader(std::string_view origin, std::string section, const toml::table& table)
      : origin_(origin), section_(std::move(section)), table_(table) {}

  Status Unknown(const std::set<std::string>& known) const {
    for (const auto& [k, v] : table_) {
      std::string key(k.str());
      if (!known.contains(key)) {
        return InvalidArgument(std::string(origin_) + ": [" + section_ + "] unknown key \"" + key +
                               "\"");
      }
    }
    return {};
  }

  Status String(const char* key, std::string* out) const {
    const toml::node* n = table_.get(key);
    if (n == nullptr) return {};
    if (!n->is_string()) return Bad(key, "expected a string");
    *out = n->as_string()->get();
    return {};
  }

  Status Bool(const char* key, bool* out) const {
    const toml::node* n = table_.get(key);
    if (n == nullptr) return {};
    if (!n->is_boolean()) return Bad(key, "expected true or false");
    *out = n->as_boolean()->get();
    return {};
  }

  Status Int(const char* key, int64_t lo, int64_t hi, int64_t* out) const {
    const toml::node* n = table_.get(key);
    if (n == nullptr) return {};
    if (!n->is_integer()) return Bad(key, "expected an integer");
    int64_t v = n->as_integer()->get();
    if (v < lo || v > hi) {
      return Bad(key, std::to_string(v) + " is out of range " + std::to_string(lo) + ".." +
                          std::to_string(hi));
    }
    *out = v;
    return {};
  }

  Status DurationKey(const char* key, Duration unit, int64_t lo, int64_t hi, Duration* out) const {
    int64_t v = out->count() / unit.count();
    CORRAL_RETURN_IF_ERROR(Int(key, lo, hi, &v));
    *out = unit * v;
    return {};
  }

  Status Strings(const char* key, std::vector<std::string>* out) const {
    const toml::node* n = table_.get(key);
    if (n == nullptr) return {};
    if (!n->is_array()) return Bad(key, "expected an array of strings");
    out->clear();
    for (const auto& e : *n->as_array()) {
      if (!e.is_string()) return Bad(key, "expected an array of strings");
      out->push_back(e.as_string()->get());
    }
    return {};
  }

 private:
  Status Bad(const char* key, const std::string& why) const {
    return InvalidArgument(std::string(origin_) + ": [" + section_ + "] " + key + ": " + why);
  }
  std::string_view origin_;
  std::string section_;
  const toml::table& table_;
};

// The keys of one GPU-waste policy table, over `p` (the defaults, for an override).
Status ParseGpuWastePolicy(std::string_view origin, const std::string& section,
                           const toml::table& t, bool allow_subtables, GpuWastePolicy* p) {
  Reader r(origin, section, t);
  std::set<std::string> known = {"enabled", "threshold_percent", "window_s", "action", "grace_s"};
  if (allow_subtables) known.insert({"partition", "qos"});
  CORRAL_RETURN_IF_ERROR(r.Unknown(known));
  CORRAL_RETURN_IF_ERROR(r.Bool("enabled", &p->enabled));
  int64_t threshold = static_cast<int64_t>(p->threshold);
  CORRAL_RETURN_IF_ERROR(r.Int("threshold_percent", 0, 100, &threshold));
  p->threshold = static_cast<double>(threshold);
  CORRAL_RETURN_IF_ERROR(r.DurationKey("window_s", Seconds(1), 1, 86400 * 30, &p->window));
  CORRAL_RETURN_IF_ERROR(r.DurationKey("grace_s", Seconds(1), 0, 86400 * 30, &p->grace));
  std::string action;
  CORRAL_RETURN_IF_ERROR(r.String("action", &action));
  if (action == "notify") {
    p->action = GpuWasteAction::kNotify;
  } else if (action == "cancel") {
    p->action = GpuWasteAction::kCancel;
  } else if (action == "requeue") {
    p->action = GpuWasteAction::kRequeue;
  } else if (!action.empty()) {
    return InvalidArgument(std::string(origin) + ": [" + section + "] action: \"" + action +
                           "\" is not one of notify, cancel, requeue");
  }
  return {};
}

// [gpu_waste], then [gpu_waste.partition.NAME] and [gpu_waste.qos.NAME], which start from it.
Status ParseGpuWaste(std::string_view origin, const toml::table& t, GpuWasteConfig* c) {
  CORRAL_RETURN_IF_ERROR(ParseGpuWastePolicy(origin, "gpu_waste", t, true, &c->defaults));
  for (const char* kind : {"partition", "qos"}) {
    const toml::node* n = t.get(kind);
    if (n == nullptr) continue;
    if (!n->is_table()) {
      return InvalidArgument(std::string(origin) + ": [gpu_waste] " + kind +
                             ": expected [gpu_waste." + kind + ".NAME] tables");
    }
    auto& out = std::string_view(kind) == "partition" ? c->partitions : c->qos;
    for (const auto& [name, sub] : *n->as_table()) {
      std::string section = std::string("gpu_waste.") + kind + "." + std::string(name.str());
      if (!sub.is_table()) {
        return InvalidArgument(std::string(origin) + ": [" + section + "] must be a [table]");
      }
      GpuWastePolicy p = c->defaults;
      CORRAL_RETURN_IF_ERROR(ParseGpuWastePolicy(origin, section, *sub.as_table(), false, &p));
      out[std::string(name.str())] = p;
    }
  }
  return {};
}

}  // namespace

Result<ControllerConfig> ParseControllerConfig(std::string_view toml_text,
                                               std::string_view origin) {
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << origin << ":" << e.source().begin.line << ":" << e.source().begin.column << ": "
        << e.description();
    return InvalidArgument(msg.str());
  }
  ControllerConfig c;
  c.toml_text = std::string(toml_text);
  for (const auto& [k, v] : root) {
    std::string key(k.str());
    if (key == "controller" || key == "store" || key == "auth" || key == "tls" ||
        key == "privacy" || key == "limits" || key == "metrics" || key == "gpu_waste" ||
        key == "audit" || key == "ha" ||
        kSchedulingSections.contains(key)) {
      continue;
    }
    return InvalidArgument(std::string(origin) + ": unknown section or key \"" + key + "\"");
  }
  auto table = [&](const char* name) -> Result<const toml::table*> {
    const toml::node* n = root.get(name);
    if (n == nullptr) return nullptr;
    if (!n->is_table())
      return InvalidArgument(std::string(origin) + ": \"" + name + "\" must be a [table]");
    return n->as_table();
  };

  CORRAL_ASSIGN_OR_RETURN(const toml::table* ctl, table("controller"));
  if (ctl != nullptr) {
    Reader r(origin, "controller", *ctl);
    CORRAL_RETURN_IF_ERROR(
        r.Unknown({"cluster_name", "listen", "state_dir", "heartbeat_interval_s", "node_timeout_s",
                   "sched_min_interval_ms", "sched_interval_s", "min_job_age_s",
                   "submit_key_retention_s"}));
    CORRAL_RETURN_IF_ERROR(r.String("cluster_name", &c.cluster_name));
    std::string listen;
    CORRAL_RETURN_IF_ERROR(r.String("listen", &listen));
    if (!listen.empty()) {
      size_t colon = listen.rfind(':');
      if (colon == std::string::npos || colon == 0) {
        return InvalidArgument(std::string(origin) +
                               ": [controller] listen: expected HOST:PORT, got \"" + listen + "\"");
      }
      c.listen_host = listen.substr(0, colon);
      int port = -1;
      try {
        size_t used = 0;
        port = std::stoi(listen.substr(colon + 1), &used);
        if (used != listen.size() - colon - 1) port = -1;
      } catch (const std::exception&) {
        port = -1;
      }
      if (port < 0 || port > 65535) {
        return InvalidArgument(std::string(origin) + ": [controller] listen: bad port in \"" +
                               listen + "\"");
      }
      c.listen_port = static_cast<uint16_t>(port);
    }
    CORRAL_RETURN_IF_ERROR(r.String("state_dir", &c.state_dir));
    CORRAL_RETURN_IF_ERROR(
        r.DurationKey("heartbeat_interval_s", Seconds(1), 1, 3600, &c.heartbeat_interval));
    CORRAL_RETURN_IF_ERROR(r.DurationKey("node_timeout_s", Seconds(1), 1, 86400, &c.node_timeout));
    CORRAL_RETURN_IF_ERROR(
        r.DurationKey("sched_min_interval_ms", Millis(1), 0, 60000, &c.sched_min_interval));
    CORRAL_RETURN_IF_ERROR(
        r.DurationKey("sched_interval_s", Seconds(1), 1, 3600, &c.sched_periodic_interval));
    CORRAL_RETURN_IF_ERROR(
        r.DurationKey("min_job_age_s", Seconds(1), 0, 86400 * 365, &c.list_completed_for));
    CORRAL_RETURN_IF_ERROR(r.DurationKey("submit_key_retention_s", Seconds(1), 60, 86400 * 30,
                                         &c.submit_key_retention));
    if (c.node_timeout <= c.heartbeat_interval) {
      return InvalidArgument(
          std::string(origin) +
          ": [controller] node_timeout_s must be longer than heartbeat_interval_s");
    }
  }
  CORRAL_ASSIGN_OR_RETURN(const toml::table* st, table("store"));
  if (st != nullptr) {
    Reader r(origin, "store", *st);
    CORRAL_RETURN_IF_ERROR(r.Unknown({"url"}));
    CORRAL_RETURN_IF_ERROR(r.String("url", &c.store_url));
  }
  CORRAL_ASSIGN_OR_RETURN(const toml::table* au, table("auth"));
  if (au != nullptr) {
    Reader r(origin, "auth", *au);
    CORRAL_RETURN_IF_ERROR(
        r.Unknown({"jwt_key_file", "keyring", "munge", "munge_socket", "admins", "admin_users",
                   "admin_groups", "operator_users", "operator_groups", "max_token_lifetime_s",
                   "max_job_credential_lifetime_s"}));
    CORRAL_RETURN_IF_ERROR(r.String("jwt_key_file", &c.jwt_key_file));
    CORRAL_RETURN_IF_ERROR(r.String("keyring", &c.jwt_key_file));
    CORRAL_RETURN_IF_ERROR(r.Bool("munge", &c.munge));
    CORRAL_RETURN_IF_ERROR(r.String("munge_socket", &c.munge_socket));
    std::vector<std::string> admins;
    CORRAL_RETURN_IF_ERROR(r.Strings("admins", &admins));
    CORRAL_RETURN_IF_ERROR(r.Strings("admin_users", &c.admin_users));
    c.admin_users.insert(c.admin_users.end(), admins.begin(), admins.end());
    CORRAL_RETURN_IF_ERROR(r.Strings("admin_groups", &c.admin_groups));
    CORRAL_RETURN_IF_ERROR(r.Strings("operator_users", &c.operator_users));
    CORRAL_RETURN_IF_ERROR(r.Strings("operator_groups", &c.operator_groups));
    CORRAL_RETURN_IF_ERROR(
        r.DurationKey("max_token_lifetime_s", Seconds(1), 60, 86400 * 7, &c.max_token_lifetime));
    CORRAL_RETURN_IF_ERROR(r.DurationKey("max_job_credential_lifetime_s", Seconds(1), 60,
                                         86400 * 365, &c.max_job_credential_lifetime));
  }
  CORRAL_ASSIGN_OR_RETURN(const toml::table* tls, table("tls"));
  if (tls != nullptr) {
    Reader r(origin, "tls", *tls);
    CORRAL_RETURN_IF_ERROR(
        r.Unknown({"certificate", "key", "ca", "client_certificate", "allow_plain_loopback"}));
    CORRAL_RETURN_IF_ERROR(r.String("certificate", &c.tls_certificate));
    CORRAL_RETURN_IF_ERROR(r.String("key", &c.tls_key));
    CORRAL_RETURN_IF_ERROR(r.String("ca", &c.tls_ca));
    CORRAL_RETURN_IF_ERROR(r.String("client_certificate", &c.tls_client_certificate));
    CORRAL_RETURN_IF_ERROR(r.Bool("allow_plain_loopback", &c.allow_plain_loopback));
    CORRAL_RETURN_IF_ERROR(api::ParseClientCertificateMode(
        c.tls_client_certificate, std::string(origin) + ": [tls] client_certificate"));
    if (c.tls_certificate.empty() != c.tls_key.empty()) {
      return InvalidArgument(std::string(origin) +
                             ": [tls] certificate and key must be given together");
    }
    if (!c.tls_certificate.empty() && c.tls_ca.empty()) {
      return InvalidArgument(std::string(origin) +
                             ": [tls] ca: required with a certificate (it verifies the agents)");
    }
  }
  CORRAL_ASSIGN_OR_RETURN(const toml::table* pr, table("privacy"));
  if (pr != nullptr) {
    Reader r(origin, "privacy", *pr);
    CORRAL_RETURN_IF_ERROR(r.Unknown({"private_data"}));
    std::vector<std::string> items;
    CORRAL_RETURN_IF_ERROR(r.Strings("private_data", &items));
    for (const auto& item : items) {
      if (item == "jobs") {
        c.privacy.jobs = true;
      } else if (item == "usage") {
        c.privacy.usage = true;
      } else {
        return InvalidArgument(std::string(origin) + ": [privacy] private_data: unknown item \"" +
                               item + "\" (expected \"jobs\" or \"usage\")");
      }
    }
  }
  CORRAL_ASSIGN_OR_RETURN(const toml::table* me, table("metrics"));
  if (me != nullptr) {
    Reader r(origin, "metrics", *me);
    CORRAL_RETURN_IF_ERROR(r.Unknown({"token_file"}));
    CORRAL_RETURN_IF_ERROR(r.String("token_file", &c.metrics_token_file));
  }
  CORRAL_ASSIGN_OR_RETURN(const toml::table* audit, table("audit"));
  if (audit != nullptr) {
    Reader r(origin, "audit", *audit);
    CORRAL_RETURN_IF_ERROR(r.Unknown({"retention_days"}));
    int64_t days = 0;
    CORRAL_RETURN_IF_ERROR(r.Int("retention_days", 0, 36500, &days));
    c.audit_retention_days = static_cast<uint32_t>(days);
  }
  CORRAL_ASSIGN_OR_RETURN(const toml::table* li, table("limits"));
  if (li != nullptr) {
    Reader r(origin, "limits", *li);
    CORRAL_RETURN_IF_ERROR(r.Unknown({"max_submitted_jobs"}));
    int64_t max_jobs = c.max_submitted_jobs;
    CORRAL_RETURN_IF_ERROR(r.Int("max_submitted_jobs", 0, 100000000, &max_jobs));
    c.max_submitted_jobs = static_cast<uint32_t>(max_jobs);
  }
  CORRAL_ASSIGN_OR_RETURN(const toml::table* gw, table("gpu_waste"));
  if (gw != nullptr) CORRAL_RETURN_IF_ERROR(ParseGpuWaste(origin, *gw, &c.gpu_waste));
  // [ha] (issue 11; docs/operations.md, "High availability").
  CORRAL_ASSIGN_OR_RETURN(const toml::table* ha, table("ha"));
  if (ha != nullptr) {
    Reader r(origin, "ha", *ha);
    CORRAL_RETURN_IF_ERROR(r.Unknown({"controllers", "url", "lease_s"}));
    CORRAL_RETURN_IF_ERROR(r.Strings("controllers", &c.ha_controllers));
    CORRAL_RETURN_IF_ERROR(r.String("url", &c.ha_url));
    CORRAL_RETURN_IF_ERROR(r.DurationKey("lease_s", Seconds(1), 1, 300, &c.ha_lease));
    if (!c.ha_url.empty() && !c.ha_controllers.empty() &&
        std::find(c.ha_controllers.begin(), c.ha_controllers.end(), c.ha_url) ==
            c.ha_controllers.end()) {
      return InvalidArgument(std::string(origin) + ": [ha] url: \"" + c.ha_url +
                             "\" is not in [ha] controllers");
    }
  }
  if (c.store_url.empty()) c.store_url = "sqlite:" + c.state_dir + "/corral.db";
  if (c.jwt_key_file.empty()) c.jwt_key_file = c.state_dir + "/jwt.key";
  return c;
}

Status CheckTransportSecurity(const ControllerConfig& c, std::string_view origin) {
  bool loopback = api::IsLoopbackHost(c.listen_host);
  if (!c.tls_certificate.empty()) return {};
  if (!c.allow_plain_loopback) {
    return InvalidArgument(std::string(origin) +
                           ": [tls] certificate: required (every connection is TLS; "
                           "`corral ca init` makes one, docs/security.md; or set [tls] "
                           "allow_plain_loopback = true for plain HTTP on loopback)");
  }
  if (!loopback) {
    return InvalidArgument(std::string(origin) + ": [tls] certificate: required to listen on " +
                           c.listen_host + " (plain HTTP is allowed on loopback only)");
  }
  return {};
}

Result<ControllerConfig> LoadControllerConfig(const std::string& path) {
  CORRAL_ASSIGN_OR_RETURN(std::string text,
                          api::ReadPublicFile(path, "config file", api::kMaxConfigBytes));
  return ParseControllerConfig(text, path);
}

}  // namespace corral::controller
