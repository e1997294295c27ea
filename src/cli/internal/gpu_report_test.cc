#include "cli/internal/gpu_report.h"

#include <gtest/gtest.h>

namespace corral::cli::internal {
namespace {

const Timestamp kT0 = FromMicros(1'764'620'000'000'000);

api::JobInfo TwoGpuJob() {
  api::JobInfo info;
  Job& j = info.job;
  j.id = JobId(42);
  j.spec.user = "alice";
  j.spec.account = "physics";
  j.spec.gid = 1000;
  j.spec.name = "train";
  j.partition = "gpu";
  j.state = JobState::kCompleted;
  j.start_time = kT0;
  j.end_time = kT0 + Seconds(3600);
  j.usage.cpu_seconds = 3600;  // one of 4 cores busy
  j.usage.max_rss_mb = 2048;
  j.allocation.nodes.push_back(
      {.node_name = "gpu01", .cpus = 4, .mem_mb = 8192, .gpus = GpuSet(0b1001)});
  return info;
}

api::GpuStatsGpu Gpu(uint32_t index, double mean, double idle, uint64_t mem_peak) {
  return {.node = "gpu01",
          .gpu = index,
          .model = "h100",
          .memory_mb = 81920,
          .samples = 360,
          .util_mean = mean,
          .util_max = mean > 0 ? 100.0 : 0.0,
          .idle_fraction = idle,
          .mem_max_mb = mem_peak,
          .power_max_watts = 650,
          .energy_joules = 3.6e6};
}

TEST(GpuReportTest, NotesNameAnIdleGpuAndSuggestAMigSliceForSmallMemory) {
  api::GpuStatsInfo stats{.job = JobId(42), .gpus = {Gpu(0, 88, 0, 9000), Gpu(3, 1, 0.95, 600)}};
  std::vector<std::string> notes = JobstatsNotes(TwoGpuJob(), stats);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0].rfind("GPU 3 was idle 95% of the time", 0), 0u) << notes[0];
  EXPECT_EQ(notes[1], "peak memory 9 of 80 GB per GPU: a MIG slice would do");
}

TEST(GpuReportTest, ABusyJobWithBigMemoryGetsNoNotes) {
  api::GpuStatsInfo stats{.job = JobId(42), .gpus = {Gpu(0, 90, 0, 70000), Gpu(3, 85, 0, 30000)}};
  EXPECT_TRUE(JobstatsNotes(TwoGpuJob(), stats).empty());
}

TEST(GpuReportTest, LowMeanFlagAndNoReadingsAreNoted) {
  api::JobInfo info = TwoGpuJob();
  info.gpu_waste = "GPUs gpu01:0,3 under 5% utilisation for 00:31:00";
  api::GpuStatsInfo stats{.job = JobId(42), .gpus = {Gpu(0, 12, 0.1, 70000)}};
  std::vector<std::string> notes = JobstatsNotes(info, stats);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0], "flagged as wasting its GPUs: " + info.gpu_waste);
  EXPECT_EQ(notes[1].rfind("GPU 0 averaged 12% utilisation", 0), 0u) << notes[1];
  notes = JobstatsNotes(info, api::GpuStatsInfo{});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("no GPU readings", 0), 0u);
}

