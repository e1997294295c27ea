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

// --- Account coordinators (issue 16 item 2) ---
// research
// |- nlp     (alice; carol coordinates it)
// |  `- nlp_sub
// `- vision  (bob)
// What carol may do is what Slurm 22.05's slurmdbd and slurmctld let a coordinator do
// (checked against the peer: docs/governance.md, "Coordinators").
constexpr const char* kCoordConfig = R"(
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
users = ["alice", "carol"]
[[account]]
name = "nlp_sub"
parent = "nlp"
[[account]]
name = "vision"
parent = "research"
users = ["bob"]
[[user]]
name = "bob"
default_account = "vision"
)";

const api::Identity kCarol{.user = "carol", .uid = 1003, .gid = 1003, .role = api::Role::kUser};

class CoordinatorTest : public ControllerGovernanceTest {
 protected:
  CoordinatorTest() {
    Reset(kCoordConfig);
    auto r = controller_->AddCoordinators(kAdmin, "nlp", {"carol"});
    EXPECT_TRUE(r.has_value()) << r.error().message;
    Flush();
  }
};

TEST_F(CoordinatorTest, ACoordinatorManagesTheSubAccountsUsersAndLimitsOfHerAccounts) {
  EXPECT_EQ(controller_->GetAccount("nlp")->coordinators, std::vector<std::string>{"carol"});
  EXPECT_TRUE(controller_->Coordinates("carol", "nlp_sub"));
  EXPECT_FALSE(controller_->Coordinates("carol", "vision"));
  // A sub-account of her account, and its limits.
  ASSERT_TRUE(controller_->PutAccount(kCarol, {.name = "nlp2", .parent = "nlp"}, true));
  AccountConfig sub = *controller_->GetAccount("nlp_sub");
  sub.limits.max_gpus = 4;
  ASSERT_TRUE(controller_->PutAccount(kCarol, sub, false));
  EXPECT_EQ(controller_->sched_config().accounts.size(), 5u);
  // A user of her own: added, limited, deleted.
  auto dave = controller_->PutUser(kCarol, {.user = {.name = "dave"}, .accounts = {"nlp"}}, true);
  ASSERT_TRUE(dave.has_value()) << dave.error().message;
  dave->user.limits.max_running_jobs = 2;
  ASSERT_TRUE(controller_->PutUser(kCarol, *dave, false));
  ASSERT_TRUE(controller_->DeleteUser(kCarol, "dave"));
  // A user of the neighbour's: she may give him an association with her account, and take it
  // away, but not change his own settings or his other associations.
  api::UserInfo bob = *controller_->GetUser("bob");
  bob.accounts = {"nlp", "vision"};
  ASSERT_TRUE(controller_->PutUser(kCarol, bob, false));
  EXPECT_EQ(controller_->GetAccount("nlp")->users,
            (std::vector<std::string>{"alice", "bob", "carol"}));
  // Coordinators of her accounts (Slurm lets her name them at and below her level).
  ASSERT_TRUE(controller_->AddCoordinators(kCarol, "nlp_sub", {"alice"}));
  ASSERT_TRUE(controller_->RemoveCoordinator(kCarol, "nlp_sub", "alice"));
  Flush();
  // The store holds it all: a restart sees the same coordinators.
  Reset(kCoordConfig);
  EXPECT_TRUE(controller_->Coordinates("carol", "nlp2"));
  EXPECT_EQ(*controller_->GetAccount("nlp_sub")->limits.max_gpus, 4u);
}

