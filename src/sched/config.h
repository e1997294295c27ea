// The scheduler's configuration: partitions, the account tree with shares and guarantees,
// users, QOS, limits, priority weights, fair share, backfill, preemption, reservations and
// the network topology, and the parser of their sections of corral.toml.
//
// corral.toml is shared with the controller. This parser owns the sections `[scheduler]`
// (with its sub-tables `priority`, `fairshare`, `backfill`, `preemption`), `[[partition]]`,
// `[[account]]`, `[[user]]`, `[[qos]]`, `[[reservation]]` and `[topology]`; it ignores every other
// top-level key and table (`[controller]`, `[store]`, `[auth]`, node declarations, ...), and
// rejects unknown keys and bad values inside its own. docs/scheduling.md documents every key;
// deploy/corral.example.toml shows them on a mixed AI cluster.
//
// Parsing a string is pure (the caller reads the file). Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/governance.h"
#include "core/partition.h"
#include "core/result.h"
#include "core/time.h"
#include "sched/snapshot.h"

namespace corral::sched {

// The account tree, users and QOS (core/governance.h), in this namespace too.
using ::corral::AccountConfig;
using ::corral::Limits;
using ::corral::PreemptMode;
using ::corral::PreemptModeName;
using ::corral::QosConfig;
using ::corral::UserConfig;

// Multifactor priority weights (Slurm's PriorityWeight*). A job's priority is
// sum(weight * factor) - nice, each factor in [0, 1].
struct PriorityConfig {
  uint32_t weight_age = 1000;
  uint32_t weight_fairshare = 0;
  uint32_t weight_job_size = 0;
  uint32_t weight_partition = 0;
  uint32_t weight_qos = 0;
  Duration max_age = Minutes(7 * 24 * 60);  // age at which the age factor reaches 1
  bool favor_small = false;                 // job size factor favours small jobs
  bool operator==(const PriorityConfig&) const = default;
};

// Usage accounting for fair share and GPU-minute limits.
struct FairShareConfig {
  Duration half_life = Minutes(7 * 24 * 60);      // decay of usage; 0 = no decay
  Duration usage_period = Minutes(30 * 24 * 60);  // GPU-minute limits count within aligned
                                                  // periods of this length since the epoch
  double weight_gpu = 1.0;                        // TRES weights of usage (per GPU-second,
  double weight_cpu = 0.0;                        // per CPU-second, per GB-second of memory)
  double weight_mem_gb = 0.0;
  bool operator==(const FairShareConfig&) const = default;
};

// EASY backfill with reservations for the top blocked jobs.
struct BackfillConfig {
  bool enabled = true;
  uint32_t reservations = 10;  // blocked jobs (highest priority first) that get a reservation
  Duration window = Minutes(7 * 24 * 60);  // no reservation further ahead than this
  bool operator==(const BackfillConfig&) const = default;
};

struct PreemptionConfig {
  bool enabled = true;                    // inert without QOS `preempt` lists or guarantees
  Duration grace_time = Minutes(2);       // default checkpoint grace of a victim
  bool reclaim = true;                    // guaranteed accounts take back borrowed GPUs
  uint32_t max_preemptors_per_pass = 16;  // blocked jobs that may search for victims per pass
  bool operator==(const PreemptionConfig&) const = default;
};

// A switch of the network topology tree (Slurm's topology.conf). A leaf lists nodes; an upper
// switch lists switches. Multi-node jobs are placed on the fewest leaf switches.
struct SwitchConfig {
  std::string name;
  std::vector<std::string> nodes;     // leaf: node names (host lists expanded)
  std::vector<std::string> switches;  // upper level: child switch names (expanded)
  bool operator==(const SwitchConfig&) const = default;
};

struct SchedulerConfig {
  std::string policy = "default";  // the factory name (policy_factory.h)
  uint64_t seed = 0;               // for policies that randomise (never the engine's ties)
  std::string default_qos = "normal";
  uint32_t max_jobs_per_pass = 10000;  // pending jobs examined per pass, in priority order;
                                       // 0 = all (Slurm: default_queue_depth)
  PriorityConfig priority;
  FairShareConfig fairshare;
  BackfillConfig backfill;
  PreemptionConfig preemption;
  std::vector<Partition> partitions;    // `nodes` expanded; empty list = every node
  std::vector<AccountConfig> accounts;  // parents before children
  std::vector<UserConfig> users;
  std::vector<QosConfig> qos;  // never empty: a "normal" QOS is added if none is given
  std::vector<Reservation> reservations;
  std::vector<SwitchConfig> switches;  // the topology; empty = flat network
  bool operator==(const SchedulerConfig&) const = default;
};

// The configuration of a file without scheduling sections: one up default partition "main"
// over all nodes, FIFO-ish priority (age only), backfill with 10 reservations, one QOS "normal".
SchedulerConfig DefaultSchedulerConfig();

// Parses the scheduling sections of corral.toml (see the file comment). `source_name` prefixes
// every message ("corral.toml: [[partition]] \"gpu\": unknown key \"max_gpu\"").
// Returns kInvalidArgument for TOML syntax errors (with line and column), unknown keys in owned
// sections, values of the wrong type or out of range, invalid times, sizes and host lists,
// duplicate names, and references to unknown partitions, accounts, QOS or switches (including
// cycles in the account tree or topology).
Result<SchedulerConfig> ParseSchedulerConfig(std::string_view toml_text,
                                             std::string_view source_name = "corral.toml");

// Checks cross references of a config built in code (the parser calls it too).
// Returns kInvalidArgument naming the first inconsistency.
Status ValidateSchedulerConfig(const SchedulerConfig& config);

// The partition jobs go to when they name none: the first with `is_default`, else the first.
// nullptr when there are no partitions.
const Partition* DefaultPartition(const SchedulerConfig& config);

// The QOS a job of `account` gets when it names none: the account's (or nearest ancestor's)
// `default_qos`, else `config.default_qos`.
std::string DefaultQos(const SchedulerConfig& config, std::string_view account);

}  // namespace corral::sched
