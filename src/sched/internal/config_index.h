// ConfigIndex: the lookups a scheduling pass needs from the configuration, derived once when a
// `Scheduler` is built: accounts by name with their parent, nearest guarantee holder and
// allowed QOS list; users; QOS by name with whom each may preempt and its grace time; the
// network topology.
//
// Invariants (after `ValidateSchedulerConfig`): every parent, QOS and switch name it resolves
// exists; parents come before children. It points into the `SchedulerConfig` it was built from,
// which must outlive it and not change.
//
// Immutable after construction; thread-safe to read.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/time.h"
#include "sched/config.h"
#include "sched/internal/topology.h"

namespace corral::sched::internal {

struct ConfigIndex {
  struct Account {
    const AccountConfig* config = nullptr;
    int parent = -1;
    int guarantee_holder = -1;  // nearest ancestor-or-self with guaranteed GPUs
    std::set<std::string, std::less<>> users;
    const std::vector<std::string>* allowed_qos = nullptr;  // nearest non-empty list
  };
  struct Qos {
    const QosConfig* config = nullptr;
    std::vector<bool> preempts;  // by QOS index
    Duration grace{0};
  };

  explicit ConfigIndex(const SchedulerConfig& c);

  // Whether account id `a` (a pass's, `JobTable`) names a configured account.
  bool Configured(int a) const { return a >= 0 && a < static_cast<int>(accounts.size()); }

  std::map<std::string, int, std::less<>> account_ids;
  std::vector<Account> accounts;
  std::map<std::string, const UserConfig*, std::less<>> users;
  std::map<std::string, int, std::less<>> qos_ids;
  std::vector<Qos> qos;
  int default_qos = 0;
  uint32_t max_qos_priority = 0;
  bool any_guarantee = false;
  Topology topology;
};

}  // namespace corral::sched::internal
