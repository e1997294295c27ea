#include "store/internal/schema.h"

#include <algorithm>
#include <array>
#include <limits>
#include <tuple>

#include "store/internal/record_codec.h"

namespace corral::store::internal {
namespace {

std::string Placeholder(Dialect d, int n) {
  return (d == Dialect::kSqlite ? "?" : "$") + std::to_string(n);
}

std::string_view TypeName(Dialect d, ColumnType t) {
  switch (t) {
    case ColumnType::kInt:
      return d == Dialect::kSqlite ? "INTEGER" : "BIGINT";
    case ColumnType::kReal:
      return d == Dialect::kSqlite ? "REAL" : "DOUBLE PRECISION";
    case ColumnType::kText:
      return "TEXT";
    case ColumnType::kBlob:
      return d == Dialect::kSqlite ? "BLOB" : "BYTEA";
  }
  return "";
}

template <size_t N>
std::string ColumnList(const Column (&cols)[N]) {
  std::string s;
  for (size_t i = 0; i < N; ++i) {
    if (i) s += ", ";
    s += cols[i].name;
  }
  return s;
}

template <size_t N>
std::string CreateTable(Dialect d, std::string_view table, const Column (&cols)[N]) {
  std::string s = "CREATE TABLE IF NOT EXISTS " + std::string(table) + " (";
  for (size_t i = 0; i < N; ++i) {
    if (i) s += ", ";
    s += cols[i].name;
    s += ' ';
    s += TypeName(d, cols[i].type);
    if (i == 0) {
      s += " PRIMARY KEY";
    } else if (!cols[i].nullable) {
      s += " NOT NULL";
    }
  }
  return s + ")";
}

// INSERT ... ON CONFLICT (first column) DO UPDATE: the same text works in SQLite (3.24+)
// and PostgreSQL (9.5+).
template <size_t N>
std::string Upsert(Dialect d, std::string_view table, const Column (&cols)[N]) {
  std::string s = "INSERT INTO " + std::string(table) + " (" + ColumnList(cols) + ") VALUES (";
  for (size_t i = 0; i < N; ++i) {
    if (i) s += ", ";
    s += Placeholder(d, static_cast<int>(i + 1));
  }
  s += ") ON CONFLICT (" + std::string(cols[0].name) + ") DO UPDATE SET ";
  for (size_t i = 1; i < N; ++i) {
    if (i > 1) s += ", ";
    s += std::string(cols[i].name) + " = excluded." + std::string(cols[i].name);
  }
  return s;
}

// Every state name, indexed by the enum's value, found through `JobStateName` so that a
// state added to core is stored and read without a change here.
struct StateNames {
  std::array<std::string_view, 64> names{};
  int count = 0;
  StateNames() {
    for (int i = 0; i < 64; ++i) {
      std::string_view n = JobStateName(static_cast<JobState>(i));
      if (n == "UNKNOWN") break;
      names[i] = n;
      count = i + 1;
    }
  }
};
const StateNames& States() {
  static const StateNames s;
  return s;
}

// Range-checked narrowing of an integer column; records the first problem in `r.error`.
template <typename T>
T Narrow(RowReader& r, int col, const Column* cols) {
  int64_t v = r.Int(col);
  if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
      v > static_cast<int64_t>(std::numeric_limits<T>::max())) {
    if (r.error.empty()) {
      r.error = "column " + std::string(cols[col].name) + ": value " + std::to_string(v) +
                " out of range";
    }
    return 0;
  }
  return static_cast<T>(v);
}

}  // namespace

bool JobStateFromName(std::string_view name, JobState* state) {
  const StateNames& s = States();
  for (int i = 0; i < s.count; ++i) {
    if (s.names[i] == name) {
      *state = static_cast<JobState>(i);
      return true;
    }
  }
  return false;
}

void WriteJobRow(const Job& j, RowWriter& w, EncodeScratch& scratch) {
  EncodeJobSpec(j.spec, &scratch.spec);
  WriteJobRow(j, w, scratch, scratch.spec);
}

