// Budgets on a running cluster (issue 16 item 5, "Show"): a GPU-hour budget set live with
// `corral account budget` counts the jobs already run (computed from the job records); once
// spent, the next GPU job waits with AssocGrpGRESBudget; `corral account show` and the budget
// list show the spend, which equals the usage report's; the warning is an audit event and a
// metric; a raised budget lets the job start; bad budgets exit non-zero naming the problem and
// change nothing; on SQLite and on PostgreSQL. Part of governance_integration_test.
#include <cstdlib>

#include <gtest/gtest.h>

#include "api/auth.h"
#include "api/budget_codec.h"
#include "api/governance_codec.h"
#include "api/report_codec.h"
#include "core/clock.h"
#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

std::string Me() { return api::CurrentProcessIdentity().user; }

void SpendABudget(const std::string& extra_controller_toml) {
  TestCluster cluster(
      {.nodes = 1, .gpus_per_node = 4, .extra_controller_toml = extra_controller_toml});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"account", "add", "research"},
        {"account", "add", "nlp", "--parent", "research"},
        {"user", "add", Me(), "--account", "nlp"}}) {
    CliResult r = cluster.Cli(args);
    ASSERT_EQ(r.status, 0) << args[0] << " " << args[1] << ": " << r.err;
  }
  // A 2-GPU job of nlp runs about a second.
  JobSpec run = cluster.ShellJob("sleep 1");
  run.resources.gpus_per_node = 2;
  auto first = cluster.Submit(run);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  auto done = cluster.WaitJob(first->job_id);
  ASSERT_TRUE(done.has_value());
  ASSERT_EQ(done->job.state, JobState::kCompleted) << done->job.reason;

  // Bad budgets: refused naming the problem, nothing changed.
  struct Bad {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Bad& bad : std::vector<Bad>{
           {{"account", "budget", "ghost", "--gpu-hours", "1"}, "ghost"},
           {{"account", "budget", "research", "--gpu-hours", "-1"}, "budget.gpu_hours"},
           {{"account", "budget", "research", "--gpu-hours", "1e12"}, "over the maximum"},
           {{"account", "budget", "research", "--gpu-hours", "1", "--period", "fortnight"},
            "fortnight"},
       }) {
    CliResult r = cluster.Cli(bad.args);
    EXPECT_NE(r.status, 0) << bad.args[2] << " " << bad.args[4];
    EXPECT_NE(r.err.find(bad.says), std::string::npos) << bad.args[4] << ": " << r.err;
  }
  EXPECT_EQ(cluster.Cli({"account", "budget", "--json"}).out, "{\"budgets\":[]}\n");

  // A budget of 0.0005 GPU-hours (1.8 GPU-seconds) on the parent, in a window around now: the
  // job already run (2 GPUs x about a second) has spent it.
  const Timestamp now = SystemClock::Get().Now();
  CliResult set = cluster.Cli({"account", "budget", "research", "--gpu-hours", "0.0005", "--start",
                               FormatTimestamp(now - Seconds(86400)), "--end",
                               FormatTimestamp(now + Seconds(2 * 86400)), "--warn", "80"});
  ASSERT_EQ(set.status, 0) << set.err;
  auto budget = [&]() -> api::BudgetStatus {
    CliResult r = cluster.Cli({"account", "budget", "research", "--json"});
    auto list = api::DecodeBudgetStatusList(r.out);
    if (!list || list->size() != 1) return {};
    return (*list)[0];
  };
  api::BudgetStatus spent = budget();
  EXPECT_EQ(spent.account, "research");
  EXPECT_TRUE(spent.in_force);
  EXPECT_GE(spent.spent_gpu_hours, 0.0005);
  EXPECT_EQ(spent.left_gpu_hours, 0);

  // The next GPU job waits with the budget's reason.
  JobSpec next = cluster.ShellJob("sleep 30");
  next.resources.gpus_per_node = 1;
  auto held = cluster.Submit(next);
  ASSERT_TRUE(held.has_value()) << held.error().message;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto j = cluster.GetJob(held->job_id);
        return j && j->job.reason == "AssocGrpGRESBudget";
      },
      std::chrono::seconds(20)))
      << cluster.GetJob(held->job_id)->job.reason;
  EXPECT_EQ(cluster.GetJob(held->job_id)->job.state, JobState::kPending);

  // The spend as `corral account show` and the usage report show it: the same GPU-seconds.
  CliResult show = cluster.Cli({"account", "show", "research"});
  ASSERT_EQ(show.status, 0) << show.err;
  EXPECT_NE(show.out.find("SPENT"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("window"), std::string::npos) << show.out;
  auto secs = [](Timestamp t) {
    return std::to_string(
        std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
  };
  auto report = cluster.Request("GET",
                                "/api/v1/reports/usage?start=" + secs(now - Seconds(3600)) +
                                    "&end=" + secs(SystemClock::Get().Now() + Seconds(3600)),
                                "");
  ASSERT_TRUE(report.has_value());
  auto usage = api::DecodeUsageReport(report->body);
  ASSERT_TRUE(usage.has_value()) << report->body;
  ASSERT_EQ(usage->accounts.size(), 1u);
  EXPECT_EQ(usage->accounts[0].account, "nlp");
  EXPECT_NEAR(usage->accounts[0].gpu_seconds, budget().spent_gpu_hours * 3600, 1e-6);

  // The warning: an audit event, and the metrics.
  ASSERT_TRUE(WaitFor([&] { return budget().warned; }, std::chrono::seconds(20)));
  CliResult audit = cluster.Cli({"audit", "--json"});
  ASSERT_EQ(audit.status, 0) << audit.err;
  EXPECT_NE(
      audit.out.find(R"("method":"EVENT","route":"budget.warning","target":"account:research")"),
      std::string::npos)
      << audit.out;
  auto metrics = cluster.Request("GET", "/metrics", "");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_NE(metrics->body.find("corral_account_budget_warning{account=\"research\"} 1"),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("corral_account_budget_spent_gpu_hours{account=\"research\"}"),
            std::string::npos);
  CliResult verify = cluster.Cli({"audit", "verify"});
  EXPECT_EQ(verify.status, 0) << verify.out << verify.err;

  // Raised live: the held job starts at the next pass.
  ASSERT_EQ(cluster.Cli({"account", "budget", "research", "--gpu-hours", "10"}).status, 0);
  EXPECT_TRUE(WaitFor(
      [&] {
        auto j = cluster.GetJob(held->job_id);
        return j && j->job.state == JobState::kRunning;
      },
      std::chrono::seconds(20)));
  EXPECT_EQ(cluster.Cli({"cancel", held->job_id.ToString()}).status, 0);
  // Removed: the list is empty again.
  ASSERT_EQ(cluster.Cli({"account", "budget", "research", "clear"}).status, 0);
  EXPECT_EQ(cluster.Cli({"account", "budget", "--json"}).out, "{\"budgets\":[]}\n");
}

TEST(BudgetTest, SqliteASpentBudgetHoldsTheNextJobAndTheReportShowsTheSpend) { SpendABudget(""); }

// Run by ctest's `governance_integration_postgres` (tools/with_postgres.sh sets the DSN).
TEST(BudgetTest, PostgresASpentBudgetHoldsTheNextJobAndTheReportShowsTheSpend) {
  const char* dsn = std::getenv("CORRAL_TEST_PG_DSN");
  if (dsn == nullptr || *dsn == '\0') GTEST_SKIP() << "CORRAL_TEST_PG_DSN is not set";
  SpendABudget("[store]\nurl = \"" + std::string(dsn) + "\"\n");
}

}  // namespace
}  // namespace corral::testing
