// The SQL schema shared by SqliteStore and PostgresStore, and the mapping between records
// and rows. Private to the store.
//
// Schema version 3 (`kSchemaVersion`, kept in `corral_info` under "schema_version"):
//   jobs(id PK, array_job_id, array_task_id NULL, job_name, user_name, account,
//        partition_name, state, reason, submit_time, eligible_time, start_time, end_time,
//        time_limit, exit_code, exit_signal, restart_count, last_checkpoint,
//        gpu_seconds, gpu_util_mean, gpu_util_max, gpu_mem_max_mb, energy_joules,
//        cpu_seconds, max_rss_mb, spec BLOB, allocation BLOB)
//        (`allocation` also holds the job's trace, core/job_trace.h, as its field 7)
//   nodes(id PK, node_name, body BLOB)
//   meta(key PK, value)                 the controller's counters (`StoredState::meta`)
//   corral_info(key PK, value)          the store's own bookkeeping (schema_version)
//   array_specs(array_job_id PK, spec BLOB)  an array's spec, kept once
//   audit(seq PK, time, principal, auth, peer, method, route, target, params_sha256,
//         status, error_code, prev_hash, hash)  the audit log (core/audit.h), version 2
//   governance(kind, name, body, PK (kind, name))  accounts, users and QOS
//                                       (`GovernanceRecord`), version 3
// Migrations: version 1 -> 2 adds the `audit` table, 2 -> 3 the `governance` table (CREATE
// TABLE IF NOT EXISTS on open), then records the new version, in the transaction that opens
// the schema.
// An array task whose encoded spec equals its array's row in `array_specs` stores
// `kSharedSpecRef` in its `spec` column instead of repeating it (a 1,001-task array costs one
// spec, not 1,001); a task whose spec differs (changed by `scontrol update`) keeps its own.
// The reference is resolved on every read; a row of `array_specs` lives while a job of its
// array does. `kSharedSpecRef` starts with encoding version 0, which older readers refuse
// with an error rather than reading an empty spec.
// Integers are 64-bit: times and durations in microseconds since the Unix epoch (UTC),
// unsigned 64-bit values stored by their two's-complement bits. `state` is the Slurm name
// ("RUNNING"). `spec`, `allocation` and `body` use record_codec.h's encoding. Everything an
// accounting query filters, sorts or sums on is a column; the rest is in the blobs.
// There are no foreign keys and no triggers.
//
// Thread-safe (pure functions and constants).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/job.h"
#include "core/node.h"
#include "core/result.h"
#include "store/store.h"