TEST(GpuReportTest, JobstatsShowsEachGpu) {
  api::GpuStatsInfo stats{.job = JobId(42), .gpus = {Gpu(0, 88, 0, 9000), Gpu(3, 1, 0.95, 600)}};
  std::string text = FormatJobstats(TwoGpuJob(), stats);
  EXPECT_NE(text.find("alice/physics"), std::string::npos) << text;
  EXPECT_NE(text.find("88.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("8.8 GB of 80"), std::string::npos) << text;
  EXPECT_NE(text.find("1.000 kWh"), std::string::npos) << text;
  EXPECT_NE(text.find("* GPU 3 was idle 95%"), std::string::npos) << text;
}

TEST(GpuReportTest, SeffPrintsSlurmsLinesThenGpuLines) {
  api::GpuStatsInfo stats{.job = JobId(42), .gpus = {Gpu(0, 88, 0, 9216), Gpu(3, 2, 0.95, 600)}};
  std::string text = FormatSeff(TwoGpuJob(), stats, "lab", "physics", kT0 + Seconds(99999));
  EXPECT_EQ(text,
            "Job ID: 42\n"
            "Cluster: lab\n"
            "User/Group: alice/physics\n"
            "State: COMPLETED (exit code 0)\n"
            "Cores: 4\n"
            "CPU Utilized: 01:00:00\n"
            "CPU Efficiency: 25.00% of 04:00:00 core-walltime\n"
            "Job Wall-clock time: 01:00:00\n"
            "Memory Utilized: 2.00 GB\n"
            "Memory Efficiency: 25.00% of 8.00 GB\n"
            "GPUs: 2 (h100)\n"
            "GPU Utilization: 45.00% mean, 100.00% peak\n"
            "GPU Memory Utilized: 9.00 GB peak of 80.00 GB per GPU\n"
            "GPU Energy: 2.000 kWh\n");
}

TEST(GpuReportTest, SeffWarnsAboutARunningJob) {
  api::JobInfo info = TwoGpuJob();
  info.job.state = JobState::kRunning;
  info.job.end_time = Timestamp{};
  std::string text = FormatSeff(info, {}, "lab", "", kT0 + Seconds(1800));
  EXPECT_NE(text.find("State: RUNNING\n"), std::string::npos) << text;
  EXPECT_NE(text.find("User/Group: alice/1000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Job Wall-clock time: 00:30:00\n"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU Utilization: no readings\n"), std::string::npos) << text;
  EXPECT_NE(text.find("WARNING: Efficiency statistics may be misleading for RUNNING jobs."),
            std::string::npos);
}

TEST(GpuReportTest, WasteReportListsUsersThenAccounts) {
  api::WasteReport r{
      .since = kT0,
      .threshold = 5,
      .users =
          {{.name = "alice", .jobs = 2, .flagged = 1, .gpu_hours = 10, .wasted_gpu_hours = 2.5}},
      .accounts = {{.name = "physics", .jobs = 2, .gpu_hours = 10}}};
  std::string text = FormatWasteReport(r);
  EXPECT_NE(text.find("under 5% utilisation"), std::string::npos) << text;
  EXPECT_NE(text.find("USER"), std::string::npos);
  EXPECT_NE(text.find("alice"), std::string::npos);
  EXPECT_NE(text.find("2.50"), std::string::npos);
  EXPECT_NE(text.find("25%"), std::string::npos);
  EXPECT_LT(text.find("alice"), text.find("physics"));
}

// `corral report usage` rolls sub-accounts up into their parents with the account tree, as
// sreport does (the same code, slurm::RollUpAccounts); without it, one row per account.
TEST(GpuReportTest, UsageReportRollsSubAccountsUpIntoTheirParents) {
  api::UsageReport r;
  r.start = kT0;
  r.end = kT0 + Seconds(86400);
  r.total = {.jobs = 3, .cpu_seconds = 3 * 3600, .gpu_seconds = 3 * 3600};
  r.accounts = {{.account = "chem", .jobs = 1, .cpu_seconds = 3600, .gpu_seconds = 3600},
                {.account = "physics", .jobs = 2, .cpu_seconds = 7200, .gpu_seconds = 7200}};
  const std::string flat = FormatUsageReport(r);
  EXPECT_NE(flat.find("By account:"), std::string::npos) << flat;
  EXPECT_EQ(flat.find("science"), std::string::npos) << flat;
  const std::string tree = FormatUsageReport(
      r, {{"science", ""}, {"chem", "science"}, {"physics", "science"}, {"idle", ""}});
  auto row = [&](const std::string& name) {
    size_t at = tree.find(name + " ");
    return at == std::string::npos ? std::string() : tree.substr(at, tree.find('\n', at) - at);
  };
  EXPECT_NE(tree.find("By account (with its sub-accounts):"), std::string::npos) << tree;
  EXPECT_NE(row("science").find(" 3 "), std::string::npos) << tree;  // its two children's jobs
  EXPECT_NE(row("science").find("3.00"), std::string::npos) << tree;
  EXPECT_NE(tree.find("  chem "), std::string::npos) << tree;  // indented below science
  EXPECT_LT(tree.find("science"), tree.find("  chem"));
  EXPECT_LT(tree.find("  chem"), tree.find("  physics"));
  EXPECT_EQ(tree.find("idle"), std::string::npos) << tree;  // no usage in its subtree
}

}  // namespace
}  // namespace corral::cli::internal
