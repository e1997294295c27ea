// Store benchmarks: Write of batches of 1 and 100 job records (each Write is one transaction
// with its fsync; on PostgreSQL also fenced by the leader lease, issue 11), and a controller
// restart: open + Load of a store holding 100,000 realistic jobs (a 300-byte script, 5
// environment variables, a 2-node allocation) and 500 nodes. DESIGN.md's target for the
// restart is under a second.
//
//   build-store/bench/store_bench                          SQLite (temp dir under $TMPDIR)
//   tools/with_postgres.sh build-store/bench/store_bench   also PostgreSQL, on a throwaway
//                                                          server (writes to its database)
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "store/postgres_store.h"
#include "store/sqlite_store.h"
#include "store/testing/populated_records.h"
#include "store/testing/temp_dir.h"

namespace corral::store {
namespace {

using testing::PopulatedNode;
using testing::RealisticJob;
using testing::TempDir;

constexpr uint64_t kWriteIdBase = 1'000'000'000;  // ids of the Write benchmarks' jobs

std::string PgUrl() {
  const char* dsn = std::getenv("CORRAL_TEST_PG_DSN");
  return dsn ? dsn : "";
}

// Fills `store` with jobs 1..n and 500 nodes, in batches of 1,000.
bool Populate(Store& store, uint64_t n) {
  for (uint64_t first = 1; first <= n; first += 1000) {
    WriteBatch b;
    for (uint64_t id = first; id < first + 1000 && id <= n; ++id) b.PutJob(RealisticJob(id));
    if (first == 1) {
      for (uint32_t node = 1; node <= 500; ++node) b.PutNode(PopulatedNode(node));
    }
    b.PutMeta("next_job_id", std::to_string(std::min(first + 1000, n + 1)));
    if (!store.Write(b).has_value()) return false;
  }
  return true;
}

void RunWrite(benchmark::State& state, Store& store) {
  const auto per_batch = static_cast<uint64_t>(state.range(0));
  uint64_t id = kWriteIdBase;
  for (auto _ : state) {
    state.PauseTiming();
    WriteBatch b;
    for (uint64_t i = 0; i < per_batch; ++i) b.PutJob(RealisticJob(id++));
    state.ResumeTiming();
    Status s = store.Write(b);
    if (!s.has_value()) {
      state.SkipWithError(s.error().message.c_str());
      break;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * per_batch));
  // Leave the store as it was (the Load benchmark may share it).
  WriteBatch cleanup;
  for (uint64_t i = kWriteIdBase; i < id; ++i) cleanup.DeleteJob(JobId(i));
  (void)store.Write(cleanup);
}

void BM_SqliteWrite(benchmark::State& state) {
  TempDir dir;
  auto store = SqliteStore::Open(dir.File("state.db"));
  if (!store.has_value()) {
    state.SkipWithError(store.error().message.c_str());
    return;
  }
  RunWrite(state, **store);
}
BENCHMARK(BM_SqliteWrite)->Arg(1)->Arg(100)->UseRealTime();

// One database of `range(0)` jobs, built on first use and kept for the process.
const std::string& SqliteDatabase(uint64_t jobs) {
  static TempDir* dir = new TempDir();  // leaked on purpose: lives as long as the process
  static std::string path;
  if (path.empty()) {
    std::string p = dir->File("state.db");
    auto store = SqliteStore::Open(p);
    if (store.has_value() && Populate(**store, jobs)) path = p;
  }
  return path;
}

// Drops the file's pages from the page cache (a restart after a reboot, not after a crash).
void DropFromPageCache(const std::string& path) {
  for (const char* suffix : {"", "-wal"}) {
    int fd = open((path + suffix).c_str(), O_RDONLY);
    if (fd < 0) continue;
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
}

void SqliteLoad(benchmark::State& state, bool cold) {
  const auto n = static_cast<uint64_t>(state.range(0));
  const std::string& path = SqliteDatabase(n);
  if (path.empty()) {
    state.SkipWithError("cannot build the database");
    return;
  }
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      DropFromPageCache(path);
      state.ResumeTiming();
    }
    auto store = SqliteStore::Open(path);
    if (!store.has_value()) {
      state.SkipWithError(store.error().message.c_str());
      break;
    }
    auto loaded = (*store)->Load();
    if (!loaded.has_value() || loaded->jobs.size() != n) {
      state.SkipWithError(loaded.has_value() ? "wrong job count" : loaded.error().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(loaded->jobs.data());
    state.PauseTiming();  // freeing 100,000 records is not part of a restart
    *loaded = StoredState{};
    store->reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

// Open + Load, database in the page cache (the usual controller restart).
void BM_SqliteLoad(benchmark::State& state) { SqliteLoad(state, /*cold=*/false); }
BENCHMARK(BM_SqliteLoad)->Arg(100'000)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3);

// Open + Load with the file's pages dropped from the page cache first.
void BM_SqliteLoadCold(benchmark::State& state) { SqliteLoad(state, /*cold=*/true); }
BENCHMARK(BM_SqliteLoadCold)
    ->Arg(100'000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(3);

std::unique_ptr<Store> OpenPostgres(benchmark::State& state) {
  if (PgUrl().empty()) {
    state.SkipWithError("CORRAL_TEST_PG_DSN is not set (run under tools/with_postgres.sh)");
    return nullptr;
  }
  auto store = PostgresStore::Open(PgUrl());
  if (!store.has_value()) {
    state.SkipWithError(store.error().message.c_str());
    return nullptr;
  }
  return std::move(*store);
}

void BM_PostgresWrite(benchmark::State& state) {
  std::unique_ptr<Store> store = OpenPostgres(state);
  if (store) RunWrite(state, *store);
}
BENCHMARK(BM_PostgresWrite)->Arg(1)->Arg(100)->UseRealTime();

// The same with the leader lease held and every write fenced (issue 11: `CALL
// corral_fence(epoch)` in the BEGIN's round trip): compare with BM_PostgresWrite of the run.
void BM_PostgresWriteFenced(benchmark::State& state) {
  std::unique_ptr<Store> store = OpenPostgres(state);
  if (!store) return;
  auto lease = store->TryAcquireLease("store_bench", "bench", Seconds(600));
  if (!lease.has_value() || !lease->held) {
    state.SkipWithError(lease.has_value() ? "lease held by another" : lease.error().message.c_str());
    return;
  }
  store->SetFence(lease->epoch);
  RunWrite(state, *store);
}
BENCHMARK(BM_PostgresWriteFenced)->Arg(1)->Arg(100)->UseRealTime();

void BM_PostgresLoad(benchmark::State& state) {
  std::unique_ptr<Store> store = OpenPostgres(state);
  if (!store) return;
  const auto n = static_cast<uint64_t>(state.range(0));
  static bool populated = false;
  if (!populated && !(populated = Populate(*store, n))) {
    state.SkipWithError("cannot populate the database");
    return;
  }
  store.reset();
  for (auto _ : state) {
    auto s = PostgresStore::Open(PgUrl());
    if (!s.has_value()) {
      state.SkipWithError(s.error().message.c_str());
      break;
    }
    auto loaded = (*s)->Load();
    if (!loaded.has_value() || loaded->jobs.size() != n) {
      state.SkipWithError(loaded.has_value() ? "wrong job count" : loaded.error().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(loaded->jobs.data());
    state.PauseTiming();
    *loaded = StoredState{};
    s->reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}
BENCHMARK(BM_PostgresLoad)->Arg(100'000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace corral::store

BENCHMARK_MAIN();
