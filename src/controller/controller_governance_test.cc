// Accounts, users and QOS as data (internal/governance.h): seeded from the file into an empty
// store, authoritative in the store after that, changed live with the scheduler using the
// change at its next pass, and every bad change refused naming the problem with nothing
// changed.
#include <gtest/gtest.h>

#include "controller/controller.h"
#include "controller/testing/controller_test_base.h"
#include "controller/testing/requests.h"
#include "sched/config.h"
#include "sched/policy_factory.h"

namespace corral::controller {
namespace {

using testing::kAdmin;
using testing::kAlice;
using testing::kBob;
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
max_gpus = 1
[[user]]
name = "alice"
default_account = "nlp"
[[qos]]
name = "normal"
)";

class ControllerGovernanceTest : public testing::ControllerTestBase {
 protected:
  ControllerGovernanceTest() { Reset(kConfig); }

  // A controller over the same store with `toml`'s configuration.
  void Reset(const char* toml) {
    auto config = sched::ParseSchedulerConfig(toml, "test.toml");
    ASSERT_TRUE(config.has_value()) << config.error().message;
    auto policy = sched::MakePolicy(config->policy, *config);
    ASSERT_TRUE(policy.has_value());
    StartController(TestConfig(), *config, std::move(*policy));
  }

  JobId Submit(const api::Identity& who, uint32_t gpus, const std::string& account = "") {
    JobSpec s = testing::BatchJob(gpus, 1, "sleep 100");
    s.account = account;
    auto r = controller_->Submit(who, s);
    EXPECT_TRUE(r.has_value()) << r.error().message;
    return r.has_value() ? r->job_id : JobId();
  }

  JobState StateOf(JobId id) { return controller_->GetJob(id)->job.state; }
  std::string ReasonOf(JobId id) { return controller_->GetJob(id)->job.reason; }

  // Asserts that `r` failed with `code` and a message holding `text`, and that nothing was
  // recorded.
  template <typename R>
  void ExpectRefused(const R& r, ErrorCode code, const std::string& text) {
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, code) << r.error().message;
    EXPECT_NE(r.error().message.find(text), std::string::npos) << r.error().message;
    EXPECT_FALSE(controller_->HasPendingWrites()) << r.error().message;
  }
};

TEST_F(ControllerGovernanceTest, TheFileSeedsAnEmptyStoreOnceThenTheStoreIsAuthoritative) {
  Flush();
  store::StoredState s = *store_.Load();
  ASSERT_EQ(s.governance.size(), 4u);  // 2 accounts, 1 user, 1 QOS
  EXPECT_EQ(s.meta.count("governance.seeded"), 1u);
  auto acct = controller_->PutAccount(kAdmin, AccountConfig{.name = "vision", .shares = 4}, true);
  ASSERT_TRUE(acct.has_value()) << acct.error().message;
  Flush();
  // A restart with the same file keeps the account added through the API.
  Reset(kConfig);
  EXPECT_TRUE(controller_->GetAccount("vision").has_value());
  EXPECT_EQ(controller_->sched_config().accounts.size(), 3u);
  EXPECT_FALSE(controller_->HasPendingWrites());
}

TEST_F(ControllerGovernanceTest, ARaisedLimitStartsAPendingJobAtTheNextPass) {
  Register(NodeRegistration("node01", 4));
  JobId first = Submit(kAlice, 1);  // the default account: nlp
  JobId second = Submit(kAlice, 1);
  controller_->Tick();
  Flush();
  EXPECT_EQ(StateOf(first), JobState::kRunning);
  EXPECT_EQ(StateOf(second), JobState::kPending);
  EXPECT_EQ(ReasonOf(second), "AssocGrpGRES");
  EXPECT_EQ(controller_->GetJob(second)->job.spec.account, "nlp");

  AccountConfig nlp = *controller_->GetAccount("nlp");
  nlp.limits.max_gpus = 2;
  ASSERT_TRUE(controller_->PutAccount(kAdmin, nlp, false).has_value());
  EXPECT_TRUE(controller_->HasPendingWrites());  // the record, in the request's batch
  controller_->Tick();
  Flush();
  EXPECT_EQ(StateOf(second), JobState::kRunning);
}

