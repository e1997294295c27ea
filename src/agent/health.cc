#include "agent/health.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <sys/syscall.h>
#include <sys/wait.h>

extern char** environ;

namespace corral::agent {
namespace {

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

}  // namespace

const std::vector<XidInfo>& CriticalXidTable() {
  static const std::vector<XidInfo> table = {
      {48, "double-bit ECC error", "reset the GPU (nvidia-smi -r); replace it if it recurs"},
      {74, "NVLink error", "check the NVLink/NVSwitch fabric, reset the GPU; service if it recurs"},
      {79, "GPU has fallen off the bus", "reboot the node; check power, cooling and the PCIe slot"},
      {94, "contained ECC error (row remap pending)", "reset the GPU to remap the row"},
      {95, "uncontained ECC error", "reset the GPU; every process on it was affected"},
      {119, "GSP RPC timeout", "reset the GPU, or reboot the node if the reset fails"},
      {120, "GSP error", "reset the GPU, or reboot the node if the reset fails"},
      {140, "unrecovered ECC error", "reset the GPU; replace it if it recurs"},
  };
  return table;
}

std::string XidMeaning(uint32_t xid) {
  for (const auto& x : CriticalXidTable()) {
    if (x.xid == xid) return std::string(x.meaning);
  }
  return "XID " + std::to_string(xid);
}

GpuSet HealthReport::FailingGpus() const {
  GpuSet s;
  for (const auto& p : gpus) s.insert(p.gpu);
  return s;
}

HealthReport HealthMonitor::Observe(const std::vector<GpuInfo>& inventory,
                                    const Result<std::vector<GpuSample>>& samples) {
  HealthReport r;
  std::map<uint32_t, const GpuSample*> by_index;
  if (!samples) {
    backend_problem_ = "cannot read the GPUs: " + samples.error().message;
  } else {
    backend_problem_.clear();
    for (const auto& s : *samples) by_index[s.index] = &s;
  }
  for (const GpuInfo& g : inventory) {
    std::vector<GpuProblem>& latched = latched_[g.index];
    auto it = by_index.find(g.index);
    const GpuSample* s = it == by_index.end() ? nullptr : it->second;
    if (s != nullptr) {
      for (uint32_t xid : s->xid_events) {
        if (!config_.critical_xids.contains(xid)) continue;
        GpuProblem p{g.index, "XID " + std::to_string(xid) + " (" + XidMeaning(xid) + ")", true};
        if (std::find(latched.begin(), latched.end(), p) == latched.end()) latched.push_back(p);
      }
    }
    for (const auto& p : latched) r.gpus.push_back(p);
    if (!samples) continue;  // the node-level problem says it all
    if (s == nullptr || !s->present) {
      r.gpus.push_back({g.index, "GPU vanished (not answering)", false});
      continue;
    }
    if (config_.check_ecc) {
      ecc_now_[g.index] = s->ecc_uncorrectable;
      auto [base, fresh] = ecc_baseline_.try_emplace(g.index, s->ecc_uncorrectable);
      if (!fresh && s->ecc_uncorrectable > base->second) {
        GpuProblem p{g.index,
                     "uncorrectable ECC errors (" +
                         std::to_string(s->ecc_uncorrectable - base->second) + " new)",
                     true};
        // One latched ECC problem per GPU: replace the count of an earlier one.
        auto old = std::find_if(latched.begin(), latched.end(), [](const GpuProblem& q) {
          return q.reason.rfind("uncorrectable ECC", 0) == 0;
        });
        if (old != latched.end()) {
          *old = p;
          auto shown = std::find_if(r.gpus.begin(), r.gpus.end(), [&](const GpuProblem& q) {
            return q.gpu == g.index && q.reason.rfind("uncorrectable ECC", 0) == 0;
          });
          if (shown != r.gpus.end()) *shown = p;
        } else {
          latched.push_back(p);
          r.gpus.push_back(p);
        }
      }
      if (s->row_remap_failure) r.gpus.push_back({g.index, "row remapping failed", false});
      if (s->row_remap_pending) r.gpus.push_back({g.index, "row remap pending a GPU reset", false});
    }
    if (config_.max_temperature_c > 0 && s->temperature_c > config_.max_temperature_c) {
      r.gpus.push_back({g.index,
                        "temperature " + Number(s->temperature_c) + " C over " +
                            Number(config_.max_temperature_c) + " C",
                        false});
    }
    if (config_.max_power_watts > 0 && s->power_watts > config_.max_power_watts) {
      r.gpus.push_back(
          {g.index,
           "power " + Number(s->power_watts) + " W over " + Number(config_.max_power_watts) + " W",
           false});
    }
  }
  std::stable_sort(r.gpus.begin(), r.gpus.end(),
                   [](const GpuProblem& a, const GpuProblem& b) { return a.gpu < b.gpu; });
  if (!backend_problem_.empty()) {
    r.node_problem = backend_problem_;
  } else if (!script_problem_.empty()) {
    r.node_problem = "health script: " + script_problem_;
  }
  last_ = r;
  return r;
}

void HealthMonitor::Clear(uint32_t gpu) {
  latched_.erase(gpu);
  if (auto it = ecc_now_.find(gpu); it != ecc_now_.end()) ecc_baseline_[gpu] = it->second;
  last_.gpus.erase(std::remove_if(last_.gpus.begin(), last_.gpus.end(),
                                  [&](const GpuProblem& p) { return p.gpu == gpu && p.latched; }),
                   last_.gpus.end());
}

std::string RunHealthScript(const std::string& path, Duration timeout, const Clock& clock) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0)
    return "cannot run " + path + ": pipe: " + std::strerror(errno);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pipe_fds[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  char* argv[] = {const_cast<char*>(path.c_str()), nullptr};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, path.c_str(), &fa, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(pipe_fds[1]);
  if (rc != 0) {
    close(pipe_fds[0]);
    return "cannot run " + path + ": " + std::strerror(rc);
  }
  std::string output;
  bool timed_out = false;
  MonoTime deadline = clock.MonotonicNow() + timeout;
  while (true) {
    Duration left = deadline - clock.MonotonicNow();
    if (left <= Duration(0)) {
      timed_out = true;
      break;
    }
    pollfd p{pipe_fds[0], POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count() / 1000 + 1, 1000)));
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    char buf[4096];
    ssize_t got = read(pipe_fds[0], buf, sizeof buf);
    if (got <= 0) break;  // EOF: the script (and what it started) closed its output
    if (output.size() < 65536) output.append(buf, static_cast<size_t>(got));
  }
  close(pipe_fds[0]);
  if (timed_out) kill(-pid, SIGKILL);
  int status = 0;
  // Bounded: after EOF the script is exiting; after a timeout it was killed.
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return "timed out after " + Number(ToSecondsF(timeout)) + " s";
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    std::string line =
        output.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line.substr(0, 300);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  return "killed by signal " + std::to_string(WTERMSIG(status));
}

}  // namespace corral::agent
