// The process supervisor on this machine's real processes (the `os` test group). Its
// deadlines run on a fake clock: a test advances the clock, then has the supervisor look at
// its deadlines again with `SetTimeLimit` (which does so at once, as its contract says), so no
// test waits for a real time limit. Every wait is for a condition (an exit, a line on a FIFO,
// a pidfd) with a deadline; none sleeps. `ProcessDeadlines` has the timing logic's own tests.
#include "agent/exec/process_supervisor.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "agent/exec/testing/os_wait.h"
#include "core/testing/fake_clock.h"

namespace corral::agent {
namespace {

using ::corral::testing::LineFifo;
using ::corral::testing::ProcessGone;
using ::corral::testing::WaitGone;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "corral-exec-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = fs::canonical(tmpl).string();
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

// The processes whose process group is `pgid` that still run (not zombies).
std::vector<int> GroupMembers(int pgid) {
  std::vector<int> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    int pid = std::stoi(name);
    if (getpgid(pid) == pgid && !ProcessGone(pid)) out.push_back(pid);
  }
  return out;
}

// How many descriptors each epoll instance of this process watches (/proc/self/fdinfo). The
// supervisor's watches its wakeup eventfd and one pidfd per process it runs; a reaped pidfd
// left in it would report EPOLLHUP forever and keep its thread spinning.
std::vector<size_t> EpollWatches() {
  std::vector<size_t> out;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (fs::read_symlink(entry.path(), ec).string() != "anon_inode:[eventpoll]") continue;
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

const std::vector<std::string> kBaseEnv = {"PATH=/usr/bin:/bin"};

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
  LineFifo& Fifo(const std::string& name) {
    auto& f = fifos_[name];
    if (f == nullptr) f = std::make_unique<LineFifo>(dir_ / name);
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
  std::map<std::string, std::unique_ptr<LineFifo>> fifos_;
  Exits exits_;
  testing::FakeClock clock_;
  std::unique_ptr<ProcessSupervisor> sup_ =
      std::make_unique<ProcessSupervisor>(clock_, exits_.Callback());
};

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

TEST_F(ProcessSupervisorTest, TimeLimitTermTrapExitsOnItsOwn) {
  ProcessSpec spec = Trapping(1, Millis(700), /*term_exit=*/7);
  spec.kill_grace = Seconds(60);
  LaunchReady(spec);
  clock_.Advance(Millis(699));
  Recheck(1, Millis(700));
  EXPECT_EQ(exits_.Count(JobId(1)), 0u);
  clock_.Advance(Millis(1));
  Recheck(1, Millis(700));
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_TRUE(x.timed_out);
  EXPECT_FALSE(x.cancelled);
  EXPECT_EQ(x.exit_code, 7);
  EXPECT_EQ(x.signal, 0);
  EXPECT_EQ(Ran(x), Millis(700));  // by its trap, long before the grace ends
  EXPECT_EQ(ReadFile(spec.stdout_path), "term\n");
}

TEST_F(ProcessSupervisorTest, TimeLimitIgnoredTermIsFollowedByKill) {
  // The script ignores SIGTERM; a `sleep` it started before that does not, and its end shows
  // that the SIGTERM has been sent.
  std::string ready = Fifo("ready").path();
  ProcessSpec spec = Sh(1, "sleep 1000 & canary=$!; trap '' TERM; echo $canary > " + ready +
                               "; while :; do sleep 1000 & wait; done");
  spec.time_limit = Millis(700);
  spec.kill_grace = Millis(300);
  ASSERT_TRUE(sup_->Launch(spec).has_value());
  int canary = std::stoi(Line("ready"));
  clock_.Advance(Millis(700));
  Recheck(1, Millis(700));
  ASSERT_TRUE(WaitGone(canary));  // SIGTERM sent; the script ignores it
  EXPECT_EQ(exits_.Count(JobId(1)), 0u);
  clock_.Advance(Millis(300));
  Recheck(1, Millis(700));
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_TRUE(x.timed_out);
  EXPECT_EQ(x.signal, SIGKILL);
  EXPECT_EQ(Ran(x), Millis(1000));
}

TEST_F(ProcessSupervisorTest, WarningSignalComesBeforeTheLimit) {
  ProcessSpec spec = Trapping(1, Millis(1200));
  spec.warn = SignalSpec{.signal = SIGUSR1, .before = Millis(500)};
  LaunchReady(spec);
  clock_.Advance(Millis(700));
  Recheck(1, Millis(1200));
  ASSERT_EQ(Line("events1"), "warned");
  clock_.Advance(Millis(500));
  Recheck(1, Millis(1200));
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_TRUE(x.timed_out);
  EXPECT_EQ(x.exit_code, 0);
  EXPECT_EQ(ReadFile(spec.stdout_path), "warned\nterm\n");
}

TEST_F(ProcessSupervisorTest, CancelEndsTheWholeGroup) {
  std::string bg = Fifo("bg.pid").path();
  ProcessSpec spec =
      Sh(1, "sleep 1000 & echo $! > " + bg + "; (sleep 1000; true) & echo $! > " + bg + "; wait");
  ASSERT_TRUE(sup_->Launch(spec).has_value());
  std::vector<int> pids;
  for (int i = 0; i < 2; ++i) pids.push_back(std::stoi(Line("bg.pid")));
  for (int p : pids) EXPECT_FALSE(ProcessGone(p));
  ASSERT_TRUE(sup_->Cancel(JobId(1), Generation(1)).has_value());
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_TRUE(x.cancelled);
  EXPECT_FALSE(x.timed_out);
  EXPECT_EQ(x.signal, SIGTERM);
  for (int p : pids) EXPECT_TRUE(WaitGone(p)) << p;
  EXPECT_TRUE(sup_->Running().empty());
  EXPECT_EQ(sup_->Cancel(JobId(1), Generation(1)).error().code, ErrorCode::kNotFound);
}

TEST_F(ProcessSupervisorTest, CancelKillsAfterTheGraceWhenTermIsIgnored) {
  std::string ready = Fifo("ready").path();
  ProcessSpec spec =
      Sh(1, "trap '' TERM; echo ready > " + ready + "; sleep 1000 & wait; wait; wait");
  spec.kill_grace = Millis(200);
  ASSERT_TRUE(sup_->Launch(spec).has_value());
  ASSERT_EQ(Line("ready"), "ready");
  ASSERT_TRUE(sup_->Cancel(JobId(1), Generation(1)).has_value());
  clock_.Advance(Millis(200));
  Recheck(1, kUnlimited);
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_TRUE(x.cancelled);
  EXPECT_EQ(x.signal, SIGKILL);
}

TEST_F(ProcessSupervisorTest, LeaderExitKillsWhatIsLeftOfTheGroup) {
  // One child that would die of SIGTERM/SIGHUP, one that ignores both.
  ProcessSpec spec = Sh(1,
                        "echo $$ > leader.pid; sleep 1000 & echo $! > bg.pid; "
                        "(trap '' TERM HUP; sleep 1000; true) & echo $! >> bg.pid; exit 4");
  ProcessExit x = Run(spec);
  EXPECT_EQ(x.exit_code, 4);
  int leader = std::stoi(ReadFile(dir_ / "leader.pid"));
  std::istringstream in(ReadFile(dir_ / "bg.pid"));
  std::vector<int> pids;
  for (int p; in >> p;) pids.push_back(p);
  ASSERT_EQ(pids.size(), 2u);
  for (int p : pids) EXPECT_TRUE(WaitGone(p)) << p;
  // Nothing that still runs is left in the job's process group (the background sleeps'
  // own children included): each member still seen is waited for.
  for (int p : GroupMembers(leader)) EXPECT_TRUE(WaitGone(p)) << p;
  EXPECT_TRUE(GroupMembers(leader).empty());
}

TEST_F(ProcessSupervisorTest, SignalReachesTheTrap) {
  std::string ready = Fifo("ready").path();
  ProcessSpec spec = Sh(1, "trap 'echo got; exit 5' USR1; echo ready > " + ready +
                               "; while :; do sleep 1000 & wait; done");
  ASSERT_TRUE(sup_->Launch(spec).has_value());
  ASSERT_EQ(Line("ready"), "ready");
  EXPECT_EQ(sup_->Signal(JobId(1), Generation(2), SIGUSR1).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(sup_->Signal(JobId(2), Generation(1), SIGUSR1).error().code, ErrorCode::kNotFound);
  ASSERT_TRUE(sup_->Signal(JobId(1), Generation(1), SIGUSR1).has_value());
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_EQ(x.exit_code, 5);
  EXPECT_FALSE(x.cancelled);
  EXPECT_EQ(ReadFile(spec.stdout_path), "got\n");
  EXPECT_EQ(sup_->Signal(JobId(1), Generation(1), SIGUSR1).error().code, ErrorCode::kNotFound);
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

// A requeued job starts again (generation 2) while its previous run is still being killed:
// both run, and each is signalled, cancelled and reported under its own generation.
TEST_F(ProcessSupervisorTest, ANewRunOfAJobStartsWhileThePreviousOneEnds) {
  std::string ready = Fifo("ready").path();
  ProcessSpec old_run = Sh(1, "trap '' TERM; echo ready > " + ready + "; sleep 1000");
  old_run.kill_grace = Millis(300);  // it ignores SIGTERM: killed after the grace
  ASSERT_TRUE(sup_->Launch(old_run).has_value());
  ASSERT_EQ(Line("ready"), "ready");
  ASSERT_TRUE(sup_->Cancel(JobId(1), Generation(1)).has_value());
  ProcessSpec new_run = Sh(1, "sleep 1000");
  new_run.generation = Generation(2);
  ASSERT_TRUE(sup_->Launch(new_run).has_value());
  EXPECT_EQ(sup_->Launch(new_run).error().code, ErrorCode::kAlreadyExists);
  auto running = sup_->Running();
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0].generation, Generation(1));
  EXPECT_EQ(running[1].generation, Generation(2));
  clock_.Advance(Millis(300));
  Recheck(1, kUnlimited);  // the old run's grace is over
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_EQ(x.generation, Generation(1));
  EXPECT_TRUE(x.cancelled);
  EXPECT_EQ(x.signal, SIGKILL);
  ASSERT_EQ(sup_->Running().size(), 1u);
  EXPECT_EQ(sup_->Running()[0].generation, Generation(2));
  EXPECT_EQ(sup_->Cancel(JobId(1), Generation(1)).error().code, ErrorCode::kNotFound);
  ASSERT_TRUE(sup_->Cancel(JobId(1), Generation(2)).has_value());
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

TEST_F(ProcessSupervisorTest, SignalStepReachesOnlyThatStep) {
  std::string ready = Fifo("ready").path();
  ProcessSpec batch = Sh(1, "trap 'echo batch-got' USR1; echo batch > " + ready +
                                "; while :; do sleep 1000 & wait; done");
  ASSERT_TRUE(sup_->Launch(batch).has_value());
  ProcessSpec task = Sh(1, "trap 'echo task-got; exit 3' USR1; echo task > " + ready +
                               "; while :; do sleep 1000 & wait; done");
  task.step = 0;
  task.stdout_path = dir_ / "task.out";
  ASSERT_TRUE(sup_->Launch(task).has_value());
  std::set<std::string> ready_ones = {Line("ready"), Line("ready")};
  ASSERT_EQ(ready_ones, (std::set<std::string>{"batch", "task"}));
  ASSERT_TRUE(sup_->SignalStep(JobId(1), Generation(1), 0, SIGUSR1).has_value());
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_EQ(x.step, 0u);
  EXPECT_EQ(x.exit_code, 3);
  EXPECT_EQ(ReadFile(dir_ / "task.out"), "task-got\n");
  EXPECT_EQ(ReadFile(batch.stdout_path), "");
  EXPECT_EQ(sup_->SignalStep(JobId(1), Generation(1), 0, SIGUSR1).error().code,
            ErrorCode::kNotFound);
  ASSERT_TRUE(sup_->Cancel(JobId(1), Generation(1)).has_value());
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

// Time limits changed while the processes run: each `SetTimeLimit` is also the moment the
// deadlines of the fake time are checked.
class ProcessSupervisorLimitTest : public ProcessSupervisorTest {};

TEST_F(ProcessSupervisorLimitTest, ALimitBelowTheTimeRunEndsTheProcessNow) {
  ProcessSpec a = Trapping(1, Minutes(60));
  LaunchReady(a);
  clock_.Advance(Minutes(30));
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(1), Generation(1), Minutes(20)).has_value());
  ProcessExit x = exits_.Wait(JobId(1));
  EXPECT_TRUE(x.timed_out);
  EXPECT_FALSE(x.cancelled);
  EXPECT_EQ(x.exit_code, 0);
  EXPECT_EQ(Ran(x), Minutes(30));
  EXPECT_EQ(ReadFile(a.stdout_path), "term\n");
  // Bad input changes nothing; a run that is not there is not found.
  EXPECT_EQ(sup_->SetTimeLimit(JobId(1), Generation(1), Minutes(5)).error().code,
            ErrorCode::kNotFound);
  EXPECT_EQ(sup_->SetTimeLimit(JobId(1), Generation(1), Seconds(0)).error().code,
            ErrorCode::kInvalidArgument);
}

TEST_F(ProcessSupervisorLimitTest, LoweringTimesOutAtTheNewDeadline) {
  ProcessSpec b = Trapping(2, Minutes(60));
  LaunchReady(b);
  ProcessSpec sentinel = Trapping(3, Minutes(40));  // times out in the same pass as the check
  LaunchReady(sentinel);
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(2), Generation(1), Minutes(45)).has_value());
  EXPECT_EQ(sup_->SetTimeLimit(JobId(2), Generation(2), Minutes(45)).error().code,
            ErrorCode::kNotFound);
  clock_.Advance(Minutes(44));
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(2), Generation(1), Minutes(45)).has_value());
  EXPECT_TRUE(exits_.Wait(JobId(3)).timed_out);
  clock_.Advance(Minutes(2));
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(2), Generation(1), Minutes(45)).has_value());
  ProcessExit x = exits_.Wait(JobId(2));
  EXPECT_TRUE(x.timed_out);
  EXPECT_EQ(Ran(x), Minutes(46));  // not at 44 minutes, nor at the old 60
  EXPECT_EQ(ReadFile(b.stdout_path), "term\n");
}

