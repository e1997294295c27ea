#include "controller/internal/gpu_waste.h"

#include <gtest/gtest.h>

namespace corral::controller::internal {
namespace {

using Kind = WasteVerdict::Kind;

const Timestamp kT0 = FromMicros(1'764'620'000'000'000);

// A series of GPU 0 (and 1) on n1, a reading every 10 s from kT0 for `minutes`, at `util(i)`.
template <typename UtilFn>
JobGpuSeries Series(int minutes, UtilFn util, uint32_t gpus = 1) {
  JobGpuSeries s;
  s.job = JobId(7);
  for (int i = 0; i <= minutes * 6; ++i) {
    for (uint32_t g = 0; g < gpus; ++g) {
      AddGpuReading(&s, "n1", {.gpu = g, .time = kT0 + Seconds(10 * i), .utilization = util(i, g)});
    }
  }
  return s;
}

GpuWastePolicy Policy(GpuWasteAction action = GpuWasteAction::kNotify) {
  return {.enabled = true,
          .threshold = 5,
          .window = Minutes(30),
          .action = action,
          .grace = Minutes(10)};
}

TEST(GpuWasteTest, AJobIdleForTheWindowIsFlaggedWithANote) {
  JobGpuSeries s = Series(31, [](int, uint32_t) { return 0.0; });
  WasteVerdict v = DecideWaste(s, Policy(), kT0 + Minutes(31));
  EXPECT_EQ(v.kind, Kind::kFlag);
  EXPECT_EQ(v.note, "GPU n1:0 under 5% utilisation for 31:00");
}

TEST(GpuWasteTest, AJobIdleForLessThanTheWindowIsNot) {
  JobGpuSeries s = Series(29, [](int, uint32_t) { return 0.0; });
  EXPECT_EQ(DecideWaste(s, Policy(), kT0 + Minutes(29)).kind, Kind::kNone);
}

TEST(GpuWasteTest, BusyWorkInsideTheWindowKeepsAJobFromBeingFlagged) {
  // Busy for the first 20 minutes of 40: idle for only ~20.
  JobGpuSeries s = Series(40, [](int i, uint32_t) { return i < 120 ? 95.0 : 0.0; });
  EXPECT_EQ(DecideWaste(s, Policy(), kT0 + Minutes(40)).kind, Kind::kNone);
  // Busy at first, idle for the last 35 minutes: flagged.
  s = Series(60, [](int i, uint32_t) { return i < 150 ? 95.0 : 0.0; });
  EXPECT_EQ(DecideWaste(s, Policy(), kT0 + Minutes(60)).kind, Kind::kFlag);
}

TEST(GpuWasteTest, EveryGpuMustBeIdle) {
  JobGpuSeries s = Series(
      40, [](int, uint32_t g) { return g == 0 ? 0.0 : 60.0; }, 2);
  EXPECT_EQ(DecideWaste(s, Policy(), kT0 + Minutes(40)).kind, Kind::kNone);
  s = Series(
      40, [](int, uint32_t) { return 2.0; }, 2);
  WasteVerdict v = DecideWaste(s, Policy(), kT0 + Minutes(40));
  EXPECT_EQ(v.kind, Kind::kFlag);
  EXPECT_EQ(v.note.rfind("GPUs n1:0,1 under 5%", 0), 0u) << v.note;
}

TEST(GpuWasteTest, AFlaggedJobIsActedOnAfterTheGraceUnlessThePolicyOnlyNotifies) {
  JobGpuSeries s = Series(60, [](int, uint32_t) { return 0.0; });
  s.waste_flagged = kT0 + Minutes(52);
  Timestamp now = kT0 + Minutes(60);
  EXPECT_EQ(DecideWaste(s, Policy(GpuWasteAction::kCancel), now).kind, Kind::kNone);  // in grace
  s.waste_flagged = kT0 + Minutes(50);
  EXPECT_EQ(DecideWaste(s, Policy(GpuWasteAction::kCancel), now).kind, Kind::kAct);
  EXPECT_EQ(DecideWaste(s, Policy(GpuWasteAction::kRequeue), now).kind, Kind::kAct);
  EXPECT_EQ(DecideWaste(s, Policy(GpuWasteAction::kNotify), now).kind, Kind::kNone);
}

TEST(GpuWasteTest, AFlaggedJobThatWorksAgainIsCleared) {
  JobGpuSeries s = Series(60, [](int i, uint32_t) { return i > 350 ? 90.0 : 0.0; });
  s.waste_flagged = kT0 + Minutes(40);
  EXPECT_EQ(DecideWaste(s, Policy(GpuWasteAction::kCancel), kT0 + Minutes(60)).kind, Kind::kClear);
  GpuWastePolicy off = Policy();
  off.enabled = false;
  EXPECT_EQ(DecideWaste(s, off, kT0 + Minutes(60)).kind, Kind::kClear);
}

TEST(GpuWasteTest, ASeriesWithoutRecentReadingsIsNotJudged) {
  JobGpuSeries s = Series(40, [](int, uint32_t) { return 0.0; });
  EXPECT_EQ(DecideWaste(s, Policy(), kT0 + Minutes(40) + Minutes(31)).kind, Kind::kNone);
  EXPECT_EQ(DecideWaste(JobGpuSeries{}, Policy(), kT0).kind, Kind::kNone);
}

TEST(GpuWasteTest, TheReportSumsWastedGpuHoursByUserAndAccount) {
  auto job = [](uint64_t id, const std::string& user, const std::string& account, uint32_t gpus,
                int hours) {
    Job j;
    j.id = JobId(id);
    j.spec.user = user;
    j.spec.account = account;
    j.state = JobState::kCompleted;
    j.start_time = kT0;
    j.end_time = kT0 + Seconds(3600 * hours);
    j.allocation.nodes.push_back({.node_name = "n1", .gpus = GpuSet::FirstN(gpus)});
    return j;
  };
  std::vector<Job> jobs = {job(1, "alice", "phys", 1, 2), job(2, "bob", "phys", 2, 1),
                           job(3, "alice", "chem", 0, 5)};
  std::map<JobId, JobGpuSeries> series;
  series[JobId(1)] = Series(60, [](int i, uint32_t) { return i < 180 ? 0.0 : 80.0; });  // half
  series[JobId(1)].waste_flagged = kT0;
  series[JobId(2)] = Series(
      60, [](int, uint32_t g) { return g == 0 ? 90.0 : 0.0; }, 2);
  // bob: one of 2 GPUs idle for an hour; alice: her GPU idle half of 2 hours, plus a CPU job.
  api::WasteReport r = BuildWasteReport(jobs, series, 5, kT0, kT0 + Seconds(86400));
  ASSERT_EQ(r.users.size(), 2u);
  EXPECT_GE(r.users[0].wasted_gpu_hours, r.users[1].wasted_gpu_hours);  // most wasted first
  auto user = [&](const std::string& name) {
    for (const auto& row : r.users) {
      if (row.name == name) return row;
    }
    ADD_FAILURE() << "no row for " << name;
    return api::WasteReportRow{};
  };
  api::WasteReportRow alice = user("alice"), bob = user("bob");
  EXPECT_EQ(alice.jobs, 1u);  // the CPU-only job does not count
  EXPECT_EQ(alice.flagged, 1u);
  EXPECT_NEAR(alice.gpu_hours, 2, 1e-9);
  EXPECT_NEAR(alice.wasted_gpu_hours, 1, 0.02);
  EXPECT_EQ(bob.flagged, 0u);
  EXPECT_NEAR(bob.gpu_hours, 2, 1e-9);
  EXPECT_NEAR(bob.wasted_gpu_hours, 1, 0.02);
  ASSERT_EQ(r.accounts.size(), 1u);
  EXPECT_EQ(r.accounts[0].name, "phys");
  EXPECT_EQ(r.accounts[0].jobs, 2u);
  EXPECT_NEAR(r.accounts[0].gpu_hours, 4, 1e-9);
  EXPECT_NEAR(r.accounts[0].wasted_gpu_hours, 2, 0.04);
}

}  // namespace
}  // namespace corral::controller::internal
