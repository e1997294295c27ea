// The process supervisor's test fixture, shared by its tests of this machine's real
// processes (process_supervisor*_test.cc, the `os` group). The supervisor runs on a fake
// clock: a time limit, a warning or a grace period passes when a test advances the clock and
// has the supervisor look at its deadlines again (`Recheck`: `SetTimeLimit` does so at once,
// as its contract says), so no test waits out a real limit. Every wait is for a condition
// (an exit, a line on a FIFO, a pidfd) with a deadline; none sleeps.
//
// Test-only.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "agent/exec/process_supervisor.h"
#include "agent/exec/testing/os_wait.h"
#include "core/testing/fake_clock.h"

namespace corral::agent {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "corral-exec-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = std::filesystem::canonical(tmpl).string();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

// The processes whose process group is `pgid` that still run (not zombies).
inline std::vector<int> GroupMembers(int pgid) {
  std::vector<int> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    int pid = std::stoi(name);
    if (getpgid(pid) == pgid && !corral::testing::ProcessGone(pid)) out.push_back(pid);
  }
  return out;
}

// How many descriptors each epoll instance of this process watches (/proc/self/fdinfo). The
// supervisor's watches its wakeup eventfd and one pidfd per process it runs; a reaped pidfd
// left in it would report EPOLLHUP forever and keep its thread spinning.
inline std::vector<size_t> EpollWatches() {
  std::vector<size_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (std::filesystem::read_symlink(entry.path(), ec).string() != "anon_inode:[eventpoll]")
      continue;
    std::ifstream info("/proc/self/fdinfo/" + entry.path().filename().string());
    size_t n = 0;
    for (std::string line; std::getline(info, line);) n += line.rfind("tfd:", 0) == 0;
    out.push_back(n);
  }
  return out;
}

// Collects exit reports; waits for them with a deadline.
class Exits {
 public:
  ProcessSupervisor::ExitCallback Callback() {
    return [this](const ProcessExit& x) {
      std::lock_guard lock(mu_);
      exits_[x.job].push_back(x);
      cv_.notify_all();
    };
  }

  // The first exit of `job`, waiting up to `timeout`; fails the test if it does not come.
  ProcessExit Wait(JobId job, Duration timeout = Seconds(20)) {
    if (!WaitCountOf(job, 1, timeout)) {
      ADD_FAILURE() << "no exit reported for job " << job.value;
      return ProcessExit{};
    }
    std::lock_guard lock(mu_);
    return exits_[job].front();
  }

  // Waits until `n` exits of `job` are in; returns whether they came within `timeout`.
  bool WaitCountOf(JobId job, size_t n, Duration timeout = Seconds(20)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] {
      auto it = exits_.find(job);
      return it != exits_.end() && it->second.size() >= n;
    });
  }

  // Waits until `n` jobs have exits in.
  bool WaitCount(size_t n, Duration timeout = Seconds(60)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return exits_.size() >= n; });
  }

  size_t Count(JobId job) {
    std::lock_guard lock(mu_);
    auto it = exits_.find(job);
    return it == exits_.end() ? 0 : it->second.size();
  }

  std::map<JobId, std::vector<ProcessExit>> All() {
    std::lock_guard lock(mu_);
    return exits_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<JobId, std::vector<ProcessExit>> exits_;
};

inline const std::vector<std::string> kBaseEnv = {"PATH=/usr/bin:/bin"};

class ProcessSupervisorTest : public ::testing::Test {
 protected:
  ProcessSpec Sh(uint64_t job, const std::string& script) {
    ProcessSpec spec;
    spec.job = JobId(job);
    spec.generation = Generation(1);
    spec.argv = {"/bin/sh", "-c", script};
    spec.env = kBaseEnv;
    spec.cwd = dir_.path();
    spec.stdout_path = dir_ / ("job" + std::to_string(job) + ".out");
    return spec;
  }

  // Launches and waits for the exit.
  ProcessExit Run(const ProcessSpec& spec) {
    Status s = sup_->Launch(spec);
    EXPECT_TRUE(s.has_value()) << s.error().message;
    if (!s.has_value()) return {};
    return exits_.Wait(spec.job);
  }

  // A FIFO `name` in the test's directory that scripts write lines to.
  corral::testing::LineFifo& Fifo(const std::string& name) {
    auto& f = fifos_[name];
    if (f == nullptr) f = std::make_unique<corral::testing::LineFifo>(dir_ / name);
    return *f;
  }
  // Waits for the next line on FIFO `name`.
  std::string Line(const std::string& name) {
    std::optional<std::string> line = Fifo(name).Next();
    EXPECT_TRUE(line.has_value()) << "nothing written to " << name;
    return line.value_or("");
  }

  // A process that says "ready" on FIFO events<job> once its traps are set, writes "warned"
  // there and on its output at each warning (SIGUSR1), and "term" on its output at SIGTERM,
  // then exits `term_exit`.
  ProcessSpec Trapping(uint64_t job, Duration limit, int term_exit = 0) {
    std::string events = Fifo("events" + std::to_string(job)).path();
    ProcessSpec spec =
        Sh(job, "trap 'echo warned; echo warned > " + events + "' USR1; trap 'echo term; exit " +
                    std::to_string(term_exit) + "' TERM; echo ready > " + events +
                    "; while :; do sleep 1000 & wait; done");
    spec.time_limit = limit;
    spec.kill_grace = Minutes(600);
    return spec;
  }
  // Launches `spec` and waits for its "ready" on FIFO events<job>.
  void LaunchReady(const ProcessSpec& spec) {
    Status s = sup_->Launch(spec);
    ASSERT_TRUE(s.has_value()) << s.error().message;
    ASSERT_EQ(Line("events" + std::to_string(spec.job.value)), "ready");
  }

  // Has the supervisor look at the run's deadlines now, at the fake clock's time, keeping
  // its limit at `limit` (a process already being terminated keeps its own: any will do).
  void Recheck(uint64_t job, Duration limit, uint64_t gen = 1) {
    Status s = sup_->SetTimeLimit(JobId(job), Generation(gen), limit);
    ASSERT_TRUE(s.has_value()) << s.error().message;
  }

  static Duration Ran(const ProcessExit& x) { return x.end_time - x.start_time; }

  TempDir dir_;
  std::map<std::string, std::unique_ptr<corral::testing::LineFifo>> fifos_;
  Exits exits_;
  corral::testing::FakeClock clock_;
  std::unique_ptr<ProcessSupervisor> sup_ =
      std::make_unique<ProcessSupervisor>(clock_, exits_.Callback());
};

}  // namespace corral::agent
