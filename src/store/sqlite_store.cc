#include "store/sqlite_store.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <system_error>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <variant>

#include <sqlite3.h>
#include <sys/stat.h>

#include "store/internal/record_codec.h"
#include "store/internal/schema.h"

namespace corral::store {
namespace {

using internal::Dialect;

// The statement cache holds the fixed statements plus the shapes of recent accounting
// queries; it is emptied when it grows past this.
constexpr size_t kMaxCachedStatements = 64;

// Binds one row's values to consecutive parameters. Views stay owned by the caller until the
// statement has been stepped (SQLITE_STATIC).
class Binder final : public internal::RowWriter {
 public:
  explicit Binder(sqlite3_stmt* stmt) : stmt_(stmt) {}
  void Int(int64_t v) override { Check(sqlite3_bind_int64(stmt_, ++i_, v)); }
  void Real(double v) override { Check(sqlite3_bind_double(stmt_, ++i_, v)); }
  // A null data pointer would bind SQL NULL, so empty values point at "".
  void Text(std::string_view v) override {
    Check(sqlite3_bind_text64(stmt_, ++i_, v.empty() ? "" : v.data(), v.size(), SQLITE_STATIC,
                              SQLITE_UTF8));
  }
  void Blob(std::string_view v) override {
    Check(sqlite3_bind_blob64(stmt_, ++i_, v.empty() ? "" : v.data(), v.size(), SQLITE_STATIC));
  }
  void Null() override { Check(sqlite3_bind_null(stmt_, ++i_)); }
  int rc() const { return rc_; }

 private:
  void Check(int rc) {
    if (rc != SQLITE_OK && rc_ == SQLITE_OK) rc_ = rc;
  }
  sqlite3_stmt* stmt_;
  int i_ = 0;
  int rc_ = SQLITE_OK;
};

// Reads the current row of a stepped statement, checking each value's storage class so that
// a damaged row is reported rather than misread.
class ColumnReader final : public internal::RowReader {
 public:
  ColumnReader(sqlite3_stmt* stmt, const internal::Column* columns)
      : stmt_(stmt), columns_(columns) {}
  bool IsNull(int col) override { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int64_t Int(int col) override {
    if (!Expect(col, SQLITE_INTEGER, SQLITE_INTEGER)) return 0;
    return sqlite3_column_int64(stmt_, col);
  }
  double Real(int col) override {
    if (!Expect(col, SQLITE_FLOAT, SQLITE_INTEGER)) return 0;
    return sqlite3_column_double(stmt_, col);
  }
  std::string_view Text(int col) override {
    if (!Expect(col, SQLITE_TEXT, SQLITE_TEXT)) return {};
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
  }
  std::string_view Blob(int col) override {
    if (!Expect(col, SQLITE_BLOB, SQLITE_BLOB)) return {};
    const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
    return std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
  }

 private:
  static std::string_view TypeName(int t) {
    switch (t) {
      case SQLITE_INTEGER:
        return "an integer";
      case SQLITE_FLOAT:
        return "a real";
      case SQLITE_TEXT:
        return "text";
      case SQLITE_BLOB:
        return "a blob";
      default:
        return "null";
    }
  }
  bool Expect(int col, int want, int also) {
    int t = sqlite3_column_type(stmt_, col);
    if (t == want || t == also) return true;
    if (error.empty()) {
      error = "column " + std::string(columns_[col].name) + ": expected " +
              std::string(TypeName(want)) + ", found " + std::string(TypeName(t));
    }
    return false;
  }
  sqlite3_stmt* stmt_;
  const internal::Column* columns_;
};

// Environment failures a caller may retry or fix outside the process.
bool IsEnvironmental(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_NOLFS:
      return true;
    default:
      return false;
  }
}

// Resets the statement when the scope ends, whichever way it ends.
class StatementScope {
 public:
  explicit StatementScope(sqlite3_stmt* s) : s_(s) {}
  ~StatementScope() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  StatementScope(const StatementScope&) = delete;
  StatementScope& operator=(const StatementScope&) = delete;

