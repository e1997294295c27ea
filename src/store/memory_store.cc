#include "store/memory_store.h"

#include <type_traits>
#include <variant>

#include "store/internal/schema.h"

namespace corral::store {

Status MemoryStore::Write(const WriteBatch& batch) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const WriteBatch::Op& op : batch.ops()) {
    std::visit(
        [&](const auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, WriteBatch::PutJobOp>) {
            jobs_.insert_or_assign(o.job.id, o.job);
          } else if constexpr (std::is_same_v<T, WriteBatch::PutNodeOp>) {
            nodes_.insert_or_assign(o.node.id, o.node);
          } else if constexpr (std::is_same_v<T, WriteBatch::PutMetaOp>) {
            meta_.insert_or_assign(o.key, o.value);
          } else if constexpr (std::is_same_v<T, WriteBatch::DeleteJobOp>) {
            jobs_.erase(o.id);
            gpu_series_.erase(o.id);
          } else if constexpr (std::is_same_v<T, WriteBatch::PutGpuSeriesOp>) {
            gpu_series_.insert_or_assign(o.job, o.body);
          } else if constexpr (std::is_same_v<T, WriteBatch::PutAuditOp>) {
            audit_.insert_or_assign(o.record.seq, o.record);
          } else if constexpr (std::is_same_v<T, WriteBatch::DeleteAuditThroughOp>) {
            audit_.erase(audit_.begin(), audit_.upper_bound(o.seq));
          } else if constexpr (std::is_same_v<T, WriteBatch::PutGovernanceOp>) {
            governance_.insert_or_assign({o.record.kind, o.record.name}, o.record.body);
          } else if constexpr (std::is_same_v<T, WriteBatch::DeleteGovernanceOp>) {
            governance_.erase({o.kind, o.name});
          } else {
            static_assert(std::is_same_v<T, WriteBatch::DeleteMetaOp>);
            meta_.erase(o.key);
          }
        },
        op);
  }
  ++write_count_;
  return {};
}

Result<StoredState> MemoryStore::Load() {
  std::lock_guard<std::mutex> lock(mu_);
  StoredState state;
  state.jobs.reserve(jobs_.size());
  for (const auto& [id, job] : jobs_) state.jobs.push_back(job);
  state.nodes.reserve(nodes_.size());
  for (const auto& [id, node] : nodes_) state.nodes.push_back(node);
  state.meta = meta_;
  for (const auto& [id, body] : gpu_series_) {
    auto job = jobs_.find(id);
    if (job != jobs_.end() && job->second.state == JobState::kRunning) {
      state.gpu_series.emplace(id, body);
    }
  }
  for (const auto& [key, body] : governance_) {
    state.governance.push_back({key.first, key.second, body});
  }
  return state;
}

Result<std::optional<std::string>> MemoryStore::GetGpuSeries(JobId job) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = gpu_series_.find(job);
  if (it == gpu_series_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Result<std::vector<Job>> MemoryStore::QueryJobs(const JobQuery& query) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Job> out;
  for (const auto& [id, job] : jobs_) {
    if (query.limit > 0 && out.size() >= query.limit) break;
    if (internal::MatchesJobQuery(job, query)) out.push_back(job);
  }
  return out;
}

Result<std::vector<AuditRecord>> MemoryStore::QueryAudit(const AuditQuery& query) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<AuditRecord> all;
  for (auto it = audit_.upper_bound(query.after_seq); it != audit_.end(); ++it) {
    all.push_back(it->second);
  }
  return internal::FilterAudit(std::move(all), query);
}

uint64_t MemoryStore::write_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return write_count_;
}

}  // namespace corral::store
