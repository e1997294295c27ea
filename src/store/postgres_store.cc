#include "store/postgres_store.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstring>
#include <deque>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <variant>

#include "core/log.h"
#include "store/internal/libpq.h"
#include "store/internal/record_codec.h"
#include "store/internal/schema.h"

namespace corral::store {
namespace {

using internal::ColumnType;
using internal::Dialect;
using internal::Libpq;
using internal::PgResultPtr;

// Type OIDs of the parameters we send (pg_type.dat; stable since PostgreSQL 7).
constexpr Oid kInt8Oid = 20;
constexpr Oid kTextOid = 25;
constexpr Oid kByteaOid = 17;
constexpr Oid kFloat8Oid = 701;

// Serialises schema creation between controllers starting at once (any fixed number).
constexpr const char* kSchemaLockSql = "SELECT pg_advisory_xact_lock(7236001158260534272)";

Oid OidOf(ColumnType t) {
  switch (t) {
    case ColumnType::kInt:
      return kInt8Oid;
    case ColumnType::kReal:
      return kFloat8Oid;
    case ColumnType::kText:
      return kTextOid;
    case ColumnType::kBlob:
      return kByteaOid;
  }
  return 0;
}

// A named server-side prepared statement.
struct PgStatement {
  const char* name;
  std::string sql;
  std::vector<Oid> types;
};

template <size_t N>
std::vector<Oid> TypesOf(const internal::Column (&cols)[N]) {
  std::vector<Oid> t;
  for (const auto& c : cols) t.push_back(OidOf(c.type));
  return t;
}

const PgStatement& UpsertJob() {
  static const PgStatement s{"corral_upsert_job", internal::UpsertJobSql(Dialect::kPostgres),
                             TypesOf(internal::kJobColumns)};
  return s;
}
const PgStatement& UpsertNode() {
  static const PgStatement s{"corral_upsert_node", internal::UpsertNodeSql(Dialect::kPostgres),
                             TypesOf(internal::kNodeColumns)};
  return s;
}
const PgStatement& PutMeta() {
  static const PgStatement s{
      "corral_put_meta", internal::PutMetaSql(Dialect::kPostgres), {kTextOid, kTextOid}};
  return s;
}
// The leader lease (store.h): $1 holder, $2 url, $3 ttl in milliseconds.
const PgStatement& AcquireLease() {
  static const PgStatement s{
      "corral_acquire_lease", internal::kPostgresAcquireLeaseSql, {kTextOid, kTextOid, kInt8Oid}};
  return s;
}
// A job goes with its GPU series (one statement: the write pipeline sends one per op).
const PgStatement& DeleteJob() {
  static const PgStatement s{
      "corral_delete_job",
      "WITH series AS (" + internal::DeleteGpuSeriesSql(Dialect::kPostgres) + ") " +
          internal::DeleteJobSql(Dialect::kPostgres),
      {kInt8Oid}};
  return s;
}
const PgStatement& UpsertGpuSeries() {
  static const PgStatement s{"corral_upsert_gpu_series",
                             internal::UpsertGpuSeriesSql(Dialect::kPostgres),
                             {kInt8Oid, kByteaOid}};
  return s;
}
const PgStatement& SelectGpuSeries() {
  static const PgStatement s{
      "corral_select_gpu_series", internal::SelectGpuSeriesSql(Dialect::kPostgres), {kInt8Oid}};
  return s;
}
const PgStatement& SelectRunningGpuSeries() {
  static const PgStatement s{
      "corral_select_running_gpu_series", internal::SelectRunningGpuSeriesSql(), {}};
  return s;
}
const PgStatement& UpsertAudit() {
  static const PgStatement s{"corral_upsert_audit", internal::UpsertAuditSql(Dialect::kPostgres),
                             TypesOf(internal::kAuditColumns)};
  return s;
}
const PgStatement& DeleteAuditThrough() {
  static const PgStatement s{
      "corral_delete_audit", internal::DeleteAuditThroughSql(Dialect::kPostgres), {kInt8Oid}};
  return s;
}
const PgStatement& DeleteMeta() {
  static const PgStatement s{
      "corral_delete_meta", internal::DeleteMetaSql(Dialect::kPostgres), {kTextOid}};
  return s;
}
const PgStatement& SelectJobs() {
  static const PgStatement s{"corral_select_jobs", internal::SelectJobsSql(), {}};
  return s;
}
const PgStatement& CountJobs() {
  static const PgStatement s{"corral_count_jobs", "SELECT count(*) FROM jobs", {}};
  return s;
}
// An array's shared spec (schema.h).
constexpr internal::Column kArraySpecColumns[] = {{"array_job_id", ColumnType::kInt},
                                                  {"spec", ColumnType::kBlob}};
const PgStatement& SelectArraySpec() {
  static const PgStatement s{"corral_select_array_spec",
                             "SELECT array_job_id, spec FROM array_specs WHERE array_job_id = $1",
                             {kInt8Oid}};
  return s;
}
const PgStatement& SelectArraySpecs() {
  static const PgStatement s{
      "corral_select_array_specs", "SELECT array_job_id, spec FROM array_specs", {}};
  return s;
}
const PgStatement& InsertArraySpec() {
  static const PgStatement s{"corral_insert_array_spec",
                             "INSERT INTO array_specs (array_job_id, spec) VALUES ($1, $2)",
                             {kInt8Oid, kByteaOid}};
  return s;
}
// An array's spec goes with its last job.
constexpr const char* kDeleteUnusedArraySpecs =
    "DELETE FROM array_specs WHERE array_job_id NOT IN (SELECT array_job_id FROM jobs)";
constexpr internal::Column kCountColumn[] = {{"count", ColumnType::kInt}};
constexpr internal::Column kSeriesColumns[] = {{"job_id", ColumnType::kInt},
                                               {"body", ColumnType::kBlob}};
const PgStatement& SelectNodes() {
  static const PgStatement s{"corral_select_nodes", internal::SelectNodesSql(), {}};
  return s;
}
const PgStatement& UpsertGovernance() {
  static const PgStatement s{"corral_upsert_governance",
                             internal::UpsertGovernanceSql(Dialect::kPostgres),
                             {kTextOid, kTextOid, kTextOid}};
  return s;
}
const PgStatement& DeleteGovernance() {
  static const PgStatement s{"corral_delete_governance",
                             internal::DeleteGovernanceSql(Dialect::kPostgres),
                             {kTextOid, kTextOid}};
  return s;
}
const PgStatement& SelectGovernance() {
  static const PgStatement s{"corral_select_governance", internal::SelectGovernanceSql(), {}};
  return s;
}
const PgStatement& SelectMeta() {
  static const PgStatement s{"corral_select_meta", internal::SelectMetaSql(), {}};
  return s;
}

// Parameters in binary format (integers and doubles big-endian, text and bytea as raw
// bytes): no escaping, no float formatting, exact round trips.
class PgParams final : public internal::RowWriter {
 public:
  void Int(int64_t v) override { Fixed(static_cast<uint64_t>(v), kInt8Oid); }
  void Real(double v) override { Fixed(std::bit_cast<uint64_t>(v), kFloat8Oid); }
  void Text(std::string_view v) override { Add(v.data(), v.size(), kTextOid); }
  void Blob(std::string_view v) override { Add(v.data(), v.size(), kByteaOid); }
  void Null() override {
    values_.push_back(nullptr);
    lengths_.push_back(0);
    formats_.push_back(1);
    types_.push_back(0);
  }
  void Clear() {
    values_.clear();
    lengths_.clear();
    formats_.clear();
    types_.clear();
    numbers_.clear();
  }
  int size() const { return static_cast<int>(values_.size()); }
  const char* const* values() const { return values_.data(); }
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }
  const Oid* types() const { return types_.data(); }

