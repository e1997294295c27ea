// The Store conformance suite's environments and fixture (STYLE.md 2.8), shared by
// store_conformance_test.cc and store_audit_conformance_test.cc. Instances: Memory,
// SqliteFile, SqliteInMemory, and Postgres when CORRAL_TEST_PG_DSN holds a postgresql:// URL
// (tools/with_postgres.sh sets it). Each Postgres test runs in a schema of its own.
//
// Test-only.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "store/internal/libpq.h"
#include "store/memory_store.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"
#include "store/store.h"
#include "store/testing/populated_records.h"
#include "store/testing/temp_dir.h"

namespace corral::store::conformance {

using testing::PopulatedJob;
using testing::PopulatedNode;

// What each implementation's environment offers the suite. `Open` may be called again after
// the previous store was destroyed (reopen). The hooks reach the database behind the store's
// back to make a write fail for real or to damage a row.
class Env {
 public:
  virtual ~Env() = default;
  // Empty when the environment is not available (the test is skipped).
  virtual std::string SkipReason() { return ""; }
  virtual Result<std::unique_ptr<Store>> Open() = 0;
  // Whether a store opened again sees what an earlier one wrote.
  virtual bool Durable() const { return true; }
  // Makes every later write of job `id` fail inside the database (a trigger). False when the
  // implementation cannot fail.
  virtual bool InjectFailureOnJob(JobId) { return false; }
  // Overwrites job `id`'s spec blob with bytes that are not a valid encoding.
  virtual bool CorruptJob(JobId) { return false; }
  // Sets the stored schema version.
  virtual bool SetSchemaVersion(int) { return false; }
  // Makes the server end the store's connection while it writes job `id` (a crash of the
  // database in the middle of a batch).
  virtual bool InjectDisconnectOnJob(JobId) { return false; }
  // Closes the store's connections from the server side, as a database restart does, and
  // waits until they are gone.
  virtual bool DropConnections() { return false; }
  // The bytes of every stored spec (the jobs' spec column and `array_specs`); -1 when unknown.
  virtual int64_t StoredSpecBytes() { return -1; }
  // Runs `sql` on the database behind the store's back; "{audit}" names the audit table.
  virtual bool ExecSql(const std::string&) { return false; }
};

constexpr const char* kStoredSpecBytesSql =
    "SELECT (SELECT coalesce(sum(length(spec)), 0) FROM jobs) + "
    "(SELECT coalesce(sum(length(spec)), 0) FROM array_specs)";

// `sql` with every "{audit}" replaced by `table`.
inline std::string WithTable(std::string sql, const std::string& table) {
  for (size_t at; (at = sql.find("{audit}")) != std::string::npos;) sql.replace(at, 7, table);
  return sql;
}
// `{governance}` in `sql` replaced by `table`.
inline std::string WithGovernanceTable(std::string sql, const std::string& table) {
  for (size_t at; (at = sql.find("{governance}")) != std::string::npos;) {
    sql.replace(at, 12, table);
  }
  return sql;
}

class MemoryEnv final : public Env {
 public:
  // One store per test: "reopening" returns a new, empty store.
  Result<std::unique_ptr<Store>> Open() override { return OpenStore("memory:"); }
  bool Durable() const override { return false; }
};

class SqliteFileEnv final : public Env {
 public:
  std::string SkipReason() override { return dir_.path().empty() ? "no temp dir" : ""; }
  // Every Load of more than one job takes the two-thread path (the default threshold is for
  // big stores; store_test covers the one-thread path).
  Result<std::unique_ptr<Store>> Open() override {
    auto s = SqliteStore::Open(path(), {.parallel_load_min_jobs = 2});
    if (!s.has_value()) return tl::unexpected(s.error());
    return std::unique_ptr<Store>(std::move(*s));
  }
  bool InjectFailureOnJob(JobId id) override {
    return Exec("CREATE TRIGGER corral_test_fail BEFORE INSERT ON jobs WHEN NEW.id = " +
                id.ToString() + " BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
  }
  bool CorruptJob(JobId id) override {
    return Exec("UPDATE jobs SET spec = x'01ff' WHERE id = " + id.ToString());
  }
  bool SetSchemaVersion(int v) override {
    return Exec("UPDATE corral_info SET value = '" + std::to_string(v) +
                "' WHERE key = 'schema_version'");
  }
  int64_t StoredSpecBytes() override {
    sqlite3* db = nullptr;
    sqlite3_stmt* stmt = nullptr;
    int64_t v = -1;
    if (sqlite3_open(path().c_str(), &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, kStoredSpecBytesSql, -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      v = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return v;
  }
  bool ExecSql(const std::string& sql) override {
    return Exec(WithGovernanceTable(WithTable(sql, "audit"), "governance"));
  }

 private:
  std::string path() const { return dir_.File("state.db"); }
  bool Exec(const std::string& sql) {
    sqlite3* db = nullptr;
    bool ok = sqlite3_open(path().c_str(), &db) == SQLITE_OK &&
              sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
    if (!ok) ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
    sqlite3_close(db);
    return ok;
  }
  testing::TempDir dir_;
};

class SqliteInMemoryEnv final : public Env {
 public:
  Result<std::unique_ptr<Store>> Open() override { return OpenStore("sqlite::memory:"); }
  bool Durable() const override { return false; }
};

class PostgresEnv final : public Env {
 public:
  PostgresEnv() {
    const char* dsn = getenv("CORRAL_TEST_PG_DSN");
    if (dsn == nullptr || *dsn == '\0') {
      skip_ = "CORRAL_TEST_PG_DSN is not set (tools/with_postgres.sh sets it)";
      return;
    }
    dsn_ = dsn;
    auto pq = internal::LoadLibpq();
    if (!pq.has_value()) {
      ADD_FAILURE() << pq.error().message;
      skip_ = pq.error().message;
      return;
    }
    pq_ = *pq;
    static std::atomic<int> counter{0};
    schema_ = "corral_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
    conn_ = pq_->connectdb(dsn_.c_str());
    if (pq_->status(conn_) != CONNECTION_OK) {
      // CORRAL_TEST_PG_DSN set means PostgreSQL is expected: fail, do not skip.
      ADD_FAILURE() << "cannot connect to CORRAL_TEST_PG_DSN: " << pq_->errorMessage(conn_);
      skip_ = "no connection";
      return;
    }
    Exec("SET client_min_messages = warning");  // no NOTICEs from DROP ... CASCADE
    Exec("CREATE SCHEMA " + schema_);
  }
  ~PostgresEnv() override {
    if (conn_ == nullptr) return;
    if (pq_->status(conn_) == CONNECTION_OK) Exec("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE");
    pq_->finish(conn_);
  }
  std::string SkipReason() override { return skip_; }
  // The schema is the search path; the application name lets `DropConnections` find the
  // store's sessions and no one else's.
  Result<std::unique_ptr<Store>> Open() override {
    return OpenStore(dsn_ + (dsn_.find('?') == std::string::npos ? "?" : "&") +
                     "options=-csearch_path%3D" + schema_ + "&application_name=" + schema_);
  }
  bool DropConnections() override {
    internal::PgResultPtr r(
        pq_->exec(conn_, ("SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity "
                          "WHERE application_name = '" +
                          schema_ + "'")
                             .c_str()),
        {pq_});
    bool ok = r && pq_->resultStatus(r.get()) == PGRES_TUPLES_OK;
    if (!ok) ADD_FAILURE() << pq_->errorMessage(conn_);
    return ok && std::string(pq_->getvalue(r.get(), 0, 0)) != "0";
  }
  bool InjectFailureOnJob(JobId id) override {
    return Exec("CREATE FUNCTION " + schema_ +
                ".corral_test_fail() RETURNS trigger AS $$ BEGIN IF NEW.id = " + id.ToString() +
                " THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$ "
                "LANGUAGE plpgsql") &&
           Exec("CREATE TRIGGER corral_test_fail BEFORE INSERT ON " + schema_ +
                ".jobs FOR EACH ROW EXECUTE FUNCTION " + schema_ + ".corral_test_fail()");
  }
  bool InjectDisconnectOnJob(JobId id) override {
    return Exec("CREATE FUNCTION " + schema_ +
                ".corral_test_disconnect() RETURNS trigger AS $$ BEGIN IF NEW.id = " +
                id.ToString() +
                " THEN PERFORM pg_terminate_backend(pg_backend_pid()); PERFORM pg_sleep(10); "
                "END IF; RETURN NEW; END $$ LANGUAGE plpgsql") &&
           Exec("CREATE TRIGGER corral_test_disconnect BEFORE INSERT ON " + schema_ +
                ".jobs FOR EACH ROW EXECUTE FUNCTION " + schema_ + ".corral_test_disconnect()");
  }
  bool CorruptJob(JobId id) override {
    return Exec("UPDATE " + schema_ +
                ".jobs SET spec = '\\x01ff'::bytea WHERE id = " + id.ToString());
  }
  bool SetSchemaVersion(int v) override {
    return Exec("UPDATE " + schema_ + ".corral_info SET value = '" + std::to_string(v) +
                "' WHERE key = 'schema_version'");
  }
  int64_t StoredSpecBytes() override {
    std::string sql = std::string(kStoredSpecBytesSql);
    for (const char* table : {"FROM jobs", "FROM array_specs"}) {
      sql.replace(sql.find(table), std::string_view(table).size(),
                  std::string("FROM ") + schema_ + "." + (table + 5));
    }
    internal::PgResultPtr r(pq_->exec(conn_, sql.c_str()), {pq_});
    if (!r || pq_->resultStatus(r.get()) != PGRES_TUPLES_OK) {
      ADD_FAILURE() << sql << ": " << pq_->errorMessage(conn_);
      return -1;
    }
    return std::stoll(pq_->getvalue(r.get(), 0, 0));
  }
  bool ExecSql(const std::string& sql) override {
    return Exec(WithGovernanceTable(WithTable(sql, schema_ + ".audit"), schema_ + ".governance"));
  }

 private:
  bool Exec(const std::string& sql) {
    internal::PgResultPtr r(pq_->exec(conn_, sql.c_str()), {pq_});
    bool ok = r && pq_->resultStatus(r.get()) == PGRES_COMMAND_OK;
    if (!ok) ADD_FAILURE() << sql << ": " << pq_->errorMessage(conn_);
    return ok;
  }
  std::string skip_;
  std::string dsn_;
  std::string schema_;
  const internal::Libpq* pq_ = nullptr;
  PGconn* conn_ = nullptr;
};

template <typename E>
class StoreConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = std::make_unique<E>();
    if (std::string why = env_->SkipReason(); !why.empty()) GTEST_SKIP() << why;
    store_ = OpenOrDie();
  }
  void TearDown() override {
    store_.reset();
    env_.reset();
  }

  std::unique_ptr<Store> OpenOrDie() {
    auto s = env_->Open();
    EXPECT_TRUE(s.has_value()) << s.error().message;
    return s.has_value() ? std::move(*s) : nullptr;
  }
  void Reopen() {
    store_.reset();
    store_ = OpenOrDie();
  }
  void WriteOk(const WriteBatch& b) {
    Status s = store_->Write(b);
    ASSERT_TRUE(s.has_value()) << s.error().message;
  }
  StoredState LoadOk() {
    auto r = store_->Load();
    EXPECT_TRUE(r.has_value()) << r.error().message;
    return r.has_value() ? std::move(*r) : StoredState{};
  }
  std::vector<uint64_t> QueryIds(const JobQuery& q) {
    auto r = store_->QueryJobs(q);
    EXPECT_TRUE(r.has_value()) << r.error().message;
    std::vector<uint64_t> ids;
    if (r.has_value()) {
      for (const Job& j : *r) ids.push_back(j.id.value);
    }
    return ids;
  }

  std::unique_ptr<Env> env_;
  std::unique_ptr<Store> store_;
};

struct EnvNames {
  template <typename T>
  static std::string GetName(int) {
    if (std::is_same_v<T, MemoryEnv>) return "Memory";
    if (std::is_same_v<T, SqliteFileEnv>) return "SqliteFile";
    if (std::is_same_v<T, SqliteInMemoryEnv>) return "SqliteInMemory";
    return "Postgres";
  }
};
using Envs = ::testing::Types<MemoryEnv, SqliteFileEnv, SqliteInMemoryEnv, PostgresEnv>;

}  // namespace corral::store::conformance
