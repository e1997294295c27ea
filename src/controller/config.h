// The controller's configuration, read from corral.toml (every key is documented in
// deploy/corral.example.toml).
//
// The controller owns the sections [controller], [store] and [auth]; the scheduling sections
// ([scheduler], [[partition]], [[account]], ...) are parsed by sched (sched/config.h) from the
// same text.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/partition.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::controller {

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
  // [auth]
  std::string jwt_key_file;                     // default: <state_dir>/jwt.key
  bool munge = false;
  std::string munge_socket;                     // "" = munged's default socket
  std::vector<std::string> admins;
  GpuWasteConfig gpu_waste;
  // The whole file's text, for sched's parser of the scheduling sections.
  std::string toml_text;
};

// Parses the controller's sections of `toml_text` (`origin` names the file in messages).
// Returns kInvalidArgument naming the file, the key and the reason for a syntax error, an
// unknown key in a controller section, or a bad value.
Result<ControllerConfig> ParseControllerConfig(std::string_view toml_text, std::string_view origin);

// Reads and parses `path`. Returns kNotFound naming the path if it cannot be read, or the
// errors of ParseControllerConfig.
Result<ControllerConfig> LoadControllerConfig(const std::string& path);

}  // namespace corral::controller