 private:
  sqlite3_stmt* s_;
};

// SQLite retries a read-write open that fails as read-only, so the errno it keeps describes
// the retry ("No such file" for a file it could not create). This finds what really stops
// the file, or the WAL and shared-memory files beside it, from being opened or created; 0 if
// nothing is found.
int CantOpenErrno(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return EISDIR;
    if (access(path.c_str(), R_OK | W_OK) != 0) return errno;
  } else if (errno != ENOENT) {
    return errno;
  }
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (stat(dir.c_str(), &st) != 0) return errno;
  if (!S_ISDIR(st.st_mode)) return ENOTDIR;
  if (access(dir.c_str(), W_OK | X_OK) != 0) return errno;
  return 0;
}

}  // namespace

// One sqlite3 handle and its prepared statements. Not thread-safe; the store's mutexes
// serialise each connection.
class SqliteStore::Connection {
 public:
  ~Connection() {
    for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }

  static Result<std::unique_ptr<Connection>> Open(const std::string& path, const Options& options,
                                                  bool create) {
    auto c = std::unique_ptr<Connection>(new Connection(path));
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
    if (create) flags |= SQLITE_OPEN_CREATE;
    int rc = sqlite3_open_v2(path.c_str(), &c->db_, flags, nullptr);
    if (rc != SQLITE_OK) return c->OpenError(rc, "cannot open");
    sqlite3_extended_result_codes(c->db_, 1);
    sqlite3_busy_timeout(c->db_, options.busy_timeout_ms);
    return c;
  }

  // The error of the last call on this connection, "sqlite store "PATH": WHAT: MESSAGE".
  tl::unexpected<Error> Fail(int rc, std::string_view what) const {
    return MakeError(IsEnvironmental(rc) ? ErrorCode::kUnavailable : ErrorCode::kInternal,
                     Message(rc, what));
  }
  // As `Fail`, with the codes of `SqliteStore::Open`.
  tl::unexpected<Error> OpenError(int rc, std::string_view what) const {
    ErrorCode code = IsEnvironmental(rc) ? ErrorCode::kUnavailable : ErrorCode::kInternal;
    int sys = db_ ? sqlite3_system_errno(db_) : 0;
    if ((rc & 0xff) == SQLITE_CANTOPEN) {
      if (int e = CantOpenErrno(path_); e != 0) sys = e;
    }
    if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT) {
      code = ErrorCode::kFailedPrecondition;
    } else if ((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_PERM || sys == EACCES ||
               sys == EPERM || sys == EROFS) {
      code = ErrorCode::kPermissionDenied;
    }
    return MakeError(code, Message(rc, what, sys));
  }
  std::string Message(int rc, std::string_view what, int sys = -1) const {
    std::string m = Prefix() + std::string(what) + ": ";
    m += db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    if (sys < 0) sys = db_ ? sqlite3_system_errno(db_) : 0;
    if (sys != 0 && IsEnvironmental(rc)) m += std::string(" (") + std::strerror(sys) + ")";
    return m;
  }
  std::string Prefix() const { return "sqlite store \"" + path_ + "\": "; }

