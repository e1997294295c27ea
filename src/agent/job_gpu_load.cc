#include "agent/job_gpu_load.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include <sys/stat.h>

#include "core/log.h"
#include "core/strings.h"

namespace corral::agent {
namespace {

std::string EnvValue(const std::vector<std::string>& env, std::string_view name) {
  for (const std::string& kv : env) {
    if (kv.size() > name.size() && kv.compare(0, name.size(), name) == 0 &&
        kv[name.size()] == '=') {
      return kv.substr(name.size() + 1);
    }
  }
  return "";
}

// The first 64 bytes of `path`, not following a link; "" when it cannot be read.
std::string ReadSmallFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  char buf[64];
  ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

}  // namespace

std::optional<JobGpuLoads::Load> JobGpuLoads::Parse(std::string_view text) {
  std::vector<std::string> words = SplitNonEmpty(std::string(Trim(text)), ' ');
  if (words.empty() || words.size() > 2) return std::nullopt;
  Load load;
  const std::string& u = words[0];
  auto [p, ec] = std::from_chars(u.data(), u.data() + u.size(), load.utilization);
  if (ec != std::errc() || p != u.data() + u.size() || !(load.utilization >= 0) ||
      load.utilization > 100) {
    return std::nullopt;
  }
  if (words.size() == 2) {
    std::optional<uint64_t> mem = ParseUint(words[1]);
    if (!mem) return std::nullopt;
    load.memory_mb = *mem;
  }
  return load;
}

std::vector<std::string> JobGpuLoads::Start(JobRun run, const GpuSet& gpus,
                                            const std::vector<std::string>& env,
                                            std::optional<uint32_t> uid,
                                            std::optional<uint32_t> gid) {
  Entry e;
  e.gpus = gpus;
  std::string util = EnvValue(env, "CORRAL_SIM_GPU_UTIL");
  if (!util.empty()) {
    std::string mem = EnvValue(env, "CORRAL_SIM_GPU_MEM_MB");
    e.initial = Parse(mem.empty() ? util : util + " " + mem);
    if (!e.initial) {
      CORRAL_LOG(Warn) << "job " << run.ToString() << ": CORRAL_SIM_GPU_UTIL=\"" << util
                       << "\" (CORRAL_SIM_GPU_MEM_MB=\"" << mem
                       << "\"): expected a percentage 0-100 (and MB); ignored";
    }
  }
  std::vector<std::string> add;
  if (!gpus.empty()) {
    mkdir(dir_.c_str(), 0755);  // an existing one is fine; a failure shows at open
    e.file = dir_ + "/" + run.ToString();
    int fd = open(e.file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
      if (uid && fchown(fd, *uid, gid.value_or(static_cast<uint32_t>(-1))) != 0) {
        CORRAL_LOG(Warn) << "job " << run.ToString() << ": " << e.file
                         << ": chown: " << std::strerror(errno);
      }
      close(fd);
      add.push_back("CORRAL_SIM_GPU_LOAD_FILE=" + e.file);
    } else {
      CORRAL_LOG(Warn) << "job " << run.ToString() << ": cannot make " << e.file << ": "
                       << std::strerror(errno);
      e.file.clear();
    }
  }
  runs_[run] = std::move(e);
  return add;
}

void JobGpuLoads::Apply(GpuBackend& backend) {
  for (auto& [run, e] : runs_) {
    std::optional<Load> load = e.file.empty() ? std::nullopt : Parse(ReadSmallFile(e.file));
    if (!load) load = e.initial;
    if (!load) continue;
    e.applied = true;
    for (uint32_t g : e.gpus.ToVector()) backend.SetJobLoad(g, load->utilization, load->memory_mb);
  }
}

void JobGpuLoads::Finish(JobRun run, GpuBackend& backend) {
  auto it = runs_.find(run);
  if (it == runs_.end()) return;
  if (it->second.applied) {
    for (uint32_t g : it->second.gpus.ToVector()) backend.SetJobLoad(g, std::nullopt);
  }
  if (!it->second.file.empty()) unlink(it->second.file.c_str());
  runs_.erase(it);
}

}  // namespace corral::agent