 private:
  void Fixed(uint64_t bits, Oid type) {
    std::array<char, 8>& b = numbers_.emplace_back();
    for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(bits >> (56 - 8 * i));
    Add(b.data(), 8, type);
  }
  // An empty value must not be a null pointer (that would be SQL NULL).
  void Add(const char* p, size_t n, Oid type) {
    values_.push_back(n == 0 ? "" : p);
    lengths_.push_back(static_cast<int>(n));
    formats_.push_back(1);
    types_.push_back(type);
  }
  std::vector<const char*> values_;
  std::vector<int> lengths_;
  std::vector<int> formats_;
  std::vector<Oid> types_;
  std::deque<std::array<char, 8>> numbers_;  // deque: stable addresses while growing
};

// Reads rows of a binary-format result.
class PgRowReader final : public internal::RowReader {
 public:
  PgRowReader(const Libpq& pq, const PGresult* res, const internal::Column* cols)
      : pq_(pq), res_(res), cols_(cols) {}
  void set_row(int row) {
    row_ = row;
    error.clear();
  }
  bool IsNull(int col) override { return pq_.getisnull(res_, row_, col) != 0; }
  int64_t Int(int col) override { return static_cast<int64_t>(Fixed(col)); }
  double Real(int col) override { return std::bit_cast<double>(Fixed(col)); }
  std::string_view Text(int col) override { return Bytes(col); }
  std::string_view Blob(int col) override { return Bytes(col); }

