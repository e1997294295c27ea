// Store: the controller's durable state — jobs, nodes and a few counters — behind one
// interface with an embedded SQLite implementation (the default), a PostgreSQL one (shared by
// standby controllers) and an in-memory one (tests and the simulator). All pass the same
// conformance suite (store_conformance_test.cc).
//
// The controller's state thread is the only writer. It collects every change of one loop
// iteration into a `WriteBatch` and calls `Write` once (group commit); a request is answered
// only after the batch that holds its change has been written.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/audit.h"
#include "core/ids.h"
#include "core/job.h"
#include "core/node.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::store {

// One record of the governance data (docs/governance.md): an account, a user (with its
// associations) or a QOS. `kind` is "account", "user" or "qos"; `name` is unique within its
// kind; `body` is the record in the API's JSON form (api/governance_codec.h), which the store
// keeps as it is and never reads: the controller decodes and validates the records as a whole
// (the account tree), and a limit added later needs no schema change.
struct GovernanceRecord {
  std::string kind;
  std::string name;
  std::string body;
  bool operator==(const GovernanceRecord&) const = default;
};

// Everything a controller needs to recover after a restart.
struct StoredState {
  std::vector<Job> jobs;     // every job, sorted by id
  std::vector<Node> nodes;   // every node ever registered, sorted by id
  std::map<std::string, std::string> meta;  // counters such as "next_job_id"
  // The GPU series (core/gpu_series.h, encoded) of the jobs that are RUNNING: what a
  // restarted controller keeps adding to. Those of other jobs are read by `GetGpuSeries`.
  std::map<JobId, std::string> gpu_series;
  std::vector<GovernanceRecord> governance;  // sorted by (kind, name), bytewise
};

// A set of changes applied atomically by `Store::Write`. Later puts of the same key in one
// batch win. Value type; not thread-safe.
class WriteBatch {
 public:
  struct PutJobOp { Job job; };
  struct PutNodeOp { Node node; };
  struct PutMetaOp { std::string key; std::string value; };
  struct DeleteJobOp { JobId id; };
  struct DeleteMetaOp { std::string key; };
  struct PutGpuSeriesOp { JobId job; std::string body; };
  struct PutAuditOp { AuditRecord record; };
  struct DeleteAuditThroughOp { uint64_t seq; };
  struct PutGovernanceOp { GovernanceRecord record; };
  struct DeleteGovernanceOp { std::string kind; std::string name; };
  using Op = std::variant<PutJobOp, PutNodeOp, PutMetaOp, DeleteJobOp, DeleteMetaOp,
                          PutGpuSeriesOp, PutAuditOp, DeleteAuditThroughOp, PutGovernanceOp,
                          DeleteGovernanceOp>;

  void PutJob(const Job& job) { ops_.push_back(PutJobOp{job}); }
  void PutNode(const Node& node) { ops_.push_back(PutNodeOp{node}); }
  void PutMeta(std::string key, std::string value) {
    ops_.push_back(PutMetaOp{std::move(key), std::move(value)});
  }
  // Removes the job and its GPU series.
  void DeleteJob(JobId id) { ops_.push_back(DeleteJobOp{id}); }
  // Stores job `job`'s GPU series (`EncodeGpuSeries`), replacing the one stored before.
  void PutGpuSeries(JobId job, std::string body) {
    ops_.push_back(PutGpuSeriesOp{job, std::move(body)});
  }
  // Removes the meta key (nothing when it is absent).
  void DeleteMeta(std::string key) { ops_.push_back(DeleteMetaOp{std::move(key)}); }

  // Stores an audit record (core/audit.h) under its `seq`, replacing one stored before.
  void PutAudit(const AuditRecord& record) { ops_.push_back(PutAuditOp{record}); }
  // Removes the audit records with seq <= `seq` (retention; the caller puts an anchor row).
  void DeleteAuditThrough(uint64_t seq) { ops_.push_back(DeleteAuditThroughOp{seq}); }
  // Stores a governance record under (kind, name), replacing one stored before.
  void PutGovernance(GovernanceRecord record) {
    ops_.push_back(PutGovernanceOp{std::move(record)});
  }
  // Removes the governance record (kind, name) (nothing when it is absent).
  void DeleteGovernance(std::string kind, std::string name) {
    ops_.push_back(DeleteGovernanceOp{std::move(kind), std::move(name)});
  }
  // Moves `other`'s ops after this batch's (later puts still win).
  void Append(WriteBatch&& other) {
    if (ops_.empty()) {
      ops_ = std::move(other.ops_);
    } else {
      for (Op& op : other.ops_) ops_.push_back(std::move(op));
    }
    other.ops_.clear();
  }

