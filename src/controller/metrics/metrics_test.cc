// The controller's /metrics: what CollectMetrics counts on a live controller, and that the
// exposition stays valid whatever the strings in it (hostile user, account, partition names).
#include <regex>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/controller.h"
#include "controller/metrics/render.h"
#include "controller/metrics/routes.h"
#include "controller/testing/controller_test_base.h"
#include "controller/testing/requests.h"

namespace corral::controller {
namespace {

using testing::kAdmin;
using testing::NodeRegistration;

class ControllerMetricsTest : public testing::ControllerTestBase {
 protected:
  void SetUp() override {
    StartController(TestConfig(),
                    std::vector<Partition>{Partition{.name = "gpu", .is_default = true}});
    for (auto [name, gpus, model, driver] :
         {std::tuple{"n1", 4, "h100", "550.54"}, std::tuple{"n2", 2, "a100", "535.1"},
          std::tuple{"n3", 4, "h100", "550.54"}}) {
      api::RegisterRequest r = NodeRegistration(name, gpus, "", {}, model);
      r.inventory.driver_version = driver;
      r.inventory.cuda_version = "12.4";
      Register(r);
    }
    ASSERT_TRUE(controller_->Drain(kAdmin, "n2", "maintenance").has_value());
    Flush();
  }
};

// Each sample line of the text format: name, optional {labels}, a value.
void ExpectValidExposition(const std::string& text) {
  static const std::regex sample(
      R"re(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$)re");
  std::istringstream in(text);
  int samples = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) continue;
    EXPECT_TRUE(std::regex_match(line, sample)) << "not a sample line: " << line;
    ++samples;
  }
  EXPECT_GT(samples, 0);
}