void WriteJobRow(const Job& j, RowWriter& w, EncodeScratch& scratch, std::string_view spec) {
  w.Int(static_cast<int64_t>(j.id.value));
  w.Int(static_cast<int64_t>(j.array_job_id.value));
  if (j.array_task_id.has_value()) {
    w.Int(*j.array_task_id);
  } else {
    w.Null();
  }
  w.Text(j.spec.name);
  w.Text(j.spec.user);
  w.Text(j.spec.account);
  w.Text(j.partition);
  w.Text(JobStateName(j.state));
  w.Text(j.reason);
  w.Int(ToMicros(j.submit_time));
  w.Int(ToMicros(j.eligible_time));
  w.Int(ToMicros(j.start_time));
  w.Int(ToMicros(j.end_time));
  w.Int(j.time_limit.count());
  w.Int(j.exit_code);
  w.Int(j.exit_signal);
  w.Int(j.restart_count);
  w.Int(ToMicros(j.last_checkpoint));
  w.Real(j.usage.gpu_seconds);
  w.Real(j.usage.gpu_util_mean);
  w.Real(j.usage.gpu_util_max);
  w.Int(static_cast<int64_t>(j.usage.gpu_mem_max_mb));
  w.Real(j.usage.energy_joules);
  w.Real(j.usage.cpu_seconds);
  w.Int(static_cast<int64_t>(j.usage.max_rss_mb));
  w.Blob(spec);
  EncodeAllocation(j.allocation, &scratch.allocation, &j.trace);
  w.Blob(scratch.allocation);
}

Status ReadJobRow(RowReader& r, Job* job) { return ReadJobRowSharing(r, job, nullptr); }

Status ReadJobRowSharing(RowReader& r, Job* job, bool* shared) {
  Job& j = *job;
  const Column* c = kJobColumns;
  j.id = JobId(static_cast<uint64_t>(r.Int(kJobId)));
  std::string prefix = "job " + j.id.ToString();
  j.array_job_id = JobId(static_cast<uint64_t>(r.Int(kJobArrayJobId)));
  if (!r.IsNull(kJobArrayTaskId)) j.array_task_id = Narrow<uint32_t>(r, kJobArrayTaskId, c);
  j.spec.name = r.Text(kJobName);
  j.spec.user = r.Text(kJobUser);
  j.spec.account = r.Text(kJobAccount);
  j.partition = r.Text(kJobPartition);
  std::string_view state = r.Text(kJobState);
  if (!JobStateFromName(state, &j.state) && r.error.empty()) {
    r.error = "column state: unknown job state \"" + std::string(state) + "\"";
  }
  j.reason = r.Text(kJobReason);
  j.submit_time = FromMicros(r.Int(kJobSubmitTime));
  j.eligible_time = FromMicros(r.Int(kJobEligibleTime));
  j.start_time = FromMicros(r.Int(kJobStartTime));
  j.end_time = FromMicros(r.Int(kJobEndTime));
  j.time_limit = Duration(r.Int(kJobTimeLimit));
  j.exit_code = Narrow<int32_t>(r, kJobExitCode, c);
  j.exit_signal = Narrow<int32_t>(r, kJobExitSignal, c);
  j.restart_count = Narrow<uint32_t>(r, kJobRestartCount, c);
  j.last_checkpoint = FromMicros(r.Int(kJobLastCheckpoint));
  j.usage.gpu_seconds = r.Real(kJobGpuSeconds);
  j.usage.gpu_util_mean = r.Real(kJobGpuUtilMean);
  j.usage.gpu_util_max = r.Real(kJobGpuUtilMax);
  j.usage.gpu_mem_max_mb = static_cast<uint64_t>(r.Int(kJobGpuMemMaxMb));
  j.usage.energy_joules = r.Real(kJobEnergyJoules);
  j.usage.cpu_seconds = r.Real(kJobCpuSeconds);
  j.usage.max_rss_mb = static_cast<uint64_t>(r.Int(kJobMaxRssMb));
  std::string_view spec = r.Blob(kJobSpec);
  std::string_view allocation = r.Blob(kJobAllocation);
  if (!r.error.empty()) return Internal(prefix + ": " + r.error);
  if (shared != nullptr) *shared = spec == kSharedSpecRef;
  if (shared != nullptr && *shared) {
    // The caller decodes the array's spec.
  } else if (Status s = DecodeJobSpec(spec, &j.spec); !s.has_value()) {
    return Internal(prefix + ": column spec: " + s.error().message);
  }
  if (Status s = DecodeAllocation(allocation, &j.allocation, &j.trace);
      !s.has_value()) {
    return Internal(prefix + ": column allocation: " + s.error().message);
  }
  return {};
}

