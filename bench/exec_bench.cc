// Launch-to-exit-callback cost of trivial jobs through the agent's ProcessSupervisor:
// `/bin/true` and a `#!/bin/sh` script, one at a time and 8 in flight, plus (as root) the
// run-as-user path, a bare posix_spawn + waitpid of `/bin/true` as the floor, and (as root,
// where cgroups work) `/bin/true` in a job cgroup of its own made before the launch and
// removed in the exit callback, as the agent does for every job (BM_LaunchToExitInCgroup).
//
//   exec_bench --benchmark_counters_tabular=true
// items_per_second is jobs per second.
#include <pwd.h>
#include <spawn.h>
#include <stdlib.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <benchmark/benchmark.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "agent/exec/cgroup.h"
#include "agent/exec/process_supervisor.h"
#include "core/clock.h"

namespace corral::agent {
namespace {

namespace fs = std::filesystem;

enum Program { kTrue = 0, kScript = 1, kTrueAsNobody = 2 };

class Scratch {
 public:
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "corral-exec-bench-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
    script_ = path_ + "/job.sh";
    std::ofstream(script_) << "#!/bin/sh\nexit 0\n";
    chmod(script_.c_str(), 0755);
    chmod(path_.c_str(), 0777);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  const std::string& script() const { return script_; }

 private:
  std::string path_;
  std::string script_;
};

void BM_LaunchToExit(benchmark::State& state) {
  const auto program = static_cast<Program>(state.range(0));
  const int64_t in_flight = state.range(1);
  std::optional<uint32_t> uid, gid;
  if (program == kTrueAsNobody) {
    passwd* pw = getpwnam("nobody");
    if (geteuid() != 0 || pw == nullptr) {
      state.SkipWithError("run-as-user needs root and a `nobody` user");
      return;
    }
    uid = pw->pw_uid;
    gid = pw->pw_gid;
  }
  Scratch scratch;
  std::mutex mu;
  std::condition_variable cv;
  int64_t done = 0;
  int64_t failed = 0;
  ProcessSupervisor sup(SystemClock::Get(), [&](const ProcessExit& x) {
    std::lock_guard lock(mu);
    ++done;
    if (x.exit_code != 0 || x.signal != 0) ++failed;
    cv.notify_one();
  });

  ProcessSpec spec;
  spec.generation = Generation(1);
  spec.argv = {program == kScript ? scratch.script() : "/bin/true"};
  spec.env = {"PATH=/usr/bin:/bin", "HOME=/tmp"};
  spec.cwd = scratch.path();
  spec.stdout_path = scratch.path() + "/out";
  spec.append = true;
  spec.time_limit = Minutes(10);  // every real job has a deadline
  spec.uid = uid;
  spec.gid = gid;

  uint64_t next_job = 1;
  int64_t launched = 0;
  int64_t target = 0;
  auto launch = [&] {
    spec.job = JobId(next_job++);
    Status s = sup.Launch(spec);
    if (!s.has_value()) state.SkipWithError(s.error().message.c_str());
    ++launched;
  };
  // Iteration i launches until i + in_flight - 1 jobs have started and waits for the i-th
  // exit: one job per iteration, at most `in_flight` running.
  for (auto _ : state) {
    ++target;
    while (launched < target + in_flight - 1) launch();
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return done >= target; });
  }
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return done >= launched; });
  }
  if (failed > 0) state.SkipWithError("some jobs failed");
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(std::string(program == kScript ? "sh script" : "/bin/true") +
                 (uid ? " as nobody" : "") + ", " + std::to_string(in_flight) + " in flight");
}
BENCHMARK(BM_LaunchToExit)
    ->ArgNames({"program", "in_flight"})
    ->ArgsProduct({{kTrue, kScript, kTrueAsNobody}, {1, 8}})
    ->UseRealTime()
    ->MinTime(2.0);

