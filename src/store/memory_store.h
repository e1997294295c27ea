// MemoryStore: a real in-memory `Store` for tests and the simulator. Nothing survives the
// object; `Write` never fails. Query semantics are exactly those of the SQL stores (the
// conformance suite checks both).
//
// Thread-safe.
#pragma once

#include <map>
#include <optional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "store/store.h"

namespace corral::store {

class MemoryStore final : public Store {
 public:
  MemoryStore() = default;
  MemoryStore(const MemoryStore&) = delete;
  MemoryStore& operator=(const MemoryStore&) = delete;

  // Applies the batch; never fails.
  Status Write(const WriteBatch& batch) override;
  // Never fails.
  Result<StoredState> Load() override;
  // Never fails.
  Result<std::vector<Job>> QueryJobs(const JobQuery& query) override;
  // Never fails.
  Result<std::optional<std::string>> GetGpuSeries(JobId job) override;
  // Never fails.
  Result<std::vector<AuditRecord>> QueryAudit(const AuditQuery& query) override;
  std::string_view kind() const override { return "memory"; }

  // Number of successful `Write` calls (lets tests see group commit at work).
  uint64_t write_count() const;

 private:
  mutable std::mutex mu_;
  std::map<JobId, Job> jobs_;                // guarded by mu_
  std::map<NodeId, Node> nodes_;             // guarded by mu_
  std::map<std::string, std::string> meta_;  // guarded by mu_
  std::map<JobId, std::string> gpu_series_;  // guarded by mu_
  std::map<uint64_t, AuditRecord> audit_;    // guarded by mu_
  std::map<std::pair<std::string, std::string>, std::string> governance_;  // guarded by mu_
  uint64_t write_count_ = 0;                 // guarded by mu_
};

}  // namespace corral::store