Status DecodeArraySpec(const std::string* array_spec, Job* job, DecodedArraySpecs* decoded) {
  std::string prefix = "job " + job->id.ToString() + ": array " + job->array_job_id.ToString();
  if (array_spec == nullptr) return Internal(prefix + ": no shared spec in array_specs");
  if (decoded == nullptr) {
    if (Status s = DecodeJobSpec(*array_spec, &job->spec); !s.has_value()) {
      return Internal(prefix + ": array_specs spec: " + s.error().message);
    }
    return {};
  }
  auto it = decoded->find(job->array_job_id.value);
  if (it == decoded->end()) {
    JobSpec spec;
    if (Status s = DecodeJobSpec(*array_spec, &spec); !s.has_value()) {
      return Internal(prefix + ": array_specs spec: " + s.error().message);
    }
    it = decoded->emplace(job->array_job_id.value, std::move(spec)).first;
  }
  // The columns' name, user and account (not in the encoded spec) stay the task's own.
  JobSpec spec = it->second;
  spec.name = std::move(job->spec.name);
  spec.user = std::move(job->spec.user);
  spec.account = std::move(job->spec.account);
  job->spec = std::move(spec);
  return {};
}

void WriteNodeRow(const Node& n, RowWriter& w, EncodeScratch& scratch) {
  w.Int(n.id.value);
  w.Text(n.inventory.name);
  EncodeNodeBody(n, &scratch.spec);
  w.Blob(scratch.spec);
}

Status ReadNodeRow(RowReader& r, Node* node) {
  Node& n = *node;
  n.id = NodeId(Narrow<uint32_t>(r, kNodeId, kNodeColumns));
  std::string prefix = "node " + n.id.ToString();
  n.inventory.name = r.Text(kNodeName);
  std::string_view body = r.Blob(kNodeBody);
  if (!r.error.empty()) return Internal(prefix + ": " + r.error);
  if (Status s = DecodeNodeBody(body, &n); !s.has_value()) {
    return Internal(prefix + ": column body: " + s.error().message);
  }
  return {};
}

constexpr Column kGpuSeriesColumns[] = {{"job_id", ColumnType::kInt},
                                        {"body", ColumnType::kBlob}};

std::vector<std::string> CreateSchemaSql(Dialect d) {
  static constexpr Column kMetaColumns[] = {{"key", ColumnType::kText},
                                            {"value", ColumnType::kText}};
  return {
      CreateTable(d, "jobs", kJobColumns),
      // The accounting filters (sacct -u/-A/-s, the -S/-E window) and array lookups.
      "CREATE INDEX IF NOT EXISTS jobs_user_name ON jobs (user_name)",
      "CREATE INDEX IF NOT EXISTS jobs_account ON jobs (account)",
      "CREATE INDEX IF NOT EXISTS jobs_submit_time ON jobs (submit_time)",
      "CREATE INDEX IF NOT EXISTS jobs_end_time ON jobs (end_time)",
      CreateTable(d, "nodes", kNodeColumns),
      CreateTable(d, "meta", kMetaColumns),
      CreateTable(d, "gpu_series", kGpuSeriesColumns),
      CreateTable(d, "audit", kAuditColumns),
      // Retention finds the last record before its cutoff (AuditLog::Prune).
      "CREATE INDEX IF NOT EXISTS audit_time ON audit (time)",
      "CREATE TABLE IF NOT EXISTS governance (kind TEXT NOT NULL, name TEXT NOT NULL, "
      "body TEXT NOT NULL, PRIMARY KEY (kind, name))",
  };
}

std::string CreateArraySpecsSql(Dialect d) {
  static constexpr Column kArraySpecColumns[] = {{"array_job_id", ColumnType::kInt},
                                                 {"spec", ColumnType::kBlob}};
  return CreateTable(d, "array_specs", kArraySpecColumns);
}

std::string UpsertJobSql(Dialect d) { return Upsert(d, "jobs", kJobColumns); }
std::string DeleteJobSql(Dialect d) { return "DELETE FROM jobs WHERE id = " + Placeholder(d, 1); }
std::string DeleteMetaSql(Dialect d) { return "DELETE FROM meta WHERE key = " + Placeholder(d, 1); }
std::string UpsertNodeSql(Dialect d) { return Upsert(d, "nodes", kNodeColumns); }
std::string PutMetaSql(Dialect d) {
  return "INSERT INTO meta (key, value) VALUES (" + Placeholder(d, 1) + ", " + Placeholder(d, 2) +
         ") ON CONFLICT (key) DO UPDATE SET value = excluded.value";
}
std::string SelectJobsSql() {
  return "SELECT " + ColumnList(kJobColumns) + " FROM jobs ORDER BY id";
}
std::string SelectJobRangeSql(Dialect d) {
  return "SELECT " + ColumnList(kJobColumns) + " FROM jobs WHERE id BETWEEN " + Placeholder(d, 1) +
         " AND " + Placeholder(d, 2) + " ORDER BY id";
}
std::string SelectNodesSql() {
  return "SELECT " + ColumnList(kNodeColumns) + " FROM nodes ORDER BY id";
}
std::string SelectMetaSql() { return "SELECT key, value FROM meta ORDER BY key"; }
std::string UpsertGpuSeriesSql(Dialect d) { return Upsert(d, "gpu_series", kGpuSeriesColumns); }
std::string DeleteGpuSeriesSql(Dialect d) {
  return "DELETE FROM gpu_series WHERE job_id = " + Placeholder(d, 1);
}
std::string SelectGpuSeriesSql(Dialect d) {
  return "SELECT job_id, body FROM gpu_series WHERE job_id = " + Placeholder(d, 1);
}
std::string SelectRunningGpuSeriesSql() {
  return "SELECT g.job_id, g.body FROM gpu_series g JOIN jobs j ON j.id = g.job_id "
         "WHERE j.state = 'RUNNING' ORDER BY g.job_id";
}

