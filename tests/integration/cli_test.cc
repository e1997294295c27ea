// The command line against a running cluster: submit with options and #CORRAL directives,
// queue, show, cancel, wait, nodes, drain and resume, --json, and clear errors.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "api/json_codec.h"
#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

class CliTest : public ::testing::Test {
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
  static JobId IdFrom(const std::string& submitted) {
    const std::string prefix = "Submitted batch job ";
    EXPECT_EQ(submitted.rfind(prefix, 0), 0u) << submitted;
    return JobId(std::stoull(submitted.substr(prefix.size())));
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static TestCluster* cluster_;
};

TestCluster* CliTest::cluster_ = nullptr;

TEST_F(CliTest, SubmitWithDirectivesAndWaitForExitStatus) {
  std::string script = WriteScript("job.sh",
                                   "#!/bin/sh\n"
                                   "#CORRAL --job-name=from-directive\n"
                                   "#CORRAL --gpus-per-node 2   # two GPUs\n"
                                   "#CORRAL --output=dir-%j.out\n"
                                   "echo gpus=$CUDA_VISIBLE_DEVICES name=$CORRAL_JOB_NAME\n"
                                   "exit 7\n");
  auto sub = cluster_->Cli({"submit", "--time", "5:00", script});
  ASSERT_EQ(sub.status, 0) << sub.err;
  JobId id = IdFrom(sub.out);
  auto wait = cluster_->Cli({"wait", id.ToString()});
  EXPECT_EQ(wait.status, 7) << wait.out << wait.err;
  auto info = cluster_->GetJob(id);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->job.spec.name, "from-directive");
  EXPECT_EQ(info->job.time_limit, Minutes(5));
  EXPECT_EQ(info->job.state, JobState::kFailed);
  std::string out = Read(cluster_->work_dir() + "/dir-" + id.ToString() + ".out");
  EXPECT_EQ(out, "gpus=" + info->job.allocation.nodes[0].gpus.ToString() + " name=from-directive\n");
  EXPECT_EQ(info->job.allocation.nodes[0].gpus.size(), 2u);
}

TEST_F(CliTest, CommandLineWinsOverDirectives) {
  std::string script = WriteScript("named.sh", "#!/bin/sh\n#CORRAL --job-name=inner\nexit 0\n");
  auto sub = cluster_->Cli({"submit", "--job-name=outer", "--parsable", script});
  ASSERT_EQ(sub.status, 0) << sub.err;
  JobId id(std::stoull(sub.out));
  EXPECT_EQ(cluster_->GetJob(id)->job.spec.name, "outer");
  EXPECT_EQ(cluster_->Cli({"wait", id.ToString()}).status, 0);
}

TEST_F(CliTest, QueueShowCancelAndJson) {
  auto sub = cluster_->Cli({"submit", "--gpus", "1", "--wrap", "sleep 300"});
  ASSERT_EQ(sub.status, 0) << sub.err;
  JobId id = IdFrom(sub.out);
  ASSERT_TRUE(WaitFor([&] { return cluster_->GetJob(id)->job.state == JobState::kRunning; },
                      std::chrono::seconds(20)));
  auto queue = cluster_->Cli({"queue"});
  ASSERT_EQ(queue.status, 0) << queue.err;
  EXPECT_EQ(queue.out.rfind("JOBID", 0), 0u) << queue.out;
  EXPECT_NE(queue.out.find(id.ToString()), std::string::npos);
  EXPECT_NE(queue.out.find("RUNNING"), std::string::npos);
  auto json = cluster_->Cli({"queue", "--json"});
  ASSERT_EQ(json.status, 0);
  auto decoded = api::DecodeJobInfoList(json.out);
  ASSERT_TRUE(decoded.has_value()) << json.out;
  auto show = cluster_->Cli({"show", id.ToString()});
  EXPECT_EQ(show.status, 0);
  EXPECT_NE(show.out.find("State:"), std::string::npos);
  EXPECT_NE(show.out.find("RUNNING"), std::string::npos);
  auto cancel = cluster_->Cli({"cancel", id.ToString()});
  EXPECT_EQ(cancel.status, 0) << cancel.err;
  auto waited = cluster_->Cli({"wait", id.ToString()});
  EXPECT_NE(waited.status, 0);
  EXPECT_EQ(cluster_->GetJob(id)->job.state, JobState::kCancelled);
}

