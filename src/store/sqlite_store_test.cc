// SqliteStore behaviour beyond the conformance suite: bad files and directories, damaged
// rows, WAL mode, and kill -9 in the middle of a stream of writes.
#include "store/sqlite_store.h"

#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "store/testing/populated_records.h"
#include "store/testing/temp_dir.h"

namespace corral::store {
namespace {

using testing::PopulatedJob;
using testing::TempDir;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// The integer a one-value query returns (-1 on error).
int64_t RawInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t v = -1;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
      sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    v = sqlite3_column_int64(stmt, 0);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return v;
}

TEST(SqliteStoreTest, FileThatIsNotADatabaseIsRefused) {
  TempDir dir;
  std::string path = dir.File("notes.txt");
  std::ofstream(path) << std::string(8192, 'x');
  auto s = SqliteStore::Open(path);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(s.error().message, "\"" + path + "\"")) << s.error().message;
  EXPECT_TRUE(Contains(s.error().message, "not a database")) << s.error().message;
  // The file is left as it was.
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(content, std::string(8192, 'x'));
}

TEST(SqliteStoreTest, MissingDirectoryIsUnavailable) {
  TempDir dir;
  std::string path = dir.File("no/such/dir/state.db");
  auto s = SqliteStore::Open(path);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(Contains(s.error().message, path)) << s.error().message;
  EXPECT_TRUE(Contains(s.error().message, "No such file or directory")) << s.error().message;
}

TEST(SqliteStoreTest, DirectoryInsteadOfFileIsAnError) {
  TempDir dir;
  auto s = SqliteStore::Open(dir.path());
  ASSERT_FALSE(s.has_value());
  EXPECT_TRUE(Contains(s.error().message, dir.path())) << s.error().message;
}

// Runs `fn` in a child process as an unprivileged user when this test runs as root (root
// ignores file permissions), and returns what the child wrote to the pipe.
template <typename Fn>
std::string RunUnprivileged(Fn&& fn) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    std::string out = fn();
    ssize_t n = write(fds[1], out.data(), out.size());
    _exit(n == static_cast<ssize_t>(out.size()) ? 0 : 4);
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child failed: " + out;
  return out;
}

std::string OpenResult(const std::string& path) {
  auto s = SqliteStore::Open(path);
  if (s.has_value()) return "OK";
  return std::string(ErrorCodeName(s.error().code)) + ": " + s.error().message;
}

TEST(SqliteStoreTest, ReadOnlyDirectoryIsAClearError) {
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  std::string ro = dir.File("ro");
  ASSERT_EQ(mkdir(ro.c_str(), 0555), 0);
  std::string path = ro + "/state.db";
  std::string got = RunUnprivileged([&] { return OpenResult(path); });
  EXPECT_TRUE(Contains(got, "\"" + path + "\"")) << got;
  EXPECT_TRUE(Contains(got, "Permission denied")) << got;
  EXPECT_TRUE(got.starts_with(ErrorCodeName(ErrorCode::kPermissionDenied))) << got;
}

TEST(SqliteStoreTest, ReadOnlyDatabaseFileIsAClearError) {
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  std::string path = dir.File("state.db");
  { ASSERT_TRUE(SqliteStore::Open(path).has_value()); }
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  std::string got = RunUnprivileged([&] { return OpenResult(path); });
  EXPECT_TRUE(Contains(got, "\"" + path + "\"")) << got;
  EXPECT_FALSE(got == "OK");
}

TEST(SqliteStoreTest, UsesWalMode) {
  TempDir dir;
  std::string path = dir.File("state.db");
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.has_value()) << store.error().message;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "wal");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST(SqliteStoreTest, DamagedColumnsNameTheRowAndColumn) {
  TempDir dir;
  std::string path = dir.File("state.db");
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.has_value());
  WriteBatch b;
  for (uint64_t id = 1; id <= 4; ++id) b.PutJob(PopulatedJob(id, 0));
  ASSERT_TRUE((*store)->Write(b).has_value());

  struct Case {
    std::string sql;
    std::string message;
  };
  const Case cases[] = {
      {"UPDATE jobs SET state = 'SLEEPING' WHERE id = 3",
       "job 3: column state: unknown job state \"SLEEPING\""},
      {"UPDATE jobs SET spec = 'abc' WHERE id = 2",
       "job 2: column spec: expected a blob, found text"},
      {"UPDATE jobs SET exit_code = 'abc' WHERE id = 4",
       "job 4: column exit_code: expected an integer, found text"},
      {"UPDATE jobs SET restart_count = -1 WHERE id = 1",
       "job 1: column restart_count: value -1 out of range"},
      {"UPDATE jobs SET allocation = x'0102' WHERE id = 2",
       "job 2: column allocation: invalid field key 2 (field 0, byte 2)"},
  };
  for (const Case& c : cases) {
    RawExec(path, "DELETE FROM jobs");
    ASSERT_TRUE((*store)->Write(b).has_value());
    RawExec(path, c.sql);
    auto loaded = (*store)->Load();
    ASSERT_FALSE(loaded.has_value()) << c.sql;
    EXPECT_EQ(loaded.error().code, ErrorCode::kInternal);
    EXPECT_EQ(loaded.error().message, "sqlite store \"" + path + "\": " + c.message);
  }
}

