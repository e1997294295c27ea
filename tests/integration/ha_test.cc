// High availability (issue 11): idempotent submission across a controller restart, the
// probes, and two controllers on one PostgreSQL store — failover, and the split-brain test
// (the leader frozen with SIGSTOP, the standby takes over and accepts work, the old leader
// resumed with SIGCONT steps down and none of its writes lands).
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>

#include "api/json_codec.h"
#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

size_t CountNamed(const std::vector<api::JobInfo>& jobs, const std::string& name) {
  size_t n = 0;
  for (const auto& j : jobs) n += j.job.spec.name == name ? 1 : 0;
  return n;
}

// A submission made while the controller is down is retried under its idempotency key until
// the controller is back, and creates exactly one job; a repeated key (a lost reply) gets the
// original job, across a restart; a different body under a used key is refused (409).
TEST(HaTest, SubmissionRetriesAcrossARestartAndRepeatsNothing) {
  TestCluster cluster({.nodes = 1, .gpus_per_node = 1});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();

  // The probes: anonymous, cheap.
  for (const char* probe : {"/livez", "/readyz"}) {
    auto r = cluster.Request("GET", probe, "", /*auth=*/false);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200) << probe << ": " << r->body;
  }

  // A lost reply: the same key twice, with a restart in between.
  JobSpec spec = cluster.ShellJob("true");
  spec.name = "keyed";
  const std::string body = api::EncodeJobSpec(spec);
  // Request() has no header parameter: the key goes through a client of the test's own.
  auto client = api::HttpClient::Create(cluster.url(), cluster.client_options());
  ASSERT_TRUE(client.has_value());
  auto keyed = [&](const std::string& b) {
    return (*client)->Send("POST", "/api/v1/jobs", b,
                           {{"authorization", cluster.Token("")}, {"Idempotency-Key", "lost-1"}});
  };
  auto first = keyed(body);
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->status, 201) << first->body;
  cluster.KillController(SIGKILL);
  ASSERT_TRUE(cluster.StartController().has_value()) << cluster.ControllerLog();
  auto again = keyed(body);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->status, 201) << again->body;
  EXPECT_EQ(again->body, first->body);  // the same job id
  JobSpec other = spec;
  other.name = "keyed-other";
  auto conflict = keyed(api::EncodeJobSpec(other));
  ASSERT_TRUE(conflict.has_value());
  EXPECT_EQ(conflict->status, 409) << conflict->body;
  EXPECT_NE(conflict->body.find("Idempotency-Key"), std::string::npos) << conflict->body;

  // sbatch while the controller is down: it retries until the controller is back.
  cluster.KillController(SIGKILL);
  CliResult submitted;
  std::thread sbatch([&] {
    submitted = cluster.CliAs("sbatch", {"-J", "retried", "--wrap", "true"}, cluster.work_dir(),
                              {{"CORRAL_SUBMIT_RETRY_S", "60"}});
  });
  const bool retrying = WaitFor(
      [&] { return ReadAll(cluster.dir() + "/cli.err").find("retrying") != std::string::npos; },
      std::chrono::seconds(20));
  ASSERT_TRUE(cluster.StartController().has_value()) << cluster.ControllerLog();
  sbatch.join();
  EXPECT_TRUE(retrying) << submitted.err;
  EXPECT_EQ(submitted.status, 0) << submitted.err;
  EXPECT_NE(submitted.out.find("Submitted batch job"), std::string::npos) << submitted.out;
  auto jobs = cluster.ListJobs();
  ASSERT_TRUE(jobs.has_value());
  EXPECT_EQ(CountNamed(*jobs, "retried"), 1u);
  EXPECT_EQ(CountNamed(*jobs, "keyed"), 1u);
  EXPECT_EQ(CountNamed(*jobs, "keyed-other"), 0u);
}

