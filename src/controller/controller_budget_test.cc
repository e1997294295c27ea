// Budgets (internal/budget_book.h; docs/governance.md, "Budgets"): the spend comes from the
// job records (and survives a restart), a job that would exceed the budget waits with
// AssocGrpGRESBudget, the warning is raised once per period, and bad budgets are refused
// naming the problem with nothing changed.
#include <gtest/gtest.h>

#include "api/governance_codec.h"
#include "controller/budget_routes.h"
#include "controller/controller.h"
#include "controller/testing/controller_test_base.h"
#include "controller/testing/requests.h"
#include "sched/config.h"
#include "sched/policy_factory.h"

namespace corral::controller {
namespace {

using testing::kAdmin;
using testing::kAlice;
using testing::NodeRegistration;

constexpr const char* kConfig = R"(
[scheduler]
policy = "default"
[[partition]]
name = "gpu"
default = true
[[account]]
name = "research"
[[account]]
name = "nlp"
parent = "research"
users = ["alice"]
[[user]]
name = "alice"
default_account = "nlp"
)";

class ControllerBudgetTest : public testing::ControllerTestBase {
 protected:
  ControllerBudgetTest() { Restart(); }

  void Restart() {
    auto config = sched::ParseSchedulerConfig(kConfig, "test.toml");
    ASSERT_TRUE(config.has_value()) << config.error().message;
    auto policy = sched::MakePolicy(config->policy, *config);
    ASSERT_TRUE(policy.has_value());
    StartController(TestConfig(), *config, std::move(*policy));
  }

  JobId SubmitFor(uint32_t gpus, Duration limit) {
    JobSpec s = testing::BatchJob(gpus, 1, "sleep 100");
    s.time_limit = limit;
    return Submit(s);
  }

  Status SetBudget(const std::string& account, std::optional<Budget> budget) {
    auto a = controller_->GetAccount(account);
    if (!a) return tl::unexpected(a.error());
    a->budget = budget;
    auto r = controller_->PutAccount(kAdmin, *a, false);
    if (!r) return tl::unexpected(r.error());
    return {};
  }

  api::BudgetStatus StatusOf(const std::string& account) {
    for (const api::BudgetStatus& b : controller_->Budgets()) {
      if (b.account == account) return b;
    }
    ADD_FAILURE() << "no budget on " << account;
    return {};
  }
};

TEST_F(ControllerBudgetTest, ASpentBudgetHoldsTheNextJobAndTheSpendSurvivesARestart) {
  Register(NodeRegistration("node01", 4));
  JobId first = SubmitFor(2, Minutes(60));
  controller_->Tick();
  Flush();
  ASSERT_EQ(Get(first).state, JobState::kRunning);
  clock_.Advance(Minutes(30));
  ASSERT_TRUE(controller_->HandleEvents(testing::JobExit("node01", Get(first))).has_value());
  Flush();
  ASSERT_EQ(Get(first).state, JobState::kCompleted);
  Register(NodeRegistration("node01", 4));  // its heartbeats stopped with the clock's jump

  // A budget set afterwards counts the job already run (2 GPUs x 30 min) in its subtree.
  ASSERT_TRUE(SetBudget("research", Budget{.gpu_hours = 2, .warn_percent = 50}).has_value());
  api::BudgetStatus st = StatusOf("research");
  EXPECT_DOUBLE_EQ(st.spent_gpu_hours, 1.0);
  EXPECT_DOUBLE_EQ(st.left_gpu_hours, 1.0);
  EXPECT_TRUE(st.in_force);

  // 2 GPUs x 1 h would pass it; 1 GPU x 30 min fits.
  JobId over = SubmitFor(2, Minutes(60));
  JobId fits = SubmitFor(1, Minutes(30));
  controller_->Tick();
  Flush();
  EXPECT_EQ(Get(over).state, JobState::kPending);
  EXPECT_EQ(Get(over).reason, "AssocGrpGRESBudget");
  EXPECT_EQ(Get(fits).state, JobState::kRunning);

  // The warning (50%): one audit event, and its marker in the same batch.
  std::vector<AuditRecord> events = controller_->TakeBudgetEvents();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].method, "EVENT");
  EXPECT_EQ(events[0].route, "budget.warning");
  EXPECT_EQ(events[0].target, "account:research");
  Flush();
  EXPECT_TRUE(StatusOf("research").warned);

  // A running job counts its GPU time so far; a restart recomputes the same spend from the
  // records, and does not warn again in this period.
  clock_.Advance(Minutes(12));
  EXPECT_DOUBLE_EQ(StatusOf("research").spent_gpu_hours, 1.2);
  Restart();
  controller_->Tick();
  Flush();
  EXPECT_DOUBLE_EQ(StatusOf("research").spent_gpu_hours, 1.2);
  EXPECT_TRUE(StatusOf("research").warned);
  EXPECT_TRUE(controller_->TakeBudgetEvents().empty());
  EXPECT_EQ(Get(over).state, JobState::kPending);

  // Raising it live lets the held job start at the next pass.
  ASSERT_TRUE(SetBudget("research", Budget{.gpu_hours = 10}).has_value());
  controller_->Tick();
  Flush();
  EXPECT_EQ(Get(over).state, JobState::kRunning);
}

