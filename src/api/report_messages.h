// The messages of the usage and fair-share reports (docs/governance.md, "Reports"):
//
//   GET /api/v1/reports/usage?start=&end=[&jobs=1]  -> UsageReport   (`corral report usage`,
//                                                                      `sreport`)
//   GET /api/v1/fairshare                            -> ShareReport   (`sshare`)
//   GET /api/v1/priorities/weights                   -> PriorityWeights (`sprio -w`)
//
// Plain value types; their JSON form is in api/report_codec.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/time.h"

namespace corral::api {

// One line of a usage report: what a group of jobs (an account, an (account, user), a
// partition, a GPU model, or one job) held during the report's window. Allocated resources
// times the part of each job's run inside the window; energy is the job's measured energy
// pro rata of that part. The fields that do not define the group are "".
struct UsageRow {
  std::string account;
  std::string user;
  std::string partition;
  std::string gpu_model;
  JobId job;                    // per-job rows only
  uint32_t cpus = 0;            // per-job rows: the job's allocated CPUs
  uint32_t gpus = 0;            // per-job rows: the job's allocated GPUs
  uint32_t jobs = 0;            // jobs that ran in the window
  double cpu_seconds = 0;
  double gpu_seconds = 0;
  double energy_joules = 0;
  bool operator==(const UsageRow&) const = default;
};

// Cluster, account, user, partition and GPU-model usage over [start, end).
struct UsageReport {
  Timestamp start{};
  Timestamp end{};
  // Set when [privacy] hid other users' jobs from the caller: every figure counts `user`'s jobs.
  bool own_only = false;
  std::string user;
  // The registered nodes' capacity now, and that capacity over the window (sreport's
  // "Reported"; Corral keeps no history of node capacity, see docs/governance.md).
  uint32_t cluster_cpus = 0;
  uint32_t cluster_gpus = 0;
  double reported_cpu_seconds = 0;
  double reported_gpu_seconds = 0;
  UsageRow total;
  std::vector<UsageRow> accounts;    // by account, by name
  std::vector<UsageRow> users;       // by (account, user)
  std::vector<UsageRow> partitions;  // by partition
  std::vector<UsageRow> gpu_models;  // by GPU model (GPU-seconds and energy only)
  std::vector<UsageRow> jobs;        // by job, when asked for (`jobs=1`)
  bool operator==(const UsageReport&) const = default;
};

// One association of the fair-share tree (Slurm's sshare line): the root, an account or a
// user under an account, in tree order (depth first, siblings by name).
struct ShareRow {
  std::string account;          // the account (for a user: its account)
  std::string user;             // "" for an account row
  uint32_t depth = 0;           // 0 = root
  double raw_shares = 0;
  double norm_shares = 0;       // shares over its siblings' total
  double raw_usage = 0;         // decayed TRES-weighted usage (GPU-seconds by default)
  double effective_usage = 0;   // usage over its siblings' total (Slurm's fair tree)
  double level_fairshare = 0;   // norm_shares / effective_usage; -1 = infinite (no usage)
  double fairshare = 0;         // users only: the fair-tree factor in (0, 1]
  bool operator==(const ShareRow&) const = default;
};

struct ShareReport {
  std::vector<ShareRow> rows;
  bool operator==(const ShareReport&) const = default;
};

// The multifactor priority weights (`[scheduler.priority]`), as `sprio -w` shows them.
struct PriorityWeights {
  uint32_t age = 0;
  uint32_t fairshare = 0;
  uint32_t job_size = 0;
  uint32_t partition = 0;
  uint32_t qos = 0;
  bool operator==(const PriorityWeights&) const = default;
};

}  // namespace corral::api