 private:
  void Fail(int col, std::string_view what) {
    if (error.empty()) error = "column " + std::string(cols_[col].name) + ": " + std::string(what);
  }
  std::string_view Bytes(int col) {
    if (IsNull(col)) {
      Fail(col, "unexpected null");
      return {};
    }
    return std::string_view(pq_.getvalue(res_, row_, col),
                            static_cast<size_t>(pq_.getlength(res_, row_, col)));
  }
  uint64_t Fixed(int col) {
    std::string_view b = Bytes(col);
    if (b.size() != 8) {
      if (!IsNull(col)) Fail(col, "expected 8 bytes, got " + std::to_string(b.size()));
      return 0;
    }
    uint64_t v = 0;
    for (char c : b) v = (v << 8) | static_cast<unsigned char>(c);
    return v;
  }
  const Libpq& pq_;
  const PGresult* res_;
  const internal::Column* cols_;
  int row_ = 0;
};

// libpq's messages end in a newline and may span lines ("...failed: ...\n\tIs the server
// running...?"): one line, blanks collapsed.
std::string Trim(std::string_view in) {
  std::string s;
  for (char c : in) {
    bool blank = c == '\n' || c == '\t' || c == ' ' || c == '\r';
    if (blank) {
      if (!s.empty() && s.back() != ' ') s += ' ';
    } else {
      s += c;
    }
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// "postgresql://user@host:port/db": the URL without password and parameters.
std::string DisplayName(const std::string& url) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return "postgresql";
  std::string scheme = url.substr(0, scheme_end + 3);
  std::string rest = url.substr(scheme_end + 3);
  rest = rest.substr(0, rest.find('?'));
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  size_t at = authority.rfind('@');
  if (at != std::string::npos) {
    std::string user = authority.substr(0, at);
    user = user.substr(0, user.find(':'));
    authority = user + authority.substr(at);
  }
  return scheme + authority + path;
}

void LogNotice(void*, const char* message) { CORRAL_LOG(Debug) << "postgresql: " << Trim(message); }

}  // namespace

// One PGconn, its session settings and the statements prepared on it. Not thread-safe; the
// store's mutexes serialise each connection.
class PostgresStore::Connection {
 public:
  Connection(const Libpq& pq, std::string url, std::string name)
      : pq_(pq), url_(std::move(url)), prefix_("postgresql store \"" + name + "\": ") {}
  ~Connection() {
    if (conn_) pq_.finish(conn_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  Status Connect() {
    if (conn_) pq_.finish(conn_);
    prepared_.clear();
    conn_ = pq_.connectdb(url_.c_str());
    if (conn_ == nullptr) return Unavailable(prefix_ + "cannot connect: out of memory");
    if (pq_.status(conn_) != CONNECTION_OK) {
      return Unavailable(prefix_ + "cannot connect: " + Trim(pq_.errorMessage(conn_)));
    }
    pq_.setNoticeProcessor(conn_, LogNotice, nullptr);
    return SetupSession();
  }

  // Reconnects if the connection was lost (the server restarted, a network blip).
  Status EnsureConnected() {
    if (conn_ == nullptr) return Connect();  // abandoned after a broken pipeline
    if (pq_.status(conn_) == CONNECTION_OK) return {};
    pq_.reset(conn_);
    prepared_.clear();
    if (pq_.status(conn_) != CONNECTION_OK) {
      return Unavailable(prefix_ + "cannot reconnect: " + Trim(pq_.errorMessage(conn_)));
    }
    return SetupSession();
  }

  // Starts a transaction; if the connection turns out to be dead, reconnects and retries
  // once (nothing has been sent in this transaction yet, so that is safe).
  Status Begin(const char* sql) {
    CORRAL_RETURN_IF_ERROR(EnsureConnected());
    Result<PgResultPtr> r = Exec(sql, "begin");
    if (r.has_value()) return {};
    if (connected()) return tl::unexpected(r.error());
    CORRAL_RETURN_IF_ERROR(EnsureConnected());
    CORRAL_RETURN_IF_ERROR(Exec(sql, "begin"));
    return {};
  }

  // Runs `sql` (no parameters, text results).
  Result<PgResultPtr> Exec(const std::string& sql, std::string_view what,
                           ExecStatusType want = PGRES_COMMAND_OK) {
    return Check(PgResultPtr(pq_.exec(conn_, sql.c_str()), {&pq_}), want, what);
  }

  // Runs a prepared statement (preparing it first in this session), binary results.
  Result<PgResultPtr> ExecPrepared(const PgStatement& s, const PgParams& p, std::string_view what,
                                   ExecStatusType want) {
    CORRAL_RETURN_IF_ERROR(Prepare(s));
    return Check(PgResultPtr(pq_.execPrepared(conn_, s.name, p.size(), p.values(), p.lengths(),
                                              p.formats(), /*resultFormat=*/1),
                             {&pq_}),
                 want, what);
  }

  // Runs a prepared statement in single-row mode, calling `row(result, index)` for each row
  // as it arrives: the server sends while we decode, and the whole result is never held in
  // memory twice. Stops calling `row` at its first error, which it returns.
  template <typename RowFn>
  Status StreamPrepared(const PgStatement& s, const PgParams& p, std::string_view what,
                        RowFn&& row) {
    CORRAL_RETURN_IF_ERROR(Prepare(s));
    if (pq_.sendQueryPrepared(conn_, s.name, p.size(), p.values(), p.lengths(), p.formats(),
                              /*resultFormat=*/1) == 0) {
      return ResultError(nullptr, what);
    }
    // If single-row mode cannot be set, the rows come in one result: still correct.
    pq_.setSingleRowMode(conn_);
    Status status;
    // Every result must be consumed before the connection takes the next command.
    while (PGresult* raw = pq_.getResult(conn_)) {
      PgResultPtr r(raw, {&pq_});
      if (!status.has_value()) continue;
      ExecStatusType st = pq_.resultStatus(r.get());
      if (st == PGRES_SINGLE_TUPLE || st == PGRES_TUPLES_OK) {
        int n = pq_.ntuples(r.get());
        for (int i = 0; i < n && status.has_value(); ++i) status = row(r.get(), i);
      } else {
        status = ResultError(r.get(), what);
      }
    }
    return status;
  }

  // Prepares `s` in this session unless it already is.
  Status Prepare(const PgStatement& s) {
    if (prepared_.contains(s.name)) return {};
    PgResultPtr r(
        pq_.prepare(conn_, s.name, s.sql.c_str(), static_cast<int>(s.types.size()), s.types.data()),
        {&pq_});
    CORRAL_RETURN_IF_ERROR(Check(std::move(r), PGRES_COMMAND_OK, "prepare"));
    prepared_.insert(s.name);
    return {};
  }

  // Queues a statement without parameters in pipeline mode.
  bool SendQuery(const char* sql) {
    return pq_.sendQueryParams(conn_, sql, 0, nullptr, nullptr, nullptr, nullptr, 0) == 1;
  }

  // Queues a prepared statement in pipeline mode. Requires: `Prepare(s)` succeeded.
  bool SendPrepared(const PgStatement& s, const PgParams& p) {
    return pq_.sendQueryPrepared(conn_, s.name, p.size(), p.values(), p.lengths(), p.formats(),
                                 /*resultFormat=*/1) == 1;
  }

  // Runs `count` statements and then COMMIT in pipeline mode: one round trip per
  // `kPipelineDepth` statements instead of one each. `send(i)` queues statement i with
  // `SendPrepared`; `describe(i)` names it for an error message. Returns the first error (the
  // statements after it are skipped by the server); the caller then rolls back.
  template <typename SendFn, typename DescribeFn>
  Status PipelinedCommit(size_t count, SendFn&& send, DescribeFn&& describe) {
    // Results wait in socket buffers until read: a bounded depth keeps both sides from
    // blocking on full buffers.
    constexpr size_t kPipelineDepth = 256;
    if (pq_.enterPipelineMode(conn_) != 1) return ResultError(nullptr, "enter pipeline mode");
    Status status;
    bool broken = false;
    for (size_t next = 0; next <= count && status.has_value() && !broken;) {
      size_t first = next;
      size_t end = std::min(count + 1, next + kPipelineDepth);  // index `count` is the COMMIT
      for (; next < end; ++next) {
        bool sent = next < count ? send(next)
                                 : pq_.sendQueryParams(conn_, "COMMIT", 0, nullptr, nullptr,
                                                       nullptr, nullptr, 0) == 1;
        if (!sent) {
          status = ResultError(nullptr, next < count ? describe(next) : "commit");
          break;
        }
      }
      if (pq_.pipelineSync(conn_) != 1) {
        if (status.has_value()) status = ResultError(nullptr, "pipeline sync");
        broken = true;
        break;
      }
      // One result and a null per statement, then the sync's result.
      for (size_t i = first; i < next && !broken; ++i) {
        PgResultPtr r(pq_.getResult(conn_), {&pq_});
        if (!r) {
          if (status.has_value()) status = ResultError(nullptr, describe(i));
          broken = true;
          break;
        }
        ExecStatusType st = pq_.resultStatus(r.get());
        if (st != PGRES_COMMAND_OK && st != PGRES_PIPELINE_ABORTED && status.has_value()) {
          status = ResultError(r.get(), i < count ? describe(i) : "commit");
        }
        PgResultPtr(pq_.getResult(conn_), {&pq_});  // the null that ends this statement
      }
      if (!broken) {
        PgResultPtr sync(pq_.getResult(conn_), {&pq_});
        if (!sync || pq_.resultStatus(sync.get()) != PGRES_PIPELINE_SYNC) {
          if (status.has_value()) status = ResultError(sync.get(), "pipeline sync");
          broken = true;
        }
      }
    }
    if (broken || pq_.exitPipelineMode(conn_) != 1) {
      // Unread results or a dead connection: start afresh on the next call.
      pq_.finish(conn_);
      conn_ = nullptr;
      prepared_.clear();
      if (status.has_value()) status = Unavailable(prefix_ + "connection lost in a pipeline");
    }
    return status;
  }

  // Runs an unnamed statement with parameters, binary results.
  Result<PgResultPtr> ExecParams(const std::string& sql, const PgParams& p, std::string_view what) {
    return Check(PgResultPtr(pq_.execParams(conn_, sql.c_str(), p.size(), p.types(), p.values(),
                                            p.lengths(), p.formats(), /*resultFormat=*/1),
                             {&pq_}),
                 PGRES_TUPLES_OK, what);
  }

  // Ends a failed transaction; the failure is what gets reported.
  void RollbackQuietly() {
    if (connected() && pq_.transactionStatus(conn_) != PQTRANS_IDLE) {
      PgResultPtr(pq_.exec(conn_, "ROLLBACK"), {&pq_});
    }
  }

  bool connected() const { return conn_ != nullptr && pq_.status(conn_) == CONNECTION_OK; }
  const std::string& prefix() const { return prefix_; }
  const Libpq& pq() const { return pq_; }

 private:
  Status SetupSession() {
    // synchronous_commit: a COMMIT returns only once its WAL is flushed, whatever the server's
    // default. UTF8: the text columns' bytes are sent and read unchanged.
    CORRAL_RETURN_IF_ERROR(
        Exec("SET synchronous_commit = on; SET client_encoding = 'UTF8'", "set up session"));
    return {};
  }

  Result<PgResultPtr> Check(PgResultPtr r, ExecStatusType want, std::string_view what) {
    if (r && pq_.resultStatus(r.get()) == want) return r;
    return ResultError(r.get(), what);
  }

  tl::unexpected<Error> ResultError(const PGresult* r, std::string_view what) {
    const char* state = r ? pq_.resultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
    const char* primary = r ? pq_.resultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
    std::string message = primary ? primary : "";
    if (message.empty() && r) message = Trim(pq_.resultErrorMessage(r));
    if (message.empty() && conn_) message = Trim(pq_.errorMessage(conn_));
    if (message.empty() && r) {
      message = "unexpected result status " + std::to_string(pq_.resultStatus(r));
    }
    std::string_view code(state ? state : "");
    ErrorCode ec = ErrorCode::kInternal;
    if (!connected() || code.starts_with("08") || code.starts_with("53") ||
        code.starts_with("57P") || code.starts_with("40") ||
        code == "25006" /* read-only transaction: a standby */) {
      ec = ErrorCode::kUnavailable;
    } else if (code == internal::kFencedSqlState) {
      ec = ErrorCode::kAborted;  // the lease moved on: this controller is deposed
    } else if (code.starts_with("22")) {
      ec = ErrorCode::kInvalidArgument;
    }
    std::string m = prefix_ + std::string(what) + ": " + message;
    if (!code.empty()) m += " (SQLSTATE " + std::string(code) + ")";
    return MakeError(ec, std::move(m));
  }

  const Libpq& pq_;
  const std::string url_;
  const std::string prefix_;
  PGconn* conn_ = nullptr;          // null once abandoned; reconnected by `EnsureConnected`
  std::set<std::string> prepared_;  // names prepared in the current session
};

PostgresStore::PostgresStore(const Libpq& pq, std::string url, std::string name)
    : pq_(pq), url_(std::move(url)), name_(std::move(name)) {}

PostgresStore::~PostgresStore() = default;

Result<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& url,
                                                           Options options) {
  CORRAL_ASSIGN_OR_RETURN(const Libpq* pq, internal::LoadLibpq(options.libpq));
  auto store = std::unique_ptr<PostgresStore>(new PostgresStore(*pq, url, DisplayName(url)));
  store->writer_ = std::make_unique<Connection>(*pq, url, store->name_);
  Connection& c = *store->writer_;
  CORRAL_RETURN_IF_ERROR(c.Connect());

  // Schema: under an advisory lock, so that two controllers starting at once do not race
  // on CREATE TABLE IF NOT EXISTS.
  CORRAL_RETURN_IF_ERROR(c.Begin("BEGIN"));
  auto setup = [&]() -> Status {
    CORRAL_RETURN_IF_ERROR(c.Exec(kSchemaLockSql, "lock schema", PGRES_TUPLES_OK));
    CORRAL_RETURN_IF_ERROR(
        c.Exec("CREATE TABLE IF NOT EXISTS corral_info (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
               "create schema"));
    CORRAL_ASSIGN_OR_RETURN(PgResultPtr r,
                            c.Exec("SELECT value FROM corral_info WHERE key = 'schema_version'",
                                   "read schema version", PGRES_TUPLES_OK));
    bool have_version = pq->ntuples(r.get()) > 0;
    bool migrate = false;
    if (have_version) {
      std::string text = pq->getvalue(r.get(), 0, 0);
      int v = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size()) {
        return FailedPrecondition(c.prefix() + "invalid schema_version \"" + text + "\"");
      }
      if (v > internal::kSchemaVersion) {
        return FailedPrecondition(c.prefix() + "database schema version " + std::to_string(v) +
                                  " is newer than this corral supports (" +
                                  std::to_string(internal::kSchemaVersion) +
                                  "); use a newer corral binary");
      }
      // Version 1 -> 2: the audit table; 2 -> 3: the governance table; both created below
      // with the rest of the schema.
      migrate = v < internal::kSchemaVersion;
    }
    for (const std::string& sql : internal::CreateSchemaSql(Dialect::kPostgres)) {
      CORRAL_RETURN_IF_ERROR(c.Exec(sql, "create schema"));
    }
    CORRAL_RETURN_IF_ERROR(
        c.Exec(internal::CreateArraySpecsSql(Dialect::kPostgres), "create schema"));
    for (const char* sql : internal::kPostgresLeaseSql) {
      CORRAL_RETURN_IF_ERROR(c.Exec(sql, "create lease"));
    }
    if (!have_version) {
      CORRAL_RETURN_IF_ERROR(
          c.Exec("INSERT INTO corral_info (key, value) VALUES ('schema_version', '" +
                     std::to_string(internal::kSchemaVersion) + "')",
                 "write schema version"));
    } else if (migrate) {
      CORRAL_RETURN_IF_ERROR(c.Exec(internal::UpdateSchemaVersionSql(), "write schema version"));
    }
    CORRAL_RETURN_IF_ERROR(c.Exec("COMMIT", "commit schema"));
    return {};
  };
  if (Status s = setup(); !s.has_value()) {
    c.RollbackQuietly();
    return tl::unexpected(s.error());
  }
  return store;
}

Status PostgresStore::Write(const WriteBatch& batch) {
  if (batch.empty()) return {};
  std::lock_guard<std::mutex> lock(write_mu_);
  Connection& c = *writer_;
  // With a fence, BEGIN carries `CALL corral_fence(epoch)`: one round trip as before.
  if (Status s = c.Begin(begin_sql_.c_str()); !s.has_value()) {
    c.RollbackQuietly();
    return s;
  }
  // The statement and description of each op.
  auto statement = [](const WriteBatch::Op& op) -> const PgStatement& {
    switch (op.index()) {
      case 0:
        return UpsertJob();
      case 1:
        return UpsertNode();
      case 2:
        return PutMeta();
      case 3:
        return DeleteJob();
      case 5:
        return UpsertGpuSeries();
      case 6:
        return UpsertAudit();
      case 7:
        return DeleteAuditThrough();
      case 8:
        return UpsertGovernance();
      case 9:
        return DeleteGovernance();
      default:
        return DeleteMeta();
    }
  };
  auto describe = [&](size_t i) -> std::string {
    if (i == batch.size()) return "delete array specs";
    return std::visit(
        [](const auto& o) -> std::string {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, WriteBatch::PutJobOp>) {
            return "write job " + o.job.id.ToString();
          } else if constexpr (std::is_same_v<T, WriteBatch::PutNodeOp>) {
            return "write node " + o.node.id.ToString();
          } else if constexpr (std::is_same_v<T, WriteBatch::PutMetaOp>) {
            return "write meta \"" + o.key + "\"";
          } else if constexpr (std::is_same_v<T, WriteBatch::DeleteJobOp>) {
            return "delete job " + o.id.ToString();
          } else if constexpr (std::is_same_v<T, WriteBatch::PutGpuSeriesOp>) {
            return "write gpu series of job " + o.job.ToString();
          } else if constexpr (std::is_same_v<T, WriteBatch::PutAuditOp>) {
            return "write audit record " + std::to_string(o.record.seq);
          } else if constexpr (std::is_same_v<T, WriteBatch::DeleteAuditThroughOp>) {
            return "delete audit records";
          } else if constexpr (std::is_same_v<T, WriteBatch::PutGovernanceOp>) {
            return "write " + o.record.kind + " \"" + o.record.name + "\"";
          } else if constexpr (std::is_same_v<T, WriteBatch::DeleteGovernanceOp>) {
            return "delete " + o.kind + " \"" + o.name + "\"";
          } else {
            return "delete meta \"" + o.key + "\"";
          }
        },
        batch.ops()[i]);
  };
  static_assert(
      std::is_same_v<std::variant_alternative_t<0, WriteBatch::Op>, WriteBatch::PutJobOp>);
  static_assert(
      std::is_same_v<std::variant_alternative_t<3, WriteBatch::Op>, WriteBatch::DeleteJobOp>);
  static_assert(
      std::is_same_v<std::variant_alternative_t<4, WriteBatch::Op>, WriteBatch::DeleteMetaOp>);
  static_assert(
      std::is_same_v<std::variant_alternative_t<5, WriteBatch::Op>, WriteBatch::PutGpuSeriesOp>);
  static_assert(
      std::is_same_v<std::variant_alternative_t<6, WriteBatch::Op>, WriteBatch::PutAuditOp>);
  static_assert(std::is_same_v<std::variant_alternative_t<7, WriteBatch::Op>,
                               WriteBatch::DeleteAuditThroughOp>);
  static_assert(std::is_same_v<std::variant_alternative_t<8, WriteBatch::Op>,
                               WriteBatch::PutGovernanceOp>);
  static_assert(std::is_same_v<std::variant_alternative_t<9, WriteBatch::Op>,
                               WriteBatch::DeleteGovernanceOp>);
  static_assert(std::variant_size_v<WriteBatch::Op> == 10);
  auto fail = [&](Status s) {
    c.RollbackQuietly();
    array_specs_.clear();  // may hold rows of the rolled-back transaction
    return s;
  };
  // Statements are prepared outside the pipeline.
  bool prepared[std::variant_size_v<WriteBatch::Op>] = {};
  for (const WriteBatch::Op& op : batch.ops()) {
    if (prepared[op.index()]) continue;
    if (Status s = c.Prepare(statement(op)); !s.has_value()) return fail(s);
    prepared[op.index()] = true;
  }
  internal::EncodeScratch scratch;
  PgParams params;
  // Array tasks refer to their array's shared spec (schema.h): each array's row is read, or
  // written from its first task, before the pipeline.
  bool deleted_jobs = false;
  for (const WriteBatch::Op& op : batch.ops()) {
    deleted_jobs = deleted_jobs || std::holds_alternative<WriteBatch::DeleteJobOp>(op);
    const auto* put = std::get_if<WriteBatch::PutJobOp>(&op);
    if (put == nullptr || put->job.array_job_id.value == 0) continue;
    uint64_t array = put->job.array_job_id.value;
    if (array_specs_.contains(array)) continue;
    if (array_specs_.size() >= kCachedArraySpecs) array_specs_.clear();
    params.Clear();
    params.Int(static_cast<int64_t>(array));
    Result<PgResultPtr> r =
        c.ExecPrepared(SelectArraySpec(), params, "read array spec", PGRES_TUPLES_OK);
    if (!r.has_value()) return fail(tl::unexpected(r.error()));
    if (pq_.ntuples(r->get()) == 1) {
      PgRowReader row(pq_, r->get(), kArraySpecColumns);
      array_specs_.emplace(array, std::string(row.Blob(1)));
      continue;
    }
    internal::EncodeJobSpec(put->job.spec, &scratch.spec);
    params.Blob(scratch.spec);
    r = c.ExecPrepared(InsertArraySpec(), params, "write array spec", PGRES_COMMAND_OK);
    if (!r.has_value()) return fail(tl::unexpected(r.error()));
    array_specs_.emplace(array, scratch.spec);
  }
  auto send = [&](size_t i) {
    if (i == batch.size()) return c.SendQuery(kDeleteUnusedArraySpecs);
    const WriteBatch::Op& op = batch.ops()[i];
    params.Clear();
    std::visit(
        [&](const auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, WriteBatch::PutJobOp>) {
            internal::EncodeJobSpec(o.job.spec, &scratch.spec);
            auto it = array_specs_.find(o.job.array_job_id.value);
            bool shared = o.job.array_job_id.value != 0 && it != array_specs_.end() &&
                          it->second == scratch.spec;
            internal::WriteJobRow(o.job, params, scratch,
                                  shared ? internal::kSharedSpecRef : scratch.spec);
          } else if constexpr (std::is_same_v<T, WriteBatch::PutNodeOp>) {
            internal::WriteNodeRow(o.node, params, scratch);
          } else if constexpr (std::is_same_v<T, WriteBatch::PutMetaOp>) {
            params.Text(o.key);
            params.Text(o.value);
          } else if constexpr (std::is_same_v<T, WriteBatch::DeleteJobOp>) {
            params.Int(static_cast<int64_t>(o.id.value));
          } else if constexpr (std::is_same_v<T, WriteBatch::PutGpuSeriesOp>) {
            params.Int(static_cast<int64_t>(o.job.value));
            params.Blob(o.body);
          } else if constexpr (std::is_same_v<T, WriteBatch::PutAuditOp>) {
            internal::WriteAuditRow(o.record, params);
          } else if constexpr (std::is_same_v<T, WriteBatch::DeleteAuditThroughOp>) {
            params.Int(static_cast<int64_t>(o.seq));
          } else if constexpr (std::is_same_v<T, WriteBatch::PutGovernanceOp>) {
            params.Text(o.record.kind);
            params.Text(o.record.name);
            params.Text(o.record.body);
          } else if constexpr (std::is_same_v<T, WriteBatch::DeleteGovernanceOp>) {
            params.Text(o.kind);
            params.Text(o.name);
          } else {
            params.Text(o.key);
          }
        },
        op);
    // libpq copies the parameters into its output buffer: `params` may be reused at once.
    return c.SendPrepared(statement(op), params);
  };
  size_t count = batch.size() + (deleted_jobs ? 1 : 0);
  if (Status s = c.PipelinedCommit(count, send, describe); !s.has_value()) return fail(s);
  if (deleted_jobs) array_specs_.clear();
  return {};
}

