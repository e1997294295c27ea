// The audit log on a running cluster (issue 16 item 3, "Show"): a submit, a cancel and a
// refused cancel each leave a record that `corral audit` shows; `corral audit verify` passes;
// then the audit table is tampered with in the SQLite file itself — a row deleted, a row
// edited, two rows swapped, each in its own copy of the database — and `corral audit verify`
// run against a controller restarted on that copy exits 1 naming the first bad record.
// The same on PostgreSQL (`audit_integration_postgres` in ctest, through tools/with_postgres.sh):
// the controller's store is the throwaway server's database and the test tampers with psql.
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "api/audit_codec.h"
#include "api/http.h"
#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

namespace fs = std::filesystem;

// The records `corral audit --json` prints, one JSON object per line.
std::vector<AuditRecord> ParseLines(const std::string& out) {
  std::vector<AuditRecord> records;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    auto list = api::DecodeAuditRecordList("{\"records\":[" + line + "]}");
    EXPECT_TRUE(list.has_value()) << line;
    if (list.has_value()) records.insert(records.end(), list->begin(), list->end());
  }
  return records;
}

const AuditRecord* Find(const std::vector<AuditRecord>& records, const std::string& route,
                        int status) {
  for (const AuditRecord& r : records) {
    if (r.route == route && r.status == status) return &r;
  }
  return nullptr;
}

bool ExecSql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  bool ok = sqlite3_open(db_path.c_str(), &db) == SQLITE_OK &&
            sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
  if (!ok) ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
  sqlite3_close(db);
  return ok;
}

// Where the controller keeps its state, and how the test reaches behind it: save the
// pristine audit log, put it back, run SQL on the audit table (the controller is stopped).
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string ControllerToml() = 0;
  virtual void Save(TestCluster& cluster) = 0;
  virtual void Restore(TestCluster& cluster) = 0;
  virtual bool Exec(TestCluster& cluster, const std::string& sql) = 0;
};

class SqliteBackend final : public Backend {
 public:
  std::string ControllerToml() override { return ""; }
  void Save(TestCluster& cluster) override {
    ASSERT_TRUE(fs::exists(Db(cluster)));
    fs::copy_file(Db(cluster), cluster.dir() + "/pristine.db",
                  fs::copy_options::overwrite_existing);
  }
  void Restore(TestCluster& cluster) override {
    for (const char* suffix : {"-wal", "-shm"}) fs::remove(Db(cluster) + suffix);
    fs::copy_file(cluster.dir() + "/pristine.db", Db(cluster),
                  fs::copy_options::overwrite_existing);
  }
  bool Exec(TestCluster& cluster, const std::string& sql) override {
    return ExecSql(Db(cluster), sql);
  }

 private:
  static std::string Db(TestCluster& cluster) { return cluster.dir() + "/controller/corral.db"; }
};

// The database of CORRAL_TEST_PG_DSN (tools/with_postgres.sh), reached with psql.
class PostgresBackend final : public Backend {
 public:
  explicit PostgresBackend(std::string dsn) : dsn_(std::move(dsn)) {}
  std::string ControllerToml() override { return "[store]\nurl = \"" + dsn_ + "\"\n"; }
  void Save(TestCluster& cluster) override {
    ASSERT_TRUE(Exec(cluster,
                     "DROP TABLE IF EXISTS audit_pristine, meta_pristine; "
                     "CREATE TABLE audit_pristine AS SELECT * FROM audit; "
                     "CREATE TABLE meta_pristine AS SELECT * FROM meta"));
  }
  void Restore(TestCluster& cluster) override {
    ASSERT_TRUE(Exec(cluster,
                     "DELETE FROM audit; INSERT INTO audit SELECT * FROM audit_pristine; "
                     "DELETE FROM meta; INSERT INTO meta SELECT * FROM meta_pristine"));
  }
  bool Exec(TestCluster& cluster, const std::string& sql) override {
    std::string file = cluster.dir() + "/tamper.sql";
    std::ofstream(file) << "SET client_min_messages = warning;\n" << sql << ";\n";
    std::string command =
        "psql -q -v ON_ERROR_STOP=1 '" + dsn_ + "' -f '" + file + "' >/dev/null";
    bool ok = std::system(command.c_str()) == 0;
    if (!ok) ADD_FAILURE() << command << ": " << sql;
    return ok;
  }

 private:
  std::string dsn_;
};

