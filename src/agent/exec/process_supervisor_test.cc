// The process supervisor on this machine's real processes (the `os` group): starting a
// process (environment, working directory, descriptors, signals, session, output files),
// reporting each exit once, what runs, and its own teardown. See the fixture's header for
// the fake clock and the waits.
#include "agent/exec/process_supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "agent/exec/testing/process_supervisor_fixture.h"

namespace corral::agent {
namespace {

using ::corral::testing::ProcessGone;
using ::corral::testing::WaitGone;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

TEST_F(ProcessSupervisorTest, ReportsExitCodes) {
  for (int code : {0, 3, 255}) {
    ProcessExit x = Run(Sh(100 + code, "exit " + std::to_string(code)));
    EXPECT_EQ(x.job, JobId(100 + code));
    EXPECT_EQ(x.generation, Generation(1));
    EXPECT_EQ(x.exit_code, code);
    EXPECT_EQ(x.signal, 0);
    EXPECT_FALSE(x.timed_out);
    EXPECT_FALSE(x.cancelled);
    EXPECT_LE(x.start_time, x.end_time);
    EXPECT_GT(x.start_time, Timestamp{});
  }
}

TEST_F(ProcessSupervisorTest, ReportsKillingSignal) {
  ProcessExit x = Run(Sh(1, "kill -KILL $$"));
  EXPECT_EQ(x.signal, SIGKILL);
  EXPECT_EQ(x.exit_code, 0);
}

TEST_F(ProcessSupervisorTest, ReportsCpuAndMemory) {
  ProcessExit x = Run(Sh(1, "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"));
  EXPECT_EQ(x.exit_code, 0);
  EXPECT_GT(x.cpu_seconds, 0.01);
  EXPECT_GT(x.max_rss_mb, 0u);
}

TEST_F(ProcessSupervisorTest, EnvironmentIsExactlyTheGivenOne) {
  setenv("CORRAL_TEST_LEAK", "1", 1);
  ProcessSpec spec = Sh(1, "");
  spec.argv = {"/usr/bin/env"};
  spec.env = {"A=1", "B=two words", "EMPTY="};
  EXPECT_EQ(Run(spec).exit_code, 0);
  EXPECT_EQ(ReadFile(spec.stdout_path), "A=1\nB=two words\nEMPTY=\n");
  unsetenv("CORRAL_TEST_LEAK");
}

TEST_F(ProcessSupervisorTest, RunsInTheGivenWorkingDirectory) {
  fs::create_directory(dir_ / "work");
  ProcessSpec spec = Sh(1, "");
  spec.argv = {"/bin/pwd", "-P"};
  spec.env = {};
  spec.cwd = dir_ / "work";
  EXPECT_EQ(Run(spec).exit_code, 0);
  EXPECT_EQ(ReadFile(spec.stdout_path), dir_ / "work\n");
}

TEST_F(ProcessSupervisorTest, ChildGetsOnlyStdioCleanSignalsAndOwnSession) {
  // A descriptor the test leaks on purpose (no O_CLOEXEC), a blocked and an ignored signal.
  int leaked = open("/dev/null", O_RDONLY);
  ASSERT_GE(leaked, 0);
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &block, &old_mask);
  struct sigaction ign {
  }, old_pipe{};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &old_pipe);

  ProcessSpec spec = Sh(1, "");
  spec.argv = {
      "/bin/sh", "-c",
      "ls /proc/$$/fd; "
      "ps -o pid=,pgid=,sid= -p $$ | awk '{print ($1==$2 && $2==$3) ? \"leader\" : \"no\"}'; "
      // The shell blocks signals while it waits for a child: look at what it was
      // given by replacing it.
      "exec grep -E '^(SigBlk|SigIgn):' /proc/self/status"};
  ProcessExit x = Run(spec);

  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  sigaction(SIGPIPE, &old_pipe, nullptr);
  close(leaked);

  EXPECT_EQ(x.exit_code, 0);
  std::istringstream out(ReadFile(spec.stdout_path));
  std::string fds, line;
  for (int i = 0; i < 3 && std::getline(out, line); ++i) fds += line + " ";
  EXPECT_EQ(fds, "0 1 2 ");  // `ls` lists the shell's descriptors: stdio only
  std::string blocked, ignored, session;
  std::getline(out, session);
  std::getline(out, blocked);
  std::getline(out, ignored);
  EXPECT_EQ(blocked, "SigBlk:\t0000000000000000");
  // glibc's posix_spawn leaves its two internal signals (32 and 33, which sigfillset leaves
  // out of the default set) ignored; no other signal may stay ignored.
  ASSERT_EQ(ignored.rfind("SigIgn:\t", 0), 0u) << ignored;
  uint64_t ignored_mask = std::stoull(ignored.substr(8), nullptr, 16);
  EXPECT_EQ(ignored_mask & ~((uint64_t{1} << 31) | (uint64_t{1} << 32)), 0u) << ignored;
  EXPECT_EQ(session, "leader");
}

