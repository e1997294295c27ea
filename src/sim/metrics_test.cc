#include "sim/metrics.h"

#include <gtest/gtest.h>

namespace corral::sim {
namespace {

TEST(MetricsTest, PercentileIsNearestRank) {
  EXPECT_EQ(Percentile({}, 50), 0);
  EXPECT_EQ(Percentile({5}, 99), 5);
  EXPECT_EQ(Percentile({4, 1, 3, 2}, 50), 2);
  EXPECT_EQ(Percentile({4, 1, 3, 2}, 51), 3);
  EXPECT_EQ(Percentile({4, 1, 3, 2}, 100), 4);
}

// Two queues, one slowed down 3x: JCTs, waits, slowdown bound, Jain's index and gang jobs.
TEST(MetricsTest, HandComputedRun) {
  Workload w;
  const Timestamp t0 = Timestamp(Seconds(1'000'000));
  auto add = [&](uint32_t gpus, int64_t duration_s, std::string queue) {
    SimJob j;
    j.id = JobId(w.jobs.size() + 1);
    j.gpus = gpus;
    j.duration = Seconds(duration_s);
    j.user = "unknown";
    j.queue = std::move(queue);
    w.jobs.push_back(j);
  };
  add(1, 100, "a");  // submit 0, start 0, end 100: slowdown 1
  add(8, 5, "b");    // submit 0, start 25, end 30: slowdown 30 / 10 (bounded) = 3
  SimResult r;
  r.capacity_gpus = 10;
  r.start = t0;
  r.outcomes = {{.id = JobId(1),
                 .end_kind = JobEnd::kCompleted,
                 .submit = t0,
                 .first_start = t0,
                 .end = t0 + Seconds(100),
                 .gpu_seconds = 100},
                {.id = JobId(2),
                 .end_kind = JobEnd::kCompleted,
                 .submit = t0,
                 .first_start = t0 + Seconds(25),
                 .end = t0 + Seconds(30),
                 .gpu_seconds = 40}};
  r.allocated_gpu_seconds = 140;
  PolicyMetrics m = ComputeMetrics("x", w, r);
  EXPECT_EQ(m.jobs, 2u);
  EXPECT_DOUBLE_EQ(m.mean_jct_s, 65);
  EXPECT_DOUBLE_EQ(m.p99_jct_s, 100);
  EXPECT_DOUBLE_EQ(m.mean_wait_s, 12.5);
  EXPECT_DOUBLE_EQ(m.mean_bsld, 2);
  EXPECT_DOUBLE_EQ(m.makespan_s, 100);
  EXPECT_DOUBLE_EQ(m.util, 0.14);
  EXPECT_EQ(m.jain_over, "queue");
  EXPECT_DOUBLE_EQ(m.jain, 16.0 / 20.0);  // (1 + 3)^2 / (2 * (1 + 9))
  EXPECT_EQ(m.gang_jobs, 1u);
  EXPECT_DOUBLE_EQ(m.gang_mean_wait_s, 25);
  std::string csv = FormatMetricsCsv({m});
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "policy,jobs,refused,never_started,timeouts,cancelled,mean_jct_s,p50_jct_s,p95_jct_s,"
            "p99_jct_s,"
            "mean_wait_s,p50_wait_s,p95_wait_s,p99_wait_s,mean_bsld,p99_bsld,makespan_s,util,jain,"
            "jain_over,"
            "preemptions,lost_gpu_h,gang_jobs,gang_mean_wait_s,gang_p95_wait_s");
  EXPECT_EQ(csv.substr(csv.find('\n') + 1),
            "x,2,0,0,0,0,65.0,30.0,100.0,100.0,12.5,0.0,25.0,25.0,2.000,3.000,100.0,0.1400,0.8000,"
            "queue,0,0.00,1,"
            "25.0,25.0\n");
  std::string table = FormatMetricsTable({m});
  EXPECT_NE(table.find("JCT mean"), std::string::npos);
  EXPECT_NE(table.find("14.0%"), std::string::npos);
}

TEST(MetricsTest, HumanDurations) {
  EXPECT_EQ(HumanDuration(45), "45s");
  EXPECT_EQ(HumanDuration(750), "12.5m");
  EXPECT_EQ(HumanDuration(3 * 3600), "3.0h");
  EXPECT_EQ(HumanDuration(4 * 86400), "4.0d");
}

}  // namespace
}  // namespace corral::sim
