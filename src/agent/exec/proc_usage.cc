#include "agent/exec/proc_usage.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace corral::agent {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

uint64_t ToU64(std::string_view s) {
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// The number after `key` on its line ("VmRSS:\t  1234 kB"), 0 when absent.
uint64_t Field(std::string_view text, std::string_view key) {
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.size() <= key.size() || line.substr(0, key.size()) != key) continue;
    if (line[key.size()] != ':') continue;
    line.remove_prefix(key.size() + 1);
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string_view::npos) return 0;
    line.remove_prefix(b);
    return ToU64(line.substr(0, line.find_first_not_of("0123456789")));
  }
  return 0;
}

}  // namespace

bool ParseProcStat(std::string_view text, double ticks_per_second, ProcReading* out) {
  // "pid (comm) state ppid pgrp ...": comm may hold anything, so fields count from the last ')'.
  size_t close = text.rfind(')');
  if (close == std::string_view::npos || text.find('(') == std::string_view::npos) return false;
  out->pid = static_cast<int64_t>(ToU64(text.substr(0, text.find(' '))));
  std::vector<std::string_view> f;  // f[0] = state (field 3)
  for (size_t at = close + 1; at < text.size();) {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\n')) ++at;
    size_t end = text.find_first_of(" \n", at);
    if (end == std::string_view::npos) end = text.size();
    if (end > at) f.push_back(text.substr(at, end - at));
    at = end;
  }
  // Fields (man 5 proc): 5 pgrp, 12 majflt, 14 utime, 15 stime, 16 cutime, 17 cstime,
  // 39 processor.
  if (f.size() < 15) return false;
  if (f.size() > 39 - 3) out->processor = static_cast<int32_t>(ToU64(f[39 - 3]));
  out->pgid = static_cast<int64_t>(ToU64(f[5 - 3]));
  out->major_faults = ToU64(f[12 - 3]);
  uint64_t ticks = ToU64(f[14 - 3]) + ToU64(f[15 - 3]) + ToU64(f[16 - 3]) + ToU64(f[17 - 3]);
  out->cpu_seconds = ticks_per_second > 0 ? static_cast<double>(ticks) / ticks_per_second : 0;
  return true;
}

void ParseProcStatus(std::string_view text, ProcReading* out) {
  out->rss_kb = Field(text, "VmRSS");
  out->hwm_kb = Field(text, "VmHWM");
  out->vmsize_kb = Field(text, "VmSize");
  out->vmpeak_kb = Field(text, "VmPeak");
}

void ParseProcIo(std::string_view text, ProcReading* out) {
  out->rchar = Field(text, "rchar");
  out->wchar = Field(text, "wchar");
}

std::vector<ProcReading> ReadProcesses(const std::string& proc_root) {
  std::vector<ProcReading> out;
  DIR* dir = opendir(proc_root.c_str());
  if (dir == nullptr) return out;
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  while (dirent* e = readdir(dir)) {
    std::string_view name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string_view::npos) continue;
    const std::string base = proc_root + "/" + std::string(name);
    ProcReading r;
    if (!ParseProcStat(ReadFile(base + "/stat"), hz, &r)) continue;  // gone meanwhile
    ParseProcStatus(ReadFile(base + "/status"), &r);
    ParseProcIo(ReadFile(base + "/io"), &r);
    out.push_back(r);
  }
  closedir(dir);
  std::sort(out.begin(), out.end(),
            [](const ProcReading& a, const ProcReading& b) { return a.pid < b.pid; });
  return out;
}

std::vector<uint64_t> ParseCpuinfoKhz(std::string_view text) {
  std::vector<uint64_t> out;
  int64_t processor = -1;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (key == "processor") {
      processor = static_cast<int64_t>(ToU64(value));
    } else if (key == "cpu MHz" && processor >= 0 && processor < 65536) {
      double mhz = 0;
      std::from_chars(value.data(), value.data() + value.size(), mhz);
      if (out.size() <= static_cast<size_t>(processor))
        out.resize(static_cast<size_t>(processor) + 1);
      out[static_cast<size_t>(processor)] = static_cast<uint64_t>(mhz * 1000 + 0.5);
    }
  }
  return out;
}

std::vector<uint64_t> ReadCpuFrequencies(const std::string& sys_cpu_root,
                                         const std::string& cpuinfo) {
  std::vector<uint64_t> out = ParseCpuinfoKhz(ReadFile(cpuinfo));
  const long configured = sysconf(_SC_NPROCESSORS_CONF);
  if (configured > 0 && out.size() < static_cast<size_t>(configured))
    out.resize(static_cast<size_t>(configured));
  for (size_t cpu = 0; cpu < out.size(); ++cpu) {
    const std::string dir = sys_cpu_root + "/cpu" + std::to_string(cpu) + "/cpufreq/";
    for (const char* file : {"scaling_cur_freq", "cpuinfo_cur_freq"}) {
      uint64_t khz = ToU64(ReadFile(dir + file));
      if (khz > 0) {
        out[cpu] = khz;
        break;
      }
    }
  }
  return out;
}

api::TaskUsage GroupUsage(const std::vector<ProcReading>& procs, int64_t leader, uint32_t step,
                          uint32_t task, const std::vector<uint64_t>& cpu_khz) {
  api::TaskUsage u{.step = step, .task = task};
  uint64_t khz_sum = 0, khz_count = 0;
  for (const ProcReading& p : procs) {
    if (p.pgid != leader) continue;
    if (p.processor >= 0 && static_cast<size_t>(p.processor) < cpu_khz.size() &&
        cpu_khz[static_cast<size_t>(p.processor)] > 0) {
      khz_sum += cpu_khz[static_cast<size_t>(p.processor)];
      ++khz_count;
    }
    if (p.pid == leader) {
      u.pids.insert(u.pids.begin(), p.pid);
    } else {
      u.pids.push_back(p.pid);
    }
    u.cpu_seconds += p.cpu_seconds;
    u.rss_kb += p.rss_kb;
    u.max_rss_kb += std::max(p.hwm_kb, p.rss_kb);
    u.vmsize_kb += p.vmsize_kb;
    u.max_vmsize_kb += std::max(p.vmpeak_kb, p.vmsize_kb);
    u.pages += p.major_faults;
    u.read_bytes += p.rchar;
    u.write_bytes += p.wchar;
  }
  if (khz_count > 0) u.cpu_freq_khz = khz_sum / khz_count;
  return u;
}

}  // namespace corral::agent
