// NodeMonitor's isolation per run of a job, on this machine's real cgroups (as root); skipped,
// saying why, where the agent could not use them either.
#include "agent/node_monitor.h"

#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include <gtest/gtest.h>

#include "agent/exec/process_supervisor.h"
#include "core/clock.h"

namespace corral::agent {
namespace {

namespace fs = std::filesystem;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string DirOf(const std::string& file) { return file.substr(0, file.rfind('/')); }

class NodeMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/corral-monitor-XXXXXX";
    dir_ = mkdtemp(tmpl);
    config_.name = "nmtest-" + std::to_string(getpid());
    config_.state_dir = dir_;
    config_.simulated_gpus.count = 2;
    config_.simulated_gpus.numa_nodes = 1;
    config_.simulated_gpus.node_name = config_.name;
    config_.sample_interval = Seconds(3600);
    config_.health.interval = Seconds(3600);
    auto backend = MakeGpuBackend(config_, SystemClock::Get());
    ASSERT_TRUE(backend.has_value()) << backend.error().message;
    backend_ = std::move(*backend);
    monitor_ = std::make_unique<NodeMonitor>(config_, *backend_, *backend_->Discover(),
                                             SystemClock::Get(), nullptr);
    monitor_->Start();
    if (monitor_->IsolationSummary().rfind("no cgroups", 0) == 0) {
      GTEST_SKIP() << "cgroups are not usable here: " << monitor_->IsolationSummary();
    }
    supervisor_ =
        std::make_unique<ProcessSupervisor>(SystemClock::Get(), [this](const ProcessExit& e) {
          std::lock_guard<std::mutex> lock(mu_);
          exits_.push_back(e);
          cv_.notify_all();
        });
  }
  void TearDown() override {
    supervisor_.reset();
    monitor_.reset();
    fs::remove_all(dir_);
  }

  // Job 1 on GPU `gpu` of this node (and of `other` when given), generation `gen`.
  Job MakeJob(uint64_t gen, uint32_t gpu, const std::string& other = "") const {
    Job job;
    job.id = JobId(1);
    job.allocation.generation = Generation(gen);
    if (!other.empty())
      job.allocation.nodes.push_back({.node_name = other, .cpus = 1, .mem_mb = 64});
    job.allocation.nodes.push_back(
        {.node_name = config_.name, .cpus = 1, .mem_mb = 64, .gpus = GpuSet(1u << gpu)});
    return job;
  }

  // Runs `body` under /bin/sh with the isolation of `prepared` and returns its output.
  std::string Run(const ProcessSpec& prepared, uint64_t gen, const std::string& body) {
    ProcessSpec spec = prepared;
    spec.job = JobId(1);
    spec.generation = Generation(gen);
    spec.step = 0;
    spec.argv = {"/bin/sh", "-c", body};
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.cwd = dir_;
    spec.stdout_path = dir_ + "/out" + std::to_string(gen);
    Status s = supervisor_->Launch(spec);
    EXPECT_TRUE(s.has_value()) << s.error().message;
    if (!s) return "";
    std::unique_lock<std::mutex> lock(mu_);
    EXPECT_TRUE(cv_.wait_for(lock, std::chrono::seconds(30), [&] {
      return std::any_of(exits_.begin(), exits_.end(),
                         [&](const ProcessExit& e) { return e.generation == spec.generation; });
    }));
    return Read(spec.stdout_path);
  }

  std::string dir_;
  AgentConfig config_;
  std::unique_ptr<GpuBackend> backend_;
  std::unique_ptr<NodeMonitor> monitor_;
  std::unique_ptr<ProcessSupervisor> supervisor_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ProcessExit> exits_;
};

