#include "sched/usage.h"

#include <gtest/gtest.h>

namespace corral::sched {
namespace {

const Timestamp kT0 = FromMicros(int64_t{1'800'000'000} * 1'000'000);

RunningJobView Job(std::string account, std::string user, uint32_t gpus, uint32_t cpus,
                   Timestamp start, std::string qos = "normal") {
  RunningJobView r;
  r.account = std::move(account);
  r.user = std::move(user);
  r.qos = std::move(qos);
  r.start_time = start;
  r.allocation.nodes.push_back({.cpus = cpus, .mem_mb = 2048, .gpus = GpuSet::FirstN(gpus)});
  return r;
}

TEST(UsageLedgerTest, ChargesRunningJobsAndDecaysByHalfLife) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.fairshare.half_life = Minutes(60);
  c.fairshare.weight_cpu = 0.5;
  c.fairshare.weight_mem_gb = 1.0;
  UsageLedger ledger;
  std::vector<RunningJobView> running = {Job("nlp", "alice", 2, 4, kT0 - Minutes(10))};
  ledger.Advance(kT0, running, c);  // first call: only sets the time
  EXPECT_TRUE(ledger.Entries().empty());
  ledger.Advance(kT0 + Seconds(100), running, c);
  std::vector<AssociationUsage> e = ledger.Entries();
  ASSERT_EQ(e.size(), 1u);
  // Rate: 2 GPUs + 0.5 x 4 CPUs + 1.0 x 2 GB = 6 per second.
  EXPECT_DOUBLE_EQ(e[0].decayed_usage, 600.0);
  EXPECT_DOUBLE_EQ(e[0].period_gpu_seconds, 200.0);
  // One half-life later with nothing running: halved.
  ledger.Advance(kT0 + Seconds(100) + Minutes(60), {}, c);
  EXPECT_NEAR(ledger.Entries()[0].decayed_usage, 300.0, 1e-9);
  EXPECT_DOUBLE_EQ(ledger.Entries()[0].period_gpu_seconds, 200.0);
}

TEST(UsageLedgerTest, QosUsageFactorEndedJobsAndPeriods) {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.fairshare.half_life = Duration(0);  // no decay
  c.fairshare.usage_period = Minutes(60);
  c.qos.push_back(QosConfig{.name = "scavenger", .usage_factor = 0});
  UsageLedger ledger({}, kT0);
  RunningJobView free_job = Job("nlp", "bob", 4, 1, kT0, "scavenger");
  RunningJobView ended = Job("nlp", "alice", 1, 1, kT0);
  ledger.ChargeEnded(ended, kT0 + Seconds(30), c);
  ledger.Advance(kT0 + Seconds(60), {free_job}, c);
  std::vector<AssociationUsage> e = ledger.Entries();
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].user, "alice");
  EXPECT_DOUBLE_EQ(e[0].decayed_usage, 30.0);
  EXPECT_EQ(e[1].user, "bob");
  EXPECT_DOUBLE_EQ(e[1].decayed_usage, 0.0);         // free for fair share
  EXPECT_DOUBLE_EQ(e[1].period_gpu_seconds, 240.0);  // still counts GPU-time
  // The usage period turns over: GPU-seconds restart, counting only the new period.
  ledger.Advance(kT0 + Minutes(61), {free_job}, c);
  Timestamp period_start =
      FromMicros((ToMicros(kT0 + Minutes(61)) / Minutes(60).count()) * Minutes(60).count());
  double expected = 4 * ToSecondsF(kT0 + Minutes(61) - std::max(period_start, kT0 + Seconds(60)));
  EXPECT_DOUBLE_EQ(ledger.Entries()[1].period_gpu_seconds, expected);
  EXPECT_EQ(ledger.last_update(), kT0 + Minutes(61));
}

TEST(UsageLedgerTest, RestoresAndAddsAndIgnoresTimeGoingBack) {
  SchedulerConfig c = DefaultSchedulerConfig();
  UsageLedger ledger({{.account = "a", .user = "u", .decayed_usage = 5, .period_gpu_seconds = 7}},
                     kT0);
  ledger.Add("a", "u", 1, 1);
  ledger.Advance(kT0 - Minutes(5), {Job("a", "u", 1, 1, kT0 - Minutes(60))}, c);
  ASSERT_EQ(ledger.Entries().size(), 1u);
  EXPECT_DOUBLE_EQ(ledger.Entries()[0].decayed_usage, 6);
  EXPECT_DOUBLE_EQ(ledger.Entries()[0].period_gpu_seconds, 8);
  EXPECT_EQ(ledger.last_update(), kT0);
}

}  // namespace
}  // namespace corral::sched
