// Per-job GPU statistics and GPU waste end to end (docs/metrics-jobs.md): an idle job (its
// simulated GPU at 0%) beside a busy one (95%) on a real cluster; the agents' samples reach
// the controller's series, `corral jobstats`, `seff`, `corral show` and `corral report waste`
// show them, and the waste policy cancels the idle job after its grace; `corral top` shows
// both, the idle one flagged.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/json_codec.h"
#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

using std::chrono::seconds;

ClusterOptions Options() {
  ClusterOptions o;
  o.nodes = 1;
  o.gpus_per_node = 4;
  o.extra_agent_gpu_toml = "sample_interval_s = 1\n";
  // Short windows for the test: idle 4 s flags a job, 2 s more cancels it.
  o.extra_controller_toml =
      "[gpu_waste]\nthreshold_percent = 5\nwindow_s = 4\naction = \"cancel\"\ngrace_s = 2\n";
  return o;
}

Result<api::GpuStatsInfo> Stats(TestCluster& c, JobId id) {
  CliResult r = c.Cli({"jobstats", id.ToString(), "--json"});
  if (r.status != 0) return Internal("jobstats: " + r.err);
  return api::DecodeGpuStatsInfo(r.out);
}

uint32_t Samples(const Result<api::GpuStatsInfo>& s) {
  uint32_t n = 0;
  if (s) {
    for (const auto& g : s->gpus) n += g.samples;
  }
  return n;
}

TEST(GpuStatsTest, AnIdleJobBesideABusyOneIsShownFlaggedReportedAndCancelled) {
  TestCluster cluster(Options());
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();

  // Both set their load through their environment at launch; the busy one then changes its
  // memory through the file the agent names.
  JobSpec busy = cluster.ShellJob("echo 95 40000 > \"$CORRAL_SIM_GPU_LOAD_FILE\"\nsleep 120\n");
  busy.resources.gpus_per_node = 1;
  busy.environment.Mutable()["CORRAL_SIM_GPU_UTIL"] = "95";
  busy.environment.Mutable()["CORRAL_SIM_GPU_MEM_MB"] = "1000";
  JobSpec idle = cluster.ShellJob("sleep 120\n");
  idle.resources.gpus_per_node = 1;
  idle.environment.Mutable()["CORRAL_SIM_GPU_UTIL"] = "0";
  auto b = cluster.Submit(busy);
  auto i = cluster.Submit(idle);
  ASSERT_TRUE(b.has_value() && i.has_value());
  const JobId busy_id = b->job_id, idle_id = i->job_id;

  // Samples arrive with the heartbeats.
  ASSERT_TRUE(WaitFor([&] { return Samples(Stats(cluster, busy_id)) >= 3; }, seconds(30)))
      << cluster.ControllerLog();
  auto running = Stats(cluster, busy_id);
  ASSERT_TRUE(running.has_value());
  ASSERT_EQ(running->gpus.size(), 1u);
  EXPECT_EQ(running->gpus[0].node, "node01");
  EXPECT_EQ(running->gpus[0].model, "h100");
  EXPECT_GT(running->gpus[0].util_max, 90);

  // The idle job is flagged, then cancelled by the policy; the busy one runs on.
  auto ended = cluster.WaitJob(idle_id, seconds(60));
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->job.state, JobState::kCancelled) << cluster.ControllerLog();
  EXPECT_NE(ended->gpu_waste.find("under 5% utilisation"), std::string::npos) << ended->gpu_waste;
  auto still = cluster.GetJob(busy_id);
  ASSERT_TRUE(still.has_value());
  EXPECT_EQ(still->job.state, JobState::kRunning);
  EXPECT_TRUE(still->gpu_waste.empty());

  CliResult show = cluster.Cli({"show", idle_id.ToString()});
  EXPECT_NE(show.out.find("GpuWaste:"), std::string::npos) << show.out;

  CliResult stats = cluster.Cli({"jobstats", idle_id.ToString()});
  ASSERT_EQ(stats.status, 0) << stats.err;
  EXPECT_NE(stats.out.find(" was idle 100% of the time"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("flagged as wasting its GPUs"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("a MIG slice would do"), std::string::npos) << stats.out;

  auto busy_stats = Stats(cluster, busy_id);
  ASSERT_TRUE(busy_stats.has_value());
  ASSERT_EQ(busy_stats->gpus.size(), 1u);
  EXPECT_NEAR(busy_stats->gpus[0].util_mean, 95, 0.5);
  EXPECT_GT(busy_stats->gpus[0].energy_joules, 0);
  EXPECT_GT(busy_stats->gpus[0].power_max_watts, 600);
  EXPECT_EQ(busy_stats->gpus[0].mem_max_mb, 40000u);  // from the file

  CliResult seff = cluster.CliAs("seff", {busy_id.ToString()});
  ASSERT_EQ(seff.status, 0) << seff.err;
  EXPECT_NE(seff.out.find("Job ID: " + busy_id.ToString() + "\n"), std::string::npos) << seff.out;
  EXPECT_NE(seff.out.find("State: RUNNING\n"), std::string::npos) << seff.out;
  EXPECT_NE(seff.out.find("CPU Efficiency: "), std::string::npos) << seff.out;
  EXPECT_NE(seff.out.find("Memory Efficiency: "), std::string::npos) << seff.out;
  EXPECT_NE(seff.out.find("GPU Utilization: 95.00% mean, 95.00% peak\n"), std::string::npos)
      << seff.out;

  CliResult report = cluster.Cli({"report", "waste", "--json"});
  ASSERT_EQ(report.status, 0) << report.err;
  auto r = api::DecodeWasteReport(report.out);
  ASSERT_TRUE(r.has_value()) << report.out;
  ASSERT_EQ(r->users.size(), 1u) << report.out;
  EXPECT_EQ(r->users[0].jobs, 2u);
  EXPECT_EQ(r->users[0].flagged, 1u);
  EXPECT_GT(r->users[0].wasted_gpu_hours, 0);
  EXPECT_LT(r->users[0].wasted_gpu_hours, r->users[0].gpu_hours);
  CliResult text = cluster.Cli({"report", "waste", "--since", "now-1days"});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("WASTED_GPU_HOURS"), std::string::npos) << text.out;
  CliResult bad = cluster.Cli({"report", "waste", "--since", "yesterdayish"});
  EXPECT_EQ(bad.status, 2);

  ASSERT_EQ(cluster.Cli({"cancel", busy_id.ToString()}).status, 0);
  ASSERT_TRUE(cluster.WaitJob(busy_id, seconds(60)).has_value());
}