// `corral show --timeline` on a real cluster: every mark of the path is set, each clock's
// marks are in order (one machine: both clocks are one), and the text lists them all.
TEST_F(CliTest, TimelineHasEveryMarkOfTheJobsPath) {
  auto sub = cluster_->Cli({"submit", "--parsable", "--wrap", "true"});
  ASSERT_EQ(sub.status, 0) << sub.err;
  JobId id(std::stoull(sub.out));
  ASSERT_EQ(cluster_->Cli({"wait", id.ToString()}).status, 0);
  auto json = cluster_->Cli({"show", "--timeline", "--json", id.ToString()});
  ASSERT_EQ(json.status, 0) << json.err;
  auto t = api::DecodeJobTimeline(json.out);
  ASSERT_TRUE(t.has_value()) << json.out;
  EXPECT_EQ(t->state, "COMPLETED");
  for (const TraceMark& m : kTraceMarks) {
    EXPECT_NE(m.Of(t->trace), Timestamp{}) << m.name << " not set: " << json.out;
  }
  const JobTrace& tr = t->trace;
  const AgentTrace& ag = tr.agent;
  EXPECT_LE(tr.submitted, tr.committed);
  EXPECT_LE(tr.submitted, tr.scheduled);
  EXPECT_LE(tr.committed, tr.launch_sent);  // a launch leaves after its commit
  EXPECT_LE(tr.launch_sent, ag.launch_received);
  EXPECT_LE(ag.launch_received, ag.cgroup_ready);
  EXPECT_LE(ag.cgroup_ready, ag.spawned);
  EXPECT_LE(ag.spawned, ag.exec);
  EXPECT_LE(ag.exec, ag.exited);
  EXPECT_LE(ag.exited, tr.reported);
  EXPECT_LE(tr.reported, tr.end_committed);
  auto text = cluster_->Cli({"show", "--timeline", id.ToString()});
  ASSERT_EQ(text.status, 0) << text.err;
  for (const TraceMark& m : kTraceMarks) {
    EXPECT_NE(text.out.find(std::string(m.name) + " "), std::string::npos) << text.out;
  }
  EXPECT_EQ(cluster_->Cli({"show", "--timeline", "424242"}).status, 1);
}

TEST_F(CliTest, NodesDrainAndResume) {
  auto nodes = cluster_->Cli({"nodes"});
  ASSERT_EQ(nodes.status, 0) << nodes.err;
  EXPECT_NE(nodes.out.find("node01"), std::string::npos);
  EXPECT_NE(nodes.out.find("node02"), std::string::npos);
  auto drain = cluster_->Cli({"drain", "node02", "--reason", "bad fan"});
  // The test user is not necessarily an administrator: root is.
  if (getuid() == 0) {
    ASSERT_EQ(drain.status, 0) << drain.err;
    auto info = cluster_->Cli({"nodes", "--json"});
    EXPECT_NE(info.out.find("bad fan"), std::string::npos);
    EXPECT_EQ(cluster_->Cli({"resume", "node02"}).status, 0);
  } else {
    EXPECT_NE(drain.status, 0);
    EXPECT_NE(drain.err.find("not an administrator"), std::string::npos);
  }
}

TEST_F(CliTest, ErrorsAreOneClearLineAndNonZero) {
  auto missing = cluster_->Cli({"submit", "/no/such/script.sh"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_EQ(missing.err, "corral submit: error: cannot read script \"/no/such/script.sh\"\n");
  auto bad_time = cluster_->Cli({"submit", "--time", "soon", "--wrap", "true"});
  EXPECT_NE(bad_time.status, 0);
  EXPECT_EQ(bad_time.err, "corral submit: error: Invalid --time specification\n");
  auto too_many = cluster_->Cli({"submit", "--gpus-per-node", "9", "--wrap", "true"});
  EXPECT_EQ(too_many.status, 1);
  EXPECT_NE(too_many.err.find("no node of partition"), std::string::npos) << too_many.err;
  EXPECT_EQ(std::count(too_many.err.begin(), too_many.err.end(), '\n'), 1);
  auto unknown = cluster_->Cli({"show", "424242"});
  EXPECT_EQ(unknown.status, 1);
  EXPECT_NE(unknown.err.find("no such job"), std::string::npos);
  auto bad_partition = cluster_->Cli({"submit", "--partition", "gpu", "--wrap", "true"});
  EXPECT_NE(bad_partition.err.find("no such partition \"gpu\""), std::string::npos);
}

}  // namespace
}  // namespace corral::testing
