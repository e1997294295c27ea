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
  // Fields (man 5 proc): 5 pgrp, 12 majflt, 14 utime, 15 stime, 16 cutime, 17 cstime.
  if (f.size() < 15) return false;
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

api::TaskUsage GroupUsage(const std::vector<ProcReading>& procs, int64_t leader, uint32_t step,
                          uint32_t task) {
  api::TaskUsage u{.step = step, .task = task};
  for (const ProcReading& p : procs) {
    if (p.pgid != leader) continue;
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
  return u;
}

}  // namespace corral::agent