void SubmitCancelRefuseThenTamper(Backend& backend) {
  TestCluster cluster({.nodes = 1, .gpus_per_node = 1,
                       .extra_controller_toml = backend.ControllerToml()});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();

  // A held job: submitted, then cancelled.
  JobSpec spec = cluster.ShellJob("sleep 60");
  spec.hold = true;
  auto submitted = cluster.Submit(spec);
  ASSERT_TRUE(submitted.has_value()) << submitted.error().message;
  std::string job = submitted->job_id.ToString();
  // Another user may not cancel it: 403.
  auto http = api::HttpClient::Create(cluster.url(), cluster.client_options());
  ASSERT_TRUE(http.has_value());
  auto refused = (*http)->Send("POST", "/api/v1/jobs/" + job + "/cancel", "",
                               {{"authorization", cluster.Token("mallory")}}, false);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 403) << refused->body;
  CliResult cancel = cluster.Cli({"cancel", job});
  ASSERT_EQ(cancel.status, 0) << cancel.err;

  CliResult listed = cluster.Cli({"audit", "--json", "--job", job});
  ASSERT_EQ(listed.status, 0) << listed.err;
  std::vector<AuditRecord> records = ParseLines(listed.out);
  const AuditRecord* submit = Find(records, "/api/v1/jobs", 201);
  const AuditRecord* denied = Find(records, "/api/v1/jobs/{id}/cancel", 403);
  const AuditRecord* cancelled = Find(records, "/api/v1/jobs/{id}/cancel", 200);
  ASSERT_TRUE(submit && denied && cancelled) << listed.out;
  EXPECT_EQ(submit->target, "job:" + job);
  EXPECT_EQ(submit->auth, "jwt");
  EXPECT_EQ(denied->principal, "mallory");
  EXPECT_EQ(denied->error_code, "PERMISSION_DENIED");
  EXPECT_TRUE(denied->peer.starts_with("127.0.0.1:")) << denied->peer;
  EXPECT_EQ(listed.out.find("sleep 60"), std::string::npos) << "the script is not recorded";
  CliResult table = cluster.Cli({"audit", "--user", "mallory"});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("403 PERMISSION_DENIED"), std::string::npos) << table.out;

  CliResult verified = cluster.Cli({"audit", "verify"});
  EXPECT_EQ(verified.status, 0) << verified.out << verified.err;
  EXPECT_NE(verified.out.find("verified"), std::string::npos) << verified.out;

  // The pristine log, saved with the controller stopped cleanly.
  cluster.KillController(SIGTERM);
  backend.Save(cluster);
  std::string s = std::to_string(submit->seq), d = std::to_string(denied->seq),
              c = std::to_string(cancelled->seq);
  struct Tamper {
    std::string sql;
    std::string problem;
    uint64_t first_bad;
  };
  std::vector<Tamper> tampers = {
      {"DELETE FROM audit WHERE seq = " + d, "missing", denied->seq},
      {"UPDATE audit SET status = 200, error_code = '' WHERE seq = " + d, "changed", denied->seq},
      {"UPDATE audit SET seq = -1 WHERE seq = " + s + "; UPDATE audit SET seq = " + s +
           " WHERE seq = " + c + "; UPDATE audit SET seq = " + c + " WHERE seq = -1",
       "reordered", submit->seq},
  };
  for (const Tamper& t : tampers) {
    SCOPED_TRACE(t.sql);
    backend.Restore(cluster);
    ASSERT_TRUE(backend.Exec(cluster, t.sql));
    ASSERT_TRUE(cluster.StartController().has_value()) << cluster.ControllerLog();
    CliResult v = cluster.Cli({"audit", "verify"});
    EXPECT_EQ(v.status, 1) << v.out << v.err;
    EXPECT_NE(v.out.find("seq " + std::to_string(t.first_bad) + " " + t.problem),
              std::string::npos)
        << v.out << v.err;
    CliResult j = cluster.Cli({"audit", "verify", "--json"});
    auto verdict = api::DecodeAuditVerdict(j.out);
    ASSERT_TRUE(verdict.has_value()) << j.out;
    EXPECT_FALSE(verdict->ok);
    EXPECT_EQ(verdict->problem, t.problem);
    cluster.KillController(SIGTERM);
  }
}

TEST(AuditIntegrationTest, SqliteRecordsAreShownAndTamperingInTheFileIsDetected) {
  SqliteBackend backend;
  SubmitCancelRefuseThenTamper(backend);
}

// Run by ctest's `audit_integration_postgres` (tools/with_postgres.sh sets the DSN).
TEST(AuditIntegrationTest, PostgresRecordsAreShownAndTamperingInTheDatabaseIsDetected) {
  const char* dsn = std::getenv("CORRAL_TEST_PG_DSN");
  if (dsn == nullptr || *dsn == '\0') GTEST_SKIP() << "CORRAL_TEST_PG_DSN is not set";
  PostgresBackend backend(dsn);
  SubmitCancelRefuseThenTamper(backend);
}

}  // namespace
}  // namespace corral::testing
