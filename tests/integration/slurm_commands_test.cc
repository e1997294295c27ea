// Slurm's administrative commands on a real cluster (a controller and two agents, real
// processes): `scontrol suspend|resume` stopping and continuing a job's processes (freezing
// its cgroup where the agent has one, so a process that called setsid stops too), `sdiag`
// showing what the controller did, each refused to a user with Slurm's words; `sstat` showing
// a running step's memory and `sbcast` landing a file owned by the job's user.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "api/http.h"
#include "api/http_status.h"
#include "api/json_codec.h"
#include "core/clock.h"
#include "core/strings.h"
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

  // Whether process `pid` is stopped: SIGSTOP ("T"), or its cgroup v2 frozen.
  static bool Stopped(const std::string& pid) {
    if (ProcState(pid) == "T") return true;
    std::istringstream cgroups(Read("/proc/" + pid + "/cgroup"));
    for (std::string line; std::getline(cgroups, line);) {
      if (line.rfind("0::", 0) != 0) continue;
      for (const char* root : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
        std::string events = Read(root + line.substr(3) + "/cgroup.events");
        if (!events.empty()) return Has(events, "frozen 1");
      }
    }
    return false;
  }
  // Whether process `pid` is in a job's cgroup of an agent (one named job_<id>_<generation>).
  static bool InJobCgroup(const std::string& pid) {
    return Has(Read("/proc/" + pid + "/cgroup"), "/job_");
  }
  static std::string FirstLine(const std::string& text) {
    return text.substr(0, text.find('\n'));
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
  EXPECT_TRUE(WaitFor([&] { return Stopped(pid); }, std::chrono::seconds(30))) << ProcState(pid);
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
  EXPECT_TRUE(Stopped(pid));

  // Resumed, it runs on and completes.
  auto resume = cluster_->CliAs("scontrol", {"resume", id});
  ASSERT_EQ(resume.status, 0) << resume.err;
  EXPECT_TRUE(WaitFor([&] { return !Stopped(pid); }, std::chrono::seconds(30)));
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

// With a cgroup, `scontrol suspend` freezes it: a process that left the job's process group
// (setsid) stops too, which SIGSTOP to the groups would miss; resume thaws it.
TEST_F(SlurmCommandsTest, SuspendFreezesAProcessThatCalledSetsid) {
  const std::string dir = cluster_->work_dir();
  const std::string pid_file = dir + "/escaped.pid";
  auto submitted = cluster_->CliAs(
      "sbatch", {"--parsable", "-t", "10", "-o", "/dev/null", "--wrap",
                 "setsid sh -c 'echo $$ > " + pid_file + "; while :; do sleep 0.1; done' & wait"});
  ASSERT_EQ(submitted.status, 0) << submitted.err;
  const std::string id = FirstLine(submitted.out);
  ASSERT_TRUE(WaitFor([&] { return !Read(pid_file).empty(); }, std::chrono::seconds(30)));
  const std::string pid = FirstLine(Read(pid_file));
  if (!InJobCgroup(pid)) {
    EXPECT_EQ(cluster_->CliAs("scancel", {id}).status, 0);
    GTEST_SKIP() << "the agents run jobs without cgroups here: SIGSTOP is the fallback";
  }
  ASSERT_EQ(cluster_->CliAs("scontrol", {"suspend", id}).status, 0);
  EXPECT_TRUE(WaitFor([&] { return Stopped(pid); }, std::chrono::seconds(30)));
  ASSERT_EQ(cluster_->CliAs("scontrol", {"resume", id}).status, 0);
  EXPECT_TRUE(WaitFor([&] { return !Stopped(pid); }, std::chrono::seconds(30)));
  // Cancelled while suspended, the whole cgroup goes (thawed first, then killed).
  ASSERT_EQ(cluster_->CliAs("scontrol", {"suspend", id}).status, 0);
  EXPECT_TRUE(WaitFor([&] { return Stopped(pid); }, std::chrono::seconds(30)));
  ASSERT_EQ(cluster_->CliAs("scancel", {id}).status, 0);
  EXPECT_TRUE(WaitFor([&] { return ProcState(pid).empty() || ProcState(pid) == "Z"; },
                      std::chrono::seconds(60)));
}

// `sstat` reads a running step's usage from its node's agent: a step holding ~40 MB shows it
// in MaxRSS; `-a` adds the batch step; Slurm's errors for a step that does not run, a user
// who is not the job's, and no job at all.
TEST_F(SlurmCommandsTest, SstatShowsARunningStepsMemory) {
  const std::string dir = cluster_->work_dir();
  const std::string ready = dir + "/sstat.ready", go = dir + "/sstat.go";
  auto submitted = cluster_->CliAs(
      "sbatch",
      {"--parsable", "-t", "10", "-o", dir + "/sstat.out", "--wrap",
       "srun bash -c 'x=$(head -c 40000000 /dev/zero | tr \"\\0\" a); touch " + ready +
           "; while [ ! -e " + go + " ]; do sleep 0.1; done; echo ${#x}'"});
  ASSERT_EQ(submitted.status, 0) << submitted.err;
  const std::string id = FirstLine(submitted.out);
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(ready); }, std::chrono::seconds(60)))
      << Read(dir + "/sstat.out");
  auto stat = cluster_->CliAs("sstat", {"-j", id, "-P", "-n", "-o", "JobID,MaxRSS,NTasks,MaxRSSNode"});
  ASSERT_EQ(stat.status, 0) << stat.err;
  // "12.0|41236K|1|node01": the step's bash holds the 40 MB string.
  std::vector<std::string> f = SplitNonEmpty(FirstLine(stat.out), '|');
  ASSERT_EQ(f.size(), 4u) << stat.out << stat.err;
  EXPECT_EQ(f[0], id + ".0");
  ASSERT_FALSE(f[1].empty());
  auto noconvert =
      cluster_->CliAs("sstat", {"-j", id + ".0", "--noconvert", "-n", "-P", "-o", "MaxRSS"});
  EXPECT_GE(std::stoull(FirstLine(noconvert.out)), 40000000ull) << noconvert.out << noconvert.err;
  EXPECT_EQ(f[2], "1");
  EXPECT_EQ(f[3].rfind("node0", 0), 0u) << f[3];
  auto all = cluster_->CliAs("sstat", {"-a", "-j", id, "-n", "-P", "-o", "JobID"});
  EXPECT_EQ(all.out, id + ".batch\n" + id + ".0\n") << all.err;
  auto header = cluster_->CliAs("sstat", {"-j", id});
  EXPECT_EQ(header.out.rfind("JobID         MaxVMSize", 0), 0u) << header.out;
  auto missing = cluster_->CliAs("sstat", {"-j", id + ".7", "-n"});
  EXPECT_EQ(missing.status, 0);
  EXPECT_EQ(missing.err, "sstat: error: StepId=" + id + ".7 not found running.\n");
  auto other = cluster_->CliAs("sstat", {"-j", id, "-n"}, "", As("bob"));
  EXPECT_TRUE(Has(other.err, "sstat: error: couldn't get steps for job " + id)) << other.err;
  EXPECT_EQ(other.out, "");
  auto none = cluster_->CliAs("sstat", {});
  EXPECT_EQ(none.status, 1);
  EXPECT_EQ(none.err, "sstat: error: You didn't give me any jobs to stat.\n");
  std::ofstream(go) << "go\n";
  auto done = cluster_->WaitJob(JobId(std::stoull(id)), std::chrono::seconds(60));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->job.state, JobState::kCompleted) << done->job.reason;
  EXPECT_EQ(Read(dir + "/sstat.out"), "40000000\n");
}