TEST_F(ProcessSupervisorLimitTest, RaisingLetsItRunPastTheOldDeadline) {
  ProcessSpec c = Trapping(4, Minutes(10));
  LaunchReady(c);
  ProcessSpec sentinel = Trapping(5, Minutes(15));
  LaunchReady(sentinel);
  clock_.Advance(Minutes(5));
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(4), Generation(1), Minutes(60)).has_value());
  clock_.Advance(Minutes(15));  // 20 minutes: past the old limit
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(4), Generation(1), Minutes(60)).has_value());
  EXPECT_TRUE(exits_.Wait(JobId(5)).timed_out);
  EXPECT_EQ(exits_.Count(JobId(4)), 0u);
  clock_.Advance(Minutes(41));
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(4), Generation(1), Minutes(60)).has_value());
  ProcessExit x = exits_.Wait(JobId(4));
  EXPECT_TRUE(x.timed_out);
  EXPECT_EQ(Ran(x), Minutes(61));
  // An unlimited limit has no deadline at all.
  ProcessSpec d = Trapping(6, Minutes(1));
  LaunchReady(d);
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(6), Generation(1), kUnlimited).has_value());
  clock_.Advance(Minutes(100000));
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(6), Generation(1), kUnlimited).has_value());
  ASSERT_TRUE(sup_->Cancel(JobId(6), Generation(1)).has_value());
  ProcessExit y = exits_.Wait(JobId(6));
  EXPECT_TRUE(y.cancelled);
  EXPECT_FALSE(y.timed_out);
}