  // A cached prepared statement for `sql`. Statements are reset by their users after each
  // use. When the cache is full it is emptied, which finalizes every statement returned
  // before: use one statement at a time.
  Result<sqlite3_stmt*> Statement(const std::string& sql) {
    auto it = cache_.find(sql);
    if (it != cache_.end()) return it->second;
    if (cache_.size() >= kMaxCachedStatements) {
      for (auto& [s, stmt] : cache_) sqlite3_finalize(stmt);
      cache_.clear();
    }
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) return Fail(rc, "prepare");
    cache_.emplace(sql, stmt);
    return stmt;
  }

  // Runs a statement that returns no rows we need.
  Status Exec(const std::string& sql, std::string_view what) {
    CORRAL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Statement(sql));
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    }
    sqlite3_reset(stmt);
    if (rc != SQLITE_DONE) return Fail(rc, what);
    return {};
  }

  // Rolls back an open transaction after a failure; the failure is what gets reported.
  void RollbackQuietly() {
    if (sqlite3_get_autocommit(db_) == 0) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
  }

  // Steps `stmt` to the end, decoding each row in place with `read(reader, T*)` into `out`.
  template <typename T, typename ReadFn>
  Status CollectRows(sqlite3_stmt* stmt, const internal::Column* cols, ReadFn&& read,
                     std::vector<T>* out, std::string_view what) {
    ColumnReader reader(stmt, cols);
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      reader.error.clear();
      Status s = read(reader, &out->emplace_back());
      if (!s.has_value()) {
        out->pop_back();
        return Internal(Prefix() + s.error().message);
      }
    }
    if (rc != SQLITE_DONE) return Fail(rc, what);
    return {};
  }

  // Appends the jobs with ids in [first, last], in id order, to `out`.
  Status ReadJobRange(int64_t first, int64_t last, std::vector<Job>* out) {
    static const std::string kSql = internal::SelectJobRangeSql(Dialect::kSqlite);
    CORRAL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Statement(kSql));
    StatementScope scope(stmt);
    Binder binder(stmt);
    binder.Int(first);
    binder.Int(last);
    if (binder.rc() != SQLITE_OK) return Fail(binder.rc(), "bind");
    return CollectJobs(stmt, out, "read jobs");
  }

  // Collects job rows, decoding an array task's shared spec from `array_specs` (each array's
  // row is read once per call).
  Status CollectJobs(sqlite3_stmt* stmt, std::vector<Job>* out, std::string_view what) {
    std::unordered_map<int64_t, std::string> specs;
    internal::DecodedArraySpecs decoded;
    auto read = [&](internal::RowReader& r, Job* job) -> Status {
      bool shared = false;
      CORRAL_RETURN_IF_ERROR(internal::ReadJobRowSharing(r, job, &shared));
      if (!shared) return {};
      auto array = static_cast<int64_t>(job->array_job_id.value);
      auto it = specs.find(array);
      if (it == specs.end()) {
        CORRAL_ASSIGN_OR_RETURN(std::optional<std::string> spec, ArraySpec(array));
        if (!spec.has_value()) return internal::DecodeArraySpec(nullptr, job);
        it = specs.emplace(array, std::move(*spec)).first;
      }
      return internal::DecodeArraySpec(&it->second, job, &decoded);
    };
    return CollectRows(stmt, internal::kJobColumns, read, out, what);
  }

  // The row of `array_specs` for `array_job_id`, or nullopt when there is none.
  Result<std::optional<std::string>> ArraySpec(int64_t array_job_id) {
    CORRAL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt,
                            Statement("SELECT spec FROM array_specs WHERE array_job_id = ?1"));
    StatementScope scope(stmt);
    sqlite3_bind_int64(stmt, 1, array_job_id);
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) return std::optional<std::string>();
    if (rc != SQLITE_ROW) return Fail(rc, "read array spec");
    const char* data = static_cast<const char*>(sqlite3_column_blob(stmt, 0));
    int size = sqlite3_column_bytes(stmt, 0);
    return std::optional<std::string>(data ? std::string(data, static_cast<size_t>(size)) : "");
  }

  sqlite3* db() const { return db_; }

 private:
  explicit Connection(std::string path) : path_(std::move(path)) {}
  sqlite3* db_ = nullptr;
  std::string path_;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
};

SqliteStore::SqliteStore(std::string path, Options options)
    : path_(std::move(path)), options_(options) {}

