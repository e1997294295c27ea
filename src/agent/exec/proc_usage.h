// Live usage of a run's processes on this node, as `sstat` shows it: each process the agent
// started (the batch script, a step's task) is the leader of its own process group, and its
// usage is the sum over the group's live members, read from /proc (stat: CPU time and major
// faults; status: VmRSS, VmHWM, VmSize, VmPeak; io: rchar, wchar), as Slurm's
// jobacct_gather/linux reads them. A process that left the group (setsid) is not in it; the
// run's cgroup totals (cgroup.h, `CgroupUsage`) count it.
//
// The parsers are pure; `ReadProcesses` reads /proc. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/job_stats.h"

namespace corral::agent {

// One process as /proc shows it.
struct ProcReading {
  int64_t pid = 0;
  int64_t pgid = 0;
  double cpu_seconds = 0;  // utime + stime + cutime + cstime
  uint64_t major_faults = 0;
  uint64_t rss_kb = 0, hwm_kb = 0, vmsize_kb = 0, vmpeak_kb = 0;
  uint64_t rchar = 0, wchar = 0;
  int32_t processor = -1;  // the CPU it last ran on (stat field 39); -1 = unknown
  bool operator==(const ProcReading&) const = default;
};

// /proc/PID/stat: the process group, CPU time (`ticks_per_second`), major faults and the CPU
// it last ran on into `out`. False when the text is not a stat line (the command may hold spaces
// and ')').
bool ParseProcStat(std::string_view text, double ticks_per_second, ProcReading* out);
// /proc/PID/status: VmRSS, VmHWM, VmSize, VmPeak (kB); absent lines (a kernel thread, a
// zombie) leave 0.
void ParseProcStatus(std::string_view text, ProcReading* out);
// /proc/PID/io: rchar, wchar (readable by root or the process's user only).
void ParseProcIo(std::string_view text, ProcReading* out);

// Every process under `proc_root` ("/proc"), those that vanish while read left out.
std::vector<ProcReading> ReadProcesses(const std::string& proc_root = "/proc");

// /proc/cpuinfo: each "processor"'s "cpu MHz", in kHz, indexed by processor (0 where absent).
std::vector<uint64_t> ParseCpuinfoKhz(std::string_view text);
// The current frequency of each of the host's CPUs in kHz, as Slurm's jobacct_gather/linux
// reads it: cpufreq's scaling_cur_freq (else cpuinfo_cur_freq) under `sys_cpu_root`, else
// the "cpu MHz" of `cpuinfo` (hosts without cpufreq: virtual machines); 0 where neither says.
std::vector<uint64_t> ReadCpuFrequencies(
    const std::string& sys_cpu_root = "/sys/devices/system/cpu",
    const std::string& cpuinfo = "/proc/cpuinfo");

// The usage of the process group led by `leader`: the sum over its members in `procs` (the
// leader first in `pids`, the others by pid), and the mean of `cpu_khz` (by CPU) over the CPUs
// they last ran on. `step`/`task` name it.
api::TaskUsage GroupUsage(const std::vector<ProcReading>& procs, int64_t leader, uint32_t step,
                          uint32_t task, const std::vector<uint64_t>& cpu_khz = {});

}  // namespace corral::agent