// Two controllers on a real PostgreSQL (tools/with_postgres.sh sets CORRAL_TEST_PG_DSN; ctest
// runs this as failure_test_postgres).
TEST(HaTest, PostgresFailoverAndSplitBrain) {
  const char* dsn = std::getenv("CORRAL_TEST_PG_DSN");
  if (dsn == nullptr || *dsn == '\0') GTEST_SKIP() << "CORRAL_TEST_PG_DSN is not set";
  TestCluster cluster({.nodes = 1,
                       .gpus_per_node = 2,
                       .node_timeout_s = 3,
                       .controllers = 2,
                       .store_url = dsn,
                       .ha_lease_s = 2});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  ASSERT_TRUE(cluster.StartControllerAt(2).has_value()) << ReadAll(cluster.dir() + "/logs/controller2.log");
  const std::string url1 = cluster.controller_url_at(1), url2 = cluster.controller_url_at(2);
  auto c1 = std::move(*api::HttpClient::Create(url1, cluster.client_options()));
  auto c2 = std::move(*api::HttpClient::Create(url2, cluster.client_options()));
  auto status = [&](api::HttpClient& c, const std::string& method, const std::string& path,
                    const std::string& body = "", std::map<std::string, std::string> h = {}) {
    if (path.rfind("/api/", 0) == 0) h["authorization"] = cluster.Token("");
    auto r = c.Send(method, path, body, h, method == "GET", std::chrono::milliseconds(3000));
    return r ? r->status : -1;
  };

  // Controller 1 leads; 2 stands by and names it.
  EXPECT_EQ(status(*c1, "GET", "/readyz"), 200);
  EXPECT_EQ(status(*c2, "GET", "/readyz"), 503);
  EXPECT_EQ(status(*c2, "GET", "/livez"), 200);
  {
    auto r = c2->Send("GET", "/api/v1/jobs", "", {{"authorization", cluster.Token("")}});
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 503);
    EXPECT_NE(r->body.find(url1), std::string::npos) << r->body;
  }
  // The CLI, given both, follows the leader even when the standby is listed first.
  {
    CliResult r = cluster.CliAs("sbatch", {"-J", "before", "--wrap", "true"}, cluster.work_dir(),
                                {{"CORRAL_CONTROLLER", url2 + "," + url1}});
    EXPECT_EQ(r.status, 0) << r.err;
  }

  // Freeze the leader: the standby takes over within the lease (2 s) and a poll.
  cluster.SignalControllerAt(1, SIGSTOP);
  const auto frozen = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return status(*c2, "GET", "/readyz") == 200; },
                      std::chrono::seconds(10)))
      << ReadAll(cluster.dir() + "/logs/controller2.log");
  const double takeover_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - frozen).count();
  std::printf("takeover after SIGSTOP: %.2f s (lease 2 s)\n", takeover_s);
  EXPECT_LT(takeover_s, 5.0);

  // The new leader accepts work, and the agent follows it: the job runs and ends.
  JobSpec spec = cluster.ShellJob("true");
  spec.name = "after";
  spec.resources.gpus_per_node = 1;
  auto after = cluster.CliAs("sbatch", {"-J", "after", "--gpus-per-node", "1", "--wrap", "true"},
                             cluster.work_dir());
  ASSERT_EQ(after.status, 0) << after.err;
  auto listed = [&](api::HttpClient& c) -> std::vector<api::JobInfo> {
    auto r = c.Send("GET", "/api/v1/jobs?all=1", "", {{"authorization", cluster.Token("")}});
    if (!r || r->status != 200) return {};
    auto jobs = api::DecodeJobInfoList(r->body);
    return jobs ? *jobs : std::vector<api::JobInfo>{};
  };
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const auto& j : listed(*c2)) {
          if (j.job.spec.name == "after" && j.job.state == JobState::kCompleted) return true;
        }
        return false;
      },
      std::chrono::seconds(20)))
      << ReadAll(cluster.dir() + "/logs/controller2.log");

  // Resume the old leader. It was frozen past the node timeout, so its first tick wants to
  // mark the node DOWN (a write), and a submission reaches it directly: neither may land.
  cluster.SignalControllerAt(1, SIGCONT);
  JobSpec stale = cluster.ShellJob("true");
  stale.name = "stale";
  const int stale_status = status(*c1, "POST", "/api/v1/jobs", api::EncodeJobSpec(stale));
  EXPECT_NE(stale_status, 201);
  // It steps down (and starts again as a standby, naming the new leader).
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = c1->Send("GET", "/api/v1/jobs", "", {{"authorization", cluster.Token("")}}, true,
                          std::chrono::milliseconds(1000));
        return r && r->status == 503 && r->body.find(url2) != std::string::npos;
      },
      std::chrono::seconds(15)))
      << cluster.ControllerLog();
  EXPECT_EQ(status(*c1, "GET", "/readyz"), 503);
  EXPECT_EQ(status(*c2, "GET", "/readyz"), 200);
  const std::string log1 = ReadAll(cluster.dir() + "/logs/controller.log");
  EXPECT_NE(log1.find("stepping down"), std::string::npos) << log1;

  // None of its writes landed: the leader's view has no "stale" job, the node is up, and
  // "before" and "after" are there once each.
  std::vector<api::JobInfo> jobs = listed(*c2);
  EXPECT_EQ(CountNamed(jobs, "stale"), 0u);
  EXPECT_EQ(CountNamed(jobs, "before"), 1u);
  EXPECT_EQ(CountNamed(jobs, "after"), 1u);
  auto nodes = c2->Send("GET", "/api/v1/nodes", "", {{"authorization", cluster.Token("")}});
  ASSERT_TRUE(nodes.has_value());
  auto decoded = api::DecodeNodeInfoList(nodes->body);
  ASSERT_TRUE(decoded.has_value());
  ASSERT_EQ(decoded->size(), 1u);
  EXPECT_NE(decoded->front().state, NodeState::kDown) << nodes->body;
}

}  // namespace
}  // namespace corral::testing