namespace {

template <typename T, typename ReadFn>
Status CollectRows(const Libpq& pq, const PGresult* res, const internal::Column* cols,
                   const std::string& prefix, ReadFn&& read, std::vector<T>* out) {
  int n = pq.ntuples(res);
  out->reserve(out->size() + static_cast<size_t>(n));
  PgRowReader reader(pq, res, cols);
  for (int i = 0; i < n; ++i) {
    reader.set_row(i);
    Status s = read(reader, &out->emplace_back());
    if (!s.has_value()) {
      out->pop_back();
      return Internal(prefix + s.error().message);
    }
  }
  return {};
}

}  // namespace

Result<StoredState> PostgresStore::Load() {
  std::lock_guard<std::mutex> lock(write_mu_);
  Connection& c = *writer_;
  CORRAL_RETURN_IF_ERROR(c.Begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
  StoredState state;
  auto body = [&]() -> Status {
    PgParams none;
    {
      CORRAL_ASSIGN_OR_RETURN(PgResultPtr r,
                              c.ExecPrepared(CountJobs(), none, "count jobs", PGRES_TUPLES_OK));
      PgRowReader count(pq_, r.get(), kCountColumn);
      if (pq_.ntuples(r.get()) == 1) state.jobs.reserve(static_cast<size_t>(count.Int(0)));
    }
    std::unordered_map<uint64_t, std::string> array_specs;
    internal::DecodedArraySpecs decoded;
    {
      CORRAL_ASSIGN_OR_RETURN(PgResultPtr r, c.ExecPrepared(SelectArraySpecs(), none,
                                                            "read array specs", PGRES_TUPLES_OK));
      PgRowReader row(pq_, r.get(), kArraySpecColumns);
      for (int i = 0; i < pq_.ntuples(r.get()); ++i) {
        row.set_row(i);
        array_specs.emplace(static_cast<uint64_t>(row.Int(0)), std::string(row.Blob(1)));
      }
    }
    CORRAL_RETURN_IF_ERROR(
        c.StreamPrepared(SelectJobs(), none, "read jobs", [&](const PGresult* res, int row) {
          PgRowReader reader(pq_, res, internal::kJobColumns);
          reader.set_row(row);
          Job* job = &state.jobs.emplace_back();
          bool shared = false;
          Status s = internal::ReadJobRowSharing(reader, job, &shared);
          if (s.has_value() && shared) {
            auto it = array_specs.find(job->array_job_id.value);
            s = internal::DecodeArraySpec(it == array_specs.end() ? nullptr : &it->second, job,
                                          &decoded);
          }
          if (!s.has_value()) {
            state.jobs.pop_back();
            return Status(Internal(c.prefix() + s.error().message));
          }
          return Status();
        }));
    {
      CORRAL_ASSIGN_OR_RETURN(PgResultPtr r,
                              c.ExecPrepared(SelectNodes(), none, "read nodes", PGRES_TUPLES_OK));
      CORRAL_RETURN_IF_ERROR(CollectRows(pq_, r.get(), internal::kNodeColumns, c.prefix(),
                                         internal::ReadNodeRow, &state.nodes));
    }
    {
      CORRAL_ASSIGN_OR_RETURN(PgResultPtr r,
                              c.ExecPrepared(SelectMeta(), none, "read meta", PGRES_TUPLES_OK));
      int n = pq_.ntuples(r.get());
      for (int i = 0; i < n; ++i) {
        state.meta.insert_or_assign(
            std::string(pq_.getvalue(r.get(), i, 0), pq_.getlength(r.get(), i, 0)),
            std::string(pq_.getvalue(r.get(), i, 1), pq_.getlength(r.get(), i, 1)));
      }
    }
    {
      CORRAL_ASSIGN_OR_RETURN(PgResultPtr r, c.ExecPrepared(SelectRunningGpuSeries(), none,
                                                            "read gpu series", PGRES_TUPLES_OK));
      PgRowReader reader(pq_, r.get(), kSeriesColumns);
      int n = pq_.ntuples(r.get());
      for (int i = 0; i < n; ++i) {
        reader.set_row(i);
        JobId id(static_cast<uint64_t>(reader.Int(0)));
        std::string blob(reader.Blob(1));
        if (!reader.error.empty()) return Internal(c.prefix() + "gpu series: " + reader.error);
        state.gpu_series.emplace(id, std::move(blob));
      }
    }
    {
      CORRAL_ASSIGN_OR_RETURN(PgResultPtr r, c.ExecPrepared(SelectGovernance(), none,
                                                            "read governance", PGRES_TUPLES_OK));
      int n = pq_.ntuples(r.get());
      auto text = [&](int i, int col) {
        return std::string(pq_.getvalue(r.get(), i, col), pq_.getlength(r.get(), i, col));
      };
      for (int i = 0; i < n; ++i) state.governance.push_back({text(i, 0), text(i, 1), text(i, 2)});
      internal::SortGovernance(&state.governance);
    }
    CORRAL_RETURN_IF_ERROR(c.Exec("COMMIT", "end read"));
    return {};
  };
  if (Status s = body(); !s.has_value()) {
    c.RollbackQuietly();
    return tl::unexpected(s.error());
  }
  return state;
}

void PostgresStore::SetFence(uint64_t epoch) {
  std::lock_guard<std::mutex> lock(write_mu_);
  // A leader frozen inside a write (SIGSTOP, a VM pause) would hold the lease row FOR SHARE
  // and block any takeover: the server ends such a transaction after a second of idling.
  begin_sql_ = epoch == 0 ? "BEGIN"
                          : "SET idle_in_transaction_session_timeout = 1000; BEGIN; "
                            "CALL corral_fence(" + std::to_string(epoch) + ")";
}

Status PostgresStore::ReleaseLease(const std::string& holder) {
  std::lock_guard<std::mutex> lock(lease_mu_);
  if (!lease_) return {};  // never took it
  CORRAL_RETURN_IF_ERROR(lease_->EnsureConnected());
  static const PgStatement release{"corral_release_lease", internal::kPostgresReleaseLeaseSql,
                                   {kTextOid}};
  PgParams p;
  p.Text(holder);
  CORRAL_RETURN_IF_ERROR(lease_->ExecPrepared(release, p, "release the leader lease",
                                              PGRES_COMMAND_OK));
  return {};
}

Result<Lease> PostgresStore::TryAcquireLease(const std::string& holder, const std::string& url,
                                             Duration ttl) {
  std::lock_guard<std::mutex> lock(lease_mu_);
  if (!lease_) {
    auto conn = std::make_unique<Connection>(pq_, url_, name_);
    CORRAL_RETURN_IF_ERROR(conn->Connect());
    lease_ = std::move(conn);
  }
  CORRAL_RETURN_IF_ERROR(lease_->EnsureConnected());
  // A leader's write in flight holds the row briefly; a frozen one at most a second (above).
  CORRAL_RETURN_IF_ERROR(lease_->Exec("SET lock_timeout = 2000", "set lock timeout"));
  PgParams p;
  p.Text(holder);
  p.Text(url);
  p.Int(ToMicros(FromMicros(0) + ttl) / 1000);
  CORRAL_ASSIGN_OR_RETURN(PgResultPtr r,
                          lease_->ExecPrepared(AcquireLease(), p,
                                               "take the leader lease", PGRES_TUPLES_OK));
  if (pq_.ntuples(r.get()) != 1) return Internal(lease_->prefix() + "no lease row");
  Lease lease;
  lease.holder = pq_.getvalue(r.get(), 0, 0);
  lease.url = pq_.getvalue(r.get(), 0, 1);
  const char* epoch = pq_.getvalue(r.get(), 0, 2);
  std::from_chars(epoch, epoch + std::strlen(epoch), lease.epoch);
  lease.held = lease.holder == holder;
  return lease;
}

Result<PostgresStore::Connection*> PostgresStore::Reader() {
  if (!reader_) {
    auto conn = std::make_unique<Connection>(pq_, url_, name_);
    CORRAL_RETURN_IF_ERROR(conn->Connect());
    reader_ = std::move(conn);
  }
  CORRAL_RETURN_IF_ERROR(reader_->EnsureConnected());
  return reader_.get();
}

namespace {

// A built query's parameters, for placeholders $1..$N in order.
PgParams ParamsOf(const internal::BuiltQuery& q) {
  PgParams params;
  for (const internal::SqlParam& p : q.params) {
    if (p.is_text) {
      params.Text(p.text);
    } else {
      params.Int(p.int_value);
    }
  }
  return params;
}

}  // namespace

Result<std::vector<Job>> PostgresStore::QueryJobs(const JobQuery& query) {
  std::lock_guard<std::mutex> lock(read_mu_);
  CORRAL_ASSIGN_OR_RETURN(Connection * connection, Reader());
  Connection& c = *connection;
  internal::BuiltQuery q = internal::BuildJobQuery(query, Dialect::kPostgres);
  PgParams params = ParamsOf(q);
  Result<PgResultPtr> r = c.ExecParams(q.sql, params, "query jobs");
  if (!r.has_value() && !c.connected()) {
    // The connection was lost since the last call (a server restart): a read is safe to retry.
    CORRAL_RETURN_IF_ERROR(c.EnsureConnected());
    r = c.ExecParams(q.sql, params, "query jobs");
  }
  if (!r.has_value()) return tl::unexpected(r.error());
  std::vector<Job> jobs;
  std::vector<bool> shared;
  auto read = [&](internal::RowReader& reader, Job* job) {
    bool s = false;
    Status status = internal::ReadJobRowSharing(reader, job, &s);
    shared.push_back(s);
    return status;
  };
  CORRAL_RETURN_IF_ERROR(
      CollectRows(pq_, r->get(), internal::kJobColumns, c.prefix(), read, &jobs));
  // Tasks that refer to their array's spec: each array's row read once. A row gone since the
  // query means every job of the array was deleted meanwhile: those jobs are left out.
  std::unordered_map<uint64_t, std::optional<std::string>> array_specs;
  internal::DecodedArraySpecs decoded;
  std::vector<Job> out;
  out.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!shared[i]) {
      out.push_back(std::move(jobs[i]));
      continue;
    }
    uint64_t array = jobs[i].array_job_id.value;
    auto it = array_specs.find(array);
    if (it == array_specs.end()) {
      PgParams p;
      p.Int(static_cast<int64_t>(array));
      CORRAL_ASSIGN_OR_RETURN(PgResultPtr spec,
                              c.ExecParams(SelectArraySpec().sql, p, "read array spec"));
      std::optional<std::string> value;
      if (pq_.ntuples(spec.get()) == 1) {
        PgRowReader row(pq_, spec.get(), kArraySpecColumns);
        value = std::string(row.Blob(1));
      }
      it = array_specs.emplace(array, std::move(value)).first;
    }
    if (!it->second.has_value()) continue;
    if (Status s = internal::DecodeArraySpec(&*it->second, &jobs[i], &decoded); !s.has_value()) {
      return Internal(c.prefix() + s.error().message);
    }
    out.push_back(std::move(jobs[i]));
  }
  return out;
}