TEST_F(ProcessSupervisorTest, WritesStdoutAndStderrToSeparateFiles) {
  ProcessSpec spec = Sh(1, "echo out; echo err >&2");
  spec.stderr_path = dir_ / "job1.err";
  EXPECT_EQ(Run(spec).exit_code, 0);
  EXPECT_EQ(ReadFile(spec.stdout_path), "out\n");
  EXPECT_EQ(ReadFile(spec.stderr_path), "err\n");
  struct stat st {};
  ASSERT_EQ(stat(spec.stdout_path.c_str(), &st), 0);
  EXPECT_EQ(
      st.st_mode & 0777, 0644 & ~[] {
        mode_t m = umask(0);
        umask(m);
        return m;
      }());
}

TEST_F(ProcessSupervisorTest, WritesBothStreamsToOneFileInOrder) {
  ProcessSpec spec = Sh(1, "echo a; echo b >&2; echo c; echo d >&2");
  spec.stderr_path = "";
  EXPECT_EQ(Run(spec).exit_code, 0);
  EXPECT_EQ(ReadFile(spec.stdout_path), "a\nb\nc\nd\n");
}

TEST_F(ProcessSupervisorTest, RelativeOutputPathIsUnderTheWorkingDirectory) {
  ProcessSpec spec = Sh(1, "echo hi");
  spec.stdout_path = "rel.out";
  EXPECT_EQ(Run(spec).exit_code, 0);
  EXPECT_EQ(ReadFile(dir_ / "rel.out"), "hi\n");
}

TEST_F(ProcessSupervisorTest, TruncatesOrAppends) {
  ProcessSpec spec = Sh(1, "echo new");
  WriteFile(spec.stdout_path, "old old old\n");
  EXPECT_EQ(Run(spec).exit_code, 0);
  EXPECT_EQ(ReadFile(spec.stdout_path), "new\n");

  ProcessSpec again = Sh(2, "echo more");
  again.stdout_path = spec.stdout_path;
  again.append = true;
  EXPECT_EQ(Run(again).exit_code, 0);
  EXPECT_EQ(ReadFile(spec.stdout_path), "new\nmore\n");
}

TEST_F(ProcessSupervisorTest, MissingWorkingDirectoryStartsNothing) {
  ProcessSpec spec = Sh(1, "touch " + (dir_ / "ran"));
  spec.cwd = dir_ / "nope";
  Status s = sup_->Launch(spec);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.error().message, HasSubstr(dir_ / "nope"));
  EXPECT_TRUE(sup_->Running().empty());
  // The job id is free again, and nothing of the failed launch is ever reported.
  spec.cwd = dir_.path();
  spec.argv = {"/bin/true"};
  EXPECT_EQ(Run(spec).exit_code, 0);
  EXPECT_FALSE(fs::exists(dir_ / "ran"));
  EXPECT_EQ(exits_.Count(JobId(1)), 1u);
}

TEST_F(ProcessSupervisorTest, MissingOutputDirectoryStartsNothing) {
  ProcessSpec spec = Sh(1, "touch " + (dir_ / "ran"));
  spec.stdout_path = dir_ / "nodir/out";
  Status s = sup_->Launch(spec);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.error().message, HasSubstr(dir_ / "nodir/out"));
  EXPECT_FALSE(fs::exists(dir_ / "nodir"));

  spec.stdout_path = dir_ / "out";
  spec.stderr_path = dir_ / "nodir/err";
  s = sup_->Launch(spec);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.error().message, HasSubstr(dir_ / "nodir/err"));
  EXPECT_TRUE(sup_->Running().empty());
  EXPECT_FALSE(fs::exists(dir_ / "ran"));
}

TEST_F(ProcessSupervisorTest, MissingProgramIsAnInternalError) {
  ProcessSpec spec = Sh(1, "");
  spec.argv = {dir_ / "no-such-program"};
  Status s = sup_->Launch(spec);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInternal);
  EXPECT_THAT(s.error().message, HasSubstr("no-such-program"));
  EXPECT_TRUE(sup_->Running().empty());
}

