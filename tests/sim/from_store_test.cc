// `corral sim --from-store`: a controller's history read back as a trace and replayed.
#include "sim/from_store.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "sim/sim_command.h"
#include "store/store.h"

namespace corral::sim {
namespace {

namespace fs = std::filesystem;

const Timestamp kT0 = Timestamp(Seconds(1'717'200'000));

Job Finished(uint64_t id, int64_t submit_s, int64_t start_s, int64_t end_s, uint32_t gpus,
             std::string user) {
  Job j;
  j.id = JobId(id);
  j.spec.user = std::move(user);
  j.spec.account = "research";
  j.spec.resources.gpus_per_node = gpus;
  j.state = JobState::kCompleted;
  j.partition = "gpu";
  j.submit_time = kT0 + Seconds(submit_s);
  j.start_time = kT0 + Seconds(start_s);
  j.end_time = kT0 + Seconds(end_s);
  j.time_limit = Seconds(3600);
  j.allocation.generation = Generation(id);
  j.allocation.nodes.push_back(
      {.node = NodeId(1), .node_name = "node01", .cpus = 1, .gpus = GpuSet::FirstN(gpus)});
  return j;
}

class FromStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("corral_from_store_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
    fs::create_directories(dir_);
    url_ = "sqlite:" + (dir_ / "corral.db").string();
    auto store = store::OpenStore(url_);
    ASSERT_TRUE(store.has_value()) << store.error().message;
    store::WriteBatch b;
    Node n;
    n.id = NodeId(1);
    n.registered = true;
    n.inventory.name = "node01";
    n.inventory.cpus = 32;
    n.inventory.memory_mb = 256000;
    for (uint32_t g = 0; g < 4; ++g) n.inventory.gpus.push_back({.index = g, .model = "a100"});
    b.PutNode(n);
    b.PutJob(Finished(1, 0, 0, 600, 4, "alice"));     // ran at once
    b.PutJob(Finished(2, 10, 600, 900, 2, "bob"));    // waited for job 1
    b.PutJob(Finished(3, 20, 600, 700, 2, "carol"));  // waited for job 1
    Job pending;
    pending.id = JobId(4);
    pending.submit_time = kT0 + Seconds(30);
    b.PutJob(pending);  // never ran: not part of the history
    ASSERT_TRUE((*store)->Write(b).has_value());
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string url_;
};

TEST_F(FromStoreTest, ReadsFinishedJobsAndNodes) {
  auto h = LoadHistoryFromStore(url_, {});
  ASSERT_TRUE(h.has_value()) << h.error().message;
  EXPECT_EQ(h->origin, kT0);
  ASSERT_EQ(h->trace.jobs.size(), 3u);
  const TraceJob& bob = h->trace.jobs[1];
  EXPECT_EQ(bob.job_id, 2u);
  EXPECT_EQ(bob.submit, Seconds(10));
  EXPECT_EQ(bob.duration, Seconds(300));
  EXPECT_EQ(bob.num_gpus, 2u);
  EXPECT_EQ(bob.num_nodes, 1u);
  EXPECT_EQ(bob.user, "bob");
  EXPECT_EQ(bob.queue, "gpu");
  EXPECT_EQ(bob.account, "research");
  EXPECT_EQ(bob.time_limit, Seconds(3600));
  EXPECT_EQ(h->recorded[1], std::make_pair(kT0 + Seconds(600), kT0 + Seconds(900)));
  ASSERT_EQ(h->nodes.size(), 1u);
  EXPECT_EQ(h->nodes[0].name, "node01");
  EXPECT_EQ(h->nodes[0].usable_gpus.size(), 4u);

  auto windowed = LoadHistoryFromStore(url_, {.since = kT0 + Seconds(5)});
  ASSERT_TRUE(windowed.has_value());
  EXPECT_EQ(windowed->trace.jobs.size(), 2u);
  EXPECT_EQ(windowed->origin, kT0 + Seconds(10));
}

TEST_F(FromStoreTest, ReplaysTheHistoryNextToWhatHappened) {
  const std::string csv = (dir_ / "m.csv").string();
  const std::string trace = (dir_ / "t.csv").string();
  std::vector<std::string> args = {"sim",           "--from-store", url_,    "--policy",
                                   "fifo,backfill", "--quiet",      "--csv", csv,
                                   "--write-trace", trace};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ASSERT_EQ(RunSimCommand(static_cast<int>(argv.size()), argv.data()), 0);
  std::ifstream in(csv);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  // What happened: JCTs 600, 890, 680 s.
  EXPECT_NE(text.find("\nrecorded,3,0,0,0,0,723.3,"), std::string::npos) << text;
  EXPECT_NE(text.find("\nfifo,3,"), std::string::npos) << text;
  EXPECT_NE(text.find("\nbackfill,3,"), std::string::npos) << text;
  std::ifstream t(trace);
  std::string header;
  std::getline(t, header);
  EXPECT_EQ(header,
            "job_id,submit_time_s,duration_s,num_gpus,user,queue,time_limit_s,num_nodes,gpu_type,"
            "account");
}

TEST_F(FromStoreTest, EmptyWindowIsNotFound) {
  auto h = LoadHistoryFromStore(url_, {.since = kT0 + Seconds(1000)});
  ASSERT_FALSE(h.has_value());
  EXPECT_EQ(h.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace corral::sim
