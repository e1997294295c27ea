// Slurm's administrative commands on a real cluster (a controller and two agents, real
// processes): `scontrol suspend|resume` stopping and continuing a job's processes, `sdiag`
// showing what the controller did, each refused to a user with Slurm's words.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "core/clock.h"
#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

class SlurmCommandsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new TestCluster({.nodes = 2, .gpus_per_node = 2});
    ASSERT_TRUE(cluster_->Start().has_value()) << cluster_->ControllerLog();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static bool Has(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
  }
  // The environment of a command run as `user` (a user's token, not the cluster's key).
  static std::map<std::string, std::string> As(const std::string& user) {
    return {{"CORRAL_TOKEN", cluster_->Token(user).substr(7)}};  // without "Bearer "
  }
  // The state letter of process `pid` in /proc ("S", "R", "T" for stopped), "" when gone.
  static std::string ProcState(const std::string& pid) {
    std::string status = Read("/proc/" + pid + "/status");
    size_t at = status.find("State:\t");
    return at == std::string::npos ? "" : status.substr(at + 7, 1);
  }

  static TestCluster* cluster_;
};

TestCluster* SlurmCommandsTest::cluster_ = nullptr;

TEST_F(SlurmCommandsTest, SuspendStopsTheJobsProcessesAndResumeContinuesThem) {
  const std::string dir = cluster_->work_dir();
  const std::string pid_file = dir + "/suspend.pid", go = dir + "/suspend.go";
  auto submitted = cluster_->CliAs(
      "sbatch",
      {"--parsable", "-J", "susp", "-t", "10", "-G", "1", "-o", dir + "/suspend.out", "--wrap",
       "echo $$ > " + pid_file + "; while [ ! -e " + go + " ]; do sleep 0.1; done; echo done"});
  ASSERT_EQ(submitted.status, 0) << submitted.err;
  const std::string id = submitted.out.substr(0, submitted.out.find('\n'));
  ASSERT_TRUE(WaitFor([&] { return !Read(pid_file).empty(); }, std::chrono::seconds(30)));
  const std::string pid = Read(pid_file).substr(0, Read(pid_file).find('\n'));
  ASSERT_NE(ProcState(pid), "");

  // Its owner may not suspend it (Slurm: operators and admins only), nor resume it.
  for (const char* verb : {"suspend", "resume"}) {
    auto refused = cluster_->CliAs("scontrol", {verb, id}, "", As("bob"));
    EXPECT_EQ(refused.status, 1);
    EXPECT_EQ(refused.err, "Access/permission denied for job " + id + "\n");
  }
  auto not_suspended = cluster_->CliAs("scontrol", {"resume", id});
  EXPECT_EQ(not_suspended.status, 1);
  EXPECT_EQ(not_suspended.err, "Job is not suspended for job " + id + "\n");

  // An administrator suspends it: its processes stop, it shows SUSPENDED and keeps its GPU.
  auto suspend = cluster_->CliAs("scontrol", {"suspend", id});
  ASSERT_EQ(suspend.status, 0) << suspend.err;
  EXPECT_TRUE(WaitFor([&] { return ProcState(pid) == "T"; }, std::chrono::seconds(30)))
      << ProcState(pid);
  auto queue = cluster_->CliAs("squeue", {"-h", "-j", id, "-o", "%t %T"});
  EXPECT_EQ(queue.out, "S SUSPENDED\n") << queue.err;
  auto held = cluster_->GetJob(JobId(std::stoull(id)));
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->job.allocation.nodes.at(0).gpus.size(), 1u);  // its GPU stays allocated
  EXPECT_EQ(cluster_->CliAs("squeue", {"-h", "-t", "S", "-o", "%i"}).out, id + "\n");
  EXPECT_EQ(cluster_->CliAs("squeue", {"-h", "-t", "R", "-n", "susp", "-o", "%i"}).out, "");
  auto show = cluster_->CliAs("scontrol", {"show", "job", id});
  EXPECT_TRUE(Has(show.out, "JobState=SUSPENDED Reason=None")) << show.out;
  EXPECT_FALSE(Has(show.out, "SuspendTime=None")) << show.out;
  // Suspending it again is no error (as Slurm); its run time stands still meanwhile.
  const JobId job(std::stoull(id));
  const Duration run = RunTime(cluster_->GetJob(job)->job, SystemClock::Get().Now());
  EXPECT_EQ(cluster_->CliAs("scontrol", {"suspend", id}).status, 0);
  EXPECT_EQ(RunTime(cluster_->GetJob(job)->job, SystemClock::Get().Now()), run);
  EXPECT_EQ(ProcState(pid), "T");

  // Resumed, it runs on and completes.
  auto resume = cluster_->CliAs("scontrol", {"resume", id});
  ASSERT_EQ(resume.status, 0) << resume.err;
  EXPECT_TRUE(WaitFor([&] { return ProcState(pid) != "T"; }, std::chrono::seconds(30)));
  EXPECT_EQ(cluster_->CliAs("squeue", {"-h", "-j", id, "-o", "%t"}).out, "R\n");
  std::ofstream(go) << "go\n";
  auto done = cluster_->WaitJob(JobId(std::stoull(id)), std::chrono::seconds(60));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->job.state, JobState::kCompleted) << done->job.reason;
  EXPECT_EQ(Read(dir + "/suspend.out"), "done\n");
  auto ended = cluster_->CliAs("scontrol", {"suspend", id});
  EXPECT_EQ(ended.status, 1);
  EXPECT_EQ(ended.err, "Job/step already completing or completed for job " + id + "\n");
  auto missing = cluster_->CliAs("scontrol", {"suspend"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_EQ(missing.err, "too few arguments for keyword:suspend\n");
}

TEST_F(SlurmCommandsTest, SdiagShowsJobsPassesAndRequestsToOperatorsOnly) {
  auto submitted = cluster_->CliAs("sbatch", {"--parsable", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_EQ(submitted.status, 0) << submitted.err;
  auto done = cluster_->WaitJob(JobId(std::stoull(submitted.out)), std::chrono::seconds(60));
  ASSERT_TRUE(done.has_value());
  auto diag = cluster_->CliAs("sdiag", {});
  ASSERT_EQ(diag.status, 0) << diag.err;
  for (const char* line :
       {"sdiag output at ", "Data since      ", "Server thread count:  ", "Jobs submitted: ",
        "Jobs completed: ", "Main schedule statistics (microseconds):\n\tLast cycle:   ",
        "Backfilling stats\n", "Remote Procedure Call statistics by message type\n",
        "\tPOST /api/v1/jobs ", "Remote Procedure Call statistics by user\n"}) {
    EXPECT_TRUE(Has(diag.out, line)) << line << "\n" << diag.out;
  }
  EXPECT_FALSE(Has(diag.out, "Jobs submitted: 0\n")) << diag.out;
  auto json = cluster_->CliAs("sdiag", {"--json"});
  EXPECT_TRUE(Has(json.out, "\"jobs_submitted\":")) << json.out;
  // A user: refused, as Slurm with PrivateData=usage.
  auto user = cluster_->CliAs("sdiag", {}, "", As("bob"));
  EXPECT_EQ(user.status, 1);
  EXPECT_TRUE(Has(user.err, "slurm_get_statistics: Access/permission denied")) << user.err;
  EXPECT_EQ(user.out, "");
  auto reset = cluster_->CliAs("sdiag", {"-r"});
  EXPECT_EQ(reset.status, 1);
  EXPECT_EQ(reset.err, "sdiag: error: option -r is not supported by Corral\n");
}

// `scontrol top` (operators and admins, as Slurm by default): the job goes ahead of its user's
// like pending jobs by nice values, as Slurm does it.
TEST_F(SlurmCommandsTest, TopMovesAPendingJobAheadByNice) {
  auto submit = [&] {
    auto r = cluster_->CliAs("sbatch", {"--parsable", "-J", "later", "--begin", "now+1hour", "-o",
                                        "/dev/null", "--wrap", "true"});
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out.substr(0, r.out.find('\n'));
  };
  const std::string a = submit(), b = submit();
  auto refused = cluster_->CliAs("scontrol", {"top", b}, "", As("bob"));
  EXPECT_EQ(refused.status, 1);
  EXPECT_EQ(refused.err, "Access/permission denied for job " + b + "\n");
  auto top = cluster_->CliAs("scontrol", {"top", b});
  ASSERT_EQ(top.status, 0) << top.err;
  auto nice = cluster_->CliAs("squeue", {"-h", "-n", "later", "-o", "%i %y"});
  // b's nice went down by as much as a's went up (by 1 when their priorities were equal).
  EXPECT_TRUE(Has(nice.out, b + " -")) << nice.out << nice.err;
  EXPECT_FALSE(Has(nice.out, a + " -")) << nice.out;
  EXPECT_EQ(cluster_->CliAs("scancel", {a, b}).status, 0);
  auto gone = cluster_->CliAs("scontrol", {"top", a});
  EXPECT_EQ(gone.status, 1);
  EXPECT_EQ(gone.err, "Job is no longer pending execution for job " + a + "\n");
}

}  // namespace
}  // namespace corral::testing