void WriteAuditRow(const AuditRecord& r, RowWriter& w) {
  w.Int(static_cast<int64_t>(r.seq));
  w.Int(ToMicros(r.time));
  w.Text(r.principal);
  w.Text(r.auth);
  w.Text(r.peer);
  w.Text(r.method);
  w.Text(r.route);
  w.Text(r.target);
  w.Text(r.params_sha256);
  w.Int(r.status);
  w.Text(r.error_code);
  w.Text(r.prev_hash);
  w.Text(r.hash);
}

Status ReadAuditRow(RowReader& r, AuditRecord* out) {
  out->seq = static_cast<uint64_t>(r.Int(kAuditSeq));
  out->time = FromMicros(r.Int(kAuditTime));
  out->principal = std::string(r.Text(kAuditPrincipal));
  out->auth = std::string(r.Text(kAuditAuth));
  out->peer = std::string(r.Text(kAuditPeer));
  out->method = std::string(r.Text(kAuditMethod));
  out->route = std::string(r.Text(kAuditRoute));
  out->target = std::string(r.Text(kAuditTarget));
  out->params_sha256 = std::string(r.Text(kAuditParams));
  out->status = static_cast<int>(r.Int(kAuditStatus));
  out->error_code = std::string(r.Text(kAuditErrorCode));
  out->prev_hash = std::string(r.Text(kAuditPrevHash));
  out->hash = std::string(r.Text(kAuditHash));
  if (!r.error.empty()) {
    return Internal("audit record " + std::to_string(out->seq) + ": " + r.error);
  }
  return {};
}

std::string UpsertAuditSql(Dialect d) { return Upsert(d, "audit", kAuditColumns); }
std::string DeleteAuditThroughSql(Dialect d) {
  return "DELETE FROM audit WHERE seq <= " + Placeholder(d, 1);
}
std::string UpsertGovernanceSql(Dialect d) {
  return "INSERT INTO governance (kind, name, body) VALUES (" + Placeholder(d, 1) + ", " +
         Placeholder(d, 2) + ", " + Placeholder(d, 3) +
         ") ON CONFLICT (kind, name) DO UPDATE SET body = excluded.body";
}
std::string DeleteGovernanceSql(Dialect d) {
  return "DELETE FROM governance WHERE kind = " + Placeholder(d, 1) +
         " AND name = " + Placeholder(d, 2);
}
std::string SelectGovernanceSql() { return "SELECT kind, name, body FROM governance"; }
void SortGovernance(std::vector<GovernanceRecord>* records) {
  std::sort(records->begin(), records->end(), [](const auto& a, const auto& b) {
    return std::tie(a.kind, a.name) < std::tie(b.kind, b.name);
  });
}

std::string UpdateSchemaVersionSql() {
  return "UPDATE corral_info SET value = '" + std::to_string(kSchemaVersion) +
         "' WHERE key = 'schema_version'";
}

std::vector<AuditRecord> FilterAudit(std::vector<AuditRecord> all, const AuditQuery& query) {
  std::erase_if(all, [&](const AuditRecord& r) {
    return r.seq <= query.after_seq || !MatchesAuditQuery(r, query);
  });
  if (query.limit > 0 && all.size() > query.limit) {
    if (query.oldest_first) {
      all.resize(query.limit);
    } else {
      all.erase(all.begin(), all.end() - static_cast<ptrdiff_t>(query.limit));
    }
  }
  return all;
}