TEST_F(ControllerMetricsTest, CountsJobsNodesGpusAndPasses) {
  SubmitAndStart(testing::BatchJob(4));
  // An ended job between the active ones is not counted.
  JobId gone = Submit(testing::BatchJob(4));
  ASSERT_TRUE(controller_->Cancel(kAdmin, gone).has_value());
  SubmitAndStart(testing::BatchJob(4));
  JobId waiting = Submit(testing::BatchJob(4));
  controller_->Tick();
  Flush();
  ASSERT_EQ(Get(waiting).state, JobState::kPending);

  metrics::ClusterMetrics m = controller_->CollectMetrics();
  uint64_t active = 0;
  for (const auto& [k, c] : m.jobs) active += c.jobs;
  EXPECT_EQ(active, 3u);
  metrics::ClusterCounts counts = metrics::CountClusterMetrics(m);
  uint64_t running = 0, pending = 0, running_gpus = 0;
  for (const auto& [k, c] : counts.jobs) {
    EXPECT_EQ(k.partition, "gpu");
    EXPECT_EQ(k.user, "alice");
    if (k.state == JobState::kRunning) running += c.jobs, running_gpus += c.gpus;
    if (k.state == JobState::kPending) pending += c.jobs;
  }
  EXPECT_EQ(running, 2u);
  EXPECT_EQ(running_gpus, 8u);
  EXPECT_EQ(pending, 1u);
  ASSERT_EQ(counts.pending_reasons.size(), 1u);
  EXPECT_EQ(counts.pending_reasons.begin()->first.first, "gpu");
  EXPECT_EQ(m.jobs_submitted_total, 4u);

  const metrics::GpuCounts& h100 = counts.gpus.at({"gpu", "h100"});
  EXPECT_EQ(h100.total, 8u);
  EXPECT_EQ(h100.allocated, 8u);
  EXPECT_EQ(h100.idle, 0u);
  const metrics::GpuCounts& a100 = counts.gpus.at({"gpu", "a100"});
  EXPECT_EQ(a100.drained, 2u);
  EXPECT_EQ(counts.agents_connected, 3u);

  ASSERT_EQ(m.nodes.size(), 3u);
  EXPECT_EQ(m.nodes[1].name, "n2");
  EXPECT_EQ(counts.drift.at("n2"), std::vector<std::string>{"gpu"});
  EXPECT_FALSE(counts.drift.contains("n1"));

  EXPECT_GE(m.sched.cycle.count(), 3u);
  EXPECT_EQ(m.sched.started_total, 2u);
  EXPECT_EQ(m.sched.last.queue_length, 1u);
  EXPECT_EQ(m.sched.last.started, 0u);
  EXPECT_GE(m.sched.last.examined, 1u);

  metrics::ServiceMetrics service;
  service.RecordRequest("GET", "/api/v1/jobs/{id}", 200, Millis(3));
  service.RecordCommit(5, Duration(300));
  std::string text = metrics::RenderControllerMetrics(m, service.Snapshot());
  ExpectValidExposition(text);
  for (std::string_view line : {
           "slurm_jobs{state=\"RUNNING\",partition=\"gpu\",account=\"\",user=\"alice\"} 2\n",
           "corral_gpus{partition=\"gpu\",model=\"h100\",state=\"allocated\"} 8\n",
           "corral_gpus{partition=\"gpu\",model=\"a100\",state=\"drained\"} 2\n",
           "slurm_nodes{state=\"allocated\"} 2\n",
           "slurm_partition_nodes{partition=\"gpu\",state=\"drained\"} 1\n",
           "corral_agents_connected 3\n",
           "corral_node_software_drift{node=\"n2\",partition=\"gpu\"} 1\n",
           "corral_node_software_drift{node=\"n1\",partition=\"gpu\"} 0\n",
           "slurm_sched_jobs_started_total 2\n",
           "corral_jobs_submitted_total 4\n",
           "corral_api_requests_total{method=\"GET\",route=\"/api/v1/jobs/{id}\",code=\"200\"} 1\n",
           "corral_store_commit_seconds_count 1\n",
           "corral_store_committed_changes_total 5\n",
           "corral_gpu_waste_actions_total{action=\"cancel\"} 0\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << "missing: " << line << "\n" << text;
  }
}

TEST_F(ControllerMetricsTest, TargetsListEveryAgentForServiceDiscovery) {
  auto targets = nlohmann::json::parse(metrics::RenderTargets(controller_->CollectMetrics()));
  ASSERT_EQ(targets.size(), 3u);
  EXPECT_EQ(targets[0]["targets"], nlohmann::json::array({"127.0.0.1:1"}));
  EXPECT_EQ(targets[0]["labels"]["node"], "n1");
  EXPECT_EQ(targets[0]["labels"]["partitions"], "gpu");
  EXPECT_EQ(targets[0]["labels"]["__scheme__"], "http");
  EXPECT_EQ(targets[0]["labels"]["__metrics_path__"], "/metrics");
}

TEST(ControllerMetricsRenderTest, HostileNamesNeverBreakTheExposition) {
  metrics::ClusterMetrics m;
  const std::string hostile[] = {"a\"b",        "new\nline",
                                 "back\\slash", "caf\xC3\xA9 \xF0\x9F\x9A\x80",
                                 "bad\xFF\xC3", "\"} 1\n# TYPE x counter\nx{a=\""};
  for (const std::string& s : hostile) {
    m.jobs[{JobState::kPending, s, s, s}] = {.jobs = 1, .gpus = 2};
    m.pending_reasons[{s, s}] = 1;
    m.usage.push_back({s, {.decayed_usage = 1.5, .period_gpu_seconds = 3}});
    m.nodes.push_back({.name = s,
                       .partitions = {s},
                       .driver_version = s,
                       .gpu_count = 1,
                       .gpu_model = s});
    m.waste.push_back({.job = JobId{7}, .user = s, .account = s, .partition = s});
  }
  metrics::ServiceFigures f;
  f.routes[{"GET", hostile[5]}].by_status[200] = 1;
  std::string text = metrics::RenderControllerMetrics(m, f);
  ExpectValidExposition(text);
  EXPECT_NE(text.find("user=\"a\\\"b\""), std::string::npos);
  EXPECT_NE(text.find("user=\"new\\nline\""), std::string::npos);
  EXPECT_NE(text.find("user=\"back\\\\slash\""), std::string::npos);
  EXPECT_NE(text.find("user=\"caf\xC3\xA9 \xF0\x9F\x9A\x80\""), std::string::npos);
  EXPECT_NE(text.find("user=\"bad\xEF\xBF\xBD\xEF\xBF\xBD\""), std::string::npos);
  EXPECT_NE(text.find("corral_job_gpu_waste{hpc_job=\"7\",user=\"a\\\"b\""), std::string::npos);
}

// A job flagged by the GPU-waste policy is exported while it runs, with its policy's action;
// the counter counts it.
TEST(ControllerMetricsRenderTest, FlaggedJobsAndWasteActionsAreExported) {
  metrics::ClusterMetrics m;
  m.waste.push_back({.job = JobId{12},
                     .user = "bob",
                     .account = "physics",
                     .partition = "gpu",
                     .action = GpuWasteAction::kRequeue});
  m.waste_actions = {3, 1, 2};
  std::string text = metrics::RenderControllerMetrics(m, {});
  ExpectValidExposition(text);
  for (std::string_view line : {
           "# TYPE corral_job_gpu_waste gauge\n",
           "corral_job_gpu_waste{hpc_job=\"12\",user=\"bob\",account=\"physics\","
           "partition=\"gpu\",action=\"requeue\"} 1\n",
           "# TYPE corral_gpu_waste_actions_total counter\n",
           "corral_gpu_waste_actions_total{action=\"notify\"} 3\n",
           "corral_gpu_waste_actions_total{action=\"cancel\"} 1\n",
           "corral_gpu_waste_actions_total{action=\"requeue\"} 2\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << "missing: " << line << "\n" << text;
  }
}

}  // namespace
}  // namespace corral::controller
