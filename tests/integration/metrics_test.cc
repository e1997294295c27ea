// Observability end to end (docs/metrics.md): a real Prometheus (Debian's `prometheus`)
// scrapes a test cluster's controller and, through the controller's HTTP service discovery,
// every agent, with a token from `corral token --role metrics`; every metric family reaches
// Prometheus, `promtool check metrics` accepts both endpoints' output (hostile job names
// included), and every query of the Grafana dashboards (deploy/grafana/dashboards) returns
// data.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <sys/wait.h>

#include "core/clock.h"
#include "tests/integration/test_cluster.h"
#include "tests/integration/test_util.h"

extern char** environ;

namespace corral::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

constexpr const char* kPrometheus = "/usr/bin/prometheus";
constexpr const char* kPromtool = "/usr/bin/promtool";

// A process started for the test; killed and reaped at the end.
class Child {
 public:
  Child(std::vector<std::string> args, const std::string& log) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~Child() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// Runs `promtool check metrics` on `text`; returns its exit status and output.
std::pair<int, std::string> Promtool(const std::string& dir, const std::string& text) {
  std::string in = dir + "/promtool.in", out = dir + "/promtool.out";
  std::ofstream(in, std::ios::trunc) << text;
  std::string cmd = std::string(kPromtool) + " check metrics < " + in + " > " + out + " 2>&1";
  int rc = std::system(cmd.c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, ReadFile(out)};
}

// The families (`# TYPE` lines) of an exposition, with their type.
std::map<std::string, std::string> Families(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("# TYPE ")) continue;
    std::istringstream words(line.substr(7));
    std::string name, type;
    words >> name >> type;
    out[name] = type;
  }
  return out;
}

class MetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kPrometheus) || !fs::exists(kPromtool)) {
      GTEST_SKIP() << kPrometheus << " or " << kPromtool
                   << " is not installed (Debian package `prometheus`; tools/setup.sh)";
    }
    char tmpl[] = "/tmp/corral-metrics-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty() && std::getenv("CORRAL_KEEP_TEST_DIR") == nullptr) fs::remove_all(dir_, ec);
  }

  // GET `path` of `base` with the metrics token.
  Result<api::HttpResponse> Get(const std::string& base, const std::string& path,
                                const std::string& token) {
    CORRAL_ASSIGN_OR_RETURN(auto client, api::HttpClient::Create(base, client_));
    return client->Send("GET", path, "", {{"authorization", "Bearer " + token}}, false);
  }

  std::string dir_;
  api::HttpClientOptions client_;  // the cluster's CA (every connection is TLS)
};