BuiltQuery BuildAuditQuery(const AuditQuery& q, Dialect d) {
  BuiltQuery b;
  auto next = [&](SqlParam p) {
    b.params.push_back(std::move(p));
    return Placeholder(d, static_cast<int>(b.params.size()));
  };
  b.sql = "SELECT " + ColumnList(kAuditColumns) + " FROM audit WHERE seq > " +
          next(SqlParam::Int(static_cast<int64_t>(q.after_seq)));
  if (q.before != Timestamp{}) b.sql += " AND time < " + next(SqlParam::Int(ToMicros(q.before)));
  // The filters of MatchesAuditQuery, which anchors are not subject to.
  std::string filters;
  if (q.since != Timestamp{}) filters += " AND time >= " + next(SqlParam::Int(ToMicros(q.since)));
  if (!q.user.empty()) filters += " AND principal = " + next(SqlParam::Text(q.user));
  if (!q.job.empty()) {
    std::string job = next(SqlParam::Text("job:" + q.job));
    std::string step_prefix = next(SqlParam::Text("job:" + q.job + "."));
    filters += " AND (target = " + job + " OR substr(target, 1, length(" + step_prefix +
               ")) = " + step_prefix + ")";
  }
  if (!q.node.empty()) filters += " AND target = " + next(SqlParam::Text("node:" + q.node));
  std::string anchor = next(SqlParam::Text(kAuditAnchorMethod));
  if (q.include_anchor) {
    b.sql += " AND (method = " + anchor + " OR (method <> " + anchor + filters + "))";
  } else {
    b.sql += " AND method <> " + anchor + filters;
  }
  if (q.limit > 0) {
    b.sql += std::string(q.oldest_first ? " ORDER BY seq" : " ORDER BY seq DESC") + " LIMIT " +
             next(SqlParam::Int(static_cast<int64_t>(q.limit)));
  } else {
    b.sql += " ORDER BY seq";
  }
  return b;
}

BuiltQuery BuildJobQuery(const JobQuery& q, Dialect d) {
  BuiltQuery b;
  b.sql = "SELECT " + ColumnList(kJobColumns) + " FROM jobs";
  bool first = true;
  auto clause = [&](const std::string& text) {
    b.sql += first ? " WHERE " : " AND ";
    b.sql += text;
    first = false;
  };
  auto next = [&](SqlParam p) {
    b.params.push_back(std::move(p));
    return Placeholder(d, static_cast<int>(b.params.size()));
  };
  auto in_list = [&](std::string_view column, auto&& values, auto&& to_param) {
    if (values.empty()) return;
    std::string s = std::string(column) + " IN (";
    bool f = true;
    for (const auto& v : values) {
      if (!f) s += ", ";
      s += next(to_param(v));
      f = false;
    }
    clause(s + ")");
  };
  auto text = [](const std::string& v) { return SqlParam::Text(v); };
  in_list("user_name", q.users, text);
  in_list("account", q.accounts, text);
  in_list("partition_name", q.partitions, text);
  in_list("state", q.states,
          [](JobState s) { return SqlParam::Text(std::string(JobStateName(s))); });
  if (!q.ids.empty()) {
    // Integers inline, not parameters: `squeue -j`/`sacct -j` may name more jobs than a
    // statement may have parameters (PostgreSQL 65,535, SQLite 32,766).
    std::string s = "id IN (";
    for (size_t i = 0; i < q.ids.size(); ++i) {
      if (i > 0) s += ",";
      s += std::to_string(q.ids[i].value);
    }
    clause(s + ")");
  }
  if (q.start_after != Timestamp{}) {
    // Ended at or after the bound, or still active (not in a terminal state).
    std::string s = "(end_time >= " + next(SqlParam::Int(ToMicros(q.start_after)));
    const StateNames& states = States();
    for (int i = 0; i < states.count; ++i) {
      if (!IsTerminal(static_cast<JobState>(i))) {
        s += " OR state = " + next(SqlParam::Text(std::string(states.names[i])));
      }
    }
    clause(s + ")");
  }
  if (q.end_before != Timestamp{})
    clause("submit_time < " + next(SqlParam::Int(ToMicros(q.end_before))));
  b.sql += " ORDER BY id";
  if (q.limit > 0) b.sql += " LIMIT " + next(SqlParam::Int(static_cast<int64_t>(q.limit)));
  return b;
}

bool MatchesJobQuery(const Job& j, const JobQuery& q) {
  auto in = [](const auto& list, const auto& v) {
    if (list.empty()) return true;
    for (const auto& x : list) {
      if (x == v) return true;
    }
    return false;
  };
  if (!in(q.users, j.spec.user) || !in(q.accounts, j.spec.account) ||
      !in(q.partitions, j.partition) || !in(q.states, j.state) || !in(q.ids, j.id)) {
    return false;
  }
  if (q.start_after != Timestamp{} && IsTerminal(j.state) && j.end_time < q.start_after) {
    return false;
  }
  if (q.end_before != Timestamp{} && !(j.submit_time < q.end_before)) return false;
  return true;
}

}  // namespace corral::store::internal
