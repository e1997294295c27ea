// Multi-node steps and checkpoints on a real cluster (a controller and two agents, real
// processes): `corral run` inside a batch script, rank variables on every node, labelled
// output, failing tasks, cancel, and a job that checkpoints on its signal, is requeued and
// resumes from its checkpoint with its output appended.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "api/json_codec.h"
#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

namespace fs = std::filesystem;

class StepsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new TestCluster({.nodes = 2, .gpus_per_node = 4});
    ASSERT_TRUE(cluster_->Start().has_value()) << cluster_->ControllerLog();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  // Submits `body` as a batch script through `corral submit` (which exports the test's
  // environment: the controller's URL and key, so `corral run` inside works) and returns its id.
  static JobId SubmitScript(const std::string& name, const std::string& body,
                            const std::vector<std::string>& options = {}) {
    std::string path = cluster_->work_dir() + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    std::vector<std::string> args = {"submit", "--parsable"};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back(path);
    auto r = cluster_->Cli(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return JobId(std::stoull(r.out.empty() ? "0" : r.out));
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static std::string Output(JobId id) {
    return Read(cluster_->work_dir() + "/out-" + id.ToString() + ".log");
  }

  static std::vector<std::string> Lines(const std::string& text, const std::string& prefix) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(prefix, 0) == 0) out.push_back(line);
    }
    return out;
  }

  // "k=v k=v" -> map.
  static std::map<std::string, std::string> Fields(const std::string& line) {
    std::map<std::string, std::string> m;
    std::istringstream in(line);
    for (std::string w; in >> w;) {
      auto eq = w.find('=');
      if (eq != std::string::npos) m[w.substr(0, eq)] = w.substr(eq + 1);
    }
    return m;
  }

  static Job Finished(JobId id) {
    auto info = cluster_->WaitJob(id, std::chrono::seconds(90));
    EXPECT_TRUE(info.has_value()) << (info ? "" : info.error().message)
                                  << cluster_->ControllerLog();
    return info ? info->job : Job{};
  }

  static TestCluster* cluster_;
  static inline const std::string kCorral = CORRAL_BINARY;
};

TestCluster* StepsTest::cluster_ = nullptr;

TEST_F(StepsTest, EveryTaskOnEveryNodeGetsItsRankAndTheRendezvous) {
  JobId id = SubmitScript(
      "ranks.sh",
      "echo \"batch addr=$MASTER_ADDR port=$MASTER_PORT\"\n" + kCorral +
          " run sh -c 'echo \"task rank=$RANK local=$LOCAL_RANK node=$NODE_RANK world=$WORLD_SIZE "
          "lws=$LOCAL_WORLD_SIZE host=$CORRAL_NODENAME addr=$MASTER_ADDR port=$MASTER_PORT "
          "procid=$CORRAL_PROCID localid=$CORRAL_LOCALID nodeid=$CORRAL_NODEID "
          "step=$CORRAL_STEP_ID gpus=$CUDA_VISIBLE_DEVICES jobid=$CORRAL_JOB_ID\"'\n"
          "echo \"run exit=$?\"\n",
      {"--nodes=2", "--ntasks-per-node=2", "--gpus-per-node=2", "--output=out-%j.log"});
  Job j = Finished(id);
  ASSERT_EQ(j.state, JobState::kCompleted) << j.reason << "\n" << Output(id);
  std::string out = Output(id);
  auto batch = Fields(Lines(out, "batch ").at(0));
  EXPECT_EQ(batch["addr"], "127.0.0.1");
  int port = std::stoi(batch["port"]);
  EXPECT_GE(port, 29500);
  EXPECT_LE(port, 30499);
  auto tasks = Lines(out, "task ");
  ASSERT_EQ(tasks.size(), 4u) << out;
  std::set<std::string> ranks;
  for (const auto& line : tasks) {
    auto f = Fields(line);
    int rank = std::stoi(f["rank"]);
    ranks.insert(f["rank"]);
    const NodeAllocation& na = j.allocation.nodes[rank / 2];
    EXPECT_EQ(f["host"], na.node_name) << line;
    EXPECT_EQ(f["local"], std::to_string(rank % 2)) << line;
    EXPECT_EQ(f["node"], std::to_string(rank / 2)) << line;
    EXPECT_EQ(f["world"], "4");
    EXPECT_EQ(f["lws"], "2");
    EXPECT_EQ(f["addr"], "127.0.0.1");
    EXPECT_EQ(f["port"], batch["port"]);
    EXPECT_EQ(f["procid"], f["rank"]);
    EXPECT_EQ(f["localid"], f["local"]);
    EXPECT_EQ(f["nodeid"], f["node"]);
    EXPECT_EQ(f["step"], "0");
    EXPECT_EQ(f["gpus"], na.gpus.ToString()) << line;
    EXPECT_EQ(f["jobid"], id.ToString());
  }
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1", "2", "3"}));
  EXPECT_NE(out.find("run exit=0"), std::string::npos) << out;
}