TEST_F(MetricsTest, PrometheusScrapesTheControllerAndEveryAgentAndTheDashboardsHaveData) {
  ClusterOptions options;
  options.nodes = 2;
  options.gpus_per_node = 4;
  options.extra_agent_metrics_toml = "job_mapping_dir = \"" + dir_ + "/jobmap/{node}\"\n";
  // GPU waste within seconds, notify only: the idle job below is flagged and keeps running.
  options.extra_agent_gpu_toml = "sample_interval_s = 1\n";
  options.extra_controller_toml =
      "[gpu_waste]\nthreshold_percent = 5\nwindow_s = 3\naction = \"notify\"\n";
  TestCluster cluster(options);
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  client_ = cluster.client_options();

  // A running job holding 2 GPUs (busy), an idle one holding 1 (flagged as wasting it), and
  // held jobs with hostile names (pending, with a reason).
  auto submit = [&](uint32_t gpus, const std::string& util) -> Result<api::SubmitResponse> {
    JobSpec spec = cluster.ShellJob("sleep 120");
    spec.resources.gpus_per_node = gpus;
    spec.environment.Mutable()["CORRAL_SIM_GPU_UTIL"] = util;
    return cluster.Submit(spec);
  };
  auto submitted = submit(2, "80");
  ASSERT_TRUE(submitted.has_value()) << submitted.error().message;
  JobId job = submitted->job_id;
  auto idle_submitted = submit(1, "0");
  ASSERT_TRUE(idle_submitted.has_value()) << idle_submitted.error().message;
  JobId idle_job = idle_submitted->job_id;
  for (std::string name : {"q\"uote", "new\nline", "back\\slash", "caf\xC3\xA9 \xF0\x9F\x9A\x80",
                           "\"} 1\n# TYPE x counter"}) {
    JobSpec held = cluster.ShellJob("true");
    held.name = name;
    held.hold = true;
    auto r = cluster.Submit(held);
    ASSERT_TRUE(r.has_value()) << r.error().message;
  }
  // A user whose name would break an unescaped label value (a token's user; the job stays
  // held, so it never needs a Unix account).
  const std::string hostile_user = "o\"brien\\x\ny caf\xC3\xA9";
  JobSpec theirs = cluster.ShellJob("true");
  theirs.user = hostile_user;
  theirs.hold = true;
  auto hostile = cluster.Submit(theirs, hostile_user);
  ASSERT_TRUE(hostile.has_value()) << hostile.error().message;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto j = cluster.GetJob(job);
        return j && j->job.state == JobState::kRunning;
      },
      std::chrono::seconds(30)));
  ASSERT_TRUE(WaitFor(
      [&] {
        auto j = cluster.GetJob(idle_job);
        return j && !j->gpu_waste.empty();
      },
      std::chrono::seconds(60)))
      << cluster.ControllerLog();

  // The scrape credential.
  CliResult tok = cluster.Cli({"token", "--role", "metrics"});
  ASSERT_EQ(tok.status, 0) << tok.err;
  std::string token = tok.out.substr(0, tok.out.find('\n'));
  ASSERT_FALSE(token.empty());
  std::ofstream(dir_ + "/token") << token;

  // The scrape token reads metrics only: it is no API credential (401 on the API, at the
  // controller and at an agent); a user's token does not read metrics.
  auto jobs = Get(cluster.url(), "/api/v1/jobs", token);
  ASSERT_TRUE(jobs.has_value());
  EXPECT_EQ(jobs->status, 401) << jobs->body;
  std::string alice = cluster.Token("alice").substr(7);  // without "Bearer "
  auto as_user = Get(cluster.url(), "/metrics", alice);
  ASSERT_TRUE(as_user.has_value());
  EXPECT_EQ(as_user->status, 403) << as_user->body;
  auto agent_as_user = Get(cluster.url(), "/metrics/targets", alice);
  ASSERT_TRUE(agent_as_user.has_value());
  EXPECT_EQ(agent_as_user->status, 403) << agent_as_user->body;
  auto anonymous = Get(cluster.url(), "/metrics", "not-a-token");
  ASSERT_TRUE(anonymous.has_value());
  EXPECT_EQ(anonymous->status, 401);

  // The controller's exposition and the agents' (found through /metrics/targets).
  auto controller = Get(cluster.url(), "/metrics", token);
  ASSERT_TRUE(controller.has_value());
  ASSERT_EQ(controller->status, 200) << controller->body;
  EXPECT_TRUE(controller->content_type.starts_with("text/plain; version=0.0.4"));
  auto [rc, lint] = Promtool(dir_, controller->body);
  EXPECT_EQ(rc, 0) << lint << "\n" << controller->body;
  EXPECT_EQ(lint, "");
  EXPECT_NE(controller->body.find("user=\"o\\\"brien\\\\x\\ny caf\xC3\xA9\""), std::string::npos)
      << controller->body;
  EXPECT_NE(controller->body.find("corral_job_gpu_waste{hpc_job=\"" + idle_job.ToString() + "\","),
            std::string::npos)
      << controller->body;
  EXPECT_NE(controller->body.find("corral_gpu_waste_actions_total{action=\"notify\"} 1\n"),
            std::string::npos)
      << controller->body;

  auto targets_answer = Get(cluster.url(), "/metrics/targets", token);
  ASSERT_TRUE(targets_answer.has_value());
  ASSERT_EQ(targets_answer->status, 200);
  auto targets = nlohmann::json::parse(targets_answer->body);
  ASSERT_EQ(targets.size(), 2u) << targets_answer->body;
  std::map<std::string, std::string> families = Families(controller->body);
  std::string agent_text;
  for (const auto& t : targets) {
    std::string base = "https://" + t["targets"][0].get<std::string>();
    auto agent = Get(base, "/metrics", token);
    ASSERT_TRUE(agent.has_value());
    ASSERT_EQ(agent->status, 200) << agent->body;
    auto [arc, alint] = Promtool(dir_, agent->body);
    EXPECT_NE(arc, 1) << "promtool could not parse the agent's output:\n" << alint;
    // dcgm-exporter's own names break three of promtool's style rules (counters without
    // "_total", "COUNTER" in a counter's name, camelCase labels); Corral keeps its names, so
    // only those may be reported.
    std::istringstream lines(alint);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_TRUE(line.starts_with("DCGM_FI_") &&
                  (line.ends_with("counter metrics should have \"_total\" suffix") ||
                   line.ends_with("metric name should not include type 'counter'") ||
                   line.ends_with("label names should be written in 'snake_case' not 'camelCase'")))
          << line;
    }
    for (const auto& [name, type] : Families(agent->body)) families[name] = type;
    agent_text += agent->body;
  }
  EXPECT_NE(agent_text.find("hpc_job=\"" + job.ToString() + "\""), std::string::npos) << agent_text;
  for (std::string_view name :
       {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE",
        "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_MEMORY_TEMP",
        "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"}) {
    EXPECT_TRUE(families.contains(std::string(name))) << name;
  }

  // dcgm-exporter's job-mapping directory: the job's two GPUs on its node.
  auto info = cluster.GetJob(job);
  ASSERT_TRUE(info.has_value());
  const NodeAllocation& alloc = info->job.allocation.nodes.at(0);
  for (uint32_t g = 0; g < 8; ++g) {
    std::string file = dir_ + "/jobmap/" + alloc.node_name + "/" + std::to_string(g);
    if (alloc.gpus.contains(g)) {
      EXPECT_EQ(ReadFile(file), job.ToString() + "\n") << file;
    } else {  // free, or the idle job's
      EXPECT_TRUE(!fs::exists(file) || ReadFile(file) == idle_job.ToString() + "\n") << file;
    }
  }

  // Prometheus: the controller by a static target, the agents by HTTP service discovery.
  uint16_t port = FreePort();
  std::ofstream(dir_ + "/prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
      << "scrape_configs:\n"
      << "  - job_name: corral-controller\n"
      << "    scheme: https\n"
      << "    tls_config: {ca_file: " << cluster.ca_file() << "}\n"
      << "    authorization: {credentials_file: " << dir_ << "/token}\n"
      << "    static_configs: [{targets: ['" << cluster.url().substr(8) << "']}]\n"
      << "  - job_name: corral-agents\n"
      << "    scheme: https\n"
      << "    tls_config: {ca_file: " << cluster.ca_file() << "}\n"
      << "    authorization: {credentials_file: " << dir_ << "/token}\n"
      << "    http_sd_configs:\n"
      << "      - url: " << cluster.url() << "/metrics/targets\n"
      << "        refresh_interval: 1s\n"
      << "        tls_config: {ca_file: " << cluster.ca_file() << "}\n"
      << "        authorization: {type: Bearer, credentials_file: " << dir_ << "/token}\n";
  std::string prom_url = "http://127.0.0.1:" + std::to_string(port);
  Child prometheus({kPrometheus, "--config.file=" + dir_ + "/prometheus.yml",
                    "--storage.tsdb.path=" + dir_ + "/tsdb",
                    "--web.listen-address=127.0.0.1:" + std::to_string(port)},
                   dir_ + "/prometheus.log");
  ASSERT_GT(prometheus.pid(), 0);
  auto prom = api::HttpClient::Create(prom_url);
  ASSERT_TRUE(prom.has_value());
  auto query = [&](const std::string& promql) -> nlohmann::json {
    std::string path = "/api/v1/query?query=";
    for (unsigned char c : promql) {
      if (std::isalnum(c) || c == '_' || c == '.' || c == '-') {
        path += static_cast<char>(c);
      } else {
        char hex[4];
        std::snprintf(hex, sizeof hex, "%%%02X", c);
        path += hex;
      }
    }
    auto r = (*prom)->Send("GET", path, "", {}, false);
    if (!r || r->status != 200) return nlohmann::json::array();
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_discarded() || j["status"] != "success") return nlohmann::json::array();
    return j["data"]["result"];
  };

  // Every target up: the controller and both agents.
  bool all_up = WaitFor(
      [&] {
        auto up = query("up == 1");
        return up.size() == 3;
      },
      std::chrono::seconds(90));
  ASSERT_TRUE(all_up) << "targets: " << query("up").dump() << "\n"
                      << ReadFile(dir_ + "/prometheus.log");

  // Every family of both expositions has data in Prometheus; the budget families have none on
  // a cluster without accounts (budget_test checks them where a budget is set).
  for (const auto& [name, type] : families) {
    if (name.starts_with("corral_account_budget_")) continue;
    std::string series = type == "histogram" ? name + "_bucket" : name;
    bool found =
        WaitFor([&] { return !query("count(" + series + ")").empty(); }, std::chrono::seconds(30));
    EXPECT_TRUE(found) << name << " has no data in Prometheus";
  }

  // Every panel query of every dashboard returns something.
  std::string dashboards = std::string(CORRAL_SOURCE_DIR) + "/deploy/grafana/dashboards";
  size_t panels = 0;
  for (const auto& file : fs::directory_iterator(dashboards)) {
    auto board = nlohmann::json::parse(ReadFile(file.path().string()));
    for (const auto& panel : board["panels"]) {
      for (const auto& target : panel["targets"]) {
        std::string expr = target["expr"];
        expr = std::regex_replace(expr, std::regex(R"(\$__rate_interval)"), "30s");
        expr = std::regex_replace(expr, std::regex(R"(\$job)"), job.ToString());
        ++panels;
        bool data = WaitFor([&] { return !query(expr).empty(); }, std::chrono::seconds(30));
        EXPECT_TRUE(data) << file.path().filename() << ": \"" << panel["title"].get<std::string>()
                          << "\": " << expr << " returns nothing";
      }
    }
  }
  EXPECT_GE(panels, 30u);
}

}  // namespace
}  // namespace corral::testing