// `corral top --once` (text and JSON) on a live cluster: each GPU with its job and latest
// utilisation, the idle job flagged by a notify-only waste policy, and the queue.
TEST(GpuStatsTest, TopShowsGpusTheirJobsUtilisationWasteFlagsAndTheQueue) {
  ClusterOptions o = Options();
  o.extra_controller_toml =
      "[gpu_waste]\nthreshold_percent = 5\nwindow_s = 3\naction = \"notify\"\n";
  TestCluster cluster(o);
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  JobSpec busy = cluster.ShellJob("sleep 120\n");
  busy.resources.gpus_per_node = 1;
  busy.environment.Mutable()["CORRAL_SIM_GPU_UTIL"] = "95";
  JobSpec idle = cluster.ShellJob("sleep 120\n");
  idle.resources.gpus_per_node = 1;
  idle.environment.Mutable()["CORRAL_SIM_GPU_UTIL"] = "0";
  JobSpec held = cluster.ShellJob("true\n");
  held.resources.gpus_per_node = 2;
  held.hold = true;
  auto b = cluster.Submit(busy);
  auto i = cluster.Submit(idle);
  auto h = cluster.Submit(held);
  ASSERT_TRUE(b.has_value() && i.has_value() && h.has_value());
  const std::string busy_id = b->job_id.ToString(), idle_id = i->job_id.ToString();
  ASSERT_TRUE(WaitFor(
      [&] {
        auto j = cluster.GetJob(i->job_id);
        return j && !j->gpu_waste.empty() && Samples(Stats(cluster, b->job_id)) >= 2;
      },
      seconds(60)))
      << cluster.ControllerLog();

  CliResult json = cluster.Cli({"top", "--once", "--json"});
  ASSERT_EQ(json.status, 0) << json.err;
  auto frame = nlohmann::json::parse(json.out);
  EXPECT_EQ(frame["gpus"]["total"], 4);
  EXPECT_EQ(frame["gpus"]["allocated"], 2);
  EXPECT_EQ(frame["waste_flagged"], 1);
  ASSERT_EQ(frame["nodes"].size(), 1u);
  EXPECT_EQ(frame["nodes"][0]["name"], "node01");
  std::map<std::string, nlohmann::json> by_job;
  for (const auto& g : frame["nodes"][0]["gpus"]) {
    if (!g["job"].is_null()) by_job[std::to_string(g["job"].get<uint64_t>())] = g;
  }
  ASSERT_EQ(by_job.size(), 2u) << json.out;
  EXPECT_NEAR(by_job[busy_id]["util"].get<double>(), 95, 0.5) << json.out;
  EXPECT_FALSE(by_job[busy_id]["waste"].get<bool>());
  EXPECT_EQ(by_job[idle_id]["util"].get<double>(), 0) << json.out;
  EXPECT_TRUE(by_job[idle_id]["waste"].get<bool>());
  ASSERT_EQ(frame["running"].size(), 2u);
  ASSERT_EQ(frame["pending"].size(), 1u);
  EXPECT_EQ(frame["pending"][0]["id"], h->job_id.value);
  EXPECT_EQ(frame["pending"][0]["gpus"], 2);

  CliResult text = cluster.Cli({"top", "--once"});
  ASSERT_EQ(text.status, 0) << text.err;
  for (std::string want :
       {std::string("GPUs: 4 (2 allocated, 2 free, 0 failed, 0 down)"),
        std::string("Jobs: 2 running, 1 pending"), std::string("Wasting GPUs: 1"),
        std::string("\nnode01 "), ":95% j" + busy_id + " ", ":0% j" + idle_id + "!",
        std::string("WASTE: GPU node01:"), std::string("under 5% utilisation"),
        std::string("JobHeldUser")}) {
    EXPECT_NE(text.out.find(want), std::string::npos) << want << "\n" << text.out;
  }
  EXPECT_EQ(text.out.find("\x1b["), std::string::npos);  // not a terminal: no colours

  CliResult bad = cluster.Cli({"top", "--interval", "0"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--interval \"0\""), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace corral::testing
