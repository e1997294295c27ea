// Usage reports, sshare and sprio on a running cluster (docs/governance.md, "Reports"): the
// report's sums equal the sums this test computes from the job records it reads back, on the
// SQLite store, and again after a controller restart; sreport prints the same figures; [privacy]
// keeps another user from seeing them; sshare shows the two accounts' usage and sprio the
// pending jobs' factors.
#include <gtest/gtest.h>

#include <map>

#include "api/auth.h"
#include "api/http.h"
#include "api/http_status.h"
#include "api/report_codec.h"
#include "core/clock.h"
#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

using std::chrono::seconds;

std::string Me() { return api::CurrentProcessIdentity().user; }

std::string Config() {
  return R"(
[scheduler.priority]
weight_age = 1000
weight_fairshare = 10000
weight_job_size = 100
[[partition]]
name = "gpu"
default = true
[[account]]
name = "physics"
shares = 3
users = [")" + Me() + R"("]
[[account]]
name = "chem"
users = [")" + Me() + R"("]
[privacy]
private_data = ["usage"]
)";
}

int64_t Secs(Timestamp t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}
double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

// The usage report over [start, end) as `user` ("" = the cluster's default user).
Result<api::UsageReport> Usage(TestCluster& c, Timestamp start, Timestamp end,
                               const std::string& user = "") {
  auto http = api::HttpClient::Create(c.url(), c.client_options());
  if (!http) return tl::unexpected(http.error());
  auto r = (*http)->Send("GET",
                         "/api/v1/reports/usage?jobs=1&start=" + std::to_string(Secs(start)) +
                             "&end=" + std::to_string(Secs(end)),
                         "", {{"authorization", c.Token(user)}}, true);
  CORRAL_ASSIGN_OR_RETURN(auto resp, api::CheckResponse(std::move(r)));
  return api::DecodeUsageReport(resp.body);
}

struct Sums {
  uint32_t jobs = 0;
  double cpu = 0, gpu = 0, energy = 0;
};

// What the report must say, computed from the jobs' records: CPUs and GPUs of the allocation
// times the run, energy as measured (every job runs inside the window).
std::map<std::string, Sums> FromRecords(const std::vector<api::JobInfo>& jobs, Sums* total) {
  std::map<std::string, Sums> by_account;
  for (const api::JobInfo& info : jobs) {
    const Job& j = info.job;
    uint32_t cpus = 0, gpus = 0;
    for (const auto& na : j.allocation.nodes) {
      cpus += na.cpus;
      gpus += na.gpus.size();
    }
    const double run = Seconds(j.end_time - j.start_time);
    for (Sums* s : {total, &by_account[j.spec.account]}) {
      ++s->jobs;
      s->cpu += cpus * run;
      s->gpu += gpus * run;
      s->energy += j.usage.energy_joules;
    }
  }
  return by_account;
}

void ExpectReportMatches(const api::UsageReport& r, const std::vector<api::JobInfo>& jobs) {
  Sums total;
  std::map<std::string, Sums> want = FromRecords(jobs, &total);
  EXPECT_EQ(r.total.jobs, total.jobs);
  EXPECT_NEAR(r.total.cpu_seconds, total.cpu, 1e-3);
  EXPECT_NEAR(r.total.gpu_seconds, total.gpu, 1e-3);
  EXPECT_NEAR(r.total.energy_joules, total.energy, 1e-3);
  ASSERT_EQ(r.accounts.size(), want.size());
  for (const api::UsageRow& a : r.accounts) {
    ASSERT_TRUE(want.contains(a.account)) << a.account;
    EXPECT_EQ(a.jobs, want[a.account].jobs) << a.account;
    EXPECT_NEAR(a.cpu_seconds, want[a.account].cpu, 1e-3) << a.account;
    EXPECT_NEAR(a.gpu_seconds, want[a.account].gpu, 1e-3) << a.account;
  }
  double model_gpu = 0;
  for (const api::UsageRow& m : r.gpu_models) model_gpu += m.gpu_seconds;
  EXPECT_NEAR(model_gpu, total.gpu, 1e-3);
  EXPECT_EQ(r.jobs.size(), jobs.size());
}