// As the agent runs every job when it is root: the job's cgroup (memory limit, CPUs) made
// before the launch, joined by the child before exec (the clone path), killed and removed in
// the exit callback (the agent's FinishJob, on the supervisor's thread).
void BM_LaunchToExitInCgroup(benchmark::State& state) {
  const int64_t in_flight = state.range(0);
  auto manager =
      CgroupManager::Open({}, "exec-bench-" + std::to_string(getpid()), SystemClock::Get());
  if (!manager) {
    state.SkipWithError(("cgroups: " + manager.error().message).c_str());
    return;
  }
  Scratch scratch;
  std::mutex mu;
  std::condition_variable cv;
  int64_t done = 0;
  int64_t failed = 0;
  std::map<uint64_t, std::unique_ptr<JobCgroup>> cgroups;  // guarded by mu
  ProcessSupervisor sup(SystemClock::Get(), [&](const ProcessExit& x) {
    std::unique_ptr<JobCgroup> cg;
    {
      std::lock_guard lock(mu);
      cg = std::move(cgroups[x.job.value]);
      cgroups.erase(x.job.value);
    }
    if (cg == nullptr || !cg->Destroy(Seconds(10), SystemClock::Get()).has_value()) {
      std::lock_guard lock(mu);
      ++failed;
    }
    std::lock_guard lock(mu);
    ++done;
    if (x.exit_code != 0 || x.signal != 0) ++failed;
    cv.notify_one();
  });

  ProcessSpec spec;
  spec.generation = Generation(1);
  spec.argv = {"/bin/true"};
  spec.env = {"PATH=/usr/bin:/bin", "HOME=/tmp"};
  spec.cwd = scratch.path();
  spec.stdout_path = scratch.path() + "/out";
  spec.append = true;
  spec.time_limit = Minutes(10);
  // Bound to its CPU as the agent binds a job (arg `pinned`).
  const bool pinned = state.range(1) != 0;
  if (pinned) spec.cpus = {0};

  uint64_t next_job = 1;
  int64_t launched = 0;
  int64_t target = 0;
  auto launch = [&] {
    spec.job = JobId(next_job++);
    auto cg = (*manager)->Create(
        {.job = spec.job, .generation = spec.generation, .cpus = spec.cpus, .memory_mb = 256});
    if (!cg) {
      state.SkipWithError(cg.error().message.c_str());
      return;
    }
    spec.cgroup_procs = (*cg)->procs_files();
    {
      std::lock_guard lock(mu);
      cgroups[spec.job.value] = std::move(*cg);
    }
    Status s = sup.Launch(spec);
    if (!s.has_value()) state.SkipWithError(s.error().message.c_str());
    ++launched;
  };
  for (auto _ : state) {
    ++target;
    while (launched < target + in_flight - 1) launch();
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return done >= target; });
  }
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return done >= launched; });
  }
  if (failed > 0) state.SkipWithError("some jobs failed");
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(std::string("/bin/true in a cgroup") + (pinned ? " on CPU 0" : "") + ", " +
                 std::to_string(in_flight) + " in flight");
}
BENCHMARK(BM_LaunchToExitInCgroup)
    ->ArgNames({"in_flight", "pinned"})
    ->ArgsProduct({{1, 8}, {0, 1}})
    ->UseRealTime()
    ->MinTime(2.0);

// The cgroup part alone: make a job cgroup (memory limit, one CPU) and remove it, no process.
void BM_CgroupCreateDestroy(benchmark::State& state) {
  auto manager =
      CgroupManager::Open({}, "exec-bench-" + std::to_string(getpid()), SystemClock::Get());
  if (!manager) {
    state.SkipWithError(("cgroups: " + manager.error().message).c_str());
    return;
  }
  uint64_t job = 1;
  for (auto _ : state) {
    auto cg = (*manager)->Create(
        {.job = JobId(job++), .generation = Generation(1), .cpus = {0}, .memory_mb = 256});
    if (!cg || !(*cg)->Destroy(Seconds(10), SystemClock::Get()).has_value()) {
      state.SkipWithError("cgroup");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CgroupCreateDestroy)->UseRealTime()->MinTime(2.0);

// The floor: posix_spawn + waitpid of /bin/true, nothing else.
void BM_BarePosixSpawn(benchmark::State& state) {
  char arg0[] = "/bin/true";
  char* argv[] = {arg0, nullptr};
  char env0[] = "PATH=/usr/bin:/bin";
  char* envp[] = {env0, nullptr};
  for (auto _ : state) {
    pid_t pid;
    if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv, envp) != 0) {
      state.SkipWithError("posix_spawn");
      break;
    }
    int status;
    waitpid(pid, &status, 0);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BarePosixSpawn)->UseRealTime()->MinTime(2.0);

}  // namespace
}  // namespace corral::agent

BENCHMARK_MAIN();