TEST_F(ProcessSupervisorLimitTest, WarningIsSentOnceAndReArmedByALaterLimit) {
  ProcessSpec w = Trapping(7, Minutes(10));
  w.warn = SignalSpec{.signal = SIGUSR1, .before = Minutes(5)};
  LaunchReady(w);
  clock_.Advance(Minutes(6));  // past the warning time (5 minutes)
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(7), Generation(1), Minutes(10)).has_value());
  ASSERT_EQ(Line("events7"), "warned");
  // The same deadline again, or a later one whose warning time is past too: not sent again.
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(7), Generation(1), Minutes(10)).has_value());
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(7), Generation(1), Minutes(11)).has_value());
  // A limit whose warning time is ahead re-arms it: sent at 25 minutes, not before.
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(7), Generation(1), Minutes(30)).has_value());
  clock_.Advance(Minutes(18));  // 24 minutes
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(7), Generation(1), Minutes(30)).has_value());
  clock_.Advance(Minutes(2));  // 26 minutes
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(7), Generation(1), Minutes(30)).has_value());
  ASSERT_EQ(Line("events7"), "warned");
  clock_.Advance(Minutes(5));  // 31 minutes
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(7), Generation(1), Minutes(30)).has_value());
  ProcessExit x = exits_.Wait(JobId(7));
  EXPECT_TRUE(x.timed_out);
  EXPECT_EQ(ReadFile(w.stdout_path), "warned\nwarned\nterm\n");
}