SqliteStore::~SqliteStore() = default;

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path, Options options) {
  auto store = std::unique_ptr<SqliteStore>(new SqliteStore(path, options));
  CORRAL_ASSIGN_OR_RETURN(store->writer_, Connection::Open(path, options, /*create=*/true));
  Connection& c = *store->writer_;

  // journal_mode is the first statement that reads the file: a file that is not a database
  // fails here. In-memory databases answer "memory" and stay so.
  {
    auto prepared = c.Statement("PRAGMA journal_mode=WAL");
    if (!prepared.has_value()) return c.OpenError(sqlite3_extended_errcode(c.db()), "cannot open");
    sqlite3_stmt* stmt = *prepared;
    StatementScope scope(stmt);
    int rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW) return c.OpenError(rc, "cannot open");
    std::string mode = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    if (mode != "wal" && mode != "memory") {
      return MakeError(ErrorCode::kUnavailable,
                       c.Prefix() + "cannot set WAL mode (journal mode is \"" + mode + "\")");
    }
  }
  // FULL: the WAL is fsynced at every commit (NORMAL would lose the last commits on a power
  // loss).
  CORRAL_RETURN_IF_ERROR(c.Exec("PRAGMA synchronous=FULL", "set synchronous"));

  // Schema: check the version, create what is missing, in one write transaction so that two
  // processes opening a new file at once do not both create it.
  {
    int rc = sqlite3_exec(c.db(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return c.OpenError(rc, "cannot start the schema transaction");
    auto fail = [&](tl::unexpected<Error> e) {
      c.RollbackQuietly();
      return e;
    };
    rc = sqlite3_exec(c.db(),
                      "CREATE TABLE IF NOT EXISTS corral_info "
                      "(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
                      nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return fail(c.OpenError(rc, "cannot create the schema"));
    std::optional<std::string> version;
    bool migrate = false;
    {
      auto stmt = c.Statement("SELECT value FROM corral_info WHERE key = 'schema_version'");
      if (!stmt.has_value()) return fail(tl::unexpected(stmt.error()));
      StatementScope scope(*stmt);
      rc = sqlite3_step(*stmt);
      if (rc == SQLITE_ROW) {
        const unsigned char* text = sqlite3_column_text(*stmt, 0);
        version = text ? reinterpret_cast<const char*>(text) : "";
      } else if (rc != SQLITE_DONE) {
        return fail(c.OpenError(rc, "cannot read the schema version"));
      }
    }
    if (version.has_value()) {
      int v = 0;
      auto [end, ec] = std::from_chars(version->data(), version->data() + version->size(), v);
      if (ec != std::errc() || end != version->data() + version->size()) {
        return fail(MakeError(ErrorCode::kFailedPrecondition,
                              c.Prefix() + "invalid schema_version \"" + *version + "\""));
      }
      if (v > internal::kSchemaVersion) {
        return fail(MakeError(ErrorCode::kFailedPrecondition,
                              c.Prefix() + "database schema version " + std::to_string(v) +
                                  " is newer than this corral supports (" +
                                  std::to_string(internal::kSchemaVersion) +
                                  "); use a newer corral binary"));
      }
      // Version 1 -> 2: the audit table; 2 -> 3: the governance table; both created below
      // with the rest of the schema.
      migrate = v < internal::kSchemaVersion;
    }
    std::vector<std::string> schema = internal::CreateSchemaSql(Dialect::kSqlite);
    schema.push_back(internal::CreateArraySpecsSql(Dialect::kSqlite));
    for (const std::string& sql : schema) {
      rc = sqlite3_exec(c.db(), sql.c_str(), nullptr, nullptr, nullptr);
      if (rc != SQLITE_OK) return fail(c.OpenError(rc, "cannot create the schema"));
    }
    if (!version.has_value()) {
      std::string sql = "INSERT INTO corral_info (key, value) VALUES ('schema_version', '" +
                        std::to_string(internal::kSchemaVersion) + "')";
      rc = sqlite3_exec(c.db(), sql.c_str(), nullptr, nullptr, nullptr);
      if (rc != SQLITE_OK) return fail(c.OpenError(rc, "cannot write the schema version"));
    } else if (migrate) {
      rc = sqlite3_exec(c.db(), internal::UpdateSchemaVersionSql().c_str(), nullptr, nullptr,
                        nullptr);
      if (rc != SQLITE_OK) return fail(c.OpenError(rc, "cannot write the schema version"));
    }
    rc = sqlite3_exec(c.db(), "COMMIT", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return fail(c.OpenError(rc, "cannot commit the schema"));
  }
  return store;
}

Status SqliteStore::Write(const WriteBatch& batch) {
  if (batch.empty()) return {};
  std::lock_guard<std::mutex> lock(write_mu_);
  Connection& c = *writer_;
  CORRAL_RETURN_IF_ERROR(c.Exec("BEGIN IMMEDIATE", "begin"));
  internal::EncodeScratch scratch;
  bool deleted_jobs = false;
  auto run = [&](const std::string& sql, auto&& bind, std::string_view what) -> Status {
    CORRAL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, c.Statement(sql));
    StatementScope scope(stmt);
    Binder binder(stmt);
    bind(binder);
    if (binder.rc() != SQLITE_OK) return c.Fail(binder.rc(), what);
    int rc = sqlite3_step(stmt);
    if (rc != SQLITE_DONE) return c.Fail(rc, what);
    return {};
  };
  static const std::string kUpsertJob = internal::UpsertJobSql(Dialect::kSqlite);
  static const std::string kUpsertNode = internal::UpsertNodeSql(Dialect::kSqlite);
  static const std::string kPutMeta = internal::PutMetaSql(Dialect::kSqlite);
  static const std::string kDeleteJob = internal::DeleteJobSql(Dialect::kSqlite);
  static const std::string kDeleteMeta = internal::DeleteMetaSql(Dialect::kSqlite);
  static const std::string kUpsertSeries = internal::UpsertGpuSeriesSql(Dialect::kSqlite);
  static const std::string kDeleteSeries = internal::DeleteGpuSeriesSql(Dialect::kSqlite);
  static const std::string kUpsertAudit = internal::UpsertAuditSql(Dialect::kSqlite);
  static const std::string kDeleteAudit = internal::DeleteAuditThroughSql(Dialect::kSqlite);
  static const std::string kUpsertGovernance = internal::UpsertGovernanceSql(Dialect::kSqlite);
  static const std::string kDeleteGovernance = internal::DeleteGovernanceSql(Dialect::kSqlite);
  for (const WriteBatch::Op& op : batch.ops()) {
    Status s = std::visit(
        [&](const auto& o) -> Status {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, WriteBatch::PutJobOp>) {
            std::string what = "write job " + o.job.id.ToString();
            internal::EncodeJobSpec(o.job.spec, &scratch.spec);
            bool shared = false;
            if (o.job.array_job_id.value != 0) {
              CORRAL_ASSIGN_OR_RETURN(shared, ShareArraySpec(o.job.array_job_id, scratch.spec));
            }
            std::string_view spec = shared ? internal::kSharedSpecRef : scratch.spec;
            return run(
                kUpsertJob, [&](Binder& b) { internal::WriteJobRow(o.job, b, scratch, spec); },
                what);
          } else if constexpr (std::is_same_v<T, WriteBatch::PutNodeOp>) {
            return run(
                kUpsertNode, [&](Binder& b) { internal::WriteNodeRow(o.node, b, scratch); },
                "write node " + o.node.id.ToString());
          } else if constexpr (std::is_same_v<T, WriteBatch::PutMetaOp>) {
            return run(
                kPutMeta,
                [&](Binder& b) {
                  b.Text(o.key);
                  b.Text(o.value);
                },
                "write meta \"" + o.key + "\"");
          } else if constexpr (std::is_same_v<T, WriteBatch::DeleteJobOp>) {
            CORRAL_RETURN_IF_ERROR(run(
                kDeleteSeries, [&](Binder& b) { b.Int(static_cast<int64_t>(o.id.value)); },
                "delete gpu series of job " + o.id.ToString()));
            deleted_jobs = true;
            return run(
                kDeleteJob, [&](Binder& b) { b.Int(static_cast<int64_t>(o.id.value)); },
                "delete job " + o.id.ToString());
          } else if constexpr (std::is_same_v<T, WriteBatch::PutGpuSeriesOp>) {
            return run(
                kUpsertSeries,
                [&](Binder& b) {
                  b.Int(static_cast<int64_t>(o.job.value));
                  b.Blob(o.body);
                },
                "write gpu series of job " + o.job.ToString());
          } else if constexpr (std::is_same_v<T, WriteBatch::PutAuditOp>) {
            return run(
                kUpsertAudit, [&](Binder& b) { internal::WriteAuditRow(o.record, b); },
                "write audit record " + std::to_string(o.record.seq));
          } else if constexpr (std::is_same_v<T, WriteBatch::DeleteAuditThroughOp>) {
            return run(
                kDeleteAudit, [&](Binder& b) { b.Int(static_cast<int64_t>(o.seq)); },
                "delete audit records");
          } else if constexpr (std::is_same_v<T, WriteBatch::PutGovernanceOp>) {
            return run(
                kUpsertGovernance,
                [&](Binder& b) {
                  b.Text(o.record.kind);
                  b.Text(o.record.name);
                  b.Text(o.record.body);
                },
                "write " + o.record.kind + " \"" + o.record.name + "\"");
          } else if constexpr (std::is_same_v<T, WriteBatch::DeleteGovernanceOp>) {
            return run(
                kDeleteGovernance,
                [&](Binder& b) {
                  b.Text(o.kind);
                  b.Text(o.name);
                },
                "delete " + o.kind + " \"" + o.name + "\"");
          } else {
            static_assert(std::is_same_v<T, WriteBatch::DeleteMetaOp>);
            return run(
                kDeleteMeta, [&](Binder& b) { b.Text(o.key); }, "delete meta \"" + o.key + "\"");
          }
        },
        op);
    if (!s.has_value()) {
      c.RollbackQuietly();
      array_specs_.clear();  // may hold rows of the rolled-back transaction
      return s;
    }
  }
  if (deleted_jobs) {
    // An array's spec goes with its last job.
    array_specs_.clear();
    if (Status s = c.Exec("DELETE FROM array_specs WHERE array_job_id NOT IN "
                          "(SELECT array_job_id FROM jobs)",
                          "delete array specs");
        !s.has_value()) {
      c.RollbackQuietly();
      return s;
    }
  }
  if (Status s = c.Exec("COMMIT", "commit"); !s.has_value()) {
    c.RollbackQuietly();
    array_specs_.clear();
    return s;
  }
  return {};
}

Result<bool> SqliteStore::ShareArraySpec(JobId array, std::string_view spec) {
  auto it = array_specs_.find(array.value);
  if (it == array_specs_.end()) {
    CORRAL_ASSIGN_OR_RETURN(std::optional<std::string> stored,
                            writer_->ArraySpec(static_cast<int64_t>(array.value)));
    if (!stored.has_value()) {
      // The array's first write: its spec becomes the shared one.
      static const std::string kInsert =
          "INSERT INTO array_specs (array_job_id, spec) VALUES (?1, ?2)";
      CORRAL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, writer_->Statement(kInsert));
      StatementScope scope(stmt);
      Binder binder(stmt);
      binder.Int(static_cast<int64_t>(array.value));
      binder.Blob(spec);
      if (binder.rc() != SQLITE_OK) return writer_->Fail(binder.rc(), "write array spec");
      if (int rc = sqlite3_step(stmt); rc != SQLITE_DONE) {
        return writer_->Fail(rc, "write array spec");
      }
      stored = std::string(spec);
    }
    // A few arrays' specs are cached: the ones being submitted or changing state now.
    if (array_specs_.size() >= kCachedArraySpecs) array_specs_.clear();
    it = array_specs_.emplace(array.value, std::move(*stored)).first;
  }
  return it->second == spec;
}

