// SqliteStore: the embedded default `Store`, one SQLite file in WAL mode.
//
// Durability: `synchronous=FULL`, so every `Write` (one transaction) is fsynced to the WAL
// before it returns: an acknowledged batch survives kill -9 and a power loss. Schema and
// on-disk encoding: store/internal/schema.h and store/internal/record_codec.h. A database
// created by a newer Corral (a higher schema version) is refused, never modified.
//
// Connections: one for `Write` and `Load`, and a second, opened on the first `QueryJobs`,
// so that accounting queries read a consistent snapshot (WAL) without holding up `Write`.
// An in-memory database (":memory:") uses its one connection for everything.
//
// Thread-safe: one writer plus concurrent `QueryJobs` callers.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "store/store.h"

namespace corral::store {

class SqliteStore final : public Store {
 public:
  struct Options {
    // How long a statement waits for another process's lock before failing with kUnavailable.
    int busy_timeout_ms = 5000;
    // From this many jobs on, `Load` reads the upper half of the ids on a second thread and
    // connection (decoding is most of a restart's work).
    int64_t parallel_load_min_jobs = 20'000;
  };

  // Opens or creates the database at `path` (":memory:" for a private in-memory database)
  // and creates or checks the schema.
  // Returns kUnavailable naming the path when the file cannot be opened or created (missing
  // or read-only directory, I/O error, locked by another process for longer than the busy
  // timeout), kPermissionDenied when the file or directory may not be written,
  // kFailedPrecondition when the file is not a SQLite database or holds a schema version newer
  // than this binary's, kInternal for any other database error.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path, Options options);
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path) {
    return Open(path, Options());
  }

  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  // See `Store::Write`. Returns kUnavailable (busy, I/O error, disk full, read-only file) or
  // kInternal (any other database error, such as a constraint) naming the path; the
  // transaction is rolled back.
  Status Write(const WriteBatch& batch) override;
  // See `Store::Load`; one read transaction, so the state is a consistent snapshot. Returns
  // kInternal naming the path and the row ("job 42: column spec: ...") of a record that cannot
  // be decoded, or kUnavailable/kInternal with the database's message.
  Result<StoredState> Load() override;
  // See `Store::QueryJobs`. Filters in SQL with bound parameters. Errors as `Load`.
  Result<std::vector<Job>> QueryJobs(const JobQuery& query) override;
  // See `Store::GetGpuSeries`; on the reader's connection. Errors as `Load`.
  Result<std::optional<std::string>> GetGpuSeries(JobId job) override;
  // See `Store::QueryAudit`; on the reader's connection. Errors as `Load`.
  Result<std::vector<AuditRecord>> QueryAudit(const AuditQuery& query) override;
  std::string_view kind() const override { return "sqlite"; }

  const std::string& path() const { return path_; }

 private:
  class Connection;  // a sqlite3 handle with its cached statements (sqlite_store.cc)

  SqliteStore(std::string path, Options options);
  Result<Connection*> Reader();  // Requires: read_mu_ held.
  // A private in-memory database exists only on the writer's connection.
  bool in_memory() const { return path_ == ":memory:" || path_.empty(); }
  // Whether an array task whose encoded spec is `spec` refers to its array's row in
  // `array_specs` (written here when the array has none yet). Requires: write_mu_ held, in
  // the write transaction.
  Result<bool> ShareArraySpec(JobId array, std::string_view spec);
  static constexpr size_t kCachedArraySpecs = 16;

  const std::string path_;
  const Options options_;
  std::mutex write_mu_;
  std::unique_ptr<Connection> writer_;  // guarded by write_mu_
  // The encoded specs of recently written arrays (`array_specs` rows); guarded by write_mu_.
  std::unordered_map<uint64_t, std::string> array_specs_;
  std::mutex read_mu_;
  std::unique_ptr<Connection> reader_;  // guarded by read_mu_; opened by the first QueryJobs
};

}  // namespace corral::store
