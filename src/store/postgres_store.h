// PostgresStore: the `Store` in PostgreSQL, for clusters whose standby controllers share
// one database and whose accounting queries run there. Same schema as SqliteStore
// (store/internal/schema.h), created in the first schema of the connection's search_path.
//
// libpq is not linked: `libpq.so.5` is loaded with dlopen when the first store is opened,
// so the `corral` binary starts without it and runs on hosts that lack it.
//
// Durability: one transaction per `Write` with `synchronous_commit = on` set for the
// session, so an acknowledged batch is on the server's disk (and its synchronous standbys).
// If the connection is lost while COMMIT is in flight, PostgreSQL cannot tell the client
// whether the transaction committed: `Write` then returns kUnavailable and the batch may or
// may not be applied; every op is an idempotent put or delete, so writing it again is safe.
// A lost connection is re-established by the next call: transparently when nothing had been
// sent yet (the BEGIN of a `Write` or `Load`) or for a read (`QueryJobs`); a `Write` that was
// under way when the connection went fails with kUnavailable.
//
// Text columns (job name, user, account, partition, reason, node name, meta) must be valid
// UTF-8 without NUL bytes: PostgreSQL refuses anything else (kInvalidArgument). Blobs take
// any bytes.
//
// Thread-safe: one writer plus concurrent `QueryJobs` callers (each on its own connection).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "store/store.h"

namespace corral::store {

namespace internal {
struct Libpq;
}

class PostgresStore final : public Store {
 public:
  struct Options {
    // The libpq shared library to load.
    std::string libpq = "libpq.so.5";
  };

  // Connects to the database at `url` ("postgresql://user@host:port/db?options"), sets up
  // the session and creates or checks the schema.
  // Returns kUnavailable "postgresql store: cannot load libpq.so.5: ..." when libpq cannot be
  // loaded, kUnavailable naming the server (password left out) when it cannot connect,
  // kFailedPrecondition when the database holds a newer schema version than this binary's,
  // kInternal for any other database error.
  static Result<std::unique_ptr<PostgresStore>> Open(const std::string& url, Options options);
  static Result<std::unique_ptr<PostgresStore>> Open(const std::string& url) {
    return Open(url, Options());
  }

  ~PostgresStore() override;
  PostgresStore(const PostgresStore&) = delete;
  PostgresStore& operator=(const PostgresStore&) = delete;

  // See `Store::Write` and the class comment. Returns kUnavailable (connection lost, server
  // shutting down or read-only, out of disk, serialization failure), kInvalidArgument (a text
  // value PostgreSQL refuses, see above) or kInternal (any other database error); the
  // transaction is rolled back.
  Status Write(const WriteBatch& batch) override;
  // See `Store::Load`; one REPEATABLE READ transaction. Returns kInternal naming the row of a
  // record that cannot be decoded, kUnavailable or kInternal with the database's message.
  Result<StoredState> Load() override;
  // See `Store::QueryJobs`. Filters in SQL with bound parameters. Errors as `Load`.
  Result<std::vector<Job>> QueryJobs(const JobQuery& query) override;
  // See `Store::GetGpuSeries`; on the reader's connection. Errors as `Load`.
  Result<std::optional<std::string>> GetGpuSeries(JobId job) override;
  // See `Store::QueryAudit`; on the reader's connection. Errors as `Load`.
  Result<std::vector<AuditRecord>> QueryAudit(const AuditQuery& query) override;
  std::string_view kind() const override { return "postgresql"; }
  // High availability (store.h): the lease is the row of `corral_lease`, taken in one
  // statement on a connection of its own; the fence is the procedure `corral_fence(epoch)`,
  // sent with each write's BEGIN in the same round trip, which reads the lease row FOR SHARE
  // (so a takeover waits for a write in flight, and a write after a takeover fails).
  bool shared() const override { return true; }
  Result<Lease> TryAcquireLease(const std::string& holder, const std::string& url,
                                Duration ttl) override;
  Status ReleaseLease(const std::string& holder) override;
  void SetFence(uint64_t epoch) override;

  // The URL without its password and parameters, as used in error messages.
  const std::string& display_name() const { return name_; }

 private:
  class Connection;  // a PGconn with its prepared statements (postgres_store.cc)

  PostgresStore(const internal::Libpq& pq, std::string url, std::string name);
  // The reader's connection, opened or reconnected as needed. Call with read_mu_ held.
  Result<Connection*> Reader();

  const internal::Libpq& pq_;
  const std::string url_;
  const std::string name_;
  std::mutex write_mu_;
  std::unique_ptr<Connection> writer_;  // guarded by write_mu_
  // The encoded specs of recently written arrays (`array_specs` rows); guarded by write_mu_.
  std::unordered_map<uint64_t, std::string> array_specs_;
  static constexpr size_t kCachedArraySpecs = 16;
  std::string begin_sql_ = "BEGIN";  // guarded by write_mu_: with the fence when one is set
  std::mutex lease_mu_;
  std::unique_ptr<Connection> lease_;  // guarded by lease_mu_; opened by the first lease call
  std::mutex read_mu_;
  std::unique_ptr<Connection> reader_;  // guarded by read_mu_; opened by the first QueryJobs
};

}  // namespace corral::store