TEST_F(CoordinatorTest, ACoordinatorIsRefusedEverythingElseAndNothingChanges) {
  const ErrorCode kDenied = ErrorCode::kPermissionDenied;
  // Her own account's settings are her parent's coordinator's (Slurm), the neighbour's not hers.
  AccountConfig nlp = *controller_->GetAccount("nlp");
  nlp.limits.max_gpus = 100;
  ExpectRefused(controller_->PutAccount(kCarol, nlp, false), kDenied, "account \"nlp\"");
  AccountConfig vision = *controller_->GetAccount("vision");
  vision.limits.max_gpus = 0;
  ExpectRefused(controller_->PutAccount(kCarol, vision, false), kDenied, "coordinates");
  AccountConfig sub = *controller_->GetAccount("nlp_sub");
  sub.parent = "vision";  // moved out of her tree
  ExpectRefused(controller_->PutAccount(kCarol, sub, false), kDenied, "nlp_sub");
  ExpectRefused(controller_->PutAccount(kCarol, {.name = "x", .parent = "research"}, true), kDenied,
                "\"x\"");
  ExpectRefused(controller_->PutAccount(kCarol, {.name = "x"}, true), kDenied, "\"x\"");
  ExpectRefused(controller_->DeleteAccount(kCarol, "nlp_sub"), kDenied, "nlp_sub");
  // The neighbour's users: not his settings, not his other associations, not deleting him.
  api::UserInfo bob = *controller_->GetUser("bob");
  bob.user.limits.max_gpus = 1;
  ExpectRefused(controller_->PutUser(kCarol, bob, false), kDenied, "bob");
  bob = *controller_->GetUser("bob");
  bob.accounts = {};
  ExpectRefused(controller_->PutUser(kCarol, bob, false), kDenied, "bob");
  ExpectRefused(controller_->DeleteUser(kCarol, "bob"), kDenied, "bob");
  ExpectRefused(
      controller_->PutUser(kCarol, {.user = {.name = "eve"}, .accounts = {"vision"}}, true),
      kDenied, "eve");
  ExpectRefused(controller_->PutUser(kCarol, {.user = {.name = "eve"}}, true), kDenied, "eve");
  // Coordinators above her level or beside it; QOS (cluster configuration).
  ExpectRefused(controller_->AddCoordinators(kCarol, "research", {"alice"}), kDenied, "research");
  ExpectRefused(controller_->AddCoordinators(kCarol, "vision", {"carol"}), kDenied, "vision");
  ExpectRefused(controller_->PutQos(kCarol, {.name = "fast"}, true), kDenied, "carol");
  // Someone who coordinates nothing.
  ExpectRefused(controller_->AddCoordinators(kAlice, "nlp", {"alice"}), kDenied,
                "coordinates no account");
  EXPECT_EQ(controller_->ListAccounts().size(), 4u);
  EXPECT_EQ(controller_->GetAccount("nlp")->coordinators, std::vector<std::string>{"carol"});
}

TEST_F(CoordinatorTest, ACoordinatorManagesTheJobsOfHerAccountsOnly) {
  JobId mine = Submit(kAlice, 0, "nlp");
  JobId neighbours = Submit(kBob, 0, "vision");
  Flush();
  // Hold (a user's hold, as Slurm's coordinator hold: JobHeldUser), release, time limit,
  // cancel.
  ASSERT_TRUE(controller_->Hold(kCarol, mine, true));
  EXPECT_EQ(ReasonOf(mine), "JobHeldUser");
  ASSERT_TRUE(controller_->Hold(kCarol, mine, false));
  ASSERT_TRUE(controller_->UpdateTimeLimit(kCarol, mine, Minutes(5)));
  ASSERT_TRUE(controller_->Cancel(kCarol, mine));
  EXPECT_EQ(StateOf(mine), JobState::kCancelled);
  Flush();
  for (auto refused :
       {controller_->Hold(kCarol, neighbours, true), controller_->Cancel(kCarol, neighbours),
        controller_->UpdateTimeLimit(kCarol, neighbours, Minutes(5)),
        controller_->Requeue(kCarol, neighbours, false)}) {
    ExpectRefused(refused, ErrorCode::kPermissionDenied, "carol");
  }
  EXPECT_EQ(StateOf(neighbours), JobState::kPending);
}

TEST_F(CoordinatorTest, BadCoordinatorChangesNameTheProblemAndChangeNothing) {
  ExpectRefused(controller_->AddCoordinators(kAdmin, "nope", {"alice"}), ErrorCode::kNotFound,
                "\"nope\"");
  ExpectRefused(controller_->AddCoordinators(kAdmin, "nlp", {"ghost"}), ErrorCode::kInvalidArgument,
                "no such user \"ghost\"");
  ExpectRefused(controller_->AddCoordinators(kAdmin, "nlp", {}), ErrorCode::kInvalidArgument,
                "none named");
  ExpectRefused(controller_->RemoveCoordinator(kAdmin, "nlp", "alice"), ErrorCode::kInvalidArgument,
                "\"alice\" is not one of its coordinators");
  ExpectRefused(controller_->RemoveCoordinator(kAdmin, "nlp_sub", "carol"),
                ErrorCode::kInvalidArgument, "coordinator of \"nlp\"");
  ExpectRefused(controller_->PutAccount(kAdmin, {.name = "y", .coordinators = {"ghost"}}, true),
                ErrorCode::kInvalidArgument, "coordinators: no such user \"ghost\"");
  EXPECT_EQ(controller_->GetAccount("nlp")->coordinators, std::vector<std::string>{"carol"});
  // Deleting a user takes it off the coordinator lists.
  ASSERT_TRUE(controller_->DeleteUser(kAdmin, "carol"));
  EXPECT_TRUE(controller_->GetAccount("nlp")->coordinators.empty());
}