TEST_F(StepsTest, LabelledOutputAndGpusPerTask) {
  JobId id =
      SubmitScript("label.sh",
                   kCorral +
                       " run -l --gpus-per-task 1 sh -c 'echo \"gpus=$CUDA_VISIBLE_DEVICES\"; "
                       "echo \"err of $RANK\" >&2; printf partial'\n"
                       "echo \"run exit=$?\"\n",
                   {"--nodes=2", "--ntasks-per-node=2", "--gpus-per-node=2", "--output=out-%j.log",
                    "--error=err-%j.log"});
  Job j = Finished(id);
  ASSERT_EQ(j.state, JobState::kCompleted) << j.reason;
  std::string out = Output(id);
  std::string err = Read(cluster_->work_dir() + "/err-" + id.ToString() + ".log");
  for (int rank = 0; rank < 4; ++rank) {
    std::vector<uint32_t> node_gpus = j.allocation.nodes[rank / 2].gpus.ToVector();
    std::string expect =
        std::to_string(rank) + ": gpus=" + std::to_string(node_gpus[rank % 2]) + "\n";
    EXPECT_NE(out.find(expect), std::string::npos) << expect << " in\n" << out;
    EXPECT_NE(out.find(std::to_string(rank) + ": partial"), std::string::npos) << out;
    EXPECT_NE(err.find(std::to_string(rank) + ": err of " + std::to_string(rank) + "\n"),
              std::string::npos)
        << err;
  }
  EXPECT_NE(out.find("run exit=0"), std::string::npos) << out;
}

TEST_F(StepsTest, FailingTaskGivesItsExitCodeAndKillOnBadExitEndsTheOthers) {
  JobId id = SubmitScript("fail.sh",
                          kCorral +
                              " run sh -c 'exit $(( RANK == 2 ? 3 : 0 ))'\n"
                              "echo \"plain exit=$?\"\n"
                              "start=$(date +%s)\n" +
                              kCorral +
                              " run -K sh -c 'if [ $RANK = 1 ]; then exit 4; fi; exec sleep 120'\n"
                              "echo \"kill exit=$? after=$(( $(date +%s) - start ))\"\n" +
                              kCorral +
                              " run no-such-program-xyz\n"
                              "echo \"missing exit=$?\"\n",
                          {"--nodes=2", "--ntasks-per-node=2", "--output=out-%j.log"});
  Job j = Finished(id);
  EXPECT_EQ(j.state, JobState::kCompleted) << j.reason;
  std::string out = Output(id);
  EXPECT_NE(out.find("plain exit=3"), std::string::npos) << out;
  EXPECT_NE(out.find("corral run: error: node02: task 2: Exited with exit code 3"),
            std::string::npos)
      << out;
  auto kill = Fields(Lines(out, "kill ").at(0));
  EXPECT_EQ(kill["exit"], "4") << out;
  EXPECT_LT(std::stoi(kill["after"]), 60) << "the other tasks were not ended";
  EXPECT_NE(out.find("missing exit=127"), std::string::npos) << out;
  EXPECT_NE(out.find("no-such-program-xyz: command not found"), std::string::npos) << out;
  // The steps are in the API, with their results.
  auto steps = cluster_->Request("GET", "/api/v1/jobs/" + id.ToString() + "/steps", "");
  ASSERT_TRUE(steps.has_value());
  EXPECT_EQ(steps->status, 200);
  EXPECT_NE(steps->body.find("\"state\":\"FAILED\""), std::string::npos) << steps->body;
}