TEST_F(ProcessSupervisorLimitTest, StepTasksCountTheirLimitFromTheJobsStart) {
  Timestamp job_start = clock_.Now();
  ProcessSpec batch = Trapping(8, Minutes(60));
  LaunchReady(batch);
  clock_.Advance(Minutes(10));
  ProcessSpec task = Sh(8, "trap 'echo term; exit 0' TERM; echo ready > " +
                               Fifo("task.ready").path() + "; while :; do sleep 1000 & wait; done");
  task.step = 0;
  task.stdout_path = dir_ / "task.out";
  task.time_limit = Minutes(60);
  task.limit_start = job_start;
  task.kill_grace = Minutes(600);
  ASSERT_TRUE(sup_->Launch(task).has_value());
  ASSERT_EQ(Line("task.ready"), "ready");
  clock_.Advance(Minutes(5));
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(8), Generation(1), Minutes(20)).has_value());
  clock_.Advance(Minutes(6));  // 21 minutes after the job's start, 11 after the task's
  ASSERT_TRUE(sup_->SetTimeLimit(JobId(8), Generation(1), Minutes(20)).has_value());
  ASSERT_TRUE(exits_.WaitCountOf(JobId(8), 2));
  for (const ProcessExit& x : exits_.All()[JobId(8)]) {
    EXPECT_TRUE(x.timed_out) << "step " << x.step;
    EXPECT_EQ(x.end_time, job_start + Minutes(21));
  }
  EXPECT_EQ(ReadFile(task.stdout_path), "term\n");
}