// A child writes batches in a loop and reports each acknowledged one through a pipe; the
// parent kill -9s it mid-stream. Every acknowledged batch must be there after reopening.
TEST(SqliteStoreTest, KillNineLosesNoAcknowledgedBatch) {
  TempDir dir;
  std::string path = dir.File("state.db");
  uint64_t next = 1;
  for (int round = 0; round < 4; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      auto store = SqliteStore::Open(path);
      if (!store.has_value()) _exit(2);
      for (uint64_t i = next;; ++i) {
        WriteBatch b;
        b.PutJob(PopulatedJob(i, static_cast<uint32_t>(i % 7)));
        b.PutJob(PopulatedJob(1'000'000 + i, 0));
        b.PutMeta("last_batch", std::to_string(i));
        if (!(*store)->Write(b).has_value()) _exit(3);
        if (write(fds[1], &i, sizeof i) != sizeof i) _exit(4);
      }
    }
    close(fds[1]);
    // Let a varying number of batches through, then kill without warning.
    const int kill_after = 15 + round * 23;
    uint64_t last_ack = 0;
    int acks = 0;
    uint64_t v;
    while (read(fds[0], &v, sizeof v) == sizeof v) {
      last_ack = v;
      if (++acks == kill_after) kill(pid, SIGKILL);
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
    ASSERT_GE(last_ack, next);

    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    auto state = (*store)->Load();
    ASSERT_TRUE(state.has_value()) << state.error().message;
    uint64_t last_batch = std::stoull(state->meta.at("last_batch"));
    // The batch in flight at the kill may have committed without being acknowledged.
    EXPECT_TRUE(last_batch == last_ack || last_batch == last_ack + 1)
        << "acknowledged " << last_ack << ", stored " << last_batch;
    ASSERT_EQ(state->jobs.size(), 2 * last_batch);
    for (uint64_t i = 1; i <= last_batch; ++i) {
      ASSERT_EQ(state->jobs[i - 1], PopulatedJob(i, static_cast<uint32_t>(i % 7))) << i;
    }
    next = last_batch + 1;
  }
}

TEST(SqliteStoreTest, InMemoryDatabaseWorks) {
  auto store = SqliteStore::Open(":memory:");
  ASSERT_TRUE(store.has_value()) << store.error().message;
  WriteBatch b;
  b.PutJob(PopulatedJob(1, 0));
  ASSERT_TRUE((*store)->Write(b).has_value());
  auto jobs = (*store)->QueryJobs({});
  ASSERT_TRUE(jobs.has_value());
  EXPECT_EQ(*jobs, std::vector<Job>{PopulatedJob(1, 0)});
}

// A 1,001-task array with a 64 KiB script stores its spec once: the database grows by about
// one spec, not 1,001 (64 MiB before tasks shared it). The spec goes with the last task.
TEST(SqliteStoreTest, ArrayStoresItsSpecOnce) {
  TempDir dir;
  std::string path = dir.File("state.db");
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.has_value()) << store.error().message;
  constexpr size_t kScript = 64 * 1024;
  Job base = PopulatedJob(1000, 0);
  base.spec.script = std::string(kScript, 'x');
  base.array_job_id = JobId(1000);
  WriteBatch b;
  std::vector<Job> tasks;
  for (uint32_t i = 0; i <= 1000; ++i) {
    Job& t = tasks.emplace_back(base);
    t.id = JobId(1000 + i);
    t.array_task_id = i;
    b.PutJob(t);
  }
  ASSERT_TRUE((*store)->Write(b).has_value());
  auto loaded = (*store)->Load();
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_EQ(loaded->jobs, tasks);
  // Loaded, the tasks share the script in memory too: one copy per reading thread, not 1,001.
  std::set<const std::string*> copies;
  for (const Job& t : loaded->jobs) copies.insert(&t.spec.script.get());
  EXPECT_LE(copies.size(), 2u);

  int64_t task_spec_bytes = RawInt(path, "SELECT sum(length(spec)) FROM jobs");
  int64_t shared_bytes = RawInt(path, "SELECT sum(length(spec)) FROM array_specs");
  RawExec(path, "PRAGMA wal_checkpoint(TRUNCATE)");
  int64_t file_bytes = RawInt(path,
                              "SELECT page_count * page_size FROM pragma_page_count, "
                              "pragma_page_size");
  std::printf(
      "1,001 tasks x 64 KiB script: spec bytes in jobs %lld, in array_specs %lld, "
      "database %lld bytes\n",
      static_cast<long long>(task_spec_bytes), static_cast<long long>(shared_bytes),
      static_cast<long long>(file_bytes));
  EXPECT_GT(shared_bytes, static_cast<int64_t>(kScript));
  EXPECT_LT(shared_bytes, static_cast<int64_t>(kScript + 4096));
  EXPECT_LT(task_spec_bytes, 1001 * 16);
  EXPECT_LT(file_bytes, static_cast<int64_t>(3 * kScript + 1001 * 1024));

  WriteBatch gone;
  for (const Job& t : tasks) gone.DeleteJob(t.id);
  ASSERT_TRUE((*store)->Write(gone).has_value());
  EXPECT_EQ(RawInt(path, "SELECT count(*) FROM array_specs"), 0);
}

}  // namespace
}  // namespace corral::store