TEST_F(StepsTest, CancellingTheJobEndsItsStepsOnEveryNode) {
  JobId id = SubmitScript(
      "cancel.sh", kCorral + " run sh -c 'echo $$ > pid.$CORRAL_JOB_ID.$RANK; exec sleep 300'\n",
      {"--nodes=2", "--output=out-%j.log"});
  std::vector<int> pids;
  ASSERT_TRUE(WaitFor(
      [&] {
        pids.clear();
        for (int rank = 0; rank < 2; ++rank) {
          std::string text =
              Read(cluster_->work_dir() + "/pid." + id.ToString() + "." + std::to_string(rank));
          if (text.empty()) return false;
          pids.push_back(std::stoi(text));
        }
        return true;
      },
      std::chrono::seconds(30)))
      << Output(id) << cluster_->ControllerLog();
  auto cancel = cluster_->Cli({"cancel", id.ToString()});
  ASSERT_EQ(cancel.status, 0) << cancel.err;
  EXPECT_EQ(Finished(id).state, JobState::kCancelled);
  for (int pid : pids) {
    EXPECT_TRUE(WaitFor(
        [&] {
          std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
          std::string line;
          if (!std::getline(stat, line)) return true;
          return line.find(") Z ") != std::string::npos;
        },
        std::chrono::seconds(15)))
        << "task process " << pid << " still runs";
  }
}

TEST_F(StepsTest, CheckpointOnSignalRequeueAndResume) {
  // USR1 5 s after the start (55 s before a 1-minute limit): the job writes its state into its
  // checkpoint directory and acknowledges; requeued, it resumes from there.
  JobId id =
      SubmitScript("ckpt.sh",
                   "echo \"start restart=$CORRAL_RESTART_COUNT dir=$CORRAL_CHECKPOINT_DIR\"\n"
                   "if [ -f \"$CORRAL_CHECKPOINT_DIR/state\" ]; then\n"
                   "  echo \"resumed from $(cat \"$CORRAL_CHECKPOINT_DIR/state\")\"; exit 0\n"
                   "fi\n"
                   "trap 'echo step-7 > \"$CORRAL_CHECKPOINT_DIR/state\"; " +
                       kCorral +
                       " checkpoint-done; echo checkpointed' USR1\n"
                       "while :; do sleep 1; done\n",
                   {"--requeue", "--signal=USR1@55", "--time=1", "--output=out-%j.log"});
  ASSERT_TRUE(WaitFor([&] { return Output(id).find("checkpointed") != std::string::npos; },
                      std::chrono::seconds(40)))
      << Output(id) << cluster_->ControllerLog();
  auto show = cluster_->Cli({"show", id.ToString()});
  EXPECT_EQ(show.status, 0);
  EXPECT_NE(show.out.find("LastCheckpoint:"), std::string::npos);
  EXPECT_EQ(show.out.find("LastCheckpoint:  -"), std::string::npos) << show.out;
  auto info = cluster_->GetJob(id);
  ASSERT_TRUE(info.has_value());
  EXPECT_NE(info->job.last_checkpoint, Timestamp{});
  EXPECT_EQ(info->job.state, JobState::kRunning);
  std::string dir = cluster_->work_dir() + "/.corral/checkpoints/" + id.ToString();
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_EQ(Read(dir + "/state"), "step-7\n");

  auto requeue = cluster_->Cli({"requeue", id.ToString()});
  ASSERT_EQ(requeue.status, 0) << requeue.err;
  Job j = Finished(id);
  EXPECT_EQ(j.state, JobState::kCompleted) << j.reason;
  EXPECT_EQ(j.restart_count, 1u);
  std::string out = Output(id);
  // Both runs, in order, in the same (appended) file, with the same checkpoint directory.
  std::regex expected("start restart=0 dir=" + dir + "\n(.|\n)*checkpointed\n(.|\n)*" +
                      "start restart=1 dir=" + dir + "\nresumed from step-7\n");
  EXPECT_TRUE(std::regex_search(out, expected)) << out;
  EXPECT_EQ(Lines(out, "start ").size(), 2u) << out;
}

