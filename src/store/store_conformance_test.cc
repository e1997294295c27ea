// The Store conformance suite: every implementation must pass the same tests (STYLE.md 2.8).
// Instances: Memory, SqliteFile, SqliteInMemory, and Postgres when CORRAL_TEST_PG_DSN holds
// a postgresql:// URL (tools/with_postgres.sh starts a throwaway server and sets it; ctest's
// `store_conformance_postgres` does that). Each Postgres test runs in a schema of its own.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "store/audit_chain.h"
#include "store/internal/libpq.h"
#include "store/memory_store.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"
#include "store/store.h"
#include "store/testing/populated_records.h"
#include "store/testing/temp_dir.h"

namespace corral::store {
namespace {

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
std::string WithTable(std::string sql, const std::string& table) {
  for (size_t at; (at = sql.find("{audit}")) != std::string::npos;) sql.replace(at, 7, table);
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
  bool ExecSql(const std::string& sql) override { return Exec(WithTable(sql, "audit")); }

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
    return Exec(WithTable(sql, schema_ + ".audit"));
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
TYPED_TEST_SUITE(StoreConformanceTest, Envs, EnvNames);

TYPED_TEST(StoreConformanceTest, NewStoreIsEmpty) {
  StoredState s = this->LoadOk();
  EXPECT_TRUE(s.jobs.empty());
  EXPECT_TRUE(s.nodes.empty());
  EXPECT_TRUE(s.meta.empty());
  EXPECT_TRUE(s.gpu_series.empty());
  EXPECT_TRUE(this->QueryIds({}).empty());
}

TYPED_TEST(StoreConformanceTest, EveryFieldRoundTrips) {
  std::vector<Job> jobs = {PopulatedJob(11, 0), PopulatedJob(12, 1), PopulatedJob(13, 2), Job{}};
  jobs.back().id = JobId(14);  // every other field at its default
  std::vector<Node> nodes = {PopulatedNode(1, 0), PopulatedNode(2, 5), Node{}};
  nodes.back().id = NodeId(3);
  WriteBatch b;
  for (const Job& j : jobs) b.PutJob(j);
  for (const Node& n : nodes) b.PutNode(n);
  b.PutMeta("next_job_id", "15");
  b.PutMeta("empty", "");
  b.PutMeta("ünïcode key", "line1\nline2 'quoted' \"double\"");
  this->WriteOk(b);

  StoredState s = this->LoadOk();
  ASSERT_EQ(s.jobs.size(), jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) EXPECT_EQ(s.jobs[i], jobs[i]) << "job " << i;
  EXPECT_EQ(s.nodes, nodes);
  EXPECT_EQ(s.meta, (std::map<std::string, std::string>{
                        {"next_job_id", "15"},
                        {"empty", ""},
                        {"ünïcode key", "line1\nline2 'quoted' \"double\""}}));
  auto queried = this->store_->QueryJobs({});
  ASSERT_TRUE(queried.has_value()) << queried.error().message;
  EXPECT_EQ(*queried, jobs);
}

TYPED_TEST(StoreConformanceTest, PutOverwritesTheWholeRecord) {
  WriteBatch first;
  first.PutJob(PopulatedJob(5, 0));
  first.PutNode(PopulatedNode(1, 0));
  first.PutMeta("k", "old");
  this->WriteOk(first);

  Job smaller;  // a record with empty lists must not keep the old lists
  smaller.id = JobId(5);
  smaller.spec.user = "bob";
  Node replaced = PopulatedNode(1, 3);
  replaced.inventory.gpus.clear();
  WriteBatch second;
  second.PutJob(smaller);
  second.PutNode(replaced);
  second.PutMeta("k", "new");
  this->WriteOk(second);

  StoredState s = this->LoadOk();
  ASSERT_EQ(s.jobs.size(), 1u);
  EXPECT_EQ(s.jobs[0], smaller);
  ASSERT_EQ(s.nodes.size(), 1u);
  EXPECT_EQ(s.nodes[0], replaced);
  EXPECT_EQ(s.meta.at("k"), "new");
}

TYPED_TEST(StoreConformanceTest, LaterOpWinsWithinOneBatch) {
  WriteBatch pre;
  pre.PutJob(PopulatedJob(4, 0));
  this->WriteOk(pre);

  WriteBatch b;
  b.PutJob(PopulatedJob(1, 0));
  b.PutJob(PopulatedJob(1, 1));  // wins
  b.PutJob(PopulatedJob(2, 0));
  b.DeleteJob(JobId(2));  // wins: job 2 absent
  b.DeleteJob(JobId(3));
  b.PutJob(PopulatedJob(3, 2));  // wins: job 3 present
  b.DeleteJob(JobId(4));
  b.PutJob(PopulatedJob(4, 3));  // wins over the delete and the earlier batch
  b.PutMeta("next_job_id", "2");
  b.PutMeta("next_job_id", "3");
  b.PutNode(PopulatedNode(1, 0));
  b.PutNode(PopulatedNode(1, 1));
  this->WriteOk(b);

  StoredState s = this->LoadOk();
  EXPECT_EQ(s.jobs, (std::vector<Job>{PopulatedJob(1, 1), PopulatedJob(3, 2), PopulatedJob(4, 3)}));
  EXPECT_EQ(s.nodes, std::vector<Node>{PopulatedNode(1, 1)});
  EXPECT_EQ(s.meta.at("next_job_id"), "3");
}

TYPED_TEST(StoreConformanceTest, DeleteRemovesOnlyThatJob) {
  WriteBatch b;
  for (uint64_t id = 1; id <= 3; ++id) b.PutJob(PopulatedJob(id, 0));
  this->WriteOk(b);
  WriteBatch del;
  del.DeleteJob(JobId(2));
  del.DeleteJob(JobId(99));  // absent: not an error
  this->WriteOk(del);
  StoredState s = this->LoadOk();
  EXPECT_EQ(s.jobs, (std::vector<Job>{PopulatedJob(1, 0), PopulatedJob(3, 0)}));
  EXPECT_EQ(this->QueryIds({}), (std::vector<uint64_t>{1, 3}));
}

TYPED_TEST(StoreConformanceTest, MetaCountersAccumulateAcrossWrites) {
  for (int i = 1; i <= 20; ++i) {
    WriteBatch b;
    b.PutMeta("next_job_id", std::to_string(i));
    if (i % 5 == 0) b.PutMeta("generation", std::to_string(i * 100));
    this->WriteOk(b);
  }
  this->WriteOk(WriteBatch());  // an empty batch is a no-op
  StoredState s = this->LoadOk();
  EXPECT_EQ(s.meta,
            (std::map<std::string, std::string>{{"generation", "2000"}, {"next_job_id", "20"}}));
}

TYPED_TEST(StoreConformanceTest, DeleteMetaRemovesOnlyThatKey) {
  WriteBatch b;
  b.PutMeta("steps/1", "next 1");
  b.PutMeta("steps/2", "next 4");
  b.PutMeta("next_job_id", "3");
  this->WriteOk(b);
  WriteBatch d;
  d.DeleteMeta("steps/1");
  d.DeleteMeta("never/written");  // absent: nothing to do, not an error
  d.PutMeta("steps/3", "x");
  d.DeleteMeta("steps/3");  // later op wins within one batch
  this->WriteOk(d);
  EXPECT_EQ(this->LoadOk().meta,
            (std::map<std::string, std::string>{{"next_job_id", "3"}, {"steps/2", "next 4"}}));
}

// A population with known attributes for the query tests. Written in shuffled order so that
// results sorted by id prove the store sorts.
std::vector<Job> QueryPopulation() {
  std::vector<Job> jobs;
  const Timestamp t0 = FromMicros(1'700'000'000'000'000);
  for (uint64_t id = 1; id <= 30; ++id) {
    Job j = PopulatedJob(id, static_cast<uint32_t>(id));
    j.spec.user = "user" + std::to_string(id % 3);  // user0 user1 user2
    j.spec.account = id % 2 ? "odd" : "even";
    j.partition = id % 5 == 0 ? "debug" : "gpu";
    j.state = id <= 5    ? JobState::kPending
              : id <= 10 ? JobState::kRunning
              : id <= 20 ? JobState::kCompleted
                         : JobState::kFailed;
    j.submit_time = t0 + Seconds(static_cast<int64_t>(id) * 100);
    // Ended jobs end 50 s after submission; active ones have an old or unset end time
    // (a requeued job keeps its previous end).
    j.end_time = IsTerminal(j.state) ? j.submit_time + Seconds(50) : (id % 2 ? Timestamp{} : t0);
    jobs.push_back(j);
  }
  return jobs;
}

TYPED_TEST(StoreConformanceTest, QueryFiltersAndSortsById) {
  std::vector<Job> jobs = QueryPopulation();
  std::vector<Job> shuffled = jobs;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(42));
  WriteBatch b;
  for (const Job& j : shuffled) b.PutJob(j);
  this->WriteOk(b);

  // Reference: the filter evaluated here, independently of any store.
  auto expect = [&](const JobQuery& q, auto&& pred) {
    std::vector<uint64_t> want;
    for (const Job& j : jobs) {
      if (pred(j) && (q.limit == 0 || want.size() < q.limit)) want.push_back(j.id.value);
    }
    EXPECT_EQ(this->QueryIds(q), want);
  };
  auto any_of = [](const auto& list, const auto& v) {
    return std::find(list.begin(), list.end(), v) != list.end();
  };

  expect({}, [](const Job&) { return true; });
  JobQuery q;
  q.users = {"user1", "nobody"};
  expect(q, [&](const Job& j) { return any_of(q.users, j.spec.user); });
  q = {};
  q.accounts = {"even"};
  expect(q, [&](const Job& j) { return j.spec.account == "even"; });
  q = {};
  q.partitions = {"debug"};
  expect(q, [&](const Job& j) { return j.partition == "debug"; });
  q = {};
  q.states = {JobState::kRunning, JobState::kFailed};
  expect(q, [&](const Job& j) { return any_of(q.states, j.state); });
  q = {};
  q.ids = {JobId(29), JobId(3), JobId(17), JobId(1000)};
  expect(q, [&](const Job& j) { return any_of(q.ids, j.id); });
  // More ids than a statement may have parameters (PostgreSQL: 65,535).
  q = {};
  for (uint64_t id = 1; id <= 70'000; id += 2) q.ids.push_back(JobId(id));
  q.ids.push_back(JobId(70'001));
  q.ids.push_back(JobId(100'002));
  expect(q, [&](const Job& j) { return j.id.value % 2 == 1; });
  q = {};
  q.limit = 7;
  expect(q, [](const Job&) { return true; });

  const Timestamp t0 = FromMicros(1'700'000'000'000'000);
  // sacct -S: ended at or after the bound, or still active.
  q = {};
  q.start_after = t0 + Seconds(1550);
  expect(q, [&](const Job& j) { return !IsTerminal(j.state) || j.end_time >= q.start_after; });
  // sacct -E: submitted strictly before the bound.
  q = {};
  q.end_before = t0 + Seconds(1200);
  expect(q, [&](const Job& j) { return j.submit_time < q.end_before; });

  // Everything at once, with a limit.
  q = {};
  q.users = {"user0", "user2"};
  q.accounts = {"odd", "even"};
  q.partitions = {"gpu"};
  q.states = {JobState::kCompleted, JobState::kFailed, JobState::kPending};
  q.start_after = t0 + Seconds(1000);
  q.end_before = t0 + Seconds(2800);
  q.limit = 4;
  expect(q, [&](const Job& j) {
    return any_of(q.users, j.spec.user) && j.partition == "gpu" && any_of(q.states, j.state) &&
           (!IsTerminal(j.state) || j.end_time >= q.start_after) && j.submit_time < q.end_before;
  });
  // A value that would break a string-built query is only a value.
  q = {};
  q.users = {"x' OR '1'='1", "user1"};
  expect(q, [&](const Job& j) { return j.spec.user == "user1"; });
}

TYPED_TEST(StoreConformanceTest, FailedBatchAppliesNothing) {
  WriteBatch pre;
  pre.PutJob(PopulatedJob(1, 0));
  pre.PutMeta("next_job_id", "2");
  this->WriteOk(pre);
  StoredState before = this->LoadOk();
  if (!this->env_->InjectFailureOnJob(JobId(666))) GTEST_SKIP() << "writes cannot fail";

  WriteBatch b;
  b.PutMeta("next_job_id", "700");
  b.PutJob(PopulatedJob(1, 5));  // an overwrite
  b.PutJob(PopulatedJob(2, 0));  // a new job
  b.PutNode(PopulatedNode(1, 0));
  b.PutJob(PopulatedJob(666, 0));  // fails inside the database
  b.PutJob(PopulatedJob(3, 0));
  Status s = this->store_->Write(b);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("injected failure"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("job 666"), std::string::npos) << s.error().message;

  StoredState after = this->LoadOk();
  EXPECT_EQ(after.jobs, before.jobs);
  EXPECT_EQ(after.nodes, before.nodes);
  EXPECT_EQ(after.meta, before.meta);

  // The store stays usable after the failure.
  WriteBatch next;
  next.PutJob(PopulatedJob(2, 0));
  this->WriteOk(next);
  EXPECT_EQ(this->QueryIds({}), (std::vector<uint64_t>{1, 2}));
}

// An array's tasks as the controller writes them: one spec (a 64 KiB script), ids
// `first`..`first + n - 1`, the first id being the array job id.
std::vector<Job> ArrayTasks(uint64_t first, uint32_t n, const std::string& script) {
  Job base = PopulatedJob(first, 0);
  base.spec.script = script;
  base.array_job_id = JobId(first);
  std::vector<Job> tasks;
  for (uint32_t i = 0; i < n; ++i) {
    Job& t = tasks.emplace_back(base);
    t.id = JobId(first + i);
    t.array_task_id = i;
  }
  return tasks;
}

// SQLite keeps an array's spec once; every store must give each task its whole spec back,
// including tasks changed one by one and after the array's first task is gone.
TYPED_TEST(StoreConformanceTest, ArrayTasksRoundTripWithTheirOwnSpecs) {
  std::vector<Job> tasks = ArrayTasks(100, 40, std::string(64 * 1024, 's'));
  WriteBatch submit;
  for (const Job& t : tasks) submit.PutJob(t);
  this->WriteOk(submit);
  // A store that can say keeps the 64 KiB once (40 copies would be 2.6 MB).
  if (int64_t bytes = this->env_->StoredSpecBytes(); bytes >= 0) {
    EXPECT_GT(bytes, 64 * 1024);
    EXPECT_LT(bytes, 2 * 64 * 1024);
  }
  tasks[5].spec.comment = "changed by scontrol update";  // one task's spec alone
  tasks[5].spec.environment["ONLY_FIVE"] = "1";
  tasks[0].spec.script = "#!/bin/sh\necho the first task changed\n";
  tasks[7].state = JobState::kRunning;  // a change of state only
  WriteBatch update;
  for (size_t i : {5, 0, 7}) update.PutJob(tasks[i]);
  this->WriteOk(update);

  EXPECT_EQ(this->LoadOk().jobs, tasks);
  auto all = this->store_->QueryJobs({});
  ASSERT_TRUE(all.has_value()) << all.error().message;
  EXPECT_EQ(*all, tasks);
  JobQuery one;
  one.ids = {JobId(107)};
  auto seven = this->store_->QueryJobs(one);
  ASSERT_TRUE(seven.has_value()) << seven.error().message;
  EXPECT_EQ(*seven, std::vector<Job>{tasks[7]});

  // The array's first task and half the others deleted: the rest keep their spec.
  WriteBatch remove;
  for (uint64_t id = 100; id < 120; ++id) remove.DeleteJob(JobId(id));
  this->WriteOk(remove);
  tasks.erase(tasks.begin(), tasks.begin() + 20);
  EXPECT_EQ(this->LoadOk().jobs, tasks);
  if (this->env_->Durable()) {
    this->Reopen();
    ASSERT_NE(this->store_, nullptr);
    EXPECT_EQ(this->LoadOk().jobs, tasks);
  }

  // Every task gone, then an array with the same id and another spec: the new spec.
  WriteBatch rest;
  for (const Job& t : tasks) rest.DeleteJob(t.id);
  this->WriteOk(rest);
  std::vector<Job> again = ArrayTasks(100, 3, "#!/bin/sh\necho again\n");
  WriteBatch resubmit;
  for (const Job& t : again) resubmit.PutJob(t);
  this->WriteOk(resubmit);
  EXPECT_EQ(this->LoadOk().jobs, again);
}

// A failed batch that wrote an array's first tasks leaves nothing the next batch relies on.
TYPED_TEST(StoreConformanceTest, FailedArrayBatchThenTheSameArray) {
  if (!this->env_->InjectFailureOnJob(JobId(666))) GTEST_SKIP() << "writes cannot fail";
  std::vector<Job> tasks = ArrayTasks(10, 5, std::string(1000, 'f'));
  WriteBatch failing;
  for (const Job& t : tasks) failing.PutJob(t);
  failing.PutJob(PopulatedJob(666, 0));
  ASSERT_FALSE(this->store_->Write(failing).has_value());
  WriteBatch b;
  for (const Job& t : tasks) b.PutJob(t);
  this->WriteOk(b);
  EXPECT_EQ(this->LoadOk().jobs, tasks);
  if (this->env_->Durable()) {
    this->Reopen();
    ASSERT_NE(this->store_, nullptr);
    EXPECT_EQ(this->LoadOk().jobs, tasks);
  }
}

// Batches bigger than an implementation's internal chunks (PostgreSQL pipelines 256
// statements at a time) are still one transaction.
TYPED_TEST(StoreConformanceTest, LargeBatchIsOneTransaction) {
  WriteBatch big;
  for (uint64_t id = 1; id <= 600; ++id) big.PutJob(PopulatedJob(id, id % 5));
  big.PutMeta("next_job_id", "601");
  this->WriteOk(big);
  EXPECT_EQ(this->LoadOk().jobs.size(), 600u);

  if (!this->env_->InjectFailureOnJob(JobId(1666))) GTEST_SKIP() << "writes cannot fail";
  WriteBatch failing;
  for (uint64_t id = 1001; id <= 1700; ++id) failing.PutJob(PopulatedJob(id, 0));  // 1666: 666th
  failing.DeleteJob(JobId(1));
  failing.PutMeta("next_job_id", "1701");
  Status s = this->store_->Write(failing);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("job 1666"), std::string::npos) << s.error().message;
  StoredState after = this->LoadOk();
  EXPECT_EQ(after.jobs.size(), 600u);
  EXPECT_EQ(after.meta.at("next_job_id"), "601");
}

TYPED_TEST(StoreConformanceTest, ReopenRecoversEverything) {
  if (!this->env_->Durable()) GTEST_SKIP() << "not durable";
  std::vector<Job> jobs;
  for (uint64_t id = 1; id <= 50; ++id) jobs.push_back(PopulatedJob(id, id % 7));
  for (size_t i = 0; i < jobs.size(); i += 10) {
    WriteBatch b;
    for (size_t k = i; k < i + 10; ++k) b.PutJob(jobs[k]);
    b.PutMeta("next_job_id", std::to_string(i + 11));
    this->WriteOk(b);
  }
  WriteBatch nodes;
  nodes.PutNode(PopulatedNode(1, 0));
  nodes.PutNode(PopulatedNode(2, 1));
  nodes.DeleteJob(JobId(25));
  this->WriteOk(nodes);
  jobs.erase(jobs.begin() + 24);

  this->Reopen();
  ASSERT_NE(this->store_, nullptr);
  StoredState s = this->LoadOk();
  EXPECT_EQ(s.jobs, jobs);
  EXPECT_EQ(s.nodes, (std::vector<Node>{PopulatedNode(1, 0), PopulatedNode(2, 1)}));
  EXPECT_EQ(s.meta.at("next_job_id"), "51");
  // And it keeps working after the reopen.
  WriteBatch more;
  more.PutJob(PopulatedJob(51, 0));
  this->WriteOk(more);
  EXPECT_EQ(this->QueryIds({.ids = {JobId(51)}}), std::vector<uint64_t>{51});
}

TYPED_TEST(StoreConformanceTest, GpuSeriesAreKeptWithTheirJob) {
  Job running = PopulatedJob(1, 0);
  running.state = JobState::kRunning;
  Job done = PopulatedJob(2, 0);
  done.state = JobState::kCompleted;
  // A blob with every byte value, and an empty one.
  std::string body;
  for (int i = 0; i < 256; ++i) body.push_back(static_cast<char>(i));
  WriteBatch b;
  b.PutJob(running);
  b.PutJob(done);
  b.PutJob(PopulatedJob(3, 0));
  b.PutGpuSeries(JobId(1), "old");
  b.PutGpuSeries(JobId(1), body);  // later wins
  b.PutGpuSeries(JobId(2), "");
  this->WriteOk(b);
  // Load carries the series of running jobs only; any job's is read on demand.
  StoredState s = this->LoadOk();
  EXPECT_EQ(s.gpu_series, (std::map<JobId, std::string>{{JobId(1), body}}));
  auto one = this->store_->GetGpuSeries(JobId(1));
  ASSERT_TRUE(one.has_value()) << one.error().message;
  EXPECT_EQ(*one, std::optional<std::string>(body));
  auto two = this->store_->GetGpuSeries(JobId(2));
  ASSERT_TRUE(two.has_value()) << two.error().message;
  EXPECT_EQ(*two, std::optional<std::string>(""));
  auto three = this->store_->GetGpuSeries(JobId(3));
  ASSERT_TRUE(three.has_value()) << three.error().message;
  EXPECT_FALSE(three->has_value());
  // Deleting a job deletes its series.
  WriteBatch del;
  del.DeleteJob(JobId(2));
  this->WriteOk(del);
  two = this->store_->GetGpuSeries(JobId(2));
  ASSERT_TRUE(two.has_value());
  EXPECT_FALSE(two->has_value());
  if (!this->env_->Durable()) return;
  this->Reopen();
  ASSERT_NE(this->store_, nullptr);
  EXPECT_EQ(this->LoadOk().gpu_series, (std::map<JobId, std::string>{{JobId(1), body}}));
  one = this->store_->GetGpuSeries(JobId(1));
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(*one, std::optional<std::string>(body));
}

TYPED_TEST(StoreConformanceTest, CorruptRowIsAnErrorNamingTheRow) {
  WriteBatch b;
  for (uint64_t id = 1; id <= 3; ++id) b.PutJob(PopulatedJob(id, 0));
  this->WriteOk(b);
  if (!this->env_->CorruptJob(JobId(2))) GTEST_SKIP() << "rows cannot be damaged";
  auto loaded = this->store_->Load();
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().code, ErrorCode::kInternal);
  EXPECT_NE(loaded.error().message.find("job 2: column spec"), std::string::npos)
      << loaded.error().message;
  auto queried = this->store_->QueryJobs({});
  ASSERT_FALSE(queried.has_value());
  EXPECT_NE(queried.error().message.find("job 2"), std::string::npos);
  // Rows that are intact can still be read.
  EXPECT_EQ(this->QueryIds({.ids = {JobId(1), JobId(3)}}), (std::vector<uint64_t>{1, 3}));
}

TYPED_TEST(StoreConformanceTest, NewerSchemaVersionIsRefused) {
  if (!this->env_->Durable()) GTEST_SKIP() << "not durable";
  this->store_.reset();
  if (!this->env_->SetSchemaVersion(99)) GTEST_SKIP() << "no schema version";
  auto s = this->env_->Open();
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(s.error().message.find("schema version 99 is newer"), std::string::npos)
      << s.error().message;
}

TYPED_TEST(StoreConformanceTest, RecoversFromLostConnections) {
  WriteBatch first;
  first.PutJob(PopulatedJob(1, 0));
  this->WriteOk(first);
  EXPECT_EQ(this->QueryIds({}), std::vector<uint64_t>{1});  // opens the reader connection
  if (!this->env_->DropConnections()) GTEST_SKIP() << "no connections to lose";

  WriteBatch second;
  second.PutJob(PopulatedJob(2, 0));
  this->WriteOk(second);
  EXPECT_EQ(this->QueryIds({}), (std::vector<uint64_t>{1, 2}));
  ASSERT_TRUE(this->env_->DropConnections());
  EXPECT_EQ(this->LoadOk().jobs, (std::vector<Job>{PopulatedJob(1, 0), PopulatedJob(2, 0)}));
}

TYPED_TEST(StoreConformanceTest, ConnectionLostMidBatchAppliesNothing) {
  WriteBatch first;
  first.PutJob(PopulatedJob(1, 0));
  this->WriteOk(first);
  if (!this->env_->InjectDisconnectOnJob(JobId(300))) GTEST_SKIP() << "no connection to lose";
  WriteBatch b;
  for (uint64_t id = 2; id <= 400; ++id) b.PutJob(PopulatedJob(id, 0));
  Status s = this->store_->Write(b);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kUnavailable) << s.error().message;
  // The next calls reconnect.
  EXPECT_EQ(this->LoadOk().jobs, std::vector<Job>{PopulatedJob(1, 0)});
  WriteBatch next;
  next.PutJob(PopulatedJob(2, 0));
  this->WriteOk(next);
  EXPECT_EQ(this->QueryIds({}), (std::vector<uint64_t>{1, 2}));
}

// One writer and one reader thread: every query succeeds and sees whole batches only (each
// batch adds two jobs, so a query never sees an odd count).
TYPED_TEST(StoreConformanceTest, QueriesRunConcurrentlyWithWrites) {
  constexpr int kBatches = 60;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < kBatches; ++i) {
      WriteBatch b;
      b.PutJob(PopulatedJob(2 * i + 1, 0));
      b.PutJob(PopulatedJob(2 * i + 2, 1));
      Status s = this->store_->Write(b);
      EXPECT_TRUE(s.has_value()) << s.error().message;
    }
    done = true;
  });
  size_t last = 0;
  int queries = 0;
  while (!done || queries == 0) {
    auto r = this->store_->QueryJobs({.accounts = {"ml-research0", "ml-research1"}});
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(r->size() % 2, 0u);
    EXPECT_GE(r->size(), last);
    last = r->size();
    ++queries;
  }
  writer.join();
  EXPECT_EQ(this->QueryIds({}).size(), 2u * kBatches);
}

// The audit log (core/audit.h): records round-trip, are read by filter and in seq order,
// pruned through an anchor, and the chain check finds a row deleted, changed or swapped in
// the database itself.
std::vector<AuditRecord> AuditChain(int n) {
  std::vector<AuditRecord> out;
  std::string prev = AuditGenesisHash();
  for (int i = 1; i <= n; ++i) {
    AuditRecord r{.seq = static_cast<uint64_t>(i),
                  .time = FromMicros(1'800'000'000'000'000 + i * 1'000'000),
                  .principal = i % 2 ? "alice" : "bob",
                  .auth = "jwt",
                  .peer = "127.0.0.1:4000" + std::to_string(i),
                  .method = "POST",
                  .route = "/api/v1/jobs/{id}/cancel",
                  .target = i % 3 ? "job:" + std::to_string(i) : "node:gpu01",
                  .params_sha256 = Sha256Hex(std::to_string(i)),
                  .status = i % 4 ? 200 : 403,
                  .error_code = i % 4 ? "" : "PERMISSION_DENIED",
                  .prev_hash = prev};
    r.hash = AuditRecordHash(r);
    prev = r.hash;
    out.push_back(r);
  }
  return out;
}

TYPED_TEST(StoreConformanceTest, AuditRecordsRoundTripAndFilter) {
  std::vector<AuditRecord> chain = AuditChain(8);
  WriteBatch b;
  for (const AuditRecord& r : chain) b.PutAudit(r);
  this->WriteOk(b);
  auto all = this->store_->QueryAudit({});
  ASSERT_TRUE(all.has_value()) << all.error().message;
  EXPECT_EQ(*all, chain);
  auto bob = this->store_->QueryAudit({.user = "bob", .limit = 2});
  ASSERT_TRUE(bob.has_value());
  EXPECT_EQ(*bob, (std::vector<AuditRecord>{chain[5], chain[7]}));
  auto job4 = this->store_->QueryAudit({.job = "4"});
  ASSERT_TRUE(job4.has_value());
  EXPECT_EQ(*job4, std::vector<AuditRecord>{chain[3]});
  auto node = this->store_->QueryAudit({.after_seq = 3, .node = "gpu01"});
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(*node, (std::vector<AuditRecord>{chain[5]}));
  auto since = this->store_->QueryAudit({.since = chain[6].time});
  ASSERT_TRUE(since.has_value());
  EXPECT_EQ(since->size(), 2u);
  EXPECT_TRUE(VerifyAuditChain(*all, {8, chain[7].hash}).ok);
  if (this->env_->Durable()) {
    this->Reopen();
    auto again = this->store_->QueryAudit({});
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(*again, chain);
  }
}

TYPED_TEST(StoreConformanceTest, AuditPruningKeepsTheChainVerifiable) {
  std::vector<AuditRecord> chain = AuditChain(6);
  WriteBatch b;
  for (const AuditRecord& r : chain) b.PutAudit(r);
  this->WriteOk(b);
  AuditRecord anchor{.seq = 4, .time = chain[3].time, .method = kAuditAnchorMethod,
                     .hash = chain[3].hash};
  WriteBatch prune;
  prune.DeleteAuditThrough(4);
  prune.PutAudit(anchor);
  this->WriteOk(prune);
  auto rows = this->store_->QueryAudit({.include_anchor = true});
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(*rows, (std::vector<AuditRecord>{anchor, chain[4], chain[5]}));
  auto shown = this->store_->QueryAudit({});
  ASSERT_TRUE(shown.has_value());
  EXPECT_EQ(shown->size(), 2u);  // the anchor is not a record
  AuditVerdict v = VerifyAuditChain(*rows, {6, chain[5].hash});
  EXPECT_TRUE(v.ok) << v.detail;
  EXPECT_EQ(v.records, 2u);
}

// Each tampering in a store of its own, done in the database (SQL stores) or by rewriting a
// row through the store (all stores).
TYPED_TEST(StoreConformanceTest, AuditTamperingIsDetected) {
  std::vector<AuditRecord> chain = AuditChain(6);
  AuditHead head{6, chain[5].hash};
  auto verdict = [&]() {
    auto rows = this->store_->QueryAudit({.include_anchor = true});
    EXPECT_TRUE(rows.has_value());
    return VerifyAuditChain(rows.value_or(std::vector<AuditRecord>{}), head);
  };
  auto fresh = [&]() {
    this->store_.reset();
    this->env_ = std::make_unique<TypeParam>();
    this->store_ = this->OpenOrDie();
    WriteBatch b;
    for (const AuditRecord& r : chain) b.PutAudit(r);
    this->WriteOk(b);
    EXPECT_TRUE(verdict().ok);
  };
  struct Case {
    std::string sql;             // in the database; "" = through the store
    std::function<void(WriteBatch&)> put;
    std::string problem;
    uint64_t seq;
  };
  AuditRecord edited = chain[2];
  edited.status = 200;
  edited.principal = "mallory";
  AuditRecord moved3 = chain[4], moved5 = chain[2];
  moved3.seq = 3;
  moved5.seq = 5;
  std::vector<Case> cases = {
      {"DELETE FROM {audit} WHERE seq = 3", nullptr, "missing", 3},
      {"UPDATE {audit} SET status = 201, principal = 'mallory' WHERE seq = 3", nullptr,
       "changed", 3},
      {"UPDATE {audit} SET seq = -1 WHERE seq = 3; UPDATE {audit} SET seq = 3 WHERE seq = 5; "
       "UPDATE {audit} SET seq = 5 WHERE seq = -1",
       nullptr, "reordered", 3},
      {"DELETE FROM {audit} WHERE seq = 6", nullptr, "missing", 6},
      {"", [&](WriteBatch& b) { b.PutAudit(edited); }, "changed", 3},
      {"",
       [&](WriteBatch& b) {
         b.PutAudit(moved3);
         b.PutAudit(moved5);
       },
       "reordered", 3},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.sql.empty() ? "through the store" : c.sql);
    fresh();
    if (!c.sql.empty()) {
      if (!this->env_->ExecSql(c.sql)) continue;  // no database to reach (memory)
    } else {
      WriteBatch b;
      c.put(b);
      this->WriteOk(b);
    }
    AuditVerdict v = verdict();
    EXPECT_FALSE(v.ok);
    EXPECT_EQ(v.problem, c.problem) << v.detail;
    EXPECT_EQ(v.first_bad_seq, c.seq) << v.detail;
  }
}

// A version 1 database (no audit table) is migrated on open: the table is created and the
// version raised, so the audit log works at once.
TYPED_TEST(StoreConformanceTest, SchemaVersionOneIsMigrated) {
  if (!this->env_->Durable()) GTEST_SKIP() << "not durable";
  WriteBatch jobs;
  jobs.PutJob(PopulatedJob(1, 0));
  this->WriteOk(jobs);
  this->store_.reset();
  if (!this->env_->ExecSql("DROP TABLE {audit}") || !this->env_->SetSchemaVersion(1)) {
    GTEST_SKIP() << "no database to reach";
  }
  this->store_ = this->OpenOrDie();
  ASSERT_NE(this->store_, nullptr);
  EXPECT_EQ(this->QueryIds({}), std::vector<uint64_t>{1});
  WriteBatch b;
  b.PutAudit(AuditChain(1)[0]);
  this->WriteOk(b);
  auto rows = this->store_->QueryAudit({});
  ASSERT_TRUE(rows.has_value()) << rows.error().message;
  EXPECT_EQ(rows->size(), 1u);
}

}  // namespace
}  // namespace corral::store
