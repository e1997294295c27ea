// Job cgroups on this machine's real hierarchies (as root); skipped, saying why, where the
// agent could not use them either.
#include "agent/exec/cgroup.h"

#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "agent/exec/process_supervisor.h"
#include "agent/exec/testing/os_wait.h"
#include "core/clock.h"

namespace corral::agent {
namespace {

namespace fs = std::filesystem;

class CgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/corral-cgroup-XXXXXX";
    dir_ = mkdtemp(tmpl);
    node_ = "cgtest-" + std::to_string(getpid());
    auto m = CgroupManager::Open({}, node_, SystemClock::Get());
    if (!m) GTEST_SKIP() << "cgroups are not usable here: " << m.error().message;
    manager_ = std::move(*m);
    supervisor_ =
        std::make_unique<ProcessSupervisor>(SystemClock::Get(), [this](const ProcessExit& e) {
          std::lock_guard<std::mutex> lock(mu_);
          exits_.push_back(e);
          cv_.notify_all();
        });
  }
  void TearDown() override {
    supervisor_.reset();
    fs::remove_all(dir_);
  }

  ProcessExit Run(JobCgroup& cg, const std::string& body, JobId id,
                  std::vector<uint32_t> cpus = {}) {
    std::string script = dir_ + "/job" + id.ToString();
    std::ofstream(script) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(script, fs::perms::owner_all);
    ProcessSpec spec;
    spec.job = id;
    spec.argv = {script};
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.cwd = dir_;
    spec.stdout_path = dir_ + "/out" + id.ToString();
    spec.cgroup_procs = cg.procs_files();
    spec.cpus = std::move(cpus);
    Status s = supervisor_->Launch(spec);
    EXPECT_TRUE(s.has_value()) << s.error().message;
    std::unique_lock<std::mutex> lock(mu_);
    bool done = cv_.wait_for(lock, std::chrono::seconds(60), [&] {
      return std::any_of(exits_.begin(), exits_.end(),
                         [&](const ProcessExit& e) { return e.job == id; });
    });
    EXPECT_TRUE(done);
    for (const auto& e : exits_) {
      if (e.job == id) return e;
    }
    return {};
  }
  std::string Out(JobId id) {
    std::ifstream in(dir_ + "/out" + id.ToString());
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::string dir_, node_;
  std::unique_ptr<CgroupManager> manager_;
  std::unique_ptr<ProcessSupervisor> supervisor_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ProcessExit> exits_;
};

TEST_F(CgroupTest, MemoryOverrunIsAnOomKill) {
  if (manager_->Describe().find("memory") == std::string::npos)
    GTEST_SKIP() << "no memory controller";
  auto cg = manager_->Create({.job = JobId(1), .memory_mb = 32});
  ASSERT_TRUE(cg.has_value()) << cg.error().message;
  // Holds 256 MB in a shell variable.
  ProcessExit e =
      Run(**cg, "x=$(head -c 268435456 /dev/zero | tr '\\0' a); echo survived ${#x}", JobId(1));
  (void)e;  // the OOM killer may take the shell itself or its pipeline
  EXPECT_TRUE((*cg)->OutOfMemory()) << Out(JobId(1));
  EXPECT_EQ(Out(JobId(1)).find("survived 268435456"), std::string::npos);
  EXPECT_TRUE((*cg)->Destroy(Seconds(5), SystemClock::Get()).has_value());

  auto fine = manager_->Create({.job = JobId(2), .memory_mb = 256});
  Run(**fine, "x=$(head -c 1048576 /dev/zero | tr '\\0' a); echo ok ${#x}", JobId(2));
  EXPECT_FALSE((*fine)->OutOfMemory());
  EXPECT_EQ(Out(JobId(2)), "ok 1048576\n");
  EXPECT_GE((*fine)->PeakMemoryMb(), 1u);
  EXPECT_TRUE((*fine)->Destroy(Seconds(5), SystemClock::Get()).has_value());
}

TEST_F(CgroupTest, UnallocatedGpuDeviceFilesAreDenied) {
  if (manager_->Describe().find("devices") == std::string::npos)
    GTEST_SKIP() << "no device control";
  // Device files of a driver this machine does not have: opening an allowed one says ENXIO
  // ("No such device or address"), a denied one EPERM.
  for (int i = 0; i < 2; ++i) {
    std::string f = dir_ + "/nvidia" + std::to_string(i);
    if (mknod(f.c_str(), S_IFCHR | 0666, makedev(195, i)) != 0) GTEST_SKIP() << "cannot mknod here";
  }
  auto cg = manager_->Create({.job = JobId(3), .deny = {{'c', 195, 1}}});
  ASSERT_TRUE(cg.has_value()) << cg.error().message;
  Run(**cg, "head -c1 " + dir_ + "/nvidia0 2>&1; head -c1 " + dir_ + "/nvidia1 2>&1; true",
      JobId(3));
  std::string out = Out(JobId(3));
  EXPECT_NE(out.find("nvidia0' for reading: No such device or address"), std::string::npos)
      << "output: " << out;
  EXPECT_NE(out.find("nvidia1' for reading: Operation not permitted"), std::string::npos) << out;
  EXPECT_TRUE((*cg)->Destroy(Seconds(5), SystemClock::Get()).has_value());
}

// The same on a v2 hierarchy alone: a BPF device program attached to the job's cgroup.
TEST_F(CgroupTest, DeviceBpfProgramOnV2) {
  auto v2 = CgroupManager::Open({.mode = "v2"}, node_ + "-v2", SystemClock::Get());
  if (!v2) GTEST_SKIP() << "no cgroup v2 hierarchy: " << v2.error().message;
  if ((*v2)->Describe().find("devices (BPF)") == std::string::npos)
    GTEST_SKIP() << (*v2)->Describe();
  for (int i = 0; i < 2; ++i) {
    std::string f = dir_ + "/nvidia" + std::to_string(i);
    if (mknod(f.c_str(), S_IFCHR | 0666, makedev(195, i)) != 0) GTEST_SKIP() << "cannot mknod here";
  }
  auto cg = (*v2)->Create({.job = JobId(7), .deny = {{'c', 195, 0}}});
  if (!cg && cg.error().message.find("BPF") != std::string::npos) {
    GTEST_SKIP() << "BPF programs cannot be loaded here: " << cg.error().message;
  }
  ASSERT_TRUE(cg.has_value()) << cg.error().message;
  Run(**cg, "head -c1 " + dir_ + "/nvidia0 2>&1; head -c1 " + dir_ + "/nvidia1 2>&1; true",
      JobId(7));
  std::string out = Out(JobId(7));
  EXPECT_NE(out.find("nvidia0' for reading: Operation not permitted"), std::string::npos) << out;
  EXPECT_NE(out.find("nvidia1' for reading: No such device or address"), std::string::npos) << out;
  EXPECT_TRUE((*cg)->Destroy(Seconds(5), SystemClock::Get()).has_value());
}

TEST_F(CgroupTest, DestroyKillsProcessesThatLeftTheProcessGroup) {
  auto cg = manager_->Create({.job = JobId(4)});
  ASSERT_TRUE(cg.has_value()) << cg.error().message;
  std::string pidfile = dir_ + "/escaped.pid";
  // A process in a session of its own (the group's signals miss it); `$(...)` returns once it
  // has printed its pid and let go of the pipe.
  Run(**cg, "pid=$(setsid -f sh -c 'echo $$; exec sleep 300 >/dev/null'); echo $pid > " + pidfile,
      JobId(4));
  int pid = 0;
  std::ifstream(pidfile) >> pid;
  ASSERT_GT(pid, 1);
  ASSERT_EQ(kill(pid, 0), 0) << "the escaped process runs";
  ASSERT_TRUE((*cg)->Destroy(Seconds(5), SystemClock::Get()).has_value());
  // Gone (a zombie of init at worst, for a moment).
  EXPECT_TRUE(testing::WaitGone(pid));
}

// `sstat` and `scontrol suspend`: the cgroup counts an escaped process, and freezing stops it.
TEST_F(CgroupTest, UsageCountsAndFreezeStopsProcessesThatLeftTheProcessGroup) {
  auto cg = manager_->Create({.job = JobId(5)});
  ASSERT_TRUE(cg.has_value()) << cg.error().message;
  std::string pidfile = dir_ + "/frozen.pid";
  Run(**cg, "pid=$(setsid -f sh -c 'echo $$; exec sleep 300 >/dev/null'); echo $pid > " + pidfile,
      JobId(5));
  int pid = 0;
  std::ifstream(pidfile) >> pid;
  ASSERT_GT(pid, 1);
  EXPECT_EQ((*cg)->Usage().processes, 1u);
  Status frozen = (*cg)->Freeze(true);
  if (!frozen && frozen.error().code == ErrorCode::kUnimplemented) {
    GTEST_SKIP() << "no freezer: " << manager_->Describe();
  }
  ASSERT_TRUE(frozen.has_value()) << frozen.error().message;
  // Frozen: cgroup v2 reports it in cgroup.events, v1 in freezer.state.
  auto is_frozen = [&] {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
    for (std::string line; std::getline(in, line);) {
      std::string path = line.substr(line.find(':', line.find(':') + 1) + 1);
      for (const char* root : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup", "/sys/fs/cgroup/freezer"}) {
        std::ifstream events(std::string(root) + path + "/cgroup.events");
        std::string text((std::istreambuf_iterator<char>(events)), {});
        if (text.find("frozen 1") != std::string::npos) return true;
        std::ifstream state(std::string(root) + path + "/freezer.state");
        std::string st;
        if (state >> st && st == "FROZEN") return true;
      }
    }
    return false;
  };
  // The kernel freezes and thaws asynchronously: wait for it, with a deadline.
  auto wait_until = [](auto condition) {
    const MonoTime deadline = SystemClock::Get().MonotonicNow() + Seconds(10);
    while (!condition()) {
      if (SystemClock::Get().MonotonicNow() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  };
  EXPECT_TRUE(wait_until(is_frozen));
  ASSERT_TRUE((*cg)->Freeze(false).has_value());
  EXPECT_TRUE(wait_until([&] { return !is_frozen(); }));
  ASSERT_TRUE((*cg)->Destroy(Seconds(5), SystemClock::Get()).has_value());
  EXPECT_TRUE(testing::WaitGone(pid));
}

TEST_F(CgroupTest, CpusAreBound) {
  auto cg = manager_->Create({.job = JobId(5), .cpus = {0}});
  ASSERT_TRUE(cg.has_value()) << cg.error().message;
  Run(**cg, "grep Cpus_allowed_list /proc/self/status", JobId(5), {0});
  EXPECT_EQ(Out(JobId(5)), "Cpus_allowed_list:\t0\n");
  EXPECT_TRUE((*cg)->Destroy(Seconds(5), SystemClock::Get()).has_value());
}

TEST_F(CgroupTest, KillStaleRemovesWhatAPreviousRunLeft) {
  auto cg = manager_->Create({.job = JobId(6)});
  ASSERT_TRUE(cg.has_value());
  std::vector<std::string> dirs;
  for (const auto& f : (*cg)->procs_files()) dirs.push_back(f.substr(0, f.rfind('/')));
  manager_->KillStale();
  for (const auto& d : dirs) EXPECT_FALSE(fs::exists(d)) << d;
}

TEST_F(CgroupTest, PidsLimitKeepsAForkBombInItsCgroup) {
  if (manager_->Describe().find("pids") == std::string::npos) GTEST_SKIP() << "no pids controller";
  auto cg = manager_->Create({.job = JobId(7), .pids_max = 8});
  ASSERT_TRUE(cg.has_value()) << cg.error().message;
  std::string dir;
  for (const auto& f : (*cg)->procs_files()) {
    std::string d = f.substr(0, f.rfind('/'));
    if (fs::exists(d + "/pids.max")) dir = d;
  }
  ASSERT_FALSE(dir.empty());
  std::ifstream max(dir + "/pids.max");
  std::string limit;
  max >> limit;
  EXPECT_EQ(limit, "8");
  // Twenty background processes: the ninth fork fails, and the shell gives up.
  ProcessExit e = Run(**cg, "i=0; while [ $i -lt 20 ]; do sleep 60 & i=$((i+1)); done", JobId(7));
  EXPECT_NE(e.exit_code, 0);
  std::ifstream procs(dir + "/cgroup.procs");
  int n = 0;
  for (int pid; procs >> pid;) ++n;
  EXPECT_LE(n, 8);
  // The limit acted: the kernel counts the forks it refused ("max N" in pids.events). The
  // sleeps that did start die with the job's session once its shell exits, so how many are
  // left when the exit is reported is a race and is not asserted.
  std::ifstream events(dir + "/pids.events");
  std::string key;
  uint64_t refused = 0;
  while (events >> key >> refused && key != "max") {
  }
  EXPECT_EQ(key, "max");
  EXPECT_GE(refused, 1u) << "no fork was refused at pids.max";
  EXPECT_TRUE((*cg)->Destroy(Seconds(5), SystemClock::Get()).has_value());
  EXPECT_FALSE(fs::exists(dir));
}

TEST(JobMemoryLimitTest, AGivenLimitElseTheDefaultElseTheRunsShareOfTheNode) {
  CgroupConfig c;
  NodeShare s{.cpus = 8, .gpus = 2, .node_memory_mb = 64000, .node_cpus = 64, .node_gpus = 8};
  EXPECT_EQ(JobMemoryLimitMb(c, s), 16000u);  // 2 of 8 GPUs beats 8 of 64 CPUs
  s.gpus = 0;
  EXPECT_EQ(JobMemoryLimitMb(c, s), 8000u);  // 8 of 64 CPUs
  s.cpus = 0;
  EXPECT_EQ(JobMemoryLimitMb(c, s), 64000u);  // no share known: the node
  s.given_memory_mb = 1234;
  EXPECT_EQ(JobMemoryLimitMb(c, s), 1234u);  // --mem, or the partition's default
  c.default_memory_per_job_mb = 4096;
  EXPECT_EQ(JobMemoryLimitMb(c, s), 1234u);
  s.given_memory_mb = 0;
  EXPECT_EQ(JobMemoryLimitMb(c, s), 4096u);
  EXPECT_EQ(JobMemoryLimitMb({}, NodeShare{}), 0u);  // nothing known: no limit
}

}  // namespace
}  // namespace corral::agent