Result<StoredState> SqliteStore::Load() {
  std::lock_guard<std::mutex> lock(write_mu_);
  Connection& c = *writer_;
  StoredState state;
  // One read transaction: jobs, nodes and meta from the same snapshot.
  CORRAL_RETURN_IF_ERROR(c.Exec("BEGIN", "begin"));
  auto load_jobs = [&]() -> Status {
    int64_t count = 0;
    {
      CORRAL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, c.Statement("SELECT count(*) FROM jobs"));
      StatementScope scope(stmt);
      if (int rc = sqlite3_step(stmt); rc != SQLITE_ROW) return c.Fail(rc, "count jobs");
      count = sqlite3_column_int64(stmt, 0);
    }
    state.jobs.reserve(static_cast<size_t>(count));
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    if (count < std::max<int64_t>(options_.parallel_load_min_jobs, 2) || in_memory()) {
      return c.ReadJobRange(kMin, kMax, &state.jobs);
    }
    // Decoding and allocating the records is most of the work: the upper half of the ids is
    // read by a second thread on the second connection. Both see the same state, since this
    // process's writer waits on `write_mu_` (another process writing the file meanwhile is
    // not supported: one controller owns a store).
    int64_t mid = 0;
    {
      CORRAL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt,
                              c.Statement("SELECT id FROM jobs ORDER BY id LIMIT 1 OFFSET ?1"));
      StatementScope scope(stmt);
      sqlite3_bind_int64(stmt, 1, count / 2);
      if (int rc = sqlite3_step(stmt); rc != SQLITE_ROW) return c.Fail(rc, "split jobs");
      mid = sqlite3_column_int64(stmt, 0);
    }
    std::lock_guard<std::mutex> read_lock(read_mu_);
    Result<Connection*> second = Reader();
    if (!second.has_value()) return c.ReadJobRange(kMin, kMax, &state.jobs);
    Connection* helper = *second;
    std::vector<Job> upper;
    upper.reserve(static_cast<size_t>(count - count / 2));
    Status upper_status;
    std::optional<std::thread> thread;
    try {
      thread.emplace([&] { upper_status = helper->ReadJobRange(mid, kMax, &upper); });
    } catch (const std::system_error&) {
      upper_status = helper->ReadJobRange(mid, kMax, &upper);  // no thread: do it here
    }
    Status lower_status = c.ReadJobRange(kMin, mid - 1, &state.jobs);
    if (thread) thread->join();
    CORRAL_RETURN_IF_ERROR(lower_status);
    CORRAL_RETURN_IF_ERROR(upper_status);
    std::move(upper.begin(), upper.end(), std::back_inserter(state.jobs));
    return {};
  };
  auto body = [&]() -> Status {
    CORRAL_RETURN_IF_ERROR(load_jobs());
    {
      static const std::string kSql = internal::SelectNodesSql();
      CORRAL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, c.Statement(kSql));
      StatementScope scope(stmt);
      CORRAL_RETURN_IF_ERROR(c.CollectRows(stmt, internal::kNodeColumns, internal::ReadNodeRow,
                                           &state.nodes, "read nodes"));
    }
    {
      static const std::string kSql = internal::SelectMetaSql();
      CORRAL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, c.Statement(kSql));
      StatementScope scope(stmt);
      static constexpr internal::Column kMetaCols[] = {{"key", internal::ColumnType::kText},
                                                       {"value", internal::ColumnType::kText}};
      ColumnReader reader(stmt, kMetaCols);
      int rc;
      while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        std::string key(reader.Text(0));
        std::string value(reader.Text(1));
        if (!reader.error.empty()) {
          return Internal(c.Prefix() + "meta \"" + key + "\": " + reader.error);
        }
        state.meta.insert_or_assign(std::move(key), std::move(value));
      }
      if (rc != SQLITE_DONE) return c.Fail(rc, "read meta");
    }
    {
      static const std::string kSql = internal::SelectRunningGpuSeriesSql();
      CORRAL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, c.Statement(kSql));
      StatementScope scope(stmt);
      int rc;
      while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        const void* data = sqlite3_column_blob(stmt, 1);
        int size = sqlite3_column_bytes(stmt, 1);
        state.gpu_series.emplace(
            JobId(static_cast<uint64_t>(sqlite3_column_int64(stmt, 0))),
            size > 0 ? std::string(static_cast<const char*>(data), size) : std::string());
      }
      if (rc != SQLITE_DONE) return c.Fail(rc, "read gpu series");
    }
    {
      static const std::string kSql = internal::SelectGovernanceSql();
      CORRAL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, c.Statement(kSql));
      StatementScope scope(stmt);
      static constexpr internal::Column kCols[] = {{"kind", internal::ColumnType::kText},
                                                   {"name", internal::ColumnType::kText},
                                                   {"body", internal::ColumnType::kText}};
      ColumnReader reader(stmt, kCols);
      int rc;
      while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        store::GovernanceRecord r{std::string(reader.Text(0)), std::string(reader.Text(1)),
                                  std::string(reader.Text(2))};
        if (!reader.error.empty()) {
          return Internal(c.Prefix() + r.kind + " \"" + r.name + "\": " + reader.error);
        }
        state.governance.push_back(std::move(r));
      }
      if (rc != SQLITE_DONE) return c.Fail(rc, "read governance");
      internal::SortGovernance(&state.governance);
    }
    return {};
  };
  Status s = body();
  if (!s.has_value()) {
    c.RollbackQuietly();
    return tl::unexpected(s.error());
  }
  CORRAL_RETURN_IF_ERROR(c.Exec("COMMIT", "end read"));
  return state;
}

