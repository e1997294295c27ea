#include "sched/internal/partition_check.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sched/internal/test_pass.h"
#include "sched/testing/cluster_builder.h"

namespace corral::sched::internal {
namespace {

using testing::MakeJob;
using testing::MakeNode;

// Partitions "main" (every node), "ib" (n2, n3); n1 8 x h100, n2 8 x a100 with feature "ib" and
// two GPUs out of service, n3 4 x a100 with "ib".
struct World : TestWorld {
  World() {
    config.partitions.push_back(Partition{.name = "ib", .nodes = {"n2", "n3"}});
    NodeView n2 = MakeNode(2, "n2", 8, "a100");
    n2.features = {"ib"};
    n2.usable_gpus.erase(6);
    n2.usable_gpus.erase(7);
    NodeView n3 = MakeNode(3, "n3", 4, "a100");
    n3.features = {"ib"};
    snapshot.nodes = {MakeNode(1, "n1", 8), n2, n3};
  }
  void Add(PendingJobView j) { snapshot.pending.push_back(std::move(j)); }
  // The snapshot, with the config's partitions.
  ClusterSnapshot Snapshot() const {
    ClusterSnapshot s = snapshot;
    s.partitions = config.partitions;
    return s;
  }
};

// A pass over a world and its partition check.
struct Checked {
  explicit Checked(const World& w) : pass(w.config, w.Snapshot(), kNow) {}
  // The verdict of partition `p` on job `id`: "ok" or the blocker's code and detail.
  std::string Verdict(uint64_t id, uint32_t p) {
    std::vector<Blocker> out;
    if (check.Check(pass.Job(id), p, &out)) return out.empty() ? "ok" : "ok with blockers";
    return out.size() == 1 ? out[0].code + ": " + out[0].detail : "several blockers";
  }
  TestPass pass;
  PartitionCheck check{pass.snapshot, pass.nodes, pass.jobs, pass.shapes};
};

TEST(PartitionCheckTest, LimitsOfThePartitionInOrder) {
  World w;
  Partition& main = w.config.partitions[0];
  main.max_time = Minutes(30);
  main.max_nodes_per_job = 2;
  main.max_gpus_per_job = 8;
  w.Add(MakeJob(1, 1, 1, Minutes(60)));
  w.Add(MakeJob(2, 3, 1, Minutes(10)));
  w.Add(MakeJob(3, 2, 8, Minutes(10)));
  w.Add(MakeJob(4, 2, 4, Minutes(10)));
  Checked c(w);
  EXPECT_EQ(c.Verdict(1, 0),
            "PartitionTimeLimit: time limit 1:00:00 exceeds partition main max_time 30:00");
  EXPECT_EQ(c.Verdict(2, 0), "PartitionNodeLimit: job asks 3 nodes, partition main allows 2");
  EXPECT_EQ(c.Verdict(3, 0), "PartitionConfig: job asks 16 GPUs, partition main allows 8 per job");
  EXPECT_EQ(c.Verdict(4, 0), "ok");
}

TEST(PartitionCheckTest, DownAndAllowList) {
  World w;
  w.config.partitions[0].up = false;
  w.config.partitions[1].allowed_accounts = {"vip"};
  w.Add(MakeJob(1, 1, 1));
  Checked c(w);
  EXPECT_EQ(c.Verdict(1, 0), "PartitionDown: partition main is down");
  EXPECT_EQ(c.Verdict(1, 1), "InvalidAccount: account acct may not use partition ib");
}

TEST(PartitionCheckTest, CapableNodesCountGpusOutOfService) {
  World w;
  w.Add(MakeJob(1, 1, 8));  // n1, and n2 with its two broken GPUs back
  PendingJobView typed = MakeJob(2, 2, 5);
  typed.resources.gpu_type = "a100";  // only n2 has five a100s
  w.Add(typed);
  PendingJobView b200 = MakeJob(3, 1, 1);
  b200.resources.gpu_type = "b200";
  w.Add(b200);
  PendingJobView featured = MakeJob(4, 1, 1);
  featured.resources.constraint = "nvme";
  w.Add(featured);
  PendingJobView pinned = MakeJob(5, 1, 1);
  pinned.resources.nodelist = {"n1"};
  w.Add(pinned);
  Checked c(w);
  bool missing = true;
  EXPECT_EQ(c.check.CapableNodes(c.pass.Job(1), 0, c.pass.Job(1).base, &missing), 2u);
  EXPECT_FALSE(missing);
  EXPECT_EQ(c.check.CapableNodes(c.pass.Job(1), 1, c.pass.Job(1).base, &missing), 1u);
  EXPECT_EQ(c.Verdict(2, 0),
            "PartitionConfig: only 1 nodes of partition main can hold 5 GPUs of type a100, job "
            "needs 2");
  EXPECT_EQ(c.Verdict(3, 0), "BadConstraints: no node of partition main has GPUs of type b200");
  EXPECT_EQ(c.Verdict(4, 1), "BadConstraints: no node of partition ib has features nvme");
  EXPECT_EQ(c.Verdict(5, 1), "ReqNodeNotAvail: requested node n1 is not in partition ib");
  EXPECT_EQ(c.Verdict(5, 0), "ok");
}

TEST(PartitionCheckTest, CountsWithoutNodeFiltersAreKeptBetweenPasses) {
  World w;
  w.Add(MakeJob(1, 1, 4));
  PendingJobView filtered = MakeJob(2, 1, 4);
  filtered.resources.constraint = "ib";
  w.Add(filtered);
  Checked c(w);
  bool missing = false;
  EXPECT_EQ(c.check.CapableNodes(c.pass.Job(1), 0, c.pass.Job(1).base, &missing), 3u);
  EXPECT_EQ(c.check.CapableNodes(c.pass.Job(2), 0, c.pass.Job(2).base, &missing), 2u);
  // Only the unfiltered count is kept in the node cache.
  EXPECT_EQ(c.pass.cache.capable.size(), 1u);
}

}  // namespace
}  // namespace corral::sched::internal