TEST(ReportsTest, UsageReportSumsEqualTheJobRecordsAndSurviveARestart) {
  TestCluster cluster({.nodes = 1, .gpus_per_node = 4, .extra_controller_toml = Config()});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  const Timestamp t0 = SystemClock::Get().Now() - std::chrono::seconds(1);

  struct Shape {
    const char* account;
    uint32_t gpus, cpus;
  };
  std::vector<JobId> ids;
  for (Shape s : {Shape{"physics", 2, 2}, Shape{"chem", 1, 1}, Shape{"physics", 0, 3}}) {
    JobSpec spec = cluster.ShellJob("sleep 1");
    spec.account = s.account;
    spec.resources.gpus_per_node = s.gpus;
    spec.resources.cpus_per_task = s.cpus;
    auto r = cluster.Submit(spec);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    ids.push_back(r->job_id);
  }
  std::vector<api::JobInfo> jobs;
  for (JobId id : ids) {
    auto info = cluster.WaitJob(id, seconds(60));
    ASSERT_TRUE(info.has_value()) << info.error().message;
    ASSERT_EQ(info->job.state, JobState::kCompleted) << info->job.reason;
    jobs.push_back(*info);
  }
  const Timestamp t1 = SystemClock::Get().Now() + std::chrono::seconds(2);

  auto report = Usage(cluster, t0, t1);
  ASSERT_TRUE(report.has_value()) << report.error().message;
  // [privacy] "usage": a user sees its own jobs (all of them here); an admin (root) everything.
  if (report->own_only) {
    EXPECT_EQ(report->user, Me());
  }
  EXPECT_EQ(report->cluster_gpus, 4u);
  ExpectReportMatches(*report, jobs);

  // sreport prints the same figures (seconds, truncated as Slurm does).
  CliResult sreport = cluster.CliAs(
      "sreport", {"-P", "-n", "-t", "seconds", "cluster", "AccountUtilizationByUser",
                  "start=now-1hours", "end=now+1hours"});
  ASSERT_EQ(sreport.status, 0) << sreport.err;
  for (const api::UsageRow& a : report->accounts) {
    std::string line = "corral|" + a.account + "|||" +
                       std::to_string(static_cast<uint64_t>(a.cpu_seconds)) + "|" +
                       std::to_string(static_cast<uint64_t>(a.energy_joules)) + "\n";
    EXPECT_NE(sreport.out.find(line), std::string::npos) << line << "in\n" << sreport.out;
  }
  CliResult corral = cluster.Cli({"report", "usage", "--since", "now-1hours"});
  ASSERT_EQ(corral.status, 0) << corral.err;
  EXPECT_NE(corral.out.find("By GPU model:"), std::string::npos) << corral.out;
  EXPECT_NE(corral.out.find("physics"), std::string::npos) << corral.out;

  // Another user sees none of it.
  auto other = Usage(cluster, t0, t1, "mallory");
  ASSERT_TRUE(other.has_value()) << other.error().message;
  EXPECT_TRUE(other->own_only);
  EXPECT_EQ(other->total.jobs, 0u);
  EXPECT_TRUE(other->users.empty());
  EXPECT_TRUE(other->jobs.empty());

  // Bad windows are refused, naming the parameter.
  auto bad = cluster.Request("GET", "/api/v1/reports/usage?start=20&end=10", "");
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("end"), std::string::npos) << bad->body;
  bad = cluster.Request("GET", "/api/v1/reports/usage?start=yesterday", "");
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("start"), std::string::npos) << bad->body;

  // The report is computed from the store: the same after a restart.
  cluster.KillController(SIGKILL);
  ASSERT_TRUE(cluster.StartController().has_value()) << cluster.ControllerLog();
  ASSERT_TRUE(cluster.WaitForNodes(1).has_value());
  auto again = Usage(cluster, t0, t1);
  ASSERT_TRUE(again.has_value()) << again.error().message;
  ExpectReportMatches(*again, jobs);
  EXPECT_EQ(again->accounts, report->accounts);
}

