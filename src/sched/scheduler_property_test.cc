// Property tests of the policy engine over random clusters and workloads (fixed seeds): no GPU
// given twice, no node over capacity, gang jobs all or nothing, placements that match the
// request, limits kept, a backfilled job never overlapping a reservation, and the same input
// giving the same plan.
#include <cstdio>
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "sched/policy_factory.h"
#include "sched/scheduler.h"
#include "sched/testing/cluster_builder.h"

namespace corral::sched {
namespace {

const Timestamp kNow = FromMicros(int64_t{1'800'000'000} * 1'000'000);

struct World {
  SchedulerConfig config;
  ClusterSnapshot snapshot;
};

World RandomWorld(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  World w;
  SchedulerConfig& c = w.config;
  c = DefaultSchedulerConfig();
  c.priority = PriorityConfig{.weight_age = static_cast<uint32_t>(pick(0, 1000)),
                              .weight_fairshare = static_cast<uint32_t>(pick(0, 1000)),
                              .weight_job_size = static_cast<uint32_t>(pick(0, 100)),
                              .weight_qos = static_cast<uint32_t>(pick(0, 2000))};
  c.backfill.reservations = static_cast<uint32_t>(pick(0, 6));
  c.qos = {
      QosConfig{.name = "normal"},
      QosConfig{.name = "high", .priority = 10, .preempt = {"scavenger"}},
      QosConfig{.name = "scavenger", .grace_time = Minutes(static_cast<int64_t>(pick(0, 10)))}};
  c.accounts = {AccountConfig{.name = "a", .guaranteed_gpus = static_cast<uint32_t>(pick(0, 16))},
                AccountConfig{.name = "b"}, AccountConfig{.name = "b1", .parent = "b"}};
  if (pick(0, 1)) c.accounts[1].limits.max_gpus = static_cast<uint32_t>(pick(4, 40));
  if (pick(0, 1)) c.qos[0].per_user.max_running_jobs = static_cast<uint32_t>(pick(1, 6));

  const uint32_t n_nodes = static_cast<uint32_t>(pick(3, 40));
  std::vector<std::string> names;
  for (uint32_t i = 0; i < n_nodes; ++i) {
    uint32_t gpus = pick(0, 3) == 0 ? 4 : 8;
    std::string model = pick(0, 2) == 0 ? "a100" : "h100";
    NodeView n = testing::MakeNode(i + 1, "n" + std::to_string(i + 1), gpus, model, 32, 256 * 1024,
                                   /*nvlink=*/pick(0, 1) == 0, /*numa=*/2);
    if (pick(0, 3) == 0) n.features = {"ib"};
    if (pick(0, 15) == 0) n.schedulable = false;
    if (pick(0, 10) == 0) n.usable_gpus.erase(static_cast<uint32_t>(pick(0, gpus - 1)));
    names.push_back(n.name);
    w.snapshot.nodes.push_back(std::move(n));
  }
  // Partitions: everything, and a random subset with a higher tier.
  Partition all{.name = "main", .is_default = true};
  Partition fast{.name = "fast", .priority_tier = 2};
  for (const std::string& n : names) {
    if (pick(0, 2) == 0) fast.nodes.push_back(n);
  }
  if (fast.nodes.empty()) fast.nodes.push_back(names[0]);
  c.partitions = {all, fast};
  // Topology: leaves of 4 nodes under one spine, sometimes.
  if (pick(0, 1)) {
    SwitchConfig spine{.name = "spine"};
    for (uint32_t l = 0; l * 4 < n_nodes; ++l) {
      SwitchConfig leaf{.name = "leaf" + std::to_string(l)};
      for (uint32_t i = l * 4; i < std::min(n_nodes, l * 4 + 4); ++i)
        leaf.nodes.push_back(names[i]);
      spine.switches.push_back(leaf.name);
      c.switches.push_back(leaf);
    }
    c.switches.push_back(spine);
  }
  // A maintenance window on a few nodes, sometimes.
  if (pick(0, 2) == 0) {
    Reservation r{.name = "maint",
                  .start = kNow + Minutes(static_cast<int64_t>(pick(0, 300))),
                  .users = {"u1"}};
    r.end = r.start + Minutes(static_cast<int64_t>(pick(30, 600)));
    for (const std::string& n : names) {
      if (pick(0, 4) == 0) r.nodes.push_back(n);
    }
    if (!r.nodes.empty()) c.reservations.push_back(r);
  }
  w.snapshot.partitions = c.partitions;

  // Running jobs on random free GPUs.
  const char* accounts[] = {"a", "b", "b1"};
  const char* qos[] = {"normal", "high", "scavenger"};
  uint64_t next_running = 100000;
  for (NodeView& n : w.snapshot.nodes) {
    uint32_t jobs = static_cast<uint32_t>(pick(0, 3));
    for (uint32_t k = 0; k < jobs; ++k) {
      GpuSet free = n.usable_gpus - n.used_gpus;
      uint32_t want = static_cast<uint32_t>(pick(1, 4));
      GpuSet take;
      for (uint32_t g : free.ToVector()) {
        if (take.size() < want) take.insert(g);
      }
      if (take.empty()) break;
      Timestamp start = kNow - Minutes(static_cast<int64_t>(pick(1, 600)));
      Timestamp end =
          pick(0, 20) == 0 ? Timestamp::max() : kNow + Minutes(static_cast<int64_t>(pick(1, 600)));
      RunningJobView r =
          testing::Occupy(&n, next_running++, take, start, end, static_cast<uint32_t>(pick(1, 8)),
                          static_cast<uint64_t>(pick(1, 32)) * 1024);
      r.account = accounts[pick(0, 2)];
      r.user = "u" + std::to_string(pick(1, 4));
      r.qos = qos[pick(0, 2)];
      r.requeue_allowed = pick(0, 3) != 0;
      if (pick(0, 3) == 0) r.last_checkpoint = start + Minutes(1);
      w.snapshot.running.push_back(std::move(r));
    }
  }
  // Pending jobs.
  const uint32_t n_pending = static_cast<uint32_t>(pick(1, 80));
  for (uint32_t k = 0; k < n_pending; ++k) {
    uint32_t nodes = pick(0, 5) == 0 ? static_cast<uint32_t>(pick(2, 4)) : 1;
    uint32_t gpus = static_cast<uint32_t>(pick(0, 8));
    Duration limit = pick(0, 15) == 0 ? kUnlimited : Minutes(static_cast<int64_t>(pick(5, 600)));
    PendingJobView j =
        testing::MakeJob(k + 1, nodes, gpus, limit, pick(0, 4) == 0 ? "fast" : "main");
    if (pick(0, 5) == 0) j.partitions = {"fast", "main"};
    j.account = accounts[pick(0, 2)];
    j.user = "u" + std::to_string(pick(1, 4));
    j.qos = qos[pick(0, 2)];
    j.resources.cpus_per_task = static_cast<uint32_t>(pick(1, 8));
    j.resources.mem_per_node_mb = static_cast<uint64_t>(pick(1, 64)) * 1024;
    if (pick(0, 4) == 0) j.resources.gpu_type = pick(0, 1) ? "a100" : "h100";
    if (pick(0, 8) == 0) j.resources.constraint = "ib";
    if (pick(0, 12) == 0) j.resources.exclusive = true;
    if (pick(0, 25) == 0) j.resources.mem_per_node_mb = kWholeNodeMemory;  // --mem=0
    if (pick(0, 12) == 0) j.resources.exclude = {names[pick(0, names.size() - 1)]};
    if (pick(0, 20) == 0) j.resources.nodelist = {names[pick(0, names.size() - 1)]};
    if (pick(0, 20) == 0) j.reservation = "maint";
    j.submit_time = kNow - Minutes(static_cast<int64_t>(pick(0, 3000)));
    j.nice = static_cast<int32_t>(pick(0, 10)) - 5;
    w.snapshot.pending.push_back(std::move(j));
  }
  w.snapshot.usage = {
      AssociationUsage{
          .account = "a", .user = "u1", .decayed_usage = static_cast<double>(pick(0, 1000))},
      AssociationUsage{
          .account = "b1", .user = "u2", .decayed_usage = static_cast<double>(pick(0, 1000))}};
  return w;
}

// When does a running job let go of its resources, given the plan's preemptions?
std::map<JobId, Timestamp> RunningEnds(const World& w, const Plan& p) {
  std::map<JobId, Timestamp> end;
  for (const RunningJobView& r : w.snapshot.running) end[r.id] = r.expected_end;
  for (const PreemptionOrder& o : p.preemption_orders) {
    Timestamp deadline = kNow + o.grace_time;
    end[o.job] = std::min(end[o.job], deadline);
  }
  return end;
}

void CheckPlan(const World& w, const Plan& p, uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ClusterSnapshot& s = w.snapshot;
  std::map<std::string, const NodeView*> nodes;
  for (const NodeView& n : s.nodes) nodes[n.name] = &n;
  std::map<JobId, const PendingJobView*> pending;
  for (const PendingJobView& j : s.pending) pending[j.id] = &j;

  // Each pending job either starts or has one reason, never both.
  std::set<JobId> seen;
  for (const Placement& pl : p.starts) EXPECT_TRUE(seen.insert(pl.job).second) << "started twice";
  for (const PendingReason& r : p.pending) {
    EXPECT_TRUE(seen.insert(r.job).second) << "job " << r.job.value << " both started and pending";
    EXPECT_FALSE(r.code.empty());
    if (!r.examined) continue;
    ASSERT_FALSE(r.blockers.empty());
    EXPECT_EQ(r.blockers[0].code, r.code);
    EXPECT_EQ(r.blockers[0].detail, r.detail);
  }
  EXPECT_EQ(seen.size(), s.pending.size());

  // Resources: running use plus the starts never exceed a node; no GPU is given twice.
  struct Use {
    uint32_t cpus = 0;
    uint64_t mem = 0;
    GpuSet gpus;
  };
  std::map<std::string, Use> use;
  for (const NodeView& n : s.nodes) use[n.name] = {n.used_cpus, n.used_mem_mb, n.used_gpus};
  std::map<std::string, uint32_t> account_gpus;
  for (const Placement& pl : p.starts) {
    const PendingJobView& j = *pending.at(pl.job);
    const ResourceRequest& r = j.resources;
    // Gang: exactly the nodes asked for, all distinct, each with the per-node share.
    ASSERT_EQ(pl.nodes.size(), std::max<uint32_t>(1, r.nodes));
    std::set<std::string> distinct;
    PerNodeDemand d = ComputePerNodeDemand(r);
    for (const NodeAllocation& a : pl.nodes) {
      EXPECT_TRUE(distinct.insert(a.node_name).second);
      const NodeView& n = *nodes.at(a.node_name);
      EXPECT_TRUE(n.schedulable);
      EXPECT_EQ(a.node, n.id);
      Use& u = use[a.node_name];
      EXPECT_FALSE(u.gpus.Intersects(a.gpus)) << "GPU given twice on " << a.node_name;
      EXPECT_EQ(a.gpus - n.usable_gpus, GpuSet()) << "unusable GPU given";
      u.gpus = u.gpus | a.gpus;
      u.cpus += a.cpus;
      u.mem += a.mem_mb;
      EXPECT_LE(u.cpus, n.cpus) << a.node_name;
      EXPECT_LE(u.mem, n.mem_mb) << a.node_name;
      if (!r.exclusive) {
        EXPECT_EQ(a.gpus.size(), d.gpus);
        EXPECT_EQ(a.cpus, d.cpus);
      }
      for (uint32_t g : a.gpus.ToVector()) {
        if (!r.gpu_type.empty()) {
          EXPECT_EQ(n.gpus[g].model, r.gpu_type);
        }
      }
      if (!r.constraint.empty()) {
        EXPECT_NE(std::find(n.features.begin(), n.features.end(), "ib"), n.features.end());
      }
      for (const std::string& x : r.exclude) EXPECT_NE(x, a.node_name);
      // The partition holds the node.
      const Partition* part = nullptr;
      for (const Partition& q : s.partitions) {
        if (q.name == pl.partition) part = &q;
      }
      ASSERT_NE(part, nullptr);
      EXPECT_TRUE(part->nodes.empty() || std::find(part->nodes.begin(), part->nodes.end(),
                                                   a.node_name) != part->nodes.end());
    }
    for (const std::string& want : r.nodelist) EXPECT_TRUE(distinct.count(want)) << "-w ignored";
    EXPECT_NE(std::find(j.partitions.begin(), j.partitions.end(), pl.partition),
              j.partitions.end());
    account_gpus[j.account] += TotalGpus(r);
  }
  // Account b (with b1 under it) keeps its GPU limit if it kept it before.
  if (w.config.accounts[1].limits.max_gpus) {
    uint32_t before = 0;
    for (const RunningJobView& r : s.running) {
      if (r.account == "b" || r.account == "b1") {
        for (const NodeAllocation& a : r.allocation.nodes) before += a.gpus.size();
      }
    }
    if (before <= *w.config.accounts[1].limits.max_gpus) {
      EXPECT_LE(before + account_gpus["b"] + account_gpus["b1"],
                *w.config.accounts[1].limits.max_gpus);
    }
  }

  // Backfill: at the start of every reservation, what still runs then plus every reservation
  // active then fits each node, with no GPU shared.
  std::map<JobId, Timestamp> ends = RunningEnds(w, p);
  for (const ReservedStart& rs : p.reservations) {
    const Timestamp t = rs.start;
    EXPECT_GE(t, kNow);
    for (const NodeAllocation& ra : rs.nodes) {
      const NodeView& n = *nodes.at(ra.node_name);
      GpuSet gpus;
      uint64_t cpus = 0, mem = 0;
      auto add = [&](GpuSet g, uint64_t c, uint64_t m, const std::string& what) {
        EXPECT_FALSE(gpus.Intersects(g)) << "reservation of job " << rs.job.value << " on "
                                         << ra.node_name << " overlaps " << what;
        gpus = gpus | g;
        cpus += c;
        mem += m;
      };
      for (const RunningJobView& r : s.running) {
        if (ends.at(r.id) <= t) continue;
        for (const NodeAllocation& a : r.allocation.nodes) {
          if (a.node_name == ra.node_name)
            add(a.gpus, a.cpus, a.mem_mb, "running job " + r.id.ToString());
        }
      }
      for (const Placement& pl : p.starts) {
        const PendingJobView& j = *pending.at(pl.job);
        Duration limit = j.time_limit.count() <= 0 ? kUnlimited : j.time_limit;
        bool ends_first = limit != kUnlimited && kNow + limit <= t;
        if (ends_first) continue;
        for (const NodeAllocation& a : pl.nodes) {
          if (a.node_name == ra.node_name)
            add(a.gpus, a.cpus, a.mem_mb, "started job " + pl.job.ToString());
        }
      }
      for (const ReservedStart& other : p.reservations) {
        if (other.start > t) continue;  // conservative engine: earlier ones never overlap either
        for (const NodeAllocation& a : other.nodes) {
          if (a.node_name == ra.node_name) {
            add(other.job == rs.job ? GpuSet() : a.gpus, other.job == rs.job ? 0 : a.cpus,
                other.job == rs.job ? 0 : a.mem_mb, "reservation of job " + other.job.ToString());
          }
        }
      }
      add(ra.gpus, ra.cpus, ra.mem_mb, "itself");
      EXPECT_LE(cpus, n.cpus) << "reservation of job " << rs.job.value << " on " << ra.node_name;
      EXPECT_LE(mem, n.mem_mb);
      EXPECT_EQ(ra.gpus - n.usable_gpus, GpuSet());
    }
  }
  // Preemption orders are consistent.
  ASSERT_EQ(p.preemptions.size(), p.preemption_orders.size());
  for (size_t i = 0; i < p.preemptions.size(); ++i) {
    EXPECT_EQ(p.preemptions[i], p.preemption_orders[i].job);
    EXPECT_NE(p.preemption_orders[i].mode, PreemptMode::kOff);
  }
}

TEST(SchedulerPropertyTest, RandomClustersKeepEveryInvariant) {
  size_t starts = 0, gangs = 0, backfilled = 0, reservations = 0, preemptions = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    World w = RandomWorld(seed);
    Scheduler sched(w.config);
    Plan p = sched.Decide(w.snapshot, kNow);
    CheckPlan(w, p, seed);
    starts += p.starts.size();
    for (const Placement& pl : p.starts) {
      gangs += pl.nodes.size() > 1;
      backfilled += pl.backfilled;
    }
    reservations += p.reservations.size();
    preemptions += p.preemptions.size();
    // Same input, same plan: again, and from a fresh scheduler.
    EXPECT_EQ(p, sched.Decide(w.snapshot, kNow)) << "seed " << seed;
    EXPECT_EQ(p, Scheduler(w.config).Decide(w.snapshot, kNow)) << "seed " << seed;
    if (HasFailure()) break;
  }
  // The workloads exercise what the invariants are about.
  EXPECT_GT(starts, 1000u);
  EXPECT_GT(gangs, 50u);
  EXPECT_GT(backfilled, 100u);
  EXPECT_GT(reservations, 100u);
  EXPECT_GT(preemptions, 20u);
  std::printf("starts %zu gangs %zu backfilled %zu reservations %zu preemptions %zu\n", starts,
              gangs, backfilled, reservations, preemptions);
}

TEST(SchedulerPropertyTest, EveryRegisteredPolicyKeepsTheResourceInvariants) {
  for (uint64_t seed = 1000; seed <= 1100; ++seed) {
    World w = RandomWorld(seed);
    for (const PolicyInfo& info : RegisteredPolicies()) {
      if (info.name == "first_fit") continue;  // the placeholder knows no reservations windows
      SCOPED_TRACE(std::string(info.name));
      auto policy = MakePolicy(info.name, w.config);
      ASSERT_TRUE(policy.has_value()) << policy.error().message;
      Plan p = (*policy)->Decide(w.snapshot, kNow);
      CheckPlan(w, p, seed);
      EXPECT_EQ(p, (*policy)->Decide(w.snapshot, kNow));
    }
    if (HasFailure()) break;
  }
}

// Passes in a row, applying each plan as the controller would: nothing ever double-books.
TEST(SchedulerPropertyTest, RepeatedPassesOnAnEvolvingCluster) {
  for (uint64_t seed = 2000; seed <= 2040; ++seed) {
    World w = RandomWorld(seed);
    Scheduler sched(w.config);
    Timestamp now = kNow;
    for (int pass = 0; pass < 6; ++pass) {
      Plan p = sched.Decide(w.snapshot, now);
      CheckPlan(w, p, seed * 100 + pass);
      if (HasFailure()) return;
      // Apply the starts: the jobs become running; preempted jobs go away.
      std::set<JobId> victims(p.preemptions.begin(), p.preemptions.end());
      std::vector<RunningJobView> running;
      for (RunningJobView& r : w.snapshot.running) {
        if (!victims.count(r.id)) running.push_back(r);
      }
      std::map<JobId, PendingJobView> pending;
      for (const PendingJobView& j : w.snapshot.pending) pending[j.id] = j;
      for (const Placement& pl : p.starts) {
        const PendingJobView& j = pending.at(pl.job);
        RunningJobView r{.id = j.id,
                         .user = j.user,
                         .account = j.account,
                         .qos = j.qos,
                         .partition = pl.partition,
                         .start_time = now};
        r.expected_end = j.time_limit.count() <= 0 || j.time_limit == kUnlimited
                             ? Timestamp::max()
                             : now + j.time_limit;
        r.allocation.nodes = pl.nodes;
        running.push_back(r);
        pending.erase(j.id);
      }
      std::sort(running.begin(), running.end(),
                [](const auto& a, const auto& b) { return a.id < b.id; });
      // Rebuild node use from the running jobs; time moves on 30 minutes; ended jobs leave.
      now += Minutes(30);
      std::vector<RunningJobView> still;
      for (const RunningJobView& r : running) {
        if (r.expected_end > now) still.push_back(r);
      }
      for (NodeView& n : w.snapshot.nodes) {
        n.used_cpus = 0;
        n.used_mem_mb = 0;
        n.used_gpus = GpuSet();
        n.running_jobs = 0;
        n.exclusive = false;
      }
      for (const RunningJobView& r : still) {
        for (const NodeAllocation& a : r.allocation.nodes) {
          for (NodeView& n : w.snapshot.nodes) {
            if (n.name != a.node_name) continue;
            n.used_cpus += a.cpus;
            n.used_mem_mb += a.mem_mb;
            n.used_gpus = n.used_gpus | a.gpus;
            n.running_jobs += 1;
          }
        }
      }
      w.snapshot.running = still;
      w.snapshot.pending.clear();
      for (auto& [id, j] : pending) w.snapshot.pending.push_back(j);
    }
  }
}

}  // namespace
}  // namespace corral::sched
