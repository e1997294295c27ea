// The Store conformance suite: every implementation must pass the same tests (STYLE.md 2.8).
// Instances (store/testing/conformance_envs.h): Memory, SqliteFile, SqliteInMemory, and
// Postgres when CORRAL_TEST_PG_DSN holds a postgresql:// URL (tools/with_postgres.sh starts a
// throwaway server and sets it; ctest's `store_conformance_postgres` does that). The audit
// log's part is store_audit_conformance_test.cc.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "store/store.h"
#include "store/testing/conformance_envs.h"

namespace corral::store {
namespace {

using conformance::EnvNames;
using conformance::Envs;
using conformance::PopulatedJob;
using conformance::PopulatedNode;
using conformance::StoreConformanceTest;

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
  tasks[5].spec.environment.Mutable()["ONLY_FIVE"] = "1";
  tasks[0].spec.script = "#!/bin/sh\necho the first task changed\n";
  tasks[7].state = JobState::kRunning;  // a change of state only
  WriteBatch update;
  for (size_t i : {5, 0, 7}) update.PutJob(tasks[i]);
  this->WriteOk(update);

  std::vector<Job> loaded = this->LoadOk().jobs;
  EXPECT_EQ(loaded, tasks);
  // The tasks that kept the array's spec share its script in memory once loaded: one copy per
  // reading thread (SQLite reads the upper half of the ids on a second one), not one per task.
  std::set<const std::string*> copies;
  for (const Job& j : loaded) {
    if (j.spec == tasks[1].spec) copies.insert(&j.spec.script.get());
  }
  EXPECT_LE(copies.size(), 2u);
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

}  // namespace
}  // namespace corral::store