Result<SqliteStore::Connection*> SqliteStore::Reader() {
  if (!reader_) {
    CORRAL_ASSIGN_OR_RETURN(reader_, Connection::Open(path_, options_, /*create=*/false));
    CORRAL_RETURN_IF_ERROR(reader_->Exec("PRAGMA query_only=1", "set query_only"));
  }
  return reader_.get();
}

namespace {

// Binds a built query's parameters to placeholders 1..N in order.
void BindAll(Binder& binder, const std::vector<internal::SqlParam>& params) {
  for (const internal::SqlParam& p : params) {
    if (p.is_text) {
      binder.Text(p.text);
    } else {
      binder.Int(p.int_value);
    }
  }
}

}  // namespace

Result<std::vector<Job>> SqliteStore::QueryJobs(const JobQuery& query) {
  std::unique_lock<std::mutex> lock(in_memory() ? write_mu_ : read_mu_);
  Connection* c = writer_.get();
  if (!in_memory()) {
    CORRAL_ASSIGN_OR_RETURN(c, Reader());
  }
  internal::BuiltQuery q = internal::BuildJobQuery(query, Dialect::kSqlite);
  CORRAL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, c->Statement(q.sql));
  StatementScope scope(stmt);
  Binder binder(stmt);
  BindAll(binder, q.params);
  if (binder.rc() != SQLITE_OK) return c->Fail(binder.rc(), "bind query");
  std::vector<Job> jobs;
  CORRAL_RETURN_IF_ERROR(c->CollectJobs(stmt, &jobs, "query jobs"));
  return jobs;
}

