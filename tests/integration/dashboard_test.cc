// The web dashboard (/ui/, src/controller/dashboard/) against a real cluster, in Debian's
// headless Chromium: every page is loaded with a token in its URL fragment, its DOM (after the
// page's API calls) is checked, and a screenshot of each is kept in the build's test output
// directory (CORRAL_DASHBOARD_ARTIFACTS). Skipped, saying so, where `chromium` is not
// installed (tools/setup.sh installs it).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

std::string FindChromium() {
  const char* path = getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/chromium";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

// Headless Chromium, in its own profile directory, on `url`. `mode` is "--dump-dom" (the DOM,
// returned) or "--screenshot=PATH". The page's fetches finish within the virtual time budget;
// the test CA is not in Chromium's store, hence --ignore-certificate-errors (loopback only).
std::string RunChromium(const std::string& chromium, const std::string& profile,
                        const std::string& url, const std::string& mode) {
  std::string cmd = "timeout 90 '" + chromium + "' --headless --no-sandbox --disable-gpu" +
                    " --disable-quic --no-first-run --disable-background-networking" +
                    " --disable-component-update --disable-sync --disable-dev-shm-usage" +
                    " --ignore-certificate-errors --user-data-dir='" + profile + "'" +
                    " --window-size=1280,860 --virtual-time-budget=15000 " + mode + " '" + url +
                    "' 2>/dev/null";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = FindChromium();
    if (chromium_.empty()) GTEST_SKIP() << "chromium is not installed (tools/setup.sh installs it)";
    std::filesystem::create_directories(kArtifacts);
  }
  // The page's DOM as `token` (without "Bearer ") sees it.
  std::string Dom(const TestCluster& cluster, const std::string& page, const std::string& token) {
    return RunChromium(chromium_, Profile(cluster),
                       cluster.url() + "/ui/#/" + page + "?token=" + token, "--dump-dom");
  }
  void Screenshot(const TestCluster& cluster, const std::string& page, const std::string& token,
                  const std::string& name) {
    std::string png = std::string(kArtifacts) + "/" + name + ".png";
    std::filesystem::remove(png);
    RunChromium(chromium_, Profile(cluster), cluster.url() + "/ui/#/" + page + "?token=" + token,
                "--screenshot=" + png);
    EXPECT_TRUE(std::filesystem::exists(png) && std::filesystem::file_size(png) > 1000) << png;
  }
  // A fresh profile for each run: nothing carries over but what the URL gives.
  std::string Profile(const TestCluster& cluster) {
    return cluster.dir() + "/chromium-profile-" + std::to_string(++runs_);
  }

  static constexpr const char* kArtifacts = CORRAL_DASHBOARD_ARTIFACTS;
  std::string chromium_;
  int runs_ = 0;
};

std::string Bare(std::string bearer) { return bearer.substr(bearer.find(' ') + 1); }

