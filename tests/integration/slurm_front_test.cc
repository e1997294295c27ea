// The Slurm front end on a real cluster (a controller and two agents, real processes): the
// `corral` binary called as sbatch, srun, salloc, squeue, sinfo, sacct, scontrol and scancel,
// with whole batch scripts of the shapes users write, checked for their outputs and their
// environment. Jobs find the commands on their PATH (links in the cluster's bin directory),
// as on a Slurm cluster.
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#include "api/json_codec.h"
#include "core/clock.h"
#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

class SlurmTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new TestCluster({.nodes = 2, .gpus_per_node = 4});
    ASSERT_TRUE(cluster_->Start().has_value()) << cluster_->ControllerLog();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  static std::string WriteScript(const std::string& name, const std::string& text) {
    std::string path = cluster_->work_dir() + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  static std::string Read(const std::string& name) {
    std::ifstream in(name[0] == '/' ? name : cluster_->work_dir() + "/" + name);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // `sbatch ARGS...`; returns the job id from "Submitted batch job N".
  static JobId Sbatch(const std::vector<std::string>& args, const std::string& input = "") {
    auto r = cluster_->CliAs("sbatch", args, "", {}, input);
    EXPECT_EQ(r.status, 0) << r.err;
    std::smatch m;
    static const std::regex kSubmitted("^Submitted batch job ([0-9]+)\n$");
    if (!std::regex_match(r.out, m, kSubmitted)) {
      ADD_FAILURE() << "sbatch printed: " << r.out << r.err;
      return JobId(0);
    }
    return JobId(std::stoull(m[1]));
  }
  static Job WaitEnded(JobId id) {
    auto info = cluster_->WaitJob(id, std::chrono::seconds(90));
    EXPECT_TRUE(info.has_value()) << id.ToString() << ": " << (info ? "" : info.error().message);
    return info ? info->job : Job{};
  }
  static bool WaitState(JobId id, JobState state) {
    return WaitFor(
        [&] {
          auto info = cluster_->GetJob(id);
          return info && info->job.state == state;
        },
        std::chrono::seconds(30));
  }
  static std::vector<std::string> Lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  static bool Has(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
  }

  static TestCluster* cluster_;
};

TestCluster* SlurmTest::cluster_ = nullptr;

// Directives as real scripts write them, the job's SLURM_* environment, its arguments, and a
// job reading its own record through scontrol and squeue.
TEST_F(SlurmTest, BatchScriptDirectivesEnvironmentAndSelfInspection) {
  std::string script =
      WriteScript("envcheck.sh",
                  "#!/bin/bash\n"
                  "#SBATCH --job-name=envcheck   # the name\n"
                  "##SBATCH --job-name=disabled\n"
                  "#SBATCH -N 2 --ntasks-per-node=2 --gpus-per-node=1\n"
                  "#SBATCH --time=10 --out=%x-%j.out\n"
                  "#SBATCH--comment=nospace\n"
                  "\n"
                  "echo first command\n"
                  "#SBATCH --job-name=ignored-after-the-first-command\n"
                  "echo \"id=$SLURM_JOB_ID jobid=$SLURM_JOBID name=$SLURM_JOB_NAME\"\n"
                  "echo \"nodes=$SLURM_JOB_NODELIST nnodes=$SLURM_NNODES ntasks=$SLURM_NTASKS "
                  "tpn=$SLURM_TASKS_PER_NODE\"\n"
                  "echo \"gpus=$SLURM_GPUS_ON_NODE cuda=$CUDA_VISIBLE_DEVICES "
                  "part=$SLURM_JOB_PARTITION submit=$SLURM_SUBMIT_DIR\"\n"
                  "echo \"args=$1,$2\"\n"
                  "echo \"hosts=$(scontrol show hostnames $SLURM_JOB_NODELIST | tr '\\n' ' ')\"\n"
                  "echo \"left=$(squeue -h -j $SLURM_JOB_ID -o %L)\"\n"
                  "scontrol show job $SLURM_JOB_ID | tr ' ' '\\n' | "
                  "grep -E '^(Command|JobState|BatchHost|NumNodes|TimeLimit)='\n");
  JobId id = Sbatch({"envcheck.sh", "a", "b c"});
  Job j = WaitEnded(id);
  EXPECT_EQ(j.state, JobState::kCompleted);
  EXPECT_EQ(j.spec.name, "envcheck");
  EXPECT_EQ(j.spec.comment, "nospace");
  EXPECT_EQ(j.spec.command, script);
  ASSERT_EQ(j.allocation.nodes.size(), 2u);
  std::vector<std::string> out = Lines(Read("envcheck-" + id.ToString() + ".out"));
  std::string ids = id.ToString();
  std::vector<std::string> want = {
      "first command",
      "id=" + ids + " jobid=" + ids + " name=envcheck",
      "nodes=node[01-02] nnodes=2 ntasks=4 tpn=2(x2)",
      "gpus=1 cuda=" + j.allocation.nodes[0].gpus.ToString() +
          " part=main submit=" + cluster_->work_dir(),
      "args=a,b c",
      "hosts=node01 node02 ",
  };
  ASSERT_GE(out.size(), want.size() + 6) << Read("envcheck-" + ids + ".out");
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(out[i], want[i]);
  // squeue -h -j $ID -o %L: the time left of a 10-minute job, "9:59" or so.
  EXPECT_TRUE(std::regex_match(out[want.size()], std::regex("left=(10:00|9:[0-5][0-9])")))
      << out[want.size()];
  std::vector<std::string> fields(out.begin() + want.size() + 1, out.end());
  EXPECT_EQ(fields,
            (std::vector<std::string>{"JobState=RUNNING", "TimeLimit=00:10:00", "BatchHost=node01",
                                      "NumNodes=2", "Command=" + script}));
}

TEST_F(SlurmTest, WrapParsableStdinAndRefusedOptions) {
  auto r = cluster_->CliAs("sbatch",
                           {"--parsable", "-o", "wrap-%j.out", "--wrap", "echo hello $((40 + 2))"});
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(std::regex_match(r.out, std::regex("[0-9]+\n"))) << r.out;
  JobId wrapped(std::stoull(r.out));
  EXPECT_EQ(WaitEnded(wrapped).state, JobState::kCompleted);
  EXPECT_EQ(Read("wrap-" + wrapped.ToString() + ".out"), "hello 42\n");
  EXPECT_EQ(cluster_->GetJob(wrapped)->job.spec.name, "wrap");

  // A script on stdin, with SBATCH_* variables between the directives and the command line.
  JobId piped = Sbatch({"-o", "stdin-%j.out"},
                       "#!/bin/sh\n#SBATCH -J from-directive -t 5\necho from stdin\n");
  Job j = WaitEnded(piped);
  EXPECT_EQ(j.spec.name, "from-directive");
  EXPECT_EQ(Read("stdin-" + piped.ToString() + ".out"), "from stdin\n");
  auto env = cluster_->CliAs("sbatch", {"--parsable", "-J", "cmdline", "--wrap", "true"}, "",
                             {{"SBATCH_JOB_NAME", "from-env"}, {"SBATCH_TIMELIMIT", "7"}});
  ASSERT_EQ(env.status, 0) << env.err;
  Job e = cluster_->GetJob(JobId(std::stoull(env.out)))->job;
  EXPECT_EQ(e.spec.name, "cmdline");
  EXPECT_EQ(e.time_limit, Minutes(7));

  auto refused = cluster_->CliAs("sbatch", {"--threads-per-core=2", "--wrap", "true"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_EQ(refused.err, "sbatch: error: option --threads-per-core is not supported by Corral\n");
  auto unknown = cluster_->CliAs("sbatch", {"--no-such-option", "--wrap", "true"});
  EXPECT_EQ(unknown.status, 1);
  EXPECT_EQ(unknown.err,
            "sbatch: unrecognized option '--no-such-option'\nTry \"sbatch --help\" for more "
            "information\n");
  auto missing = cluster_->CliAs("sbatch", {"no-such-script.sh"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_EQ(missing.err, "sbatch: error: Unable to open file no-such-script.sh\n");
}

// An array sweep with %A_%a output names and a throttle.
TEST_F(SlurmTest, ArraySweepWithOutputNamesPerTask) {
  WriteScript(
      "sweep.sh",
      "#!/bin/bash\n"
      "#SBATCH --array=0-5%2\n"
      "#SBATCH -o sweep_%A_%a.out --gpus=1\n"
      "echo \"task=$SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID count=$SLURM_ARRAY_TASK_COUNT "
      "max=$SLURM_ARRAY_TASK_MAX id=$SLURM_JOB_ID\"\n");
  JobId array = Sbatch({"sweep.sh"});
  for (uint32_t i = 0; i < 6; ++i) {
    JobId task(array.value + i);
    Job j = WaitEnded(task);
    EXPECT_EQ(j.state, JobState::kCompleted);
    ASSERT_TRUE(j.array_task_id.has_value());
    EXPECT_EQ(*j.array_task_id, i);
    EXPECT_EQ(Read("sweep_" + array.ToString() + "_" + std::to_string(i) + ".out"),
              "task=" + std::to_string(i) + " of " + array.ToString() +
                  " count=6 max=5 id=" + task.ToString() + "\n");
  }
  // sacct -j ARRAY shows every task, as Slurm's.
  auto acct = cluster_->CliAs(
      "sacct", {"-j", array.ToString(), "-X", "-n", "-P", "--format=JobID,State,ExitCode"});
  ASSERT_EQ(acct.status, 0) << acct.err;
  std::string want;
  for (int i = 0; i < 6; ++i)
    want += array.ToString() + "_" + std::to_string(i) + "|COMPLETED|0:0\n";
  EXPECT_EQ(acct.out, want);
}

// Array throttles ("%2": at most two tasks at a time) and dependencies, evaluated by the
// scheduling engine (sched::Scheduler) the controller runs.
TEST_F(SlurmTest, ArrayThrottleAndDependenciesAreEnforced) {
  JobId array = Sbatch({"--array=1-4%2", "-o", "/dev/null", "--wrap", "sleep 5"});
  ASSERT_TRUE(WaitState(array, JobState::kRunning));
  auto q = cluster_->CliAs("squeue", {"-h", "-r", "-t", "R", "-o", "%i"});
  EXPECT_EQ(Lines(q.out).size(), 2u) << q.out;
  ASSERT_EQ(cluster_->CliAs("scancel", {array.ToString()}).status, 0);
  // afterok: the second job starts only once the first has completed.
  JobId first = Sbatch({"-o", "/dev/null", "--wrap", "sleep 1"});
  JobId second =
      Sbatch({"-o", "/dev/null", "--dependency=afterok:" + first.ToString(), "--wrap", "true"});
  Job a = WaitEnded(first), b = WaitEnded(second);
  EXPECT_EQ(b.state, JobState::kCompleted);
  EXPECT_GE(b.start_time, a.end_time);
}

// A job that submits its successor: `sbatch --dependency=afterok:$SLURM_JOB_ID $0`.
TEST_F(SlurmTest, AfterokChainSubmittedFromInsideAJob) {
  WriteScript("chain.sh",
              "#!/bin/bash\n"
              "#SBATCH -o chain-%j.out\n"
              "if [ -z \"$STAGE\" ]; then\n"
              "  export STAGE=2\n"
              "  sbatch --parsable --dependency=afterok:$SLURM_JOB_ID $0 > next.id\n"
              "  echo stage1\n"
              "else\n"
              "  echo \"stage$STAGE after $(scontrol show job $SLURM_JOB_ID | grep -o "
              "'Dependency=[^ ]*')\"\n"
              "fi\n");
  JobId first = Sbatch({"chain.sh"});
  EXPECT_EQ(WaitEnded(first).state, JobState::kCompleted);
  EXPECT_EQ(Read("chain-" + first.ToString() + ".out"), "stage1\n");
  std::string next_text = Read("next.id");
  ASSERT_FALSE(next_text.empty());
  JobId next(std::stoull(next_text));
  Job j = WaitEnded(next);
  EXPECT_EQ(j.state, JobState::kCompleted);
  ASSERT_EQ(j.spec.dependencies.size(), 1u);
  EXPECT_EQ(j.spec.dependencies[0].type, DependencyType::kAfterOk);
  EXPECT_EQ(j.spec.dependencies[0].jobs, (std::vector<JobId>{first}));
  // Satisfied by the time it runs: Slurm then shows Dependency=(null).
  EXPECT_EQ(Read("chain-" + next.ToString() + ".out"), "stage2 after Dependency=(null)\n");
}

// A checkpoint loop: --signal=B:USR1@SECS --requeue; on the signal the script saves and
// requeues itself with `scontrol requeue $SLURM_JOB_ID`; the next run resumes.
TEST_F(SlurmTest, SignalAndRequeueCheckpointLoop) {
  WriteScript(
      "ckpt.sh",
      "#!/bin/bash\n"
      "#SBATCH --time=1 --signal=B:USR1@56 --requeue\n"
      "#SBATCH -o ckpt-%j.out --open-mode=append\n"
      "echo \"start restart=${SLURM_RESTART_COUNT:-0} step=$(cat ckpt.state 2>/dev/null || echo "
      "0)\"\n"
      "if [ \"${SLURM_RESTART_COUNT:-0}\" -ge 1 ]; then echo done; exit 0; fi\n"
      "trap 'echo 7 > ckpt.state; echo saved; scontrol requeue $SLURM_JOB_ID; sleep 60' USR1\n"
      "sleep 100 & wait $!\n");
  JobId id = Sbatch({"ckpt.sh"});
  ASSERT_TRUE(WaitFor(
      [&] {
        auto info = cluster_->GetJob(id);
        return info && info->job.restart_count == 1 && IsTerminal(info->job.state);
      },
      std::chrono::seconds(60)))
      << Read("ckpt-" + id.ToString() + ".out");
  Job j = WaitEnded(id);
  EXPECT_EQ(j.state, JobState::kCompleted);
  EXPECT_EQ(Read("ckpt-" + id.ToString() + ".out"),
            "start restart=0 step=0\nsaved\nstart restart=1 step=7\ndone\n");
}

// A 2-node torchrun-style launch: MASTER_ADDR from `scontrol show hostnames`, one srun task
// per GPU, each bound to its own GPU with --gpus-per-task.
TEST_F(SlurmTest, TwoNodeLaunchWithPerTaskGpus) {
  WriteScript(
      "torch.sh",
      "#!/bin/bash\n"
      "#SBATCH -N 2 --ntasks-per-node=2 --gpus-per-node=2 -o torch-%j.out\n"
      "head=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)\n"
      "echo head=$head\n"
      "srun -l --gpus-per-task=1 bash -c 'echo \"rank=$SLURM_PROCID local=$SLURM_LOCALID "
      "node=$SLURM_NODEID of=$SLURM_NTASKS host=$SLURMD_NODENAME cuda=$CUDA_VISIBLE_DEVICES "
      "step=$SLURM_STEP_ID\"'\n");
  JobId id = Sbatch({"torch.sh"});
  Job j = WaitEnded(id);
  EXPECT_EQ(j.state, JobState::kCompleted);
  std::string text = Read("torch-" + id.ToString() + ".out");
  std::vector<std::string> lines = Lines(text);
  ASSERT_EQ(lines.size(), 5u) << text;
  EXPECT_EQ(lines[0], "head=node01");
  std::vector<std::string> ranks(lines.begin() + 1, lines.end());
  std::sort(ranks.begin(), ranks.end());
  ASSERT_EQ(j.allocation.nodes.size(), 2u);
  std::vector<std::string> want;
  for (uint32_t rank = 0; rank < 4; ++rank) {
    uint32_t node = rank / 2, local = rank % 2;
    std::vector<uint32_t> gpus = j.allocation.nodes[node].gpus.ToVector();
    ASSERT_EQ(gpus.size(), 2u);
    want.push_back(std::to_string(rank) + ": rank=" + std::to_string(rank) +
                   " local=" + std::to_string(local) + " node=" + std::to_string(node) +
                   " of=4 host=" + j.allocation.nodes[node].node_name +
                   " cuda=" + std::to_string(gpus[local]) + " step=0");
  }
  EXPECT_EQ(ranks, want) << text;
}

// The launcher pattern (issue #17): the script exports MASTER_ADDR, MASTER_PORT and
// WORLD_SIZE and runs one launcher task per node; srun passes them through untouched and
// sets no RANK/LOCAL_RANK of its own (Slurm sets none). Steps land where -w, -x and -r say,
// and a node outside the job is refused by name.
TEST_F(SlurmTest, LauncherExportsPassThroughAndStepsLandWhereAsked) {
  WriteScript(
      "launch.sh",
      "#!/bin/bash\n"
      "#SBATCH -N 2 --ntasks-per-node=1 -o launch-%j.out\n"
      "export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)\n"
      "export MASTER_PORT=29400 WORLD_SIZE=16\n"
      "echo batch=${RANK:-unset},${MASTER_ADDR}\n"
      "srun --ntasks-per-node=1 bash -c 'echo \"task node=$SLURM_NODEID addr=$MASTER_ADDR "
      "port=$MASTER_PORT world=$WORLD_SIZE rank=${RANK:-unset} local=${LOCAL_RANK:-unset}\"' "
      "| sort\n"
      "second=$(scontrol show hostnames $SLURM_JOB_NODELIST | tail -n 1)\n"
      "srun -N1 -n1 -w $second bash -c 'echo w=$SLURMD_NODENAME'\n"
      "srun -N1 -n1 -x $MASTER_ADDR bash -c 'echo x=$SLURMD_NODENAME'\n"
      "srun -N1 -n1 -r 1 bash -c 'echo r=$SLURMD_NODENAME'\n"
      "srun -N1 -n1 -w nosuchnode true; echo refused=$?\n");
  JobId id = Sbatch({"launch.sh"});
  Job j = WaitEnded(id);
  EXPECT_EQ(j.state, JobState::kCompleted);
  ASSERT_EQ(j.allocation.nodes.size(), 2u);
  const std::string first = j.allocation.nodes[0].node_name;
  const std::string second = j.allocation.nodes[1].node_name;
  std::string text = Read("launch-" + id.ToString() + ".out");
  EXPECT_TRUE(Has(text, "batch=unset," + first + "\n")) << text;
  for (int node = 0; node < 2; ++node) {
    EXPECT_TRUE(Has(text, "task node=" + std::to_string(node) + " addr=" + first +
                              " port=29400 world=16 rank=unset local=unset\n"))
        << text;
  }
  EXPECT_TRUE(Has(text, "w=" + second + "\n")) << text;
  EXPECT_TRUE(Has(text, "x=" + second + "\n")) << text;
  EXPECT_TRUE(Has(text, "r=" + second + "\n")) << text;
  EXPECT_TRUE(
      Has(text, "nodelist: node nosuchnode is not in job " + id.ToString() + "'s allocation"))
      << text;
  EXPECT_TRUE(Has(text, "refused=1\n")) << text;
}

// salloc with a command, srun inside it, and srun outside any allocation.
TEST_F(SlurmTest, SallocAndSrunMakeAndReleaseAllocations) {
  auto r = cluster_->CliAs("salloc",
                           {"-N", "2", "-J", "inter", "bash", "-c",
                            "echo job=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST n=$SLURM_NNODES; "
                            "srun -l bash -c 'echo $SLURMD_NODENAME' | sort"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("job=([0-9]+) nodes=node\\[01-02\\] n=2\n")))
      << r.out;
  JobId alloc(std::stoull(m[1]));
  EXPECT_TRUE(Has(r.out, "0: node01\n1: node02\n")) << r.out;
  EXPECT_TRUE(Has(r.err, "salloc: Granted job allocation " + alloc.ToString())) << r.err;
  EXPECT_TRUE(Has(r.err, "salloc: Relinquishing job allocation " + alloc.ToString())) << r.err;
  Job j = WaitEnded(alloc);
  EXPECT_EQ(j.state, JobState::kCompleted);
  EXPECT_EQ(j.spec.name, "inter");

  auto s = cluster_->CliAs("srun", {"-N", "2", "-n", "3", "-l", "bash", "-c",
                                    "echo rank $SLURM_PROCID; exit $SLURM_PROCID"});
  EXPECT_EQ(s.status, 2) << s.err;  // the highest task exit code
  std::vector<std::string> lines = Lines(s.out);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::string>{"0: rank 0", "1: rank 1", "2: rank 2"}));
  auto jobs = cluster_->ListJobs("?all=1");
  ASSERT_TRUE(jobs.has_value());
  const Job& last = jobs->back().job;
  EXPECT_EQ(last.spec.name, "bash");
  EXPECT_TRUE(WaitFor([&] { return IsTerminal(cluster_->GetJob(last.id)->job.state); },
                      std::chrono::seconds(20)));
}

// Reads the terminal's `master` into `out` until `what` has come (true) or `timeout` passes.
bool ReadUntil(int master, const std::string& what, std::string* out,
               std::chrono::milliseconds timeout) {
  const MonoTime deadline = SystemClock::Get().MonotonicNow() + timeout;
  while (out->find(what) == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - SystemClock::Get().MonotonicNow());
    if (left.count() <= 0) return false;
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) return false;
    out->append(buf, static_cast<size_t>(n));
  }
  return true;
}

// srun --pty from a terminal: task 0 runs in a pseudo-terminal of its own (a /dev/pts device,
// the user's with mode 0600, the window size of srun's terminal, TERM passed through, as
// Slurm's SLURM_PTY_WIN_ROW/COL), what is typed reaches it, Ctrl-C interrupts its foreground
// process through that terminal (the shell's trap sees it too; srun is not killed), a resize
// of srun's terminal reaches it, its exit code is srun's, and srun's terminal is raw while the
// step runs and gets its settings back after.
TEST_F(SlurmTest, SrunPtyGivesAnInteractiveTerminal) {
  const std::string script =
      "tty; stty size; echo \"TERM=$TERM owner=$(stat -c %u:%a $(tty)) "
      "rows=$SLURM_PTY_WIN_ROW\"; trap 'echo caught-int' INT; "
      "sh -c 'echo ready; exec sleep 60'; echo \"after-sleep=$?\"; "
      "while read -r l; do [ \"$l\" = q ] && exit 3; echo \"got=$l\"; stty size; done";
  auto term = cluster_->StartOnTerminal("srun", {"--pty", "sh", "-c", script}, 33, 101,
                                        {{"TERM", "xterm-test"}});
  ASSERT_TRUE(term) << term.error().message;
  std::string out;
  auto until = [&](const std::string& what) {
    return ReadUntil(term->master, what, &out, std::chrono::seconds(60));
  };
  auto type = [&](std::string_view bytes) {
    EXPECT_EQ(write(term->master, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  };
  ASSERT_TRUE(until("ready")) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("/dev/pts/[0-9]+\r\n33 101\r\n"))) << out;
  EXPECT_TRUE(Has(out, "TERM=xterm-test owner=" + std::to_string(getuid()) + ":600 rows=33"))
      << out;
  termios raw{};
  ASSERT_EQ(tcgetattr(term->slave, &raw), 0);
  EXPECT_EQ(raw.c_lflag & (ICANON | ECHO | ISIG), 0u);  // srun's terminal is raw

  type("\x03");  // Ctrl-C: a byte here, SIGINT there
  ASSERT_TRUE(until("after-sleep=130")) << out;
  EXPECT_TRUE(Has(out, "caught-int")) << out;
  type("hello\r");
  ASSERT_TRUE(until("got=hello")) << out;
  // A new window size: srun's SIGWINCH, the agent's TIOCSWINSZ.
  winsize ws{};
  ws.ws_row = 40;
  ws.ws_col = 120;
  ASSERT_EQ(ioctl(term->master, TIOCSWINSZ, &ws), 0);
  EXPECT_TRUE(WaitFor(
      [&] {
        type("x\r");
        return ReadUntil(term->master, "\n40 120", &out, std::chrono::milliseconds(300));
      },
      std::chrono::seconds(30)))
      << out;
  type("q\r");
  int status = 0;
  ASSERT_EQ(waitpid(term->pid, &status, 0), term->pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 3) << out;
  (void)ReadUntil(term->master, "exit code 3", &out, std::chrono::seconds(5));
  EXPECT_TRUE(
      std::regex_search(out, std::regex("srun: error: node0[12]: task 0: Exited with exit code 3")))
      << out;
  termios after{};
  ASSERT_EQ(tcgetattr(term->slave, &after), 0);
  const tcflag_t cooked = ICANON | ECHO | ISIG;
  EXPECT_EQ(after.c_lflag & cooked, cooked);  // restored
  close(term->master);
  close(term->slave);

  // Without a terminal, as Slurm: the option is dropped with its two lines, the step runs.
  auto r = cluster_->CliAs("srun", {"--pty", "sh", "-c", "tty; exit 2"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.out, "not a tty\n");
  EXPECT_TRUE(Has(r.err, "srun: error: Not using a pseudo-terminal, disregarding --pty option\n"))
      << r.err;
}

// salloc without a command and CORRAL_SALLOC_INTERACTIVE_STEP=1 (Slurm's
// LaunchParameters=use_interactive_step): the login shell runs as an interactive step in the
// allocation, in a terminal on its first node; its exit status is salloc's.
TEST_F(SlurmTest, SallocInteractiveStepRunsTheShellInATerminal) {
  auto term = cluster_->StartOnTerminal("salloc", {"-N1", "-J", "shell"}, 24, 80,
                                        {{"CORRAL_SALLOC_INTERACTIVE_STEP", "1"}});
  ASSERT_TRUE(term) << term.error().message;
  std::string out;
  ASSERT_TRUE(ReadUntil(term->master, "salloc: Granted job allocation", &out,
                        std::chrono::seconds(60)))
      << out;
  // Typed until the shell answers (srun's raw mode starts with the step and drops what was
  // typed before): the echo shows "mark$((6*7))", the shell's answer "mark42".
  EXPECT_TRUE(WaitFor(
      [&] {
        EXPECT_EQ(write(term->master, "echo mark$((6*7))\r", 18), 18);
        return ReadUntil(term->master, "mark42", &out, std::chrono::milliseconds(500));
      },
      std::chrono::seconds(60)))
      << out;
  const std::string line = "echo \"step=$SLURM_STEP_ID tty=$(tty)\"; exit 4\r";
  EXPECT_EQ(write(term->master, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  EXPECT_TRUE(ReadUntil(term->master, "step=0 tty=/dev/pts/", &out, std::chrono::seconds(30)))
      << out;
  int status = 0;
  ASSERT_EQ(waitpid(term->pid, &status, 0), term->pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 4) << out;
  (void)ReadUntil(term->master, "Relinquishing", &out, std::chrono::seconds(5));
  EXPECT_TRUE(Has(out, "salloc: Relinquishing job allocation")) << out;
  close(term->master);
  close(term->slave);
}

// A running job's time limit: lowered by scontrol below what it needs, it ends TIMEOUT; raised
// by an administrator (`corral update`) past the limit it was started with, it completes.
TEST_F(SlurmTest, RunningJobsTimeLimitIsLoweredAndRaised) {
  JobId lowered = Sbatch({"-J", "lowered", "-t", "10", "-o", "/dev/null", "--wrap", "sleep 300"});
  ASSERT_TRUE(WaitState(lowered, JobState::kRunning));
  auto update =
      cluster_->CliAs("scontrol", {"update", "JobId=" + lowered.ToString(), "TimeLimit=0:03"});
  ASSERT_EQ(update.status, 0) << update.err;
  EXPECT_EQ(cluster_->GetJob(lowered)->job.time_limit, Seconds(3));
  Job j = WaitEnded(lowered);
  EXPECT_EQ(j.state, JobState::kTimeout);
  EXPECT_LT(j.end_time - j.start_time, Seconds(60));  // the new limit, not the old 10 minutes
  // An ended job's limit is not changed: one line naming the problem.
  auto ended =
      cluster_->CliAs("scontrol", {"update", "JobId=" + lowered.ToString(), "TimeLimit=5"});
  EXPECT_EQ(ended.status, 1);
  EXPECT_EQ(Lines(ended.err).size(), 1u) << ended.err;
  EXPECT_TRUE(Has(ended.err,
                  "TIMEOUT: a time limit can only be changed while the job is pending or running"))
      << ended.err;
  // The agent's route: only the controller may call it; a stale generation is refused, and
  // the current one with nothing left running is no error.
  auto nodes = cluster_->ListNodes();
  ASSERT_TRUE(nodes.has_value());
  std::string agent_url;
  for (const auto& n : *nodes) {
    if (n.node.inventory.name == j.allocation.nodes.front().node_name)
      agent_url = n.node.inventory.address;
  }
  const std::string agent_node = j.allocation.nodes.front().node_name;
  auto agent = api::HttpClient::Create(agent_url, cluster_->client_options());
  ASSERT_TRUE(agent.has_value());
  auto post = [&](Generation gen, api::Role role) {
    api::TimeLimitRequest req{.job = lowered, .generation = gen, .time_limit = Minutes(5)};
    std::string authorization =
        role == api::Role::kController ? cluster_->ControllerCall(agent_node) : cluster_->Token("");
    auto r = (*agent)->Send("POST", "/api/v1/jobs/limit", api::EncodeTimeLimitRequest(req),
                            {{"authorization", authorization}});
    return r ? *r : api::HttpResponse{.status = 0, .body = r.error().message};
  };
  const Generation gen = j.allocation.generation;
  EXPECT_EQ(post(gen, api::Role::kController).status, 200);
  api::HttpResponse stale = post(Generation(gen.value - 1), api::Role::kController);
  EXPECT_EQ(stale.status, 409);
  EXPECT_TRUE(Has(stale.body, "stale time limit for generation")) << stale.body;
  EXPECT_EQ(post(gen, api::Role::kUser).status,
            401);  // a user's token is no call of the controller

  // Started with a 10-second limit (through the API: sbatch's -t counts whole minutes, as
  // Slurm's does), the script waits for a file the test writes only once those 10 seconds and
  // the kill grace have passed: it can complete only if the raise reached its agent.
  std::string out = cluster_->work_dir() + "/raised.out";
  std::string go = cluster_->work_dir() + "/raised.go";
  JobSpec spec = cluster_->ShellJob("while [ ! -e '" + go + "' ]; do sleep 0.1; done; echo done");
  spec.name = "raised";
  spec.time_limit = Seconds(10);
  spec.stdout_path = out;
  auto submitted = cluster_->Submit(spec);
  ASSERT_TRUE(submitted.has_value()) << submitted.error().message;
  JobId raised = submitted->job_id;
  ASSERT_TRUE(WaitState(raised, JobState::kRunning));
  EXPECT_EQ(cluster_->GetJob(raised)->job.time_limit, Seconds(10));
  auto raise = cluster_->Cli({"update", raised.ToString(), "--time-limit", "10:00"});
  ASSERT_EQ(raise.status, 0) << raise.err;
  const Timestamp old_deadline = cluster_->GetJob(raised)->job.start_time + Seconds(10);
  // Past the old deadline (and a grace): the job is still running.
  ASSERT_TRUE(WaitFor([&] { return SystemClock::Get().Now() > old_deadline + Seconds(2); },
                      std::chrono::seconds(30)));
  EXPECT_EQ(cluster_->GetJob(raised)->job.state, JobState::kRunning);
  std::ofstream(go) << "go\n";
  j = WaitEnded(raised);
  EXPECT_EQ(j.state, JobState::kCompleted) << j.reason;
  EXPECT_EQ(j.exit_code, 0);
  EXPECT_EQ(j.time_limit, Minutes(10));
  EXPECT_EQ(Read(out), "done\n");
  auto usage = cluster_->Cli({"update", raised.ToString(), "--time-limit", "soon"});
  EXPECT_EQ(usage.status, 2);
  EXPECT_EQ(Lines(usage.err).size(), 1u) << usage.err;
}

// squeue, scontrol hold/release/update, scancel with array tasks and filters, sinfo, sacct.
TEST_F(SlurmTest, QueueControlCancelAndAccounting) {
  JobId held = Sbatch({"-H", "-J", "held", "-t", "30", "-o", "/dev/null", "--wrap", "sleep 300"});
  auto q = cluster_->CliAs("squeue", {"--me", "-h", "-j", held.ToString(), "-o", "%i %j %t %r %l"});
  ASSERT_EQ(q.status, 0) << q.err;
  EXPECT_EQ(q.out, held.ToString() + " held PD JobHeldUser 30:00\n");
  auto other = cluster_->CliAs("squeue", {"-h", "-u", "nobody-here"});
  EXPECT_EQ(other.out, "");

  // Lower a pending job's limit, then relative to it (who may raise it: controller_test).
  EXPECT_EQ(
      cluster_->CliAs("scontrol", {"update", "JobId=" + held.ToString(), "TimeLimit=20"}).status,
      0);
  EXPECT_EQ(cluster_->GetJob(held)->job.time_limit, Minutes(20));
  EXPECT_EQ(
      cluster_->CliAs("scontrol", {"update", "jobid=" + held.ToString(), "TimeLimit=-5"}).status,
      0);
  EXPECT_EQ(cluster_->GetJob(held)->job.time_limit, Minutes(15));
  auto bad = cluster_->CliAs("scontrol", {"update", "JobId=" + held.ToString(), "Partition=other"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err, "scontrol: error: Update of Partition is not supported by Corral\n");

  ASSERT_EQ(cluster_->CliAs("scontrol", {"release", held.ToString()}).status, 0);
  ASSERT_TRUE(WaitState(held, JobState::kRunning));
  auto shown = cluster_->CliAs("squeue", {"-h", "-j", held.ToString(), "-o", "%i %t %N"});
  EXPECT_TRUE(std::regex_match(shown.out, std::regex(held.ToString() + " R node0[12]\n")))
      << shown.out;
  auto show = cluster_->CliAs("scontrol", {"-o", "show", "job", held.ToString()});
  EXPECT_TRUE(Has(show.out, "JobName=held")) << show.out;
  EXPECT_EQ(Lines(show.out).size(), 1u);

  // requeuehold: back in the queue, held, and running again once released.
  ASSERT_EQ(cluster_->CliAs("scontrol", {"requeuehold", held.ToString()}).status, 0);
  ASSERT_TRUE(WaitState(held, JobState::kPending));
  auto requeued = cluster_->CliAs("squeue", {"-h", "-j", held.ToString(), "-o", "%t %r"});
  EXPECT_EQ(requeued.out, "PD JobHeldUser\n");
  EXPECT_EQ(cluster_->GetJob(held)->job.restart_count, 1);
  ASSERT_EQ(cluster_->CliAs("scontrol", {"release", held.ToString()}).status, 0);
  ASSERT_TRUE(WaitState(held, JobState::kRunning));

  // Arrays: one task, a range of tasks, then the rest by the array's id.
  JobId array = Sbatch({"--array=1-4", "-J", "arr", "-o", "/dev/null", "--wrap", "sleep 300"});
  ASSERT_EQ(cluster_->CliAs("scancel", {array.ToString() + "_4"}).status, 0);
  ASSERT_EQ(cluster_->CliAs("scancel", {array.ToString() + "_[2-3]"}).status, 0);
  // Tasks 2, 3 and 4 (ids array+1 .. array+3): each ends CANCELLED once its processes are gone.
  EXPECT_TRUE(WaitState(JobId(array.value + 3), JobState::kCancelled));
  EXPECT_TRUE(WaitState(JobId(array.value + 2), JobState::kCancelled));
  EXPECT_TRUE(WaitState(JobId(array.value + 1), JobState::kCancelled));
  EXPECT_NE(cluster_->GetJob(array)->job.state, JobState::kCancelled);
  auto arr = cluster_->CliAs("squeue", {"-h", "-r", "-n", "arr", "-o", "%i"});
  EXPECT_EQ(arr.out, array.ToString() + "_1\n");
  // By name: the held job and the array's last task.
  ASSERT_EQ(cluster_->CliAs("scancel", {"-n", "held,arr"}).status, 0);
  EXPECT_TRUE(WaitState(held, JobState::kCancelled));
  EXPECT_TRUE(WaitState(array, JobState::kCancelled));
  auto again = cluster_->CliAs("scancel", {held.ToString()});
  EXPECT_EQ(again.status, 1);
  EXPECT_EQ(again.err, "scancel: error: Kill job error on job id " + held.ToString() +
                           ": Job/step already completing or completed\n");

  auto info = cluster_->CliAs("sinfo", {"-h", "-N", "-o", "%N %t"});
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_TRUE(std::regex_match(info.out, std::regex("node01 [a-z]+\nnode02 [a-z]+\n"))) << info.out;
  auto summary = cluster_->CliAs("sinfo", {});
  EXPECT_EQ(Lines(summary.out).at(0), "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST");

  auto acct =
      cluster_->CliAs("sacct", {"-j", held.ToString(), "-n", "-P", "--format=JobID,JobName,State"});
  ASSERT_EQ(acct.status, 0) << acct.err;
  EXPECT_EQ(acct.out, held.ToString() + "|held|CANCELLED by " +
                          std::to_string(cluster_->GetJob(held)->job.spec.uid) + "\n" +
                          held.ToString() + ".batch|batch|CANCELLED\n");
  // The default window (today, one's own jobs) holds it too.
  auto today = cluster_->CliAs("sacct", {"-X", "-n", "-P", "--format=JobID", "--name=held"});
  EXPECT_EQ(today.out, held.ToString() + "\n");
  auto later = cluster_->CliAs(
      "sacct", {"-X", "-n", "-P", "--format=JobID", "--name=held", "-S", "now+1hour"});
  EXPECT_EQ(later.out, "");
}

}  // namespace
}  // namespace corral::testing