TEST_F(ProcessSupervisorTest, EmptyArgvIsInvalid) {
  ProcessSpec spec = Sh(1, "");
  spec.argv = {};
  Status s = sup_->Launch(spec);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(ProcessSupervisorTest, LaunchingARunningJobAgainFails) {
  ProcessSpec spec = Sh(1, "sleep 1000");
  ASSERT_TRUE(sup_->Launch(spec).has_value());
  Status again = sup_->Launch(spec);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::kAlreadyExists);
  ASSERT_EQ(sup_->Running().size(), 1u);
  ASSERT_TRUE(sup_->Cancel(JobId(1), Generation(1)).has_value());
  EXPECT_TRUE(exits_.Wait(JobId(1)).cancelled);
  // Once it has ended the id may run again.
  spec.argv = {"/bin/true"};
  ASSERT_TRUE(sup_->Launch(spec).has_value());
  EXPECT_TRUE(exits_.WaitCountOf(JobId(1), 2));
}

TEST_F(ProcessSupervisorTest, RunningListsWhatRuns) {
  ASSERT_TRUE(sup_->Launch(Sh(1, "sleep 1000")).has_value());
  ProcessSpec two = Sh(2, "sleep 1000");
  two.generation = Generation(7);
  ASSERT_TRUE(sup_->Launch(two).has_value());
  std::vector<RunningProcess> running = sup_->Running();
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0].job, JobId(1));
  EXPECT_EQ(running[1].job, JobId(2));
  EXPECT_EQ(running[1].generation, Generation(7));
  for (const RunningProcess& r : running) {
    EXPECT_GT(r.pid, 0);
    EXPECT_EQ(getpgid(r.pid), r.pid);
    EXPECT_EQ(getsid(r.pid), r.pid);
    EXPECT_GT(r.start_time, Timestamp{});
  }
  ASSERT_TRUE(sup_->Cancel(JobId(1), Generation(1)).has_value());
  exits_.Wait(JobId(1));
  running = sup_->Running();
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(running[0].job, JobId(2));
}

TEST_F(ProcessSupervisorTest, StepTasksAreKeyedApartFromTheBatchScript) {
  ProcessSpec batch = Sh(1, "sleep 1000");
  ASSERT_TRUE(sup_->Launch(batch).has_value());
  std::vector<ProcessSpec> tasks;
  for (uint32_t t = 0; t < 2; ++t) {
    ProcessSpec task = Sh(1, "sleep 1000");
    task.step = 0;
    task.task = t;
    task.stdout_path = dir_ / ("task" + std::to_string(t) + ".out");
    ASSERT_TRUE(sup_->Launch(task).has_value());
    tasks.push_back(task);
  }
  EXPECT_EQ(sup_->Launch(tasks[1]).error().code, ErrorCode::kAlreadyExists);
  ProcessSpec other_step = tasks[0];
  other_step.step = 1;
  ASSERT_TRUE(sup_->Launch(other_step).has_value());
  std::vector<RunningProcess> running = sup_->Running();
  ASSERT_EQ(running.size(), 4u);
  EXPECT_EQ(running[0].step, 0u);
  EXPECT_EQ(running[1].task, 1u);
  EXPECT_EQ(running[2].step, 1u);
  EXPECT_EQ(running[3].step, kBatchStepId);

  // One step's tasks end; the batch script and the other step go on.
  EXPECT_EQ(sup_->CancelStep(JobId(1), Generation(1), 7).error().code, ErrorCode::kNotFound);
  ASSERT_TRUE(sup_->CancelStep(JobId(1), Generation(1), 0).has_value());
  ASSERT_TRUE(exits_.WaitCountOf(JobId(1), 2));
  for (const ProcessExit& x : exits_.All()[JobId(1)]) {
    EXPECT_EQ(x.step, 0u);
    EXPECT_TRUE(x.cancelled);
  }
  ASSERT_EQ(sup_->Running().size(), 2u);
  // A job's signal and cancel reach every process of the job.
  ASSERT_TRUE(sup_->Signal(JobId(1), Generation(1), SIGTERM).has_value());
  ASSERT_TRUE(exits_.WaitCountOf(JobId(1), 4));
  std::set<uint32_t> steps;
  for (const ProcessExit& x : exits_.All()[JobId(1)]) steps.insert(x.step);
  EXPECT_EQ(steps, (std::set<uint32_t>{0, 1, kBatchStepId}));
  EXPECT_TRUE(sup_->Running().empty());
}