// A job requeued onto the same node starts its next run while the previous run is still
// being torn down: that teardown must leave the new run's cgroup alone (it used to remove
// it, and the new run's process failed to join it: "cgroup: No such device").
TEST_F(NodeMonitorTest, ARequeuedJobsRunsHaveTheirOwnCgroups) {
  ProcessSpec first, second;
  ASSERT_TRUE(monitor_->PrepareJob(MakeJob(1, 0), &first).has_value());
  ASSERT_TRUE(monitor_->PrepareJob(MakeJob(2, 1), &second).has_value());
  ASSERT_FALSE(first.cgroup_procs.empty());
  ASSERT_EQ(first.cgroup_procs.size(), second.cgroup_procs.size());
  for (size_t i = 0; i < first.cgroup_procs.size(); ++i) {
    EXPECT_NE(first.cgroup_procs[i], second.cgroup_procs[i]);
    EXPECT_NE(first.cgroup_procs[i].find("/job_1_1/"), std::string::npos) << first.cgroup_procs[i];
    EXPECT_NE(second.cgroup_procs[i].find("/job_1_2/"), std::string::npos)
        << second.cgroup_procs[i];
  }
  EXPECT_EQ(monitor_->Runs(),
            (std::vector<JobRun>{{JobId(1), Generation(1)}, {JobId(1), Generation(2)}}));

  // The first run's exit comes after the second run was prepared.
  api::JobEvent ev;
  monitor_->FinishJob({JobId(1), Generation(1)}, &ev);
  for (const auto& f : first.cgroup_procs) EXPECT_FALSE(fs::exists(DirOf(f))) << f;
  for (const auto& f : second.cgroup_procs) EXPECT_TRUE(fs::exists(DirOf(f))) << f;
  EXPECT_EQ(monitor_->Runs(), (std::vector<JobRun>{{JobId(1), Generation(2)}}));

  // The second run's process joins its cgroup.
  std::string out = Run(second, 2, "cat /proc/self/cgroup");
  EXPECT_NE(out.find("/job_1_2\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("/job_1_1\n"), std::string::npos) << out;
  monitor_->FinishJob({JobId(1), Generation(2)}, &ev);
  for (const auto& f : second.cgroup_procs) EXPECT_FALSE(fs::exists(DirOf(f))) << f;
  EXPECT_TRUE(monitor_->Runs().empty());
}

// A node of a multi-node job that does not run its batch step: the job's cgroup is made by
// its first step task here, shared by the next ones, and removed (with what is left in it)
// when the agent releases the run.
TEST_F(NodeMonitorTest, StepTasksOnAnotherNodeShareTheJobsCgroupUntilItIsReleased) {
  Job job = MakeJob(3, 1, /*other=*/"batch-host");
  ProcessSpec a, b;
  ASSERT_TRUE(monitor_->PrepareTask(job, {}, &a).has_value());
  ASSERT_TRUE(monitor_->PrepareTask(job, {}, &b).has_value());
  ASSERT_FALSE(a.cgroup_procs.empty());
  EXPECT_EQ(a.cgroup_procs, b.cgroup_procs);
  EXPECT_EQ(a.cpus, b.cpus);
  EXPECT_EQ(monitor_->Runs(), (std::vector<JobRun>{{JobId(1), Generation(3)}}));
  // A process that left its task (a daemon) is still in the job's cgroup.
  std::string pidfile = dir_ + "/daemon.pid";
  // `$(...)` returns once the daemon has printed its pid and let go of the pipe.
  std::string out =
      Run(a, 3,
          "pid=$(setsid -f sh -c 'echo $$; exec sleep 300 >/dev/null'); echo $pid > " + pidfile +
              "; cat /proc/self/cgroup");
  EXPECT_NE(out.find("/job_1_3\n"), std::string::npos) << out;
  int daemon = 0;
  std::ifstream(pidfile) >> daemon;
  ASSERT_GT(daemon, 1);
  EXPECT_EQ(kill(daemon, 0), 0);

  monitor_->ReleaseRun({JobId(1), Generation(3)});
  for (const auto& f : a.cgroup_procs) EXPECT_FALSE(fs::exists(DirOf(f))) << f;
  EXPECT_TRUE(monitor_->Runs().empty());
  std::string stat = Read("/proc/" + std::to_string(daemon) + "/stat");
  EXPECT_TRUE(stat.empty() || stat.find(") Z") != std::string::npos)
      << "the daemon is gone: " << stat;
  monitor_->ReleaseRun({JobId(1), Generation(3)});  // twice: nothing
}

// On the batch host, step tasks join the batch step's cgroup; releasing the run there is
// FinishJob's, not ReleaseRun's.
TEST_F(NodeMonitorTest, StepTasksOnTheBatchHostJoinTheBatchStepsCgroup) {
  Job job = MakeJob(4, 0);
  ProcessSpec batch, task;
  ASSERT_TRUE(monitor_->PrepareJob(job, &batch).has_value());
  ASSERT_TRUE(monitor_->PrepareTask(job, {}, &task).has_value());
  EXPECT_EQ(batch.cgroup_procs, task.cgroup_procs);
  monitor_->ReleaseRun({JobId(1), Generation(4)});
  for (const auto& f : batch.cgroup_procs) EXPECT_TRUE(fs::exists(DirOf(f))) << f;
  api::JobEvent ev;
  monitor_->FinishJob({JobId(1), Generation(4)}, &ev);
  for (const auto& f : batch.cgroup_procs) EXPECT_FALSE(fs::exists(DirOf(f))) << f;
}

}  // namespace
}  // namespace corral::agent
