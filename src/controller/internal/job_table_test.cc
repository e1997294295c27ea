#include "controller/internal/job_table.h"

#include <random>
#include <variant>

#include <gtest/gtest.h>

namespace corral::controller::internal {
namespace {

const Timestamp kT0 = Timestamp(Seconds(1'700'000'000));

class JobTableTest : public ::testing::Test {
 protected:
  // A new pending job of `user` in partition "main", submitted at `submit`.
  JobId AddPending(const std::string& user = "alice", Timestamp submit = kT0) {
    JobEntry e;
    e.job.id = jobs_.AllocateId();
    e.job.state = JobState::kPending;
    e.job.spec.user = user;
    e.job.partition = "main";
    e.job.submit_time = submit;
    JobId id = e.job.id;
    jobs_.Add(std::move(e));
    return id;
  }

  std::vector<JobId> Ids(const std::vector<api::JobInfo>& infos) {
    std::vector<JobId> out;
    for (const auto& i : infos) out.push_back(i.job.id);
    return out;
  }

  // The ops written so far, of type `Op`.
  template <typename Op>
  std::vector<Op> Written() {
    std::vector<Op> out;
    for (const auto& op : out_.writes.ops()) {
      if (auto* o = std::get_if<Op>(&op)) out.push_back(*o);
    }
    return out;
  }

  Outputs out_;
  JobTable jobs_{out_};
};

TEST_F(JobTableTest, NewJobsGetConsecutiveIdsAndAreRecorded) {
  JobId a = AddPending();
  JobId b = AddPending();
  EXPECT_EQ(a, JobId(1));
  EXPECT_EQ(b, JobId(2));
  EXPECT_EQ(jobs_.next_id(), JobId(3));
  EXPECT_EQ(jobs_.pending(), (std::set<JobId>{a, b}));
  auto meta = Written<store::WriteBatch::PutMetaOp>();
  ASSERT_EQ(meta.size(), 2u);
  EXPECT_EQ(meta[1].key, "next_job_id");
  EXPECT_EQ(meta[1].value, "3");
  EXPECT_EQ(Written<store::WriteBatch::PutJobOp>().size(), 2u);
  Generation g = jobs_.AllocateGeneration();
  EXPECT_EQ(g, Generation(1));
  EXPECT_EQ(Written<store::WriteBatch::PutMetaOp>().back().value, "2");
  auto missing = jobs_.Get(JobId(99));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().message, "job 99: no such job");
}

TEST_F(JobTableTest, SetStateKeepsTheIndexesAndTheFinishedList) {
  JobId a = AddPending();
  JobEntry& e = *jobs_.Find(a);
  jobs_.SetState(e, JobState::kRunning);
  EXPECT_TRUE(jobs_.pending().empty());
  EXPECT_EQ(jobs_.running(), (std::set<JobId>{a}));
  jobs_.SetState(e, JobState::kCompleted);
  EXPECT_TRUE(jobs_.running().empty());
  EXPECT_EQ(e.job.state, JobState::kCompleted);
  // Requeued before anyone took the finished list: it leaves it again.
  jobs_.SetState(e, JobState::kPending);
  EXPECT_TRUE(jobs_.TakeFinished().empty());
  EXPECT_EQ(jobs_.pending(), (std::set<JobId>{a}));
  jobs_.SetState(e, JobState::kCancelled);
  EXPECT_EQ(jobs_.TakeFinished(), (std::vector<JobId>{a}));
  EXPECT_TRUE(jobs_.TakeFinished().empty());
  EXPECT_TRUE(jobs_.pending().empty());
}

TEST_F(JobTableTest, RestoreRebuildsIndexesCountersAndWhatLivesInMemory) {
  MonoTime now{Seconds(5)};
  Job pending;
  pending.id = JobId(4);
  pending.state = JobState::kPending;
  pending.spec.array = "0-9%2";
  Job running;
  running.id = JobId(9);
  running.state = JobState::kRunning;
  running.reason = std::string(kCancelRequested);
  running.allocation.generation = Generation(12);
  jobs_.Restore(pending, now);
  JobEntry& r = jobs_.Restore(running, now);
  EXPECT_EQ(jobs_.pending(), (std::set<JobId>{JobId(4)}));
  EXPECT_EQ(jobs_.running(), (std::set<JobId>{JobId(9)}));
  EXPECT_TRUE(r.cancel_requested);
  EXPECT_FALSE(r.launch_accepted);
  EXPECT_EQ(r.launch_sent, now);
  EXPECT_EQ(jobs_.Find(JobId(4))->array_max_running, 2u);
  EXPECT_EQ(jobs_.next_id(), JobId(10));
  EXPECT_EQ(jobs_.AllocateGeneration(), Generation(13));
  // Stored counters ahead of the jobs win; behind them they do not.
  jobs_.RestoreCounters({{"next_job_id", "40"}, {"next_generation", "3"}});
  EXPECT_EQ(jobs_.next_id(), JobId(40));
  EXPECT_EQ(jobs_.AllocateGeneration(), Generation(14));
}

TEST_F(JobTableTest, ListFiltersAndKeepsEndedJobsOnlyWhileRecent) {
  JobId a = AddPending("alice");
  JobId b = AddPending("bob");
  JobId c = AddPending("alice");
  JobEntry& ec = *jobs_.Find(c);
  jobs_.SetState(ec, JobState::kCompleted);
  ec.job.end_time = kT0 + Seconds(10);
  EXPECT_EQ(Ids(jobs_.List({.users = {"alice"}}, kT0)), (std::vector<JobId>{a, c}));
  EXPECT_EQ(Ids(jobs_.List({}, kT0 + Seconds(11))), (std::vector<JobId>{a, b}))
      << "ended before `recent`: left out";
  EXPECT_EQ(Ids(jobs_.List({.all = true}, kT0 + Seconds(11))), (std::vector<JobId>{a, b, c}));
  EXPECT_EQ(Ids(jobs_.List({.ids = {c}}, kT0 + Seconds(11))), (std::vector<JobId>{c}));
  EXPECT_EQ(Ids(jobs_.List({.states = {JobState::kCompleted}}, kT0 + Seconds(11))),
            (std::vector<JobId>{c}));
  EXPECT_EQ(Ids(jobs_.List({.states = {JobState::kPending}}, kT0)), (std::vector<JobId>{a, b}));
  EXPECT_EQ(Ids(jobs_.List({.partitions = {"other"}}, kT0)), (std::vector<JobId>{}));
}

TEST_F(JobTableTest, ArrayTaskFindsTheTaskWithTheSameIndex) {
  std::vector<JobId> tasks;
  for (uint32_t index : {3u, 5u, 7u}) {
    JobEntry e;
    e.job.id = jobs_.AllocateId();
    e.job.state = JobState::kPending;
    e.job.array_job_id = tasks.empty() ? e.job.id : tasks.front();
    e.job.array_task_id = index;
    tasks.push_back(e.job.id);
    jobs_.Add(std::move(e));
  }
  JobId plain = AddPending();
  // By the array's job id or by any of its tasks.
  EXPECT_EQ(jobs_.ArrayTask(tasks[0], 5), tasks[1]);
  EXPECT_EQ(jobs_.ArrayTask(tasks[2], 3), tasks[0]);
  EXPECT_EQ(jobs_.ArrayTask(tasks[0], 4), std::nullopt);
  EXPECT_EQ(jobs_.ArrayTask(plain, 0), std::nullopt);
  EXPECT_EQ(jobs_.ArrayTask(JobId(99), 3), std::nullopt);
  EXPECT_EQ(Ids(jobs_.List({.ids = {tasks[0]}, .expand_arrays = true}, kT0)), tasks);
}

// The counts /metrics shows, recounted from every job: what the table keeps up to date.
std::pair<ActiveJobCounts::JobMap, ActiveJobCounts::ReasonMap> Recounted(const JobTable& jobs) {
  std::pair<ActiveJobCounts::JobMap, ActiveJobCounts::ReasonMap> out;
  for (const auto& [id, e] : jobs.all()) {
    const Job& j = e.job;
    if (j.state != JobState::kPending && j.state != JobState::kRunning) continue;
    metrics::JobCounts& c = out.first[{j.state, j.partition, j.spec.account, j.spec.user}];
    c.jobs += 1;
    c.gpus += ActiveJobCounts::GpusOf(j);
    if (j.state == JobState::kPending) out.second[{j.partition, j.reason}] += 1;
  }
  return out;
}

bool SameCounts(const ActiveJobCounts::JobMap& a, const ActiveJobCounts::JobMap& b) {
  if (a.size() != b.size()) return false;
  for (auto i = a.begin(), k = b.begin(); i != a.end(); ++i, ++k) {
    if (i->first != k->first || i->second.jobs != k->second.jobs ||
        i->second.gpus != k->second.gpus) {
      return false;
    }
  }
  return true;
}

TEST_F(JobTableTest, MetricsCountsFollowEveryChange) {
  std::mt19937 rng(17);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  const std::string users[] = {"alice", "bob", "carol"};
  const std::string parts[] = {"gpu", "cpu"};
  const std::string reasons[] = {"Priority", "Resources", "AssocGrpGRES"};
  std::vector<JobId> ids;
  for (int step = 0; step < 2000; ++step) {
    uint32_t op = pick(6);
    if (op == 0 || ids.empty()) {
      JobEntry e;
      e.job.id = jobs_.AllocateId();
      e.job.state = JobState::kPending;
      e.job.spec.user = users[pick(3)];
      e.job.spec.account = "acct" + std::to_string(pick(2));
      e.job.spec.resources.gpus = pick(5);
      e.job.partition = parts[pick(2)];
      e.job.reason = "None";
      ids.push_back(e.job.id);
      jobs_.Add(std::move(e));
      continue;
    }
    JobEntry* e = jobs_.Find(ids[pick(static_cast<uint32_t>(ids.size()))]);
    ASSERT_NE(e, nullptr);
    JobState state = e->job.state;
    if (op == 1 && state == JobState::kPending) {  // the scheduler's reason, not recorded
      e->job.reason = reasons[pick(3)];
      jobs_.Recount(*e);
    } else if (op == 2 && state == JobState::kPending) {  // started: state first, then fields
      jobs_.SetState(*e, JobState::kRunning);
      e->job.reason = "None";
      NodeAllocation a;
      a.node_name = "n1";
      for (uint32_t g = 0; g < pick(4); ++g) a.gpus.insert(g);
      e->job.allocation.nodes = {a};
      jobs_.Put(*e);
    } else if (op == 3 && !IsTerminal(state)) {  // ended
      jobs_.SetState(*e, pick(2) ? JobState::kCompleted : JobState::kCancelled);
      jobs_.Put(*e);
    } else if (op == 4 && state == JobState::kRunning) {  // requeued
      jobs_.SetState(*e, JobState::kPending);
      e->job.reason = "BeginTime";
      e->job.allocation.nodes.clear();
      jobs_.Put(*e);
    } else if (op == 5 && state == JobState::kPending) {  // moved to another partition
      e->job.partition = parts[pick(2)];
      jobs_.Put(*e);
    }
    auto [want_jobs, want_reasons] = Recounted(jobs_);
    ASSERT_TRUE(SameCounts(jobs_.counts().jobs(), want_jobs)) << "after step " << step;
    ASSERT_EQ(jobs_.counts().pending_reasons(), want_reasons) << "after step " << step;
  }
}

}  // namespace
}  // namespace corral::controller::internal
