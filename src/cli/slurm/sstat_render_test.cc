// `sstat` against text from a real Slurm 22.05.8 (jobacct_gather/linux, one node "vm"): a job
// of `sbatch -n2` whose step 0 ran two python tasks of ~64 MB each (`srun -n2 python3 ...`).
#include <gtest/gtest.h>

#include "cli/slurm/sstat.h"
#include "core/step.h"

namespace corral::slurm {
namespace {

api::JobStatsInfo TwoTasks() {
  api::JobStatsInfo info{.job = JobId(2), .generation = Generation(1)};
  api::NodeRunStats vm{.node = "vm", .job = JobId(2), .generation = Generation(1)};
  vm.tasks.push_back({.step = 0, .task = 0, .pids = {25314}, .cpu_seconds = 1.2,
                      .rss_kb = 64600, .max_rss_kb = 64600, .vmsize_kb = 67772,
                      .max_vmsize_kb = 67772, .pages = 1, .read_bytes = 1685837,
                      .write_bytes = 1696, .cpu_freq_khz = 1960000});
  vm.tasks.push_back({.step = 0, .task = 1, .pids = {25315}, .cpu_seconds = 1.1,
                      .rss_kb = 64608, .max_rss_kb = 64608, .vmsize_kb = 67772,
                      .max_vmsize_kb = 67772, .pages = 0, .read_bytes = 1685837,
                      .write_bytes = 1696, .cpu_freq_khz = 1980000});
  vm.tasks.push_back({.step = kBatchStepId, .task = 0, .pids = {25300, 25296},
                      .rss_kb = 4648, .max_rss_kb = 4648, .vmsize_kb = 7280,
                      .max_vmsize_kb = 7280});
  info.nodes.push_back(vm);
  return info;
}

TEST(SstatRenderTest, DefaultFieldsAsSlurmPrintsThem) {
  api::JobStatsInfo info = TwoTasks();
  EXPECT_EQ(StepsIn(info), (std::vector<uint32_t>{0, kBatchStepId}));
  auto text = RenderSstat(info, {{0, "2.0"}}, {});
  ASSERT_TRUE(text) << text.error().message;
  // Slurm's line, but for AveCPUFreq (1.97M there: the host's "cpu MHz" taken as kHz and
  // weighted; Corral's is the frequency in kHz, 1.97G) and TRESUsageInMinTask's cpu item
  // (Slurm prints the task of the least CPU inconsistently).
  const std::string slurm =
      "2.0              67772K             vm              0     67772K     64608K         vm"
      "          1     64604K        1           vm              0          0   00:00:01       "
      "  vm          1   00:00:01        2      1.97G       Unknown       Unknown       Unknown "
      "             0      1685837              vm               0      1685837         1696   "
      "            vm                0         1696 cpu=00:00:01,+ cpu=00:00:01,+ cpu=vm,energy"
      "=vm,+ cpu=00:00:00,fs/d+ cpu=00:00:01,+ cpu=vm,energy=vm,+ cpu=00:00:01,fs/d+ cpu=00:00:"
      "02,+ energy=0,fs/di+ energy=0,fs/di+ energy=vm,fs/disk=+           fs/disk=0 energy=0,fs"
      "/di+ energy=vm,fs/disk=+           fs/disk=0 energy=0,fs/di+ \n";
  ASSERT_NE(text->find('\n'), std::string::npos);
  std::string lines = *text;
  std::string header = lines.substr(0, lines.find('\n'));
  EXPECT_EQ(header.substr(0, 40), "JobID         MaxVMSize  MaxVMSizeNode  ");
  EXPECT_EQ(lines.substr(lines.rfind('\n', lines.size() - 2) + 1), slurm);
}

TEST(SstatRenderTest, ParsableTresListsAndNoConvert) {
  SstatOptions o{.format = "JobID,TRESUsageInAve,TRESUsageInMax,TRESUsageInTot,TRESUsageOutTot,"
                           "MaxRSS,NTasks,Pids",
                 .parsable2 = true,
                 .no_header = true};
  auto text = RenderSstat(TwoTasks(), {{0, "2.0"}, {kBatchStepId, "2.batch"}}, o);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text,
            "2.0|cpu=00:00:01,energy=0,fs/disk=1685837,mem=64604K,pages=0,vmem=67772K|"
            "cpu=00:00:01,energy=0,fs/disk=1685837,mem=64608K,pages=1,vmem=67772K|"
            "cpu=00:00:02,energy=0,fs/disk=3371674,mem=129208K,pages=1,vmem=135544K|"
            "energy=0,fs/disk=3392|64608K|2|25314,25315\n"
            "2.batch|cpu=00:00:00,energy=0,fs/disk=0,mem=4648K,pages=0,vmem=7280K|"
            "cpu=00:00:00,energy=0,fs/disk=0,mem=4648K,pages=0,vmem=7280K|"
            "cpu=00:00:00,energy=0,fs/disk=0,mem=4648K,pages=0,vmem=7280K|"
            "energy=0,fs/disk=0|4648K|1|25300,25296\n");
  o.format = "maxrss,avevmsize,avecpufreq";
  o.no_convert = true;
  o.parsable2 = false;
  o.parsable = true;
  text = RenderSstat(TwoTasks(), {{0, "2.0"}}, o);
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, "66158592|69398528|1970000K|\n");  // Slurm's --noconvert figures
  EXPECT_FALSE(RenderSstat(TwoTasks(), {}, {.format = "MaxRSS,Bogus"}));
}