namespace corral::store::internal {

inline constexpr int kSchemaVersion = 3;

enum class Dialect { kSqlite, kPostgres };
enum class ColumnType { kInt, kReal, kText, kBlob };

struct Column {
  std::string_view name;
  ColumnType type;
  bool nullable = false;
};

// Indices into `kJobColumns`, in table order.
enum JobColumn : int {
  kJobId,
  kJobArrayJobId,
  kJobArrayTaskId,
  kJobName,
  kJobUser,
  kJobAccount,
  kJobPartition,
  kJobState,
  kJobReason,
  kJobSubmitTime,
  kJobEligibleTime,
  kJobStartTime,
  kJobEndTime,
  kJobTimeLimit,
  kJobExitCode,
  kJobExitSignal,
  kJobRestartCount,
  kJobLastCheckpoint,
  kJobGpuSeconds,
  kJobGpuUtilMean,
  kJobGpuUtilMax,
  kJobGpuMemMaxMb,
  kJobEnergyJoules,
  kJobCpuSeconds,
  kJobMaxRssMb,
  kJobSpec,
  kJobAllocation,
  kJobColumnCount,
};

inline constexpr Column kJobColumns[] = {
    {"id", ColumnType::kInt},
    {"array_job_id", ColumnType::kInt},
    {"array_task_id", ColumnType::kInt, /*nullable=*/true},
    {"job_name", ColumnType::kText},
    {"user_name", ColumnType::kText},
    {"account", ColumnType::kText},
    {"partition_name", ColumnType::kText},
    {"state", ColumnType::kText},
    {"reason", ColumnType::kText},
    {"submit_time", ColumnType::kInt},
    {"eligible_time", ColumnType::kInt},
    {"start_time", ColumnType::kInt},
    {"end_time", ColumnType::kInt},
    {"time_limit", ColumnType::kInt},
    {"exit_code", ColumnType::kInt},
    {"exit_signal", ColumnType::kInt},
    {"restart_count", ColumnType::kInt},
    {"last_checkpoint", ColumnType::kInt},
    {"gpu_seconds", ColumnType::kReal},
    {"gpu_util_mean", ColumnType::kReal},
    {"gpu_util_max", ColumnType::kReal},
    {"gpu_mem_max_mb", ColumnType::kInt},
    {"energy_joules", ColumnType::kReal},
    {"cpu_seconds", ColumnType::kReal},
    {"max_rss_mb", ColumnType::kInt},
    {"spec", ColumnType::kBlob},
    {"allocation", ColumnType::kBlob},
};
static_assert(std::size(kJobColumns) == kJobColumnCount);

enum NodeColumn : int { kNodeId, kNodeName, kNodeBody, kNodeColumnCount };
inline constexpr Column kNodeColumns[] = {
    {"id", ColumnType::kInt},
    {"node_name", ColumnType::kText},
    {"body", ColumnType::kBlob},
};
static_assert(std::size(kNodeColumns) == kNodeColumnCount);

enum AuditColumn : int {
  kAuditSeq,
  kAuditTime,
  kAuditPrincipal,
  kAuditAuth,
  kAuditPeer,
  kAuditMethod,
  kAuditRoute,
  kAuditTarget,
  kAuditParams,
  kAuditStatus,
  kAuditErrorCode,
  kAuditPrevHash,
  kAuditHash,
  kAuditColumnCount,
};
inline constexpr Column kAuditColumns[] = {
    {"seq", ColumnType::kInt},
    {"time", ColumnType::kInt},
    {"principal", ColumnType::kText},
    {"auth", ColumnType::kText},
    {"peer", ColumnType::kText},
    {"method", ColumnType::kText},
    {"route", ColumnType::kText},
    {"target", ColumnType::kText},
    {"params_sha256", ColumnType::kText},
    {"status", ColumnType::kInt},
    {"error_code", ColumnType::kText},
    {"prev_hash", ColumnType::kText},
    {"hash", ColumnType::kText},
};
static_assert(std::size(kAuditColumns) == kAuditColumnCount);

// Receives one row's values in column order (binds them to a statement).
class RowWriter {
 public:
  virtual ~RowWriter() = default;
  virtual void Int(int64_t v) = 0;
  virtual void Real(double v) = 0;
  virtual void Text(std::string_view v) = 0;
  virtual void Blob(std::string_view v) = 0;
  virtual void Null() = 0;
};

// Reads one result row by column index. A reader that finds a value of the wrong type or
// size sets `error` (naming the column) and returns a default value.
class RowReader {
 public:
  virtual ~RowReader() = default;
  virtual bool IsNull(int col) = 0;
  virtual int64_t Int(int col) = 0;
  virtual double Real(int col) = 0;
  // Valid until the reader moves to the next row.
  virtual std::string_view Text(int col) = 0;
  virtual std::string_view Blob(int col) = 0;
  std::string error;
};

// Reusable encoding buffers, so that a batch does not allocate per record.
struct EncodeScratch {
  std::string spec;
  std::string allocation;
};

// Writes `job`'s `kJobColumnCount` values in column order. The blob views passed to `w`
// point into `scratch` and stay valid until it is next used.
void WriteJobRow(const Job& job, RowWriter& w, EncodeScratch& scratch);
// As above with the `spec` column's bytes given (an encoded spec or `kSharedSpecRef`).
void WriteJobRow(const Job& job, RowWriter& w, EncodeScratch& scratch, std::string_view spec);

// The `spec` column of an array task whose spec is its array's row in `array_specs`.
inline constexpr std::string_view kSharedSpecRef{"\0shared", 7};
// Reads a job into `*job`, which must be default-constructed (filled in place: Load reads
// 100,000s of them). Returns kInternal "job N: ..." naming the column and what is wrong.
Status ReadJobRow(RowReader& r, Job* job);
// As `ReadJobRow`, except that a `spec` column holding `kSharedSpecRef` is not decoded:
// `*shared` says so and the caller decodes the array's spec into `job->spec`.
Status ReadJobRowSharing(RowReader& r, Job* job, bool* shared);
// The decoded specs of arrays, by array job id (`DecodeArraySpec`).
using DecodedArraySpecs = std::unordered_map<uint64_t, JobSpec>;
// Decodes an array's shared spec (its `array_specs` row, null when there is none) into a job
// read by `ReadJobRowSharing`. With `decoded`, each array's row is decoded once and its tasks
// share its script, environment and arguments in memory (core/shared_value.h). Returns
// kInternal "job N: array M: ..." when it is missing or cannot be decoded.
Status DecodeArraySpec(const std::string* array_spec, Job* job,
                       DecodedArraySpecs* decoded = nullptr);

void WriteNodeRow(const Node& node, RowWriter& w, EncodeScratch& scratch);
// As `ReadJobRow`. Returns kInternal "node N: ..." naming the column and what is wrong.
Status ReadNodeRow(RowReader& r, Node* node);

void WriteAuditRow(const AuditRecord& record, RowWriter& w);
// Returns kInternal "audit record N: ..." naming the column and what is wrong.
Status ReadAuditRow(RowReader& r, AuditRecord* record);
// The audit statements: upsert by seq; delete seq <= $1 (reads: BuildAuditQuery below).
std::string UpsertAuditSql(Dialect dialect);
std::string DeleteAuditThroughSql(Dialect dialect);
// The governance statements: upsert (kind, name, body); delete by kind $1 and name $2; every
// record (kind, name, body). The table itself is in `CreateSchemaSql`.
std::string UpsertGovernanceSql(Dialect dialect);
std::string DeleteGovernanceSql(Dialect dialect);
std::string SelectGovernanceSql();
// Sorts `records` by (kind, name), bytewise (the SQL order depends on the collation).
void SortGovernance(std::vector<GovernanceRecord>* records);
// The `corral_info` update that records `kSchemaVersion` after a migration.
std::string UpdateSchemaVersionSql();
// The records of `all` (by seq) that `query` asks for: filters, then the last `limit`.
std::vector<AuditRecord> FilterAudit(std::vector<AuditRecord> all, const AuditQuery& query);

// The statements, in `dialect`'s placeholder syntax (`?N` or `$N`).
std::vector<std::string> CreateSchemaSql(Dialect dialect);
std::string CreateArraySpecsSql(Dialect dialect);
std::string UpsertJobSql(Dialect dialect);
std::string DeleteJobSql(Dialect dialect);
std::string DeleteMetaSql(Dialect dialect);
std::string UpsertNodeSql(Dialect dialect);
std::string PutMetaSql(Dialect dialect);
std::string SelectJobsSql();                     // all jobs by id
std::string SelectJobRangeSql(Dialect dialect);  // jobs with ids in [$1, $2], by id
std::string SelectNodesSql();                    // all nodes by id
std::string SelectMetaSql();
// gpu_series(job_id PK, body): one job's GPU series (core/gpu_series.h), kept with the job
// (a table added in schema version 1 by CREATE TABLE IF NOT EXISTS: older files get it on
// open).
std::string UpsertGpuSeriesSql(Dialect dialect);
std::string DeleteGpuSeriesSql(Dialect dialect);  // $1 = job id
std::string SelectGpuSeriesSql(Dialect dialect);  // job_id, body of job $1
std::string SelectRunningGpuSeriesSql();          // job_id, body of every RUNNING job

// One bound value of a built query (a plain struct: g++ 12 warns falsely on a
// variant<int64_t, string> moved through a vector).
struct SqlParam {
  bool is_text = false;
  int64_t int_value = 0;
  std::string text;
  static SqlParam Int(int64_t v) { return SqlParam{false, v, {}}; }
  static SqlParam Text(std::string v) { return SqlParam{true, 0, std::move(v)}; }
};
struct BuiltQuery {
  std::string sql;
  std::vector<SqlParam> params;  // bound to placeholders 1..N in order
};

// The SELECT for `query`: only the filters that are set appear, each value a placeholder.
BuiltQuery BuildJobQuery(const JobQuery& query, Dialect dialect);

// The same filter as `BuildJobQuery`, for a store that filters in memory (without the limit).
bool MatchesJobQuery(const Job& job, const JobQuery& query);

// The SELECT for an audit query: its filters in SQL, so that a store reads only the records
// asked for. With a `limit`, the rows come newest first (ORDER BY seq DESC LIMIT n): the caller
// reverses them.
BuiltQuery BuildAuditQuery(const AuditQuery& query, Dialect dialect);

// Exact parse of a stored state name ("RUNNING").
bool JobStateFromName(std::string_view name, JobState* state);

// --- The leader lease of controllers sharing a PostgreSQL store (store.h, issue 11) ---
// The table (one row, id 1) and the fence procedure, created with the schema: `CALL
// corral_fence(E)` fails with SQLSTATE kFencedSqlState unless the lease's epoch is E, and
// holds the lease row FOR SHARE until the transaction ends, so a takeover (an UPDATE of that
// row) waits for the writes in flight of the leader it deposes.
inline constexpr const char* kFencedSqlState = "CF001";
inline constexpr const char* kPostgresLeaseSql[] = {
    "CREATE TABLE IF NOT EXISTS corral_lease (id INTEGER PRIMARY KEY, holder TEXT NOT NULL, "
    "url TEXT NOT NULL, epoch BIGINT NOT NULL, expires TIMESTAMPTZ NOT NULL)",
    "CREATE OR REPLACE PROCEDURE corral_fence(want BIGINT) LANGUAGE plpgsql AS $$\n"
    "DECLARE have BIGINT;\n"
    "BEGIN\n"
    "  SELECT epoch INTO have FROM corral_lease WHERE id = 1 FOR SHARE;\n"
    "  IF have IS DISTINCT FROM want THEN\n"
    "    RAISE EXCEPTION 'fenced: the leader lease is at epoch %, this controller wrote with %',\n"
    "      have, want USING ERRCODE = 'CF001';\n"
    "  END IF;\n"
    "END $$",
};
// Gives up the lease of $1 (its expiry moves to the past; the epoch stays).
inline constexpr const char* kPostgresReleaseLeaseSql =
    "UPDATE corral_lease SET expires = clock_timestamp() - interval '1 second'"
    " WHERE id = 1 AND holder = $1";
// Takes the lease for $1 (holder) at $2 (url) for $3 milliseconds when it is free, expired or
// already $1's (a new holder: epoch + 1); returns the row as it stands either way. Times are
// the database's (clock_timestamp), so the controllers' clocks never matter.
inline constexpr const char* kPostgresAcquireLeaseSql =
    "WITH taken AS ("
    " INSERT INTO corral_lease AS l (id, holder, url, epoch, expires)"
    " VALUES (1, $1, $2, 1, clock_timestamp() + $3 * interval '1 millisecond')"
    " ON CONFLICT (id) DO UPDATE SET holder = EXCLUDED.holder, url = EXCLUDED.url,"
    "  epoch = CASE WHEN l.holder = EXCLUDED.holder THEN l.epoch ELSE l.epoch + 1 END,"
    "  expires = EXCLUDED.expires"
    " WHERE l.holder = EXCLUDED.holder OR l.expires < clock_timestamp()"
    " RETURNING holder, url, epoch::text)"
    " SELECT holder, url, epoch FROM taken"
    " UNION ALL SELECT holder, url, epoch::text FROM corral_lease"
    "  WHERE id = 1 AND NOT EXISTS (SELECT 1 FROM taken)";

}  // namespace corral::store::internal