TEST(ReportsTest, SshareShowsBothAccountsAndSprioThePendingJobsFactors) {
  TestCluster cluster({.nodes = 1, .gpus_per_node = 4, .extra_controller_toml = Config()});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  // physics holds every GPU; a chem job and a physics job wait behind it.
  JobSpec hog = cluster.ShellJob("sleep 120");
  hog.account = "physics";
  hog.resources.gpus_per_node = 4;
  auto h = cluster.Submit(hog);
  ASSERT_TRUE(h.has_value()) << h.error().message;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto j = cluster.GetJob(h->job_id);
        return j && j->job.state == JobState::kRunning;
      },
      seconds(30)));
  std::vector<JobId> waiting;
  for (const char* account : {"chem", "physics"}) {
    JobSpec spec = cluster.ShellJob("true");
    spec.account = account;
    spec.resources.gpus_per_node = 1;
    auto r = cluster.Submit(spec);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    waiting.push_back(r->job_id);
  }

  // The running physics job is charged to physics by the scheduling passes.
  const std::string me = Me();
  CliResult share;
  ASSERT_TRUE(WaitFor(
      [&] {
        share = cluster.CliAs("sshare", {"-a", "-P", "-n", "-o", "Account,User,RawUsage"});
        return share.status == 0 && share.out.find("  physics|" + me + "|0\n") == std::string::npos &&
               share.out.find("  physics|" + me + "|") != std::string::npos;
      },
      seconds(30)))
      << share.out << share.err;
  EXPECT_EQ(share.out.substr(0, 5), "root|") << share.out;
  EXPECT_NE(share.out.find(" chem||0\n"), std::string::npos) << share.out;
  EXPECT_NE(share.out.find("  chem|" + me + "|0\n"), std::string::npos) << share.out;
  CliResult header = cluster.CliAs("sshare", {});
  ASSERT_EQ(header.status, 0) << header.err;
  EXPECT_EQ(header.out.substr(0, 80),
            "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage");

  // sprio: both pending jobs, in the gpu partition; chem (no usage) ranks above physics in
  // fair share.
  CliResult prio = cluster.CliAs("sprio", {"-h", "-o", "%i|%r|%u|%Y|%F|%A|%J"});
  ASSERT_EQ(prio.status, 0) << prio.err;
  std::map<std::string, std::vector<std::string>> rows;
  size_t at = 0;
  while (at < prio.out.size()) {
    size_t nl = prio.out.find('\n', at);
    std::vector<std::string> f;
    std::string line = prio.out.substr(at, nl - at);
    for (size_t s = 0, bar; s <= line.size(); s = bar + 1) {
      bar = line.find('|', s);
      if (bar == std::string::npos) bar = line.size();
      f.push_back(line.substr(s, bar - s));
    }
    rows[f[0]] = f;
    at = nl + 1;
  }
  ASSERT_EQ(rows.size(), 2u) << prio.out;
  const auto& chem = rows[waiting[0].ToString()];
  const auto& physics = rows[waiting[1].ToString()];
  ASSERT_EQ(chem.size(), 7u);
  EXPECT_EQ(chem[1], "gpu");
  EXPECT_EQ(chem[2], me);
  EXPECT_GT(std::stoll(chem[4]), std::stoll(physics[4])) << prio.out;
  // PRIORITY is the sum of the points (nice 0).
  for (const auto* r : {&chem, &physics}) {
    EXPECT_EQ(std::stoll((*r)[3]),
              std::stoll((*r)[4]) + std::stoll((*r)[5]) + std::stoll((*r)[6]))
        << prio.out;
  }
  CliResult weights = cluster.CliAs("sprio", {"-w"});
  ASSERT_EQ(weights.status, 0) << weights.err;
  EXPECT_NE(weights.out.find("        Weights                               1       1000      "
                             "10000        100"),
            std::string::npos)
      << weights.out;
  CliResult one = cluster.CliAs("sprio", {"-h", "-j", waiting[1].ToString(), "-o", "%i"});
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(one.out, waiting[1].ToString() + "\n");

  // Another user, with no association, sees no row of the tree.
  auto http = api::HttpClient::Create(cluster.url(), cluster.client_options());
  ASSERT_TRUE(http.has_value());
  auto tree = (*http)->Send("GET", "/api/v1/fairshare", "",
                            {{"authorization", cluster.Token("mallory")}}, true);
  ASSERT_TRUE(tree.has_value());
  ASSERT_EQ(tree->status, 200) << tree->body;
  auto decoded = api::DecodeShareReport(tree->body);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_TRUE(decoded->rows.empty()) << tree->body;
}

}  // namespace
}  // namespace corral::testing
