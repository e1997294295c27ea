// The controller's configuration, read from corral.toml (every key is documented in
// deploy/corral.example.toml).
//
// The controller owns the sections [controller], [store] and [auth]; the scheduling sections
// ([scheduler], [[partition]], [[account]], ...) are parsed by sched (sched/config.h) from the
// same text.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/partition.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::controller {

// [privacy] private_data (Slurm's PrivateData): what other users may not see. Owners,
// operators and admins always see everything; nobody else ever sees a job's script,
// environment, arguments or step argv (controller/internal/access.h).
struct PrivacyConfig {
  bool jobs = false;   // "jobs": other users' jobs are not listed and cannot be read
  bool usage = false;  // "usage": other users' jobs' usage (CPU, GPU, energy) is hidden
};

// A user's uid and primary gid.
struct UnixIds {
  uint32_t uid = 0;
  uint32_t gid = 0;
};
// How the controller finds the uid and gid of a job's user by name: returns kNotFound when
// the user has no entry.
using UserIdLookup = std::function<Result<UnixIds>(const std::string& user)>;
// What the controller does with a job that wastes its GPUs (docs/metrics-jobs.md).
enum class GpuWasteAction { kNotify, kCancel, kRequeue };

// [gpu_waste]: a job whose GPUs all stay under `threshold` percent utilisation for `window`
// is flagged (logged, shown by `corral show`, counted by `corral report waste`); with action
// cancel or requeue, it is cancelled or requeued once it has been flagged for `grace`.
struct GpuWastePolicy {
  bool enabled = true;
  double threshold = 5;  // percent
  Duration window = Minutes(30);
  GpuWasteAction action = GpuWasteAction::kNotify;
  Duration grace = Minutes(10);
  bool operator==(const GpuWastePolicy&) const = default;
};

struct GpuWasteConfig {
  GpuWastePolicy defaults;                           // [gpu_waste]
  std::map<std::string, GpuWastePolicy> partitions;  // [gpu_waste.partition.NAME]
  std::map<std::string, GpuWastePolicy> qos;         // [gpu_waste.qos.NAME]
  // A job's policy: its QOS's, else its partition's, else the defaults.
  const GpuWastePolicy& For(const std::string& partition, const std::string& qos_name) const {
    if (auto it = qos.find(qos_name); it != qos.end()) return it->second;
    if (auto it = partitions.find(partition); it != partitions.end()) return it->second;
    return defaults;
  }
};

struct ControllerConfig {
  std::string cluster_name = "corral";
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 6900;
  std::string state_dir = "/var/lib/corral";
  std::string store_url;                        // default: sqlite:<state_dir>/corral.db
  Duration heartbeat_interval = Seconds(2);     // what agents are told to use
  Duration node_timeout = Seconds(10);          // no heartbeat this long -> node DOWN
  Duration sched_min_interval = Millis(2);      // at most one pass per this interval
  Duration sched_periodic_interval = Seconds(5);
  Duration list_completed_for = Seconds(300);   // finished jobs stay in default listings (MinJobAge)
  // How long a submission's idempotency key is remembered (internal/submit_keys.h).
  Duration submit_key_retention = Seconds(86400);
  // [auth] (docs/security.md)
  // The keyring (api/token.h): cluster keys and every node's key; a first-release key file
  // reads as one cluster key. Default: <state_dir>/jwt.key, created when missing.
  std::string jwt_key_file;
  bool munge = false;
  std::string munge_socket;                     // "" = munged's default socket
  // Roles (api/access.h). `admins`, the first release's key, adds to admin_users.
  std::vector<std::string> admin_users;
  std::vector<std::string> admin_groups;
  std::vector<std::string> operator_users;
  std::vector<std::string> operator_groups;
  Duration max_token_lifetime = Minutes(24 * 60);
  Duration max_job_credential_lifetime = Minutes(30 * 24 * 60);
  // [tls] (docs/security.md, "Certificates"). TLS is on when `certificate` is set; the
  // controller's calls to agents then use https:// and verify them against `ca`.
  std::string tls_certificate;  // PEM chain of the controller's certificate
  std::string tls_key;          // its private key (must be 0600)
  std::string tls_ca;           // the cluster CA (verifies agents and client certificates)
  std::string tls_client_certificate = "optional";  // "none" | "optional" | "required"
  // Plain http:// on a loopback listen address (tests, a single-host setup). Any other
  // address without TLS is refused at start.
  bool allow_plain_loopback = false;
  // [privacy]
  PrivacyConfig privacy;
  // [limits] max_submitted_jobs: the most jobs (array tasks counted) one user may have
  // pending or running at once; 0 = no limit.
  uint32_t max_submitted_jobs = 10000;
  // Not from the file: how job users' uids are found (the passwd database when empty).
  UserIdLookup user_ids;
  // Not from the file (issue 16 item 2): the groups of a job's user, for partitions'
  // AllowGroups (getgrouplist through NSS when empty; tests give a fake).
  std::function<std::vector<std::string>(const std::string& user, uint32_t gid)> user_groups;
  // [metrics] token_file: the scrape token (api/scrape_token.h) that reads /metrics and
  // /metrics/targets; "" = only admins' and operators' credentials may.
  std::string metrics_token_file;
  GpuWasteConfig gpu_waste;
  // [audit] retention_days: audit records older than this are pruned (an anchor row keeps the
  // chain verifiable: store/audit_chain.h); 0 = kept forever.
  uint32_t audit_retention_days = 0;
  // [ha] (docs/operations.md, "High availability"): controllers sharing a PostgreSQL store.
  // `controllers`: every controller's URL (Slurm's SlurmctldHost list), as agents and
  // clients list them; `url`: this controller's, which standbys name as the leader's
  // (default: its listen address); `lease_s`: a standby takes over within about this long
  // after the leader dies (the leader renews every third of it).
  std::vector<std::string> ha_controllers;
  std::string ha_url;
  Duration ha_lease = Seconds(5);
  // The whole file's text, for sched's parser of the scheduling sections.
  std::string toml_text;
};

// Parses the controller's sections of `toml_text` (`origin` names the file in messages).
// Returns kInvalidArgument naming the file, the key and the reason for a syntax error, an
// unknown key in a controller section, or a bad value.
Result<ControllerConfig> ParseControllerConfig(std::string_view toml_text, std::string_view origin);

// Whether the controller may serve as configured: TLS, or plain HTTP on a loopback address
// with `allow_plain_loopback`. Returns kInvalidArgument naming `origin` and the key otherwise.
Status CheckTransportSecurity(const ControllerConfig& config, std::string_view origin);

// Reads and parses `path`. Returns kNotFound naming the path if it cannot be read, or the
// errors of ParseControllerConfig.
Result<ControllerConfig> LoadControllerConfig(const std::string& path);

}  // namespace corral::controller