TEST(SstatRenderTest, GpuUseJoinsTheTresListsAndMemoryInExactUnits) {
  api::JobStatsInfo info = TwoTasks();
  info.nodes[0].gpus = {{.index = 0, .utilization = 90, .memory_used_mb = 1024},
                        {.index = 1, .utilization = 70, .memory_used_mb = 1024}};
  info.nodes[0].tasks[0].max_rss_kb = 65536;
  auto text = RenderSstat(info, {{0, "2.0"}},
                          {.format = "TRESUsageInMax%100,TRESUsageInMaxNode%100", .parsable2 = true,
                           .no_header = true});
  ASSERT_TRUE(text);
  EXPECT_EQ(*text,
            "cpu=00:00:01,energy=0,fs/disk=1685837,gres/gpumem=2G,gres/gpuutil=80,mem=64M,"
            "pages=1,vmem=67772K|cpu=vm,energy=vm,fs/disk=vm,gres/gpumem=vm,gres/gpuutil=vm,"
            "mem=vm,pages=vm,vmem=vm\n");
}

// AveCPUFreq as Slurm prints act_cpufreq: kHz converted while >= 1000, two decimals unless
// whole; tasks without a frequency (a host that shows none) are left out, and none gives 0.
TEST(SstatRenderTest, AveCpuFreqInSlurmUnits) {
  auto freq = [](std::vector<uint64_t> khz) {
    api::JobStatsInfo info = TwoTasks();
    for (size_t i = 0; i < 2; ++i) info.nodes[0].tasks[i].cpu_freq_khz = khz[i];
    auto text = RenderSstat(info, {{0, "2.0"}},
                            {.format = "AveCPUFreq", .parsable2 = true, .no_header = true});
    return text ? *text : text.error().message;
  };
  EXPECT_EQ(freq({2095986, 2095986}), "2.10G\n");
  EXPECT_EQ(freq({2000000, 0}), "2G\n");
  EXPECT_EQ(freq({1625, 1625}), "1.62M\n");
  EXPECT_EQ(freq({999, 0}), "999K\n");
  EXPECT_EQ(freq({0, 0}), "0\n");
}

TEST(SstatRenderTest, FieldListAsSstatE) {
  std::string list = SstatFieldList();
  EXPECT_EQ(list.substr(0, 80),
            "AveCPU              AveCPUFreq          AveDiskRead         AveDiskWrite       \n");
}

}  // namespace
}  // namespace corral::slurm
