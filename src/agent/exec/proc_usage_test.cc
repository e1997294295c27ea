#include "agent/exec/proc_usage.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace corral::agent {
namespace {

TEST(ProcUsageTest, ParsesStatWithAnAwkwardCommandName) {
  // comm "a) b (c" holds spaces and parentheses; fields count from the last ')'.
  const std::string stat =
      "4242 (a) b (c) S 1 4200 4200 0 -1 4194560 100 0 7 0 250 50 30 20 20 0 1 0 12345 "
      "1000000 200 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
  ProcReading r;
  ASSERT_TRUE(ParseProcStat(stat, 100, &r));
  EXPECT_EQ(r.pid, 4242);
  EXPECT_EQ(r.pgid, 4200);
  EXPECT_EQ(r.major_faults, 7u);
  EXPECT_DOUBLE_EQ(r.cpu_seconds, (250 + 50 + 30 + 20) / 100.0);
  EXPECT_EQ(r.processor, 1);  // field 39
  EXPECT_FALSE(ParseProcStat("", 100, &r));
  EXPECT_FALSE(ParseProcStat("12 (x) S 1 2", 100, &r));
}

TEST(ProcUsageTest, ParsesStatusAndIo) {
  ProcReading r;
  ParseProcStatus("Name:\tpython3\nVmPeak:\t  70000 kB\nVmSize:\t   67772 kB\nVmHWM:\t   64608 kB\n"
                  "VmRSS:\t   64600 kB\nThreads:\t1\n",
                  &r);
  EXPECT_EQ(r.vmpeak_kb, 70000u);
  EXPECT_EQ(r.vmsize_kb, 67772u);
  EXPECT_EQ(r.hwm_kb, 64608u);
  EXPECT_EQ(r.rss_kb, 64600u);
  ParseProcIo("rchar: 1685837\nwchar: 1696\nsyscr: 10\n", &r);
  EXPECT_EQ(r.rchar, 1685837u);
  EXPECT_EQ(r.wchar, 1696u);
  ProcReading zombie;
  ParseProcStatus("Name:\tx\nState:\tZ (zombie)\n", &zombie);  // no Vm lines
  EXPECT_EQ(zombie.rss_kb, 0u);
}

TEST(ProcUsageTest, SumsTheMembersOfTheGroupLeaderFirst) {
  std::vector<ProcReading> procs = {
      {.pid = 10, .pgid = 20, .cpu_seconds = 1, .rss_kb = 100, .hwm_kb = 150},
      {.pid = 20, .pgid = 20, .cpu_seconds = 2, .major_faults = 1, .rss_kb = 200, .hwm_kb = 100,
       .vmsize_kb = 1000, .vmpeak_kb = 1200, .rchar = 5, .wchar = 6},
      {.pid = 30, .pgid = 30, .cpu_seconds = 4, .rss_kb = 400},  // another group
  };
  api::TaskUsage u = GroupUsage(procs, 20, 3, 1);
  EXPECT_EQ(u.step, 3u);
  EXPECT_EQ(u.task, 1u);
  EXPECT_EQ(u.pids, (std::vector<int64_t>{20, 10}));
  EXPECT_DOUBLE_EQ(u.cpu_seconds, 3);
  EXPECT_EQ(u.rss_kb, 300u);
  EXPECT_EQ(u.max_rss_kb, 150u + 200u);  // a peak is never below the current size
  EXPECT_EQ(u.vmsize_kb, 1000u);
  EXPECT_EQ(u.max_vmsize_kb, 1200u);
  EXPECT_EQ(u.pages, 1u);
  EXPECT_EQ(u.read_bytes, 5u);
  EXPECT_EQ(u.write_bytes, 6u);
  EXPECT_TRUE(GroupUsage(procs, 99, 0, 0).pids.empty());
}

// AveCPUFreq's figure: the frequency of the CPU each member last ran on, from cpufreq where
// the host has it, else /proc/cpuinfo's "cpu MHz" (as Slurm's jobacct_gather/linux).
TEST(ProcUsageTest, CpuFrequenciesFromCpufreqElseCpuinfo) {
  const std::string cpuinfo =
      "processor\t: 0\nmodel name\t: X\ncpu MHz\t\t: 2095.986\n\n"
      "processor\t: 1\ncpu MHz\t\t: 1800.000\n\nprocessor\t: 2\nflags\t: fpu\n";
  EXPECT_EQ(ParseCpuinfoKhz(cpuinfo), (std::vector<uint64_t>{2095986, 1800000}));
  EXPECT_TRUE(ParseCpuinfoKhz("").empty());

  char tmpl[] = "/tmp/corral-cpufreq-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  std::filesystem::create_directories(root + "/cpu1/cpufreq");
  std::ofstream(root + "/cpu1/cpufreq/scaling_cur_freq") << "3400000\n";
  std::ofstream(root + "/cpuinfo") << cpuinfo;
  std::vector<uint64_t> khz = ReadCpuFrequencies(root, root + "/cpuinfo");
  ASSERT_GE(khz.size(), 2u);
  EXPECT_EQ(khz[0], 2095986u);  // no cpufreq for cpu0: cpuinfo's
  EXPECT_EQ(khz[1], 3400000u);  // cpufreq's
  std::filesystem::remove_all(root);

  std::vector<ProcReading> procs = {{.pid = 20, .pgid = 20, .processor = 0},
                                    {.pid = 21, .pgid = 20, .processor = 1},
                                    {.pid = 22, .pgid = 20, .processor = 7}};  // unknown CPU
  EXPECT_EQ(GroupUsage(procs, 20, 0, 0, {2000000, 3000000}).cpu_freq_khz, 2500000u);
  EXPECT_EQ(GroupUsage(procs, 20, 0, 0).cpu_freq_khz, 0u);
}

TEST(ProcUsageTest, ReadsThisProcess) {
  std::vector<ProcReading> procs = ReadProcesses();
  const ProcReading* me = nullptr;
  for (const auto& p : procs) {
    if (p.pid == getpid()) me = &p;
  }
  ASSERT_NE(me, nullptr);
  EXPECT_EQ(me->pgid, getpgrp());
  EXPECT_GT(me->rss_kb, 0u);
  EXPECT_GE(me->hwm_kb, me->rss_kb);
}

}  // namespace
}  // namespace corral::agent