TEST_F(ControllerBudgetTest, ANewPeriodStartsFromZero) {
  Register(NodeRegistration("node01", 4));
  ASSERT_TRUE(SetBudget("nlp", Budget{.gpu_hours = 1, .period = BudgetPeriod::kDay}).has_value());
  JobId j = SubmitFor(4, Minutes(15));
  controller_->Tick();
  Flush();
  ASSERT_EQ(Get(j).state, JobState::kRunning);
  clock_.Advance(Minutes(15));
  ASSERT_TRUE(controller_->HandleEvents(testing::JobExit("node01", Get(j))).has_value());
  Flush();
  EXPECT_DOUBLE_EQ(StatusOf("nlp").spent_gpu_hours, 1.0);
  Register(NodeRegistration("node01", 4));
  JobId next = SubmitFor(1, Minutes(1));
  controller_->Tick();
  EXPECT_EQ(Get(next).reason, "AssocGrpGRESBudget");
  clock_.Advance(Seconds(86400));
  Register(NodeRegistration("node01", 4));
  controller_->Tick();
  Flush();
  EXPECT_DOUBLE_EQ(StatusOf("nlp").spent_gpu_hours, 0);
  EXPECT_EQ(Get(next).state, JobState::kRunning);
}

TEST_F(ControllerBudgetTest, BadBudgetsAreRefusedNamingTheProblemAndChangeNothing) {
  Flush();
  auto refused = [&](const std::string& account, Budget b, ErrorCode code,
                     const std::string& text) {
    Status s = SetBudget(account, b);
    ASSERT_FALSE(s.has_value());
    EXPECT_EQ(s.error().code, code) << s.error().message;
    EXPECT_NE(s.error().message.find(text), std::string::npos) << s.error().message;
    EXPECT_FALSE(controller_->HasPendingWrites());
  };
  // A budget on a missing account: GetAccount's kNotFound; PutAccount says the same.
  refused("ghost", Budget{.gpu_hours = 1}, ErrorCode::kNotFound, "ghost");
  auto put = controller_->PutAccount(
      kAdmin, AccountConfig{.name = "ghost", .budget = Budget{.gpu_hours = 1}}, false);
  ASSERT_FALSE(put.has_value());
  EXPECT_EQ(put.error().message, "account \"ghost\": no such account");
  refused("nlp", Budget{.gpu_hours = -1}, ErrorCode::kInvalidArgument,
          "account \"nlp\": budget.gpu_hours: -1 must be a number at least 0");
  refused("nlp", Budget{.gpu_hours = 1e12}, ErrorCode::kInvalidArgument, "over the maximum");
  refused("nlp", Budget{.gpu_hours = 1, .period = BudgetPeriod::kWindow},
          ErrorCode::kInvalidArgument, "a window needs a start before its end");
  refused("nlp", Budget{}, ErrorCode::kInvalidArgument, "neither gpu_hours nor energy_kwh");
  EXPECT_FALSE(controller_->GetAccount("nlp")->budget.has_value());
  EXPECT_TRUE(controller_->Budgets().empty());
  // An unknown period is refused by the request's decoder, naming the field.
  auto decoded =
      api::DecodeAccountRequest(R"({"name":"nlp","budget":{"gpu_hours":1,"period":"fortnight"}})");
  ASSERT_FALSE(decoded.has_value());
  EXPECT_NE(decoded.error().message.find("budget.period"), std::string::npos)
      << decoded.error().message;
  EXPECT_NE(decoded.error().message.find("fortnight"), std::string::npos);
}

// GET /api/v1/budgets under [privacy] (issue 16): a user sees the budgets of her accounts and
// of those above them, and of the accounts she coordinates; operators and admins, or anyone
// without [privacy], every budget.
TEST(VisibleBudgetsTest, PrivacyShowsAUserHerAccountsBudgetsOnly) {
  const std::vector<AccountConfig> tree = {
      {.name = "research"},
      {.name = "nlp", .parent = "research", .users = {"alice"}},
      {.name = "nlp_sub", .parent = "nlp"},
      {.name = "vision", .parent = "research", .users = {"bob"}, .coordinators = {"carol"}},
      {.name = "vision_sub", .parent = "vision"},
      {.name = "bio"}};
  std::vector<api::BudgetStatus> all;
  for (const AccountConfig& a : tree) all.push_back({.account = a.name});
  auto seen = [&](const api::Identity& who, const PrivacyConfig& privacy) {
    std::string out;
    for (const api::BudgetStatus& b : VisibleBudgets(who, privacy, tree, all)) {
      out += (out.empty() ? "" : ",") + b.account;
    }
    return out;
  };
  const PrivacyConfig none, usage{.usage = true}, jobs{.jobs = true};
  const api::Identity alice{.user = "alice"}, carol{.user = "carol"}, dave{.user = "dave"};
  EXPECT_EQ(seen(dave, none), "research,nlp,nlp_sub,vision,vision_sub,bio");
  EXPECT_EQ(seen(alice, usage), "research,nlp");
  EXPECT_EQ(seen(alice, jobs), "research,nlp");
  EXPECT_EQ(seen(carol, usage), "vision,vision_sub");
  EXPECT_EQ(seen(dave, usage), "");
  EXPECT_EQ(seen({.user = "olga", .role = api::Role::kOperator}, usage),
            "research,nlp,nlp_sub,vision,vision_sub,bio");
  EXPECT_EQ(seen({.user = "root", .role = api::Role::kAdmin}, usage),
            "research,nlp,nlp_sub,vision,vision_sub,bio");
}

}  // namespace
}  // namespace corral::controller