// --- Partitions restricted to accounts, groups and QOS (issue 16 item 2) ---
constexpr const char* kAccessConfig = R"(
[scheduler]
policy = "default"
[[partition]]
name = "gpu"
default = true
[[partition]]
name = "nlp_only"
AllowAccounts = ["nlp"]
[[partition]]
name = "no_vision"
DenyAccounts = ["vision"]
[[partition]]
name = "ml_group"
AllowGroups = ["ml"]
[[partition]]
name = "fast_only"
AllowQos = ["fast"]
[[account]]
name = "nlp"
users = ["alice", "bob"]
[[account]]
name = "vision"
users = ["bob"]
[[qos]]
name = "normal"
[[qos]]
name = "fast"
)";

class PartitionAccessTest : public ControllerGovernanceTest {
 protected:
  PartitionAccessTest() {
    auto config = sched::ParseSchedulerConfig(kAccessConfig, "test.toml");
    EXPECT_TRUE(config.has_value()) << config.error().message;
    auto policy = sched::MakePolicy(config->policy, *config);
    ControllerConfig c = TestConfig();
    // alice is in group ml; bob is not. Looked up from the job's user, never the request.
    c.user_groups = [](const std::string& user, uint32_t) {
      return user == "alice" ? std::vector<std::string>{"alice", "ml"}
                             : std::vector<std::string>{user};
    };
    StartController(std::move(c), *config, std::move(*policy));
    Flush();
  }

  // The submission's error, or "" when accepted.
  std::string Refusal(const api::Identity& who, const std::string& partition,
                      const std::string& account, const std::string& qos = "") {
    JobSpec s = testing::BatchJob(0, 1, "true");
    s.partitions = {partition};
    s.account = account;
    s.qos = qos;
    auto r = controller_->Submit(who, s);
    if (r.has_value()) return "";
    EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied) << r.error().message;
    return r.error().message;
  }
};

TEST_F(PartitionAccessTest, APartitionRefusesAccountsGroupsAndQosItDoesNotAllowInSlurmsWords) {
  EXPECT_EQ(Refusal(kBob, "nlp_only", "nlp"), "");
  EXPECT_EQ(Refusal(kBob, "nlp_only", "vision"),
            "Invalid account or account/partition combination specified: Job's account not "
            "permitted to use this partition (nlp_only allows nlp not vision)");
  EXPECT_EQ(Refusal(kBob, "no_vision", "nlp"), "");
  EXPECT_EQ(Refusal(kBob, "no_vision", "vision"),
            "Invalid account or account/partition combination specified: Job's account not "
            "permitted to use this partition (no_vision denies vision including vision)");
  EXPECT_EQ(Refusal(kAlice, "ml_group", "nlp"), "");
  EXPECT_EQ(Refusal(kBob, "ml_group", "nlp"),
            "User's group not permitted to use this partition (ml_group allows groups ml; user "
            "\"bob\" is in none of them)");
  EXPECT_EQ(Refusal(kBob, "fast_only", "nlp", "fast"), "");
  EXPECT_EQ(Refusal(kBob, "fast_only", "nlp"),  // the default QOS, normal
            "Invalid qos specification: Job's QOS not permitted to use this partition "
            "(fast_only allows fast not normal)");
  // Every partition named must let it in (Slurm's EnforcePartLimits=ALL).
  JobSpec both = testing::BatchJob(0, 1, "true");
  both.partitions = {"gpu", "nlp_only"};
  both.account = "vision";
  EXPECT_FALSE(controller_->Submit(kBob, both).has_value());
  // A refusal records nothing: only the accepted jobs exist.
  Flush();
  EXPECT_EQ(controller_->ListJobs({}).size(), 4u);
}

TEST_F(PartitionAccessTest, AccessListsMustNameExistingAccountsAndQos) {
  auto bad = sched::ParseSchedulerConfig(
      "[[partition]]\nname = \"p\"\nDenyAccounts = [\"ghost\"]\n[[account]]\nname = \"a\"\n",
      "test.toml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("DenyAccounts: no such account \"ghost\""), std::string::npos)
      << bad.error().message;
  bad = sched::ParseSchedulerConfig(
      "[[partition]]\nname = \"p\"\nAllowAccounts = [\"a\"]\nDenyAccounts = [\"a\"]\n"
      "[[account]]\nname = \"a\"\n",
      "test.toml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("not both"), std::string::npos) << bad.error().message;
  // An account a partition names cannot be deleted from under it.
  api::UserInfo bob = *controller_->GetUser("bob");
  bob.accounts = {"nlp"};
  bob.user.default_account = "nlp";
  ASSERT_TRUE(controller_->PutUser(kAdmin, bob, false));
  Flush();
  ExpectRefused(controller_->DeleteAccount(kAdmin, "vision"), ErrorCode::kInvalidArgument,
                "DenyAccounts: no such account \"vision\"");
}

}  // namespace
}  // namespace corral::controller