TEST_F(DashboardTest, PagesShowNodesQueueJobAndAccountsAsTheApiShowsTheCaller) {
  TestCluster cluster({.nodes = 2,
                       .gpus_per_node = 2,
                       .extra_controller_toml = "[privacy]\nprivate_data = [\"jobs\"]\n"});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();

  // The static files need no credential; an unknown one is a 404; the API still needs one.
  auto index = cluster.Request("GET", "/ui/", "", /*auth=*/false);
  ASSERT_TRUE(index.has_value()) << index.error().message;
  EXPECT_EQ(index->status, 200);
  EXPECT_NE(index->content_type.find("text/html"), std::string::npos);
  EXPECT_NE(index->body.find("dashboard.js"), std::string::npos);
  auto js = cluster.Request("GET", "/ui/dashboard.js", "", false);
  ASSERT_TRUE(js.has_value());
  EXPECT_EQ(js->status, 200);
  EXPECT_NE(js->content_type.find("javascript"), std::string::npos);
  auto missing = cluster.Request("GET", "/ui/nope.js", "", false);
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->status, 404);
  auto anonymous_api = cluster.Request("GET", "/api/v1/nodes", "", false);
  ASSERT_TRUE(anonymous_api.has_value());
  EXPECT_EQ(anonymous_api->status, 401);

  // Jobs of the test's own user: a physics job fills one node's GPUs and another waits for
  // more; a biology job fills the other node and one has ended. bob's job is held (it never
  // launches, so it needs no Unix account): with private jobs, bob sees it and nothing else.
  auto job = [&](const std::string& account, uint32_t gpus, const std::string& body) {
    JobSpec s = cluster.ShellJob(body);
    s.account = account;
    s.resources.gpus_per_node = gpus;
    return s;
  };
  auto running_a = cluster.Submit(job("physics", 2, "sleep 300"));
  auto running_b = cluster.Submit(job("biology", 2, "sleep 300"));
  ASSERT_TRUE(running_a.has_value()) << running_a.error().message;
  ASSERT_TRUE(running_b.has_value()) << running_b.error().message;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto a = cluster.GetJob(running_a->job_id);
        auto b = cluster.GetJob(running_b->job_id);
        return a && b && a->job.state == JobState::kRunning && b->job.state == JobState::kRunning;
      },
      std::chrono::seconds(30)));
  auto done = cluster.Submit(job("biology", 0, "exit 0"));
  ASSERT_TRUE(done.has_value()) << done.error().message;
  ASSERT_TRUE(cluster.WaitJob(done->job_id).has_value());
  auto pending = cluster.Submit(job("physics", 2, "true"));
  ASSERT_TRUE(pending.has_value()) << pending.error().message;
  std::string reason, seen;
  EXPECT_TRUE(WaitFor(
      [&] {
        auto p = cluster.GetJob(pending->job_id);
        if (!p) return false;
        seen = std::string(JobStateName(p->job.state)) + " " + p->job.reason + " / " +
               p->reason_detail;
        reason = p->job.reason;
        return p->job.state == JobState::kPending && !reason.empty() && reason != "None";
      },
      std::chrono::seconds(30)))
      << seen;

  JobSpec held = job("biology", 1, "true");
  held.hold = true;
  auto bobs = cluster.Submit(held, "bob");
  ASSERT_TRUE(bobs.has_value()) << bobs.error().message;

  const std::string admin = Bare(cluster.Token(""));
  const std::string me = api::CurrentProcessIdentity().user;
  const std::string a_id = running_a->job_id.ToString();
  const std::string p_id = pending->job_id.ToString();

  // Nodes: both nodes, each with its two GPUs allocated to the job holding them.
  std::string nodes = Dom(cluster, "nodes", admin);
  EXPECT_NE(nodes.find("data-loaded=\"nodes\""), std::string::npos) << nodes;
  EXPECT_NE(nodes.find("data-node=\"node01\""), std::string::npos) << nodes;
  EXPECT_NE(nodes.find("data-node=\"node02\""), std::string::npos) << nodes;
  size_t allocated = 0;
  for (size_t at = nodes.find("data-state=\"allocated\""); at != std::string::npos;
       at = nodes.find("data-state=\"allocated\"", at + 1)) {
    ++allocated;
  }
  EXPECT_EQ(allocated, 4u) << nodes;
  EXPECT_NE(nodes.find("href=\"#/job/" + a_id + "\""), std::string::npos) << nodes;
  // Every node of the partition runs the same (simulated) driver and CUDA: no drift flagged.
  EXPECT_NE(nodes.find("driver "), std::string::npos) << nodes;
  EXPECT_EQ(nodes.find("data-drift="), std::string::npos) << nodes;
  Screenshot(cluster, "nodes", admin, "dashboard-nodes");

  // Queue: the pending job with its reason and an estimated start column; the running ones.
  std::string queue = Dom(cluster, "queue", admin);
  EXPECT_NE(queue.find("data-loaded=\"queue\""), std::string::npos) << queue;
  EXPECT_NE(queue.find("<tr data-job=\"" + p_id + "\">"), std::string::npos) << queue;
  EXPECT_NE(queue.find("<td class=\"reason\">" + reason + "</td>"), std::string::npos) << queue;
  EXPECT_NE(queue.find("class=\"estimated\""), std::string::npos) << queue;
  EXPECT_NE(queue.find("id=\"running\""), std::string::npos) << queue;
  EXPECT_NE(queue.find("<tr data-job=\"" + a_id + "\">"), std::string::npos) << queue;
  Screenshot(cluster, "queue", admin, "dashboard-queue");

  // A job's page: its details, and its GPU samples or the note that there are none.
  std::string job_page = Dom(cluster, "job/" + a_id, admin);
  EXPECT_NE(job_page.find("Job " + a_id), std::string::npos) << job_page;
  EXPECT_NE(job_page.find("<td data-field=\"User\">" + me + "</td>"), std::string::npos)
      << job_page;
  EXPECT_NE(job_page.find("<td data-field=\"State\">RUNNING</td>"), std::string::npos) << job_page;
  EXPECT_NE(job_page.find("id=\"gpustats\""), std::string::npos) << job_page;
  Screenshot(cluster, "job/" + a_id, admin, "dashboard-job");

  // Accounts: both accounts, with their running, pending and ended jobs and GPUs in use.
  std::string accounts = Dom(cluster, "accounts", admin);
  EXPECT_NE(accounts.find("data-loaded=\"accounts\""), std::string::npos) << accounts;
  EXPECT_NE(accounts.find("<tr data-account=\"physics\"><td>physics</td><td class=\"num\">1</td>"
                          "<td class=\"num\">1</td><td class=\"num\">1</td><td class=\"num\">0</td>"
                          "<td class=\"num\">2</td>"),
            std::string::npos)
      << accounts;
  EXPECT_NE(accounts.find("<tr data-account=\"biology\"><td>biology</td><td class=\"num\">2</td>"
                          "<td class=\"num\">1</td><td class=\"num\">1</td><td class=\"num\">1</td>"
                          "<td class=\"num\">2</td>"),
            std::string::npos)
      << accounts;
  Screenshot(cluster, "accounts", admin, "dashboard-accounts");

  // bob, with jobs private to their users: his own held job only, and another user's job is
  // refused.
  const std::string bob = Bare(cluster.Token("bob"));
  std::string bob_queue = Dom(cluster, "queue", bob);
  EXPECT_NE(bob_queue.find("<tr data-job=\"" + bobs->job_id.ToString() + "\">"), std::string::npos)
      << bob_queue;
  EXPECT_EQ(bob_queue.find("<tr data-job=\"" + running_b->job_id.ToString() + "\">"),
            std::string::npos)
      << bob_queue;
  EXPECT_EQ(bob_queue.find("<tr data-job=\"" + a_id + "\">"), std::string::npos) << bob_queue;
  EXPECT_EQ(bob_queue.find("<tr data-job=\"" + p_id + "\">"), std::string::npos) << bob_queue;
  std::string bob_job = Dom(cluster, "job/" + a_id, bob);
  EXPECT_NE(bob_job.find("id=\"error\""), std::string::npos) << bob_job;
  EXPECT_NE(bob_job.find("403"), std::string::npos) << bob_job;
  EXPECT_EQ(bob_job.find("data-field=\"User\""), std::string::npos) << bob_job;

  // Without a token the page asks for one and shows nothing else.
  std::string no_token =
      RunChromium(chromium_, Profile(cluster), cluster.url() + "/ui/#/queue", "--dump-dom");
  EXPECT_NE(no_token.find("Paste an API token"), std::string::npos) << no_token;
  EXPECT_EQ(no_token.find("data-job="), std::string::npos) << no_token;
}

}  // namespace
}  // namespace corral::testing