// --- run as another user (needs root) ---

class ProcessSupervisorAsUserTest : public ProcessSupervisorTest {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "running jobs as another user needs root";
    passwd* pw = getpwnam("nobody");
    if (pw == nullptr) GTEST_SKIP() << "no user `nobody` on this machine";
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
    // The job user must be able to write its outputs and enter its directory.
    ASSERT_EQ(chown(dir_.path().c_str(), uid_, gid_), 0);
  }

  ProcessSpec AsUser(uint64_t job, const std::string& script) {
    ProcessSpec spec = Sh(job, script);
    spec.uid = uid_;
    spec.gid = gid_;
    return spec;
  }

  uid_t uid_ = 0;
  gid_t gid_ = 0;
};

TEST_F(ProcessSupervisorAsUserTest, RunsAsTheUser) {
  ProcessSpec spec = AsUser(1,
                            "id -u; id -g; id -G; ls /proc/$$/fd; "
                            "exec grep -E '^(SigBlk|SigIgn):' /proc/self/status");
  spec.stderr_path = dir_ / "job1.err";
  ProcessExit x = Run(spec);
  EXPECT_EQ(x.exit_code, 0);
  std::string ids = std::to_string(uid_) + "\n" + std::to_string(gid_) + "\n";
  EXPECT_EQ(ReadFile(spec.stdout_path), ids + std::to_string(gid_) +
                                            "\n"
                                            "0\n1\n2\n"
                                            "SigBlk:\t0000000000000000\n"
                                            "SigIgn:\t0000000000000000\n");
  for (const std::string& path : {spec.stdout_path, spec.stderr_path}) {
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, uid_) << path;
    EXPECT_EQ(st.st_gid, gid_) << path;
  }
}

TEST_F(ProcessSupervisorAsUserTest, GroupOfTheUserIsUsedWhenNoGidIsGiven) {
  ProcessSpec spec = AsUser(1, "id -g");
  spec.gid.reset();
  EXPECT_EQ(Run(spec).exit_code, 0);
  EXPECT_EQ(ReadFile(spec.stdout_path), std::to_string(gid_) + "\n");
}

