// JobTable: the jobs of one scheduling pass, indexed: names interned to dense ids (accounts,
// users, QOS, (account, user) associations), the snapshot's running jobs entered into the
// `NodeState` (their ids, their use of each node, and whether they run on borrowed GPUs), and
// one `JobInfo` per pending job, in the snapshot's (JobId) order.
//
// Invariants: account ids below `ConfigIndex::accounts.size()` are the configured accounts in
// config order, then every other name in the order first seen (partition allow-lists, running
// jobs, pending jobs); user ids likewise. A running job borrows when its guarantee holder holds
// more than its guarantee and it is among the holder's newest jobs beyond it (ties by JobId,
// newest first), or, with any guarantee configured, when it is under none.
//
// Not thread-safe; one pass's. Its name tables view strings of the snapshot and the config,
// which must outlive it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/config.h"
#include "sched/internal/config_index.h"
#include "sched/internal/flat_map.h"
#include "sched/internal/job_info.h"
#include "sched/internal/node_state.h"
#include "sched/internal/shapes.h"
#include "sched/snapshot.h"

namespace corral::sched::internal {

class JobTable {
 public:
  // Indexes the jobs of `snapshot` into `nodes` (running jobs) and itself (pending jobs),
  // interning their shapes in `shapes`.
  JobTable(const SchedulerConfig& config, const ConfigIndex& index, const ClusterSnapshot& snapshot,
           Timestamp now, NodeState& nodes, ShapeMemo& shapes);
  JobTable(const JobTable&) = delete;
  JobTable& operator=(const JobTable&) = delete;

  // One per pending job, in the snapshot's order until the pass sorts them.
  std::vector<JobInfo>& pending() { return pending_; }
  const std::vector<JobInfo>& pending() const { return pending_; }
  // Whether victims are already being preempted for the snapshot's pending job at `pos`.
  bool InflightFor(size_t pos) const { return inflight_for_[pos]; }

  // Names.
  size_t accounts() const { return account_names_.size(); }
  size_t users() const { return user_names_.size(); }
  int AccountParent(int account) const { return account_parent_[account]; }
  const UserConfig* UserConfigOf(int user) const { return user_config_[user]; }
  int FindAccount(std::string_view name) const;    // -1 when never seen
  int FindUser(std::string_view name) const;       // -1 when never seen
  int32_t FindAssoc(int account, int user) const;  // -1 when no pending job has the pair
  // (account, user) of every association, by association id.
  const std::vector<std::pair<std::string_view, std::string_view>>& associations() const {
    return assoc_names_;
  }
  // Whether `account` may use partition `p` (its allow-list, when it has one, else its deny
  // list: Slurm's AllowAccounts and DenyAccounts).
  bool MayUsePartition(uint32_t p, int account) const {
    if (snap_.partitions[p].allowed_accounts.empty()) {
      return !std::binary_search(part_denied_[p].begin(), part_denied_[p].end(), account);
    }
    return std::binary_search(part_allowed_[p].begin(), part_allowed_[p].end(), account);
  }

 private:
  void IndexRunning();
  void Prepare(JobInfo* j);
  int AccountId(const std::string& name);
  int UserId(const std::string& name);

  const SchedulerConfig& config_;
  const ConfigIndex& index_;
  const ClusterSnapshot& snap_;
  const Timestamp now_;
  NodeState& nodes_;
  ShapeMemo& shapes_;
  NodeCache& cache_;  // lends its name maps (`account_ids`, `user_ids`, `qos_ids`)

  std::vector<JobInfo> pending_;
  std::vector<bool> inflight_for_;              // by snapshot position
  std::vector<std::vector<int>> part_allowed_;  // allowed account ids per partition, sorted
  std::vector<std::vector<int>> part_denied_;   // denied account ids per partition, sorted
  std::vector<std::string_view> account_names_;
  std::vector<int> account_parent_;
  std::vector<std::string_view> user_names_;
  std::vector<const UserConfig*> user_config_;     // by user id; nullptr = no [[user]] entry
  FlatMap<uint64_t, int32_t, IntHash> assoc_ids_;  // (account id, user id) -> association
  std::vector<bool> assoc_member_;                 // by association: the user may use the account
  std::vector<std::pair<std::string_view, std::string_view>> assoc_names_;  // (account, user)
  // One-entry caches: consecutive jobs (in JobId order) are often one user's batch.
  int last_account_ = -1, last_user_ = -1;
  const std::string* last_run_qos_ = nullptr;  // a running job's QOS
  int last_run_qos_id_ = -1;
  const std::string* last_qos_name_ = nullptr;  // a pending job's
  int last_qos_ = -1;
  const std::vector<std::string>* last_parts_ = nullptr;
  std::array<int32_t, 4> last_parts_ids_{};
  uint32_t last_parts_tier_ = 0;
};

}  // namespace corral::sched::internal