TEST_F(ProcessSupervisorTest, OutputsCanBeGivenDescriptors) {
  int out[2], err[2];
  ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(err, O_CLOEXEC), 0);
  ProcessSpec spec = Sh(1, "echo to-out; echo to-err >&2");
  spec.stdout_fd = out[1];
  spec.stderr_fd = err[1];
  ProcessExit x = Run(spec);
  EXPECT_EQ(x.exit_code, 0);
  // The supervisor kept no copy: once ours are closed, the pipes reach end of file.
  close(out[1]);
  close(err[1]);
  auto drain = [](int fd) {
    std::string s;
    char buf[256];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<size_t>(n));
    close(fd);
    return s;
  };
  EXPECT_EQ(drain(out[0]), "to-out\n");
  EXPECT_EQ(drain(err[0]), "to-err\n");
  EXPECT_FALSE(fs::exists(spec.stdout_path));
}

TEST_F(ProcessSupervisorTest, DestructorKillsEverythingWithoutReporting) {
  ProcessSpec spec = Sh(1, "sleep 1000 & echo $! > " + Fifo("bg.pid").path() + "; wait");
  ASSERT_TRUE(sup_->Launch(spec).has_value());
  int bg = std::stoi(Line("bg.pid"));
  int leader = sup_->Running().at(0).pid;
  sup_.reset();
  EXPECT_TRUE(ProcessGone(leader));
  EXPECT_TRUE(WaitGone(bg));
  EXPECT_EQ(exits_.Count(JobId(1)), 0u);
}

TEST_F(ProcessSupervisorTest, TwoHundredJobsBackToBackAreEachReportedOnce) {
  constexpr int kJobs = 200;
  for (int i = 1; i <= kJobs; ++i) {
    ProcessSpec spec = Sh(i, "");
    spec.argv = {"/bin/true"};
    spec.stdout_path = dir_ / "all.out";
    spec.append = true;
    spec.time_limit = Seconds(60);  // every job has a deadline, as on a real cluster
    Status s = sup_->Launch(spec);
    ASSERT_TRUE(s.has_value()) << s.error().message;
  }
  ASSERT_TRUE(exits_.WaitCount(kJobs));
  sup_.reset();  // nothing more can arrive
  auto all = exits_.All();
  ASSERT_EQ(all.size(), static_cast<size_t>(kJobs));
  for (const auto& [job, xs] : all) {
    EXPECT_EQ(xs.size(), 1u) << job.value;
    EXPECT_EQ(xs.at(0).exit_code, 0);
  }
}

TEST_F(ProcessSupervisorTest, ConcurrentLaunchesAreEachReportedOnceAndLeaveTheThreadIdle) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        ProcessSpec spec = Sh(1 + t * kPerThread + i, "");
        spec.argv = {"/bin/true"};
        spec.stdout_path = "";
        Status s = sup_->Launch(spec);
        EXPECT_TRUE(s.has_value()) << s.error().message;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(exits_.WaitCount(kThreads * kPerThread));
  EXPECT_TRUE(sup_->Running().empty());
  // Nothing is left for the supervisor's thread to wait on but its wakeup: a reaped pidfd
  // left in its epoll set would report EPOLLHUP forever and keep the thread spinning.
  EXPECT_EQ(EpollWatches(), std::vector<size_t>{1});
  for (const auto& [job, xs] : exits_.All()) EXPECT_EQ(xs.size(), 1u) << job.value;
}

TEST_F(ProcessSupervisorTest, ChildReapedBehindItsBackIsStillReportedOnce) {
  ASSERT_TRUE(sup_->Launch(Sh(1, "sleep 1000")).has_value());
  EXPECT_EQ(EpollWatches(), std::vector<size_t>{2});  // its wakeup and the process's pidfd
  int pid = sup_->Running().at(0).pid;
  // Races the supervisor's thread for the reap; either way one report must come.
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_TRUE(x.exit_code == -1 || x.signal == SIGKILL) << x.exit_code << " " << x.signal;
  EXPECT_TRUE(sup_->Running().empty());
  EXPECT_EQ(EpollWatches(), std::vector<size_t>{1});  // its pidfd is out of the epoll set
  EXPECT_EQ(exits_.Count(JobId(1)), 1u);
}

}  // namespace
}  // namespace corral::agent