TEST_F(ProcessSupervisorAsUserTest, OutputsAreOpenedWithTheUsersPermissions) {
  // A root-only file the job points its output at through a symlink must stay untouched.
  std::string secret = dir_ / "secret";
  WriteFile(secret, "root data\n");
  ASSERT_EQ(chmod(secret.c_str(), 0644), 0);
  ProcessSpec spec = AsUser(1, "echo overwritten");
  spec.stdout_path = dir_ / "link";
  fs::create_symlink(secret, spec.stdout_path);
  Status s = sup_->Launch(spec);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.error().message, HasSubstr(spec.stdout_path));
  EXPECT_EQ(ReadFile(secret), "root data\n");
}

TEST_F(ProcessSupervisorAsUserTest, SupplementaryGroupsOpenOutputsAndRunTheJob) {
  // A user that is a member of a group besides its primary one (HPC project directories are
  // group-writable): its outputs may go to a directory only that group may write.
  std::optional<std::pair<passwd, gid_t>> member;
  setgrent();
  for (group* g = getgrent(); g != nullptr && !member; g = getgrent()) {
    for (char** m = g->gr_mem; *m != nullptr; ++m) {
      passwd* pw = getpwnam(*m);
      if (pw != nullptr && pw->pw_gid != g->gr_gid && pw->pw_uid != 0) {
        member.emplace(*pw, g->gr_gid);
        break;
      }
    }
  }
  endgrent();
  if (!member) GTEST_SKIP() << "no user on this machine has a supplementary group";
  auto [pw, group_id] = *member;
  ASSERT_EQ(chmod(dir_.path().c_str(), 0711), 0);  // others may pass through
  std::string shared = dir_ / "project";
  ASSERT_EQ(mkdir(shared.c_str(), 0770), 0);
  ASSERT_EQ(chown(shared.c_str(), 0, group_id), 0);
  ASSERT_EQ(chmod(shared.c_str(), 0770), 0);
  ProcessSpec spec = Sh(1, "id -G");
  spec.uid = pw.pw_uid;
  spec.gid = pw.pw_gid;
  spec.cwd = shared;
  spec.stdout_path = shared + "/out";
  ProcessExit x = Run(spec);
  EXPECT_EQ(x.exit_code, 0);
  EXPECT_THAT(" " + ReadFile(spec.stdout_path), HasSubstr(" " + std::to_string(group_id)));
  // The agent's own thread has its identity back.
  EXPECT_EQ(setfsuid(static_cast<uid_t>(-1)), 0);
  EXPECT_EQ(setfsgid(static_cast<gid_t>(-1)), 0);
}

TEST_F(ProcessSupervisorAsUserTest, FailureInTheChildNamesTheStep) {
  // The directory exists but the user may not enter it: chdir fails after setuid.
  TempDir private_dir;  // 0700, owned by root
  ProcessSpec spec = AsUser(1, "touch " + (dir_ / "ran"));
  spec.cwd = private_dir.path();
  spec.stdout_path = dir_ / "out";
  Status s = sup_->Launch(spec);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInternal);
  EXPECT_THAT(s.error().message, HasSubstr("chdir"));
  EXPECT_THAT(s.error().message, HasSubstr(private_dir.path()));

  spec = AsUser(2, "");
  spec.argv = {dir_ / "no-such-program"};
  s = sup_->Launch(spec);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInternal);
  EXPECT_THAT(s.error().message, HasSubstr("execve"));
  EXPECT_TRUE(sup_->Running().empty());
  EXPECT_FALSE(fs::exists(dir_ / "ran"));
}

TEST_F(ProcessSupervisorAsUserTest, CancelAndTimeLimitWorkAsUser) {
  ProcessSpec spec = AsUser(1, "sleep 1000 & echo $! > " + Fifo("bg.pid").path() + "; wait");
  ASSERT_TRUE(sup_->Launch(spec).has_value());
  int bg = std::stoi(Line("bg.pid"));
  ASSERT_TRUE(sup_->Cancel(JobId(1), Generation(1)).has_value());
  EXPECT_TRUE(exits_.Wait(JobId(1)).cancelled);
  EXPECT_TRUE(WaitGone(bg));

  ProcessSpec limited = AsUser(2, "sleep 1000");
  limited.time_limit = Millis(100);
  ASSERT_TRUE(sup_->Launch(limited).has_value());
  clock_.Advance(Millis(100));
  Recheck(2, Millis(100));
  ProcessExit x = exits_.Wait(JobId(2));
  EXPECT_TRUE(x.timed_out);
  EXPECT_EQ(x.signal, SIGTERM);
}

}  // namespace
}  // namespace corral::agent