  const std::vector<Op>& ops() const { return ops_; }
  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }
  void Clear() { ops_.clear(); }

 private:
  std::vector<Op> ops_;
};

// Filters for accounting queries (sacct, `corral sim --from-store`). Empty = any.
struct JobQuery {
  std::vector<std::string> users;
  std::vector<std::string> accounts;
  std::vector<std::string> partitions;
  std::vector<JobState> states;
  std::vector<JobId> ids;
  Timestamp start_after{};     // jobs that ended at or after (or are still active)
  Timestamp end_before{};      // jobs submitted before; epoch = no bound
  size_t limit = 0;            // 0 = no limit
};

// The leader lease of controllers sharing one store (docs/operations.md, "High
// availability"): who leads, where it serves, and the fencing epoch its writes carry.
struct Lease {
  std::string holder;  // the instance that holds it ("" when nobody ever did)
  std::string url;     // where that instance serves clients
  uint64_t epoch = 0;  // raised at every change of holder
  bool held = false;   // in `TryAcquireLease`'s answer: whether the caller holds it now
};

// Thread-safety: implementations are thread-safe for one writer plus concurrent readers
// (`QueryJobs` may run on another thread than `Write`).
class Store {
 public:
  virtual ~Store() = default;

  // Applies every op of `batch` atomically; when it returns OK the change is durable (it
  // survives `kill -9` of the process, and a power loss for the durable implementations).
  // Returns kUnavailable or kInternal with the database's message on failure, in which case
  // nothing of the batch is applied.
  virtual Status Write(const WriteBatch& batch) = 0;

  // Reads the whole state. Returns kInternal with the database's message on failure, or
  // kInternal naming the row when a stored record cannot be decoded.
  virtual Result<StoredState> Load() = 0;

  // Jobs matching `query`, sorted by id.
  virtual Result<std::vector<Job>> QueryJobs(const JobQuery& query) = 0;

  // Job `job`'s stored GPU series (`EncodeGpuSeries`), nullopt when it has none. Thread-safe
  // as `QueryJobs`. Returns kInternal (kUnavailable) with the database's message on failure.
  virtual Result<std::optional<std::string>> GetGpuSeries(JobId job) = 0;

  // The audit records (core/audit.h) with seq > `query.after_seq` that match its filters, by
  // seq; with `query.limit` the last `limit` of them (the first with `query.oldest_first`:
  // a page of the log read forward). Thread-safe as `QueryJobs`. Errors as
  // `QueryJobs`.
  virtual Result<std::vector<AuditRecord>> QueryAudit(const AuditQuery& query) = 0;

  // "sqlite", "postgresql", "memory".
  virtual std::string_view kind() const = 0;

  // --- High availability (issue 11) ---
  // Whether several controllers may share this store (one leads, the others stand by).
  virtual bool shared() const { return false; }
  // Takes or renews the leader lease for `holder` (an instance id, new at every process
  // start), serving at `url`, for `ttl` by the database's clock: granted when nobody holds
  // it, when it has expired, or when `holder` holds it; a new holder gets the epoch + 1.
  // Returns the lease as it stands afterwards (`held`: whether `holder` has it). A store that
  // is not `shared` grants it always, at epoch 1. Thread-safe with `Write`; its own
  // connection, so a long query never delays a renewal.
  virtual Result<Lease> TryAcquireLease(const std::string& holder, const std::string& url,
                                        Duration ttl) {
    (void)ttl;
    return Lease{.holder = holder, .url = url, .epoch = 1, .held = true};
  }
  // Gives the lease up at once when `holder` holds it (a leader stopping cleanly: a restart
  // or a standby takes over without waiting for it to expire). No-op otherwise.
  virtual Status ReleaseLease(const std::string& holder) {
    (void)holder;
    return {};
  }
  // Fencing: from now on every `Write` checks, inside its own transaction and without a
  // round trip of its own, that the lease's epoch is still `epoch`, and otherwise fails
  // with kAborted ("fenced") having applied nothing. So a deposed leader can never write
  // again, whatever it believes. 0: no check (the default). No-op on a store that is not
  // `shared`. Call before the first `Write` of a leader.
  virtual void SetFence(uint64_t epoch) { (void)epoch; }
};

// Opens a store from a URL: "sqlite:PATH" or a plain path (SQLite, WAL, created if missing),
// "postgresql://..." (PostgreSQL), "memory:" (in memory). Returns kInvalidArgument naming an
// unknown scheme, or the error of opening the database.
Result<std::unique_ptr<Store>> OpenStore(const std::string& url);

}  // namespace corral::store