Result<std::optional<std::string>> SqliteStore::GetGpuSeries(JobId job) {
  std::unique_lock<std::mutex> lock(in_memory() ? write_mu_ : read_mu_);
  Connection* c = writer_.get();
  if (!in_memory()) {
    CORRAL_ASSIGN_OR_RETURN(c, Reader());
  }
  static const std::string kSql = internal::SelectGpuSeriesSql(Dialect::kSqlite);
  CORRAL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, c->Statement(kSql));
  StatementScope scope(stmt);
  sqlite3_bind_int64(stmt, 1, static_cast<int64_t>(job.value));
  int rc = sqlite3_step(stmt);
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  if (rc != SQLITE_ROW) return c->Fail(rc, "read gpu series");
  const void* data = sqlite3_column_blob(stmt, 1);
  int size = sqlite3_column_bytes(stmt, 1);
  return std::optional<std::string>(
      size > 0 ? std::string(static_cast<const char*>(data), size) : std::string());
}

Result<std::vector<AuditRecord>> SqliteStore::QueryAudit(const AuditQuery& query) {
  std::unique_lock<std::mutex> lock(in_memory() ? write_mu_ : read_mu_);
  Connection* c = writer_.get();
  if (!in_memory()) {
    CORRAL_ASSIGN_OR_RETURN(c, Reader());
  }
  internal::BuiltQuery q = internal::BuildAuditQuery(query, Dialect::kSqlite);
  CORRAL_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, c->Statement(q.sql));
  StatementScope scope(stmt);
  Binder binder(stmt);
  BindAll(binder, q.params);
  if (binder.rc() != SQLITE_OK) return c->Fail(binder.rc(), "bind audit query");
  std::vector<AuditRecord> records;
  CORRAL_RETURN_IF_ERROR(c->CollectRows(stmt, internal::kAuditColumns, internal::ReadAuditRow,
                                        &records, "read audit records"));
  if (query.limit > 0 && !query.oldest_first) {
    std::reverse(records.begin(), records.end());  // newest first from SQL
  }
  return records;
}

}  // namespace corral::store