TEST_F(StepsTest, CheckpointApiErrors) {
  auto bad = cluster_->Request("POST", "/api/v1/jobs/424242/checkpoint", "");
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->status, 404);
  auto outside = cluster_->Cli({"run", "true"});
  EXPECT_EQ(outside.status, 1);
  EXPECT_EQ(outside.err,
            "corral run: error: not inside a job (CORRAL_JOB_ID is not set); give --jobid JOB\n");
  auto done = cluster_->Cli({"checkpoint-done"});
  EXPECT_EQ(done.status, 2);
  EXPECT_NE(done.err.find("CORRAL_JOB_ID is not set"), std::string::npos) << done.err;
  auto bad_signal = cluster_->Cli({"submit", "--signal", "USR1@soon", "--wrap", "true"});
  EXPECT_NE(bad_signal.status, 0);
  EXPECT_NE(bad_signal.err.find("--signal"), std::string::npos) << bad_signal.err;
}

// A step survives a controller restart (kill -9): it is stored, so the restarted controller
// knows it; a task that exits while the controller is down is reported once it is back (the
// agent keeps the event), the others exit after the restart, and `corral run` (which waits
// for the controller) returns the tasks' real exit codes. Step ids are not reused.
TEST(StepRestartTest, RunningStepSurvivesAControllerRestart) {
  TestCluster cluster({.nodes = 2, .gpus_per_node = 4});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  const std::string work = cluster.work_dir();
  const std::string corral = CORRAL_BINARY;
  std::ofstream(work + "/restart.sh")
      << "#!/bin/sh\n" + corral +
             " run -n 4 sh -c 'touch started-$RANK; "
             "while [ ! -e release ] && [ ! -e release-$RANK ]; do sleep 0.05; done; "
             "touch done-$RANK; exit $((RANK + 3))'\n"
             "echo \"run exit=$?\"\n" +
             corral + " run -n 1 sh -c 'echo \"second step=$CORRAL_STEP_ID\"'\n";
  auto r = cluster.Cli({"submit", "--parsable", "--nodes=2", "--ntasks-per-node=2", "--output=out-%j.log",
                        work + "/restart.sh"});
  ASSERT_EQ(r.status, 0) << r.err;
  JobId id(std::stoull(r.out));
  auto exists = [&](const std::string& name) { return fs::exists(work + "/" + name); };
  ASSERT_TRUE(WaitFor([&] { return exists("started-0") && exists("started-1") && exists("started-2") &&
                                   exists("started-3"); },
                      std::chrono::seconds(60)))
      << cluster.ControllerLog();

  cluster.KillController(SIGKILL);
  std::ofstream(work + "/release-0").flush();  // task 0 exits while the controller is down
  ASSERT_TRUE(WaitFor([&] { return exists("done-0"); }, std::chrono::seconds(30)));
  ASSERT_TRUE(cluster.StartController().has_value()) << cluster.ControllerLog();
  auto steps = cluster.Request("GET", "/api/v1/jobs/" + id.ToString() + "/steps/0", "");
  ASSERT_TRUE(steps.has_value());
  EXPECT_EQ(steps->status, 200) << steps->body;
  std::ofstream(work + "/release").flush();

  auto done = cluster.WaitJob(id, std::chrono::seconds(90));
  ASSERT_TRUE(done.has_value()) << cluster.ControllerLog();
  std::ifstream in(work + "/out-" + id.ToString() + ".log");
  std::ostringstream text;
  text << in.rdbuf();
  std::string out = text.str();
  EXPECT_EQ(done->job.state, JobState::kCompleted) << done->job.reason << "\n" << out;
  EXPECT_NE(out.find("run exit=6\n"), std::string::npos) << out;  // the highest: rank 3's
  for (int rank = 0; rank < 4; ++rank) {
    std::string node = rank < 2 ? "node01" : "node02";
    EXPECT_NE(out.find("corral run: error: " + node + ": task " + std::to_string(rank) + ": Exited with exit code " +
                       std::to_string(rank + 3) + "\n"),
              std::string::npos)
        << out;
  }
  EXPECT_NE(out.find("second step=1\n"), std::string::npos) << out;
  auto info = cluster.Request("GET", "/api/v1/jobs/" + id.ToString() + "/steps/0", "");
  ASSERT_TRUE(info.has_value());
  auto step = api::DecodeStepInfo(info->body);
  ASSERT_TRUE(step.has_value()) << info->body;
  EXPECT_EQ(step->state, JobState::kFailed);
  EXPECT_EQ(step->exit_code, 6);
}

}  // namespace
}  // namespace corral::testing