TEST_F(ControllerGovernanceTest, UsersAndTheirAssociationsDecideWhoMaySubmit) {
  Register(NodeRegistration("node01", 4));
  Flush();
  // bob has no association: refused with Slurm's words.
  auto refused = controller_->Submit(kBob, testing::BatchJob(0, 1, "true"));
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("Invalid account or account/partition combination"),
            std::string::npos)
      << refused.error().message;
  api::UserInfo bob{.user = {.name = "bob"}, .accounts = {"nlp"}};
  auto added = controller_->PutUser(kAdmin, bob, true);
  ASSERT_TRUE(added.has_value()) << added.error().message;
  EXPECT_EQ(added->user.default_account, "nlp");
  EXPECT_EQ(controller_->GetAccount("nlp")->users, (std::vector<std::string>{"alice", "bob"}));
  Flush();
  JobId j = Submit(kBob, 0);
  EXPECT_EQ(controller_->GetJob(j)->job.spec.account, "nlp");
  // Removing bob's association takes nlp away from him; his job keeps it.
  bob.accounts = {"research"};
  bob.user.default_account = "research";
  ASSERT_TRUE(controller_->PutUser(kAdmin, bob, false).has_value());
  EXPECT_EQ(controller_->GetAccount("nlp")->users, (std::vector<std::string>{"alice"}));
}

TEST_F(ControllerGovernanceTest, BadChangesAreRefusedNamingTheProblemAndChangeNothing) {
  Flush();
  ExpectRefused(controller_->PutAccount(kAdmin, {.name = "x", .parent = "nope"}, true),
                ErrorCode::kInvalidArgument, "\"nope\"");
  AccountConfig research = *controller_->GetAccount("research");
  research.parent = "nlp";  // nlp is research's child: a loop
  ExpectRefused(controller_->PutAccount(kAdmin, research, false), ErrorCode::kInvalidArgument,
                "loop");
  AccountConfig absurd{.name = "big"};
  absurd.limits.max_gpus = 4'000'000'000u;
  ExpectRefused(controller_->PutAccount(kAdmin, absurd, true), ErrorCode::kInvalidArgument,
                "limits.max_gpus");
  ExpectRefused(controller_->PutAccount(kAdmin, {.name = "nlp"}, true), ErrorCode::kAlreadyExists,
                "nlp");
  ExpectRefused(controller_->PutAccount(kAdmin, {.name = "bad name"}, true),
                ErrorCode::kInvalidArgument, "name");
  ExpectRefused(controller_->DeleteAccount(kAdmin, "research"), ErrorCode::kFailedPrecondition,
                "sub-account \"nlp\"");
  ExpectRefused(controller_->DeleteAccount(kAdmin, "nlp"), ErrorCode::kFailedPrecondition,
                "\"alice\"");
  ExpectRefused(controller_->DeleteAccount(kAdmin, "gone"), ErrorCode::kNotFound, "gone");
  ExpectRefused(
      controller_->PutUser(kAdmin, {.user = {.name = "carol"}, .accounts = {"nope"}}, true),
      ErrorCode::kInvalidArgument, "\"nope\"");
  ExpectRefused(controller_->DeleteQos(kAdmin, "normal"), ErrorCode::kFailedPrecondition,
                "default_qos");
  // Only admins change them.
  ExpectRefused(controller_->PutAccount(kAlice, {.name = "mine"}, true),
                ErrorCode::kPermissionDenied, "alice");
  ExpectRefused(controller_->PutQos(kAlice, {.name = "fast"}, true), ErrorCode::kPermissionDenied,
                "alice");
  EXPECT_EQ(controller_->ListAccounts().size(), 2u);
  EXPECT_EQ(controller_->sched_config().accounts.size(), 2u);
}

TEST_F(ControllerGovernanceTest, AnAccountWithActiveJobsCannotBeDeleted) {
  JobId j = Submit(kAlice, 0);
  ASSERT_TRUE(controller_->Hold(kAlice, j, true).has_value());
  Flush();
  api::UserInfo alice = *controller_->GetUser("alice");
  alice.accounts = {"research"};
  alice.user.default_account = "research";
  ASSERT_TRUE(controller_->PutUser(kAdmin, alice, false).has_value());
  Flush();
  ExpectRefused(controller_->DeleteAccount(kAdmin, "nlp"), ErrorCode::kFailedPrecondition,
                "1 pending or running job");
  ASSERT_TRUE(controller_->Cancel(kAdmin, j).has_value());
  Flush();
  ASSERT_TRUE(controller_->DeleteAccount(kAdmin, "nlp").has_value());
  EXPECT_FALSE(controller_->GetAccount("nlp").has_value());
}

}  // namespace
}  // namespace corral::controller