Result<std::optional<std::string>> PostgresStore::GetGpuSeries(JobId job) {
  std::lock_guard<std::mutex> lock(read_mu_);
  CORRAL_ASSIGN_OR_RETURN(Connection * connection, Reader());
  Connection& c = *connection;
  PgParams params;
  params.Int(static_cast<int64_t>(job.value));
  CORRAL_ASSIGN_OR_RETURN(PgResultPtr r, c.ExecPrepared(SelectGpuSeries(), params,
                                                        "read gpu series", PGRES_TUPLES_OK));
  if (pq_.ntuples(r.get()) == 0) return std::optional<std::string>();
  PgRowReader reader(pq_, r.get(), kSeriesColumns);
  reader.set_row(0);
  std::string body(reader.Blob(1));
  if (!reader.error.empty()) return Internal(c.prefix() + "gpu series: " + reader.error);
  return std::optional<std::string>(std::move(body));
}

Result<std::vector<AuditRecord>> PostgresStore::QueryAudit(const AuditQuery& query) {
  std::lock_guard<std::mutex> lock(read_mu_);
  CORRAL_ASSIGN_OR_RETURN(Connection * connection, Reader());
  Connection& c = *connection;
  internal::BuiltQuery q = internal::BuildAuditQuery(query, Dialect::kPostgres);
  PgParams params = ParamsOf(q);
  CORRAL_ASSIGN_OR_RETURN(PgResultPtr r, c.ExecParams(q.sql, params, "read audit records"));
  std::vector<AuditRecord> records;
  CORRAL_RETURN_IF_ERROR(CollectRows(pq_, r.get(), internal::kAuditColumns, c.prefix(),
                                     internal::ReadAuditRow, &records));
  if (query.limit > 0 && !query.oldest_first) {
    std::reverse(records.begin(), records.end());  // newest first from SQL
  }
  return records;
}

}  // namespace corral::store
