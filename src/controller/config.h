// The controller's configuration, read from corral.toml (every key is documented in
// deploy/corral.example.toml).
//
// The controller owns the sections [controller], [store] and [auth]; the scheduling sections
// ([scheduler], [[partition]], [[account]], ...) are parsed by sched (sched/config.h) from the
// same text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/partition.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::controller {

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
