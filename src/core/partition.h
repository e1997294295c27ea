// Partitions (queues): named node sets with limits and defaults, as in Slurm.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/time.h"

namespace corral {

struct Partition {
  std::string name;
  std::vector<std::string> nodes;       // node names or host-list patterns; empty = all nodes
  bool is_default = false;
  bool up = true;
  Duration default_time = kUnlimited;   // applied when a job gives no --time
  Duration max_time = kUnlimited;       // a longer --time is rejected at submit
  uint32_t max_gpus_per_job = 0;        // 0 = no limit
  uint32_t max_nodes_per_job = 0;       // 0 = no limit
  uint32_t priority_tier = 1;
  uint64_t def_mem_per_cpu_mb = 0;      // memory given when a job asks for none
  std::vector<std::string> allowed_accounts;  // empty = every account (Slurm's AllowAccounts)
  // --- Access by account, group and QOS (issue 16 item 2; core/partition_access.h) ---
  std::vector<std::string> deny_accounts;   // DenyAccounts; ignored when allowed_accounts is set
  std::vector<std::string> allowed_groups;  // AllowGroups: Unix groups; empty = every user
  std::vector<std::string> allowed_qos;     // AllowQos; empty = every QOS
  // --- end access ---
  bool operator==(const Partition&) const = default;
};

}  // namespace corral