// `sbcast` inside a job: the file lands on the job's node owned by the job's user (a user
// other than root where the test runs as root), never where only root may write, not over
// an existing file without -f, and not for someone else's job.
TEST_F(SlurmCommandsTest, SbcastLandsAFileOwnedByTheJobsUser) {
  const bool root = geteuid() == 0;
  const std::string user = "bcastu";  // as root: uid and gid 60006, without a passwd entry
  const std::string dir = cluster_->work_dir() + "/bcast";
  std::filesystem::create_directories(dir);
  const uint32_t uid = root ? 60006 : geteuid();
  if (root) {
    ASSERT_EQ(chmod(cluster_->dir().c_str(), 0711), 0);  // the job's user passes through
    ASSERT_EQ(chmod(cluster_->work_dir().c_str(), 0755), 0);
    ASSERT_EQ(chown(dir.c_str(), uid, uid), 0);
  }
  std::map<std::string, std::string> env;
  if (root) {
    auto token = cluster_->credentials().MintUserToken(
        {.user = user, .uid = uid, .gid = uid}, SystemClock::Get().Now(), Seconds(600));
    ASSERT_TRUE(token.has_value());
    env["CORRAL_TOKEN"] = *token;
  }
  const std::string go = dir + "/go";
  // Submitted through the API with the user's own token (sbatch names the local user).
  JobSpec spec = cluster_->ShellJob("while [ ! -e " + go + " ]; do sleep 0.1; done");
  spec.working_dir = dir;
  spec.stdout_path = "/dev/null";
  auto api_client = api::HttpClient::Create(cluster_->url(), cluster_->client_options());
  ASSERT_TRUE(api_client.has_value());
  std::map<std::string, std::string> auth;
  auth["authorization"] = root ? "Bearer " + env["CORRAL_TOKEN"] : cluster_->Token("");
  auto sent = api::CheckResponse(
      (*api_client)->Send("POST", "/api/v1/jobs", api::EncodeJobSpec(spec), auth));
  ASSERT_TRUE(sent.has_value()) << sent.error().message;
  auto submitted = api::DecodeSubmitResponse(sent->body);
  ASSERT_TRUE(submitted.has_value());
  const std::string id = submitted->job_id.ToString();
  ASSERT_TRUE(WaitFor([&] {
    auto j = cluster_->GetJob(JobId(std::stoull(id)));
    return j && j->job.state == JobState::kRunning;
  }, std::chrono::seconds(60)));
  const std::string source = cluster_->work_dir() + "/bcast.src";
  std::ofstream(source) << "payload\n";
  ASSERT_EQ(chmod(source.c_str(), 0750), 0);
  auto copy = cluster_->CliAs("sbcast", {"--jobid", id, "-p", source, dir + "/landed"}, "", env);
  ASSERT_EQ(copy.status, 0) << copy.err;
  struct stat st {};
  ASSERT_EQ(stat((dir + "/landed").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, uid);
  EXPECT_EQ(st.st_mode & 0777, 0750u);
  EXPECT_EQ(Read(dir + "/landed"), "payload\n");
  // Again without -f: the file exists; with -f it is replaced.
  auto again = cluster_->CliAs("sbcast", {"--jobid", id, source, dir + "/landed"}, "", env);
  EXPECT_EQ(again.status, 1);
  EXPECT_TRUE(Has(again.err, "exists")) << again.err;
  EXPECT_EQ(cluster_->CliAs("sbcast", {"-f", "--jobid", id, source, dir + "/landed"}, "", env).status, 0);
  if (root) {
    // Where only root may write (the work directory's top is root's): refused, nothing made.
    auto denied = cluster_->CliAs("sbcast", {"--jobid", id, source, cluster_->work_dir() + "/rootonly"},
                                  "", env);
    EXPECT_EQ(denied.status, 1);
    EXPECT_FALSE(std::filesystem::exists(cluster_->work_dir() + "/rootonly")) << denied.err;
    // Another user's job: refused at the controller.
    auto other = cluster_->CliAs("sbcast", {"--jobid", id, source, dir + "/other"}, "", As("bob"));
    EXPECT_EQ(other.status, 1);
    EXPECT_FALSE(std::filesystem::exists(dir + "/other"));
  }
  auto dots = cluster_->CliAs("sbcast", {"--jobid", id, source, dir + "/../x/../landed2"}, "", env);
  EXPECT_EQ(dots.status, 1);  // ".." is refused by the agent, whatever it leads to
  EXPECT_TRUE(Has(dots.err, "\"..\" component")) << dots.err;
  auto refused = cluster_->CliAs("sbcast", {"--send-libs", source, dir + "/x"}, "", env);
  EXPECT_EQ(refused.status, 1);
  EXPECT_EQ(refused.err, "sbcast: error: option --send-libs is not supported by Corral\n");
  std::ofstream(go) << "go\n";
  ASSERT_TRUE(cluster_->WaitJob(JobId(std::stoull(id)), std::chrono::seconds(60)).has_value());
}

}  // namespace
}  // namespace corral::testing
