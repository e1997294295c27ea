#include "api/access.h"

#include <unistd.h>

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace corral::api {
namespace {

// A passwd/group database held in memory; counts group lookups.
class FakeDirectory final : public UserDirectory {
 public:
  std::map<uint32_t, std::string> users;
  std::map<std::string, std::vector<std::string>> groups;
  mutable std::atomic<int> group_lookups{0};

  std::optional<std::string> UserName(uint32_t uid) const override {
    auto it = users.find(uid);
    if (it == users.end()) return std::nullopt;
    return it->second;
  }
  std::vector<std::string> GroupNames(const std::string& user, uint32_t) const override {
    ++group_lookups;
    auto it = groups.find(user);
    return it == groups.end() ? std::vector<std::string>{} : it->second;
  }
};

TEST(RoleResolverTest, ListsOfUsersAndGroupsDecideTheRole) {
  FakeDirectory dir;
  dir.groups = {{"ann", {"ann", "hpc-admins"}},
                {"otto", {"otto", "ops"}},
                {"both", {"ops", "hpc-admins"}},
                {"uma", {"uma", "users"}}};
  RoleResolver roles(RoleConfig{.admin_users = {"carol"},
                                .admin_groups = {"hpc-admins"},
                                .operator_users = {"oscar"},
                                .operator_groups = {"ops"}},
                     dir);
  EXPECT_EQ(roles.RoleOf("carol", 1000, 1000), Role::kAdmin);
  EXPECT_EQ(roles.RoleOf("ann", 1001, 1001), Role::kAdmin);
  EXPECT_EQ(roles.RoleOf("both", 1002, 1002), Role::kAdmin);
  EXPECT_EQ(roles.RoleOf("oscar", 1003, 1003), Role::kOperator);
  EXPECT_EQ(roles.RoleOf("otto", 1004, 1004), Role::kOperator);
  EXPECT_EQ(roles.RoleOf("uma", 1005, 1005), Role::kUser);
  EXPECT_EQ(roles.RoleOf("root", 0, 0), Role::kAdmin);
  EXPECT_EQ(roles.RoleOf("nobody-listed", 0, 0), Role::kAdmin);  // uid 0 is root

  EXPECT_TRUE(roles.IsAdmin("ann", 1001, 1001));
  EXPECT_FALSE(roles.IsOperator("ann", 1001, 1001));  // admin, not listed as operator
  EXPECT_TRUE(roles.IsOperator("both", 1002, 1002));
  EXPECT_TRUE(roles.IsOperator("otto", 1004, 1004));
  EXPECT_FALSE(roles.IsAdmin("otto", 1004, 1004));
  EXPECT_FALSE(roles.IsAdmin("uma", 1005, 1005));
  EXPECT_FALSE(roles.IsOperator("uma", 1005, 1005));
}

TEST(RoleResolverTest, GroupsAreLookedUpOnlyWhenNeeded) {
  FakeDirectory dir;
  RoleResolver by_name(RoleConfig{.admin_users = {"carol"}, .operator_users = {"oscar"}}, dir);
  EXPECT_EQ(by_name.RoleOf("uma", 1005, 1005), Role::kUser);
  EXPECT_EQ(dir.group_lookups.load(), 0);
  RoleResolver by_group(RoleConfig{.operator_groups = {"ops"}}, dir);
  EXPECT_EQ(by_group.RoleOf("uma", 1005, 1005), Role::kUser);
  EXPECT_EQ(dir.group_lookups.load(), 1);
}

TEST(RoleResolverTest, SystemDirectoryKnowsThisProcess) {
  const UserDirectory& sys = SystemUserDirectory();
  std::optional<std::string> me = sys.UserName(getuid());
  ASSERT_TRUE(me.has_value());
  EXPECT_FALSE(me->empty());
  std::vector<std::string> groups = sys.GroupNames(*me, getgid());
  EXPECT_FALSE(groups.empty());
  EXPECT_FALSE(sys.UserName(kNoUnixId).has_value());
}

// ---------------------------------------------------------------------------------------------
// Authorize: the table of access.h, written out here independently.

const Identity kUser{"alice", 1001, 100, Role::kUser};
const Identity kOperator{"oscar", 1003, 100, Role::kOperator};
const Identity kAdmin{"carol", 1000, 100, Role::kAdmin};
const Identity kJob{.user = "alice",
                    .uid = 1001,
                    .gid = 100,
                    .role = Role::kJob,
                    .job = JobId(42),
                    .generation = Generation(3)};
const Identity kAgent{.user = "agent:node01",
                      .uid = kNoUnixId,
                      .gid = kNoUnixId,
                      .role = Role::kAgent,
                      .node = "node01"};
const Identity kControllerCall{.user = "corral-controller",
                               .uid = kNoUnixId,
                               .gid = kNoUnixId,
                               .role = Role::kController,
                               .node = "node01"};
const Identity kController{
    .user = "corral-controller", .uid = kNoUnixId, .gid = kNoUnixId, .role = Role::kController};
// A scraper's token (`corral token --role metrics`): it reads metrics (`kReadMetrics`) and does
// nothing else.
const Identity kMetrics{
    .user = "metrics", .uid = kNoUnixId, .gid = kNoUnixId, .role = Role::kMetrics};

// Targets: alice's job 42 (run 3) on node01, and bob's job 43 on node02.
const Resource kOwnJob{
    .job = JobId(42), .job_user = "alice", .generation = Generation(3), .node = "node01"};
const Resource kOtherJob{
    .job = JobId(43), .job_user = "bob", .generation = Generation(9), .node = "node02"};

// For each action: who may do it on alice's job 42 / node01, and on bob's job 43 / node02.
// Letters: u user alice, o operator oscar, a admin carol, j job 42's credential, g node01's
// agent, c the controller's call for node01, C the controller itself, m a scraper.
struct Row {
  Action action;
  std::string own;    // on kOwnJob
  std::string other;  // on kOtherJob
};
const std::vector<Row> kTable = {
    {Action::kReadCluster, "uoajC", "uoajC"},
    {Action::kReadMetrics, "oacCm", "oaCm"},
    {Action::kReadJob, "uoajC", "uoajC"},
    {Action::kReadJobPrivate, "uoajC", "oaC"},
    {Action::kSubmitJob, "uoaj", "uoaj"},
    {Action::kCancelJob, "uoajC", "oaC"},
    {Action::kHoldJob, "uoaC", "oaC"},
    {Action::kReleaseJob, "uoaC", "oaC"},
    {Action::kRequeueJob, "uoajC", "oaC"},
    {Action::kUpdateJob, "uaC", "aC"},
    {Action::kCreateStep, "uajC", "aC"},
    {Action::kCheckpointDone, "uajC", "aC"},
    {Action::kDrainNode, "oaC", "oaC"},
    {Action::kResumeNode, "oaC", "oaC"},
    {Action::kDrainGpu, "oaC", "oaC"},
    {Action::kResumeGpu, "oaC", "oaC"},
    {Action::kConfigure, "a", "a"},
    {Action::kManageIdentities, "a", "a"},
    {Action::kNodeRegister, "g", ""},
    {Action::kNodeHeartbeat, "g", ""},
    {Action::kNodeEvent, "g", ""},
    {Action::kAgentCall, "c", ""},
    {Action::kReadAudit, "oa", "oa"},
    {Action::kManageAccounts, "a", "a"},
    // Slurm: suspending and resuming are for operators and administrators, not a job's owner.
    {Action::kSuspendJob, "oa", "oa"},
    // Slurm without SchedulerParameters=enable_user_top: `scontrol top` is for operators.
    {Action::kTopJob, "oa", "oa"},
};

TEST(AuthorizeTest, EveryPrincipalEveryActionMatchesTheTable) {
  // alice owns job 42 as a user; oscar (operator) owns nothing; the job principal is alice's.
  const std::vector<std::pair<char, Identity>> principals = {
      {'u', kUser},  {'o', kOperator},       {'a', kAdmin},      {'j', kJob},
      {'g', kAgent}, {'c', kControllerCall}, {'C', kController}, {'m', kMetrics}};
  std::set<std::string> names;
  for (const Row& row : kTable) {
    names.insert(std::string(ActionName(row.action)));
    for (const auto& [letter, who] : principals) {
      for (const auto& [target, allowed] :
           {std::pair{kOwnJob, row.own}, std::pair{kOtherJob, row.other}}) {
        Status s = Authorize(who, row.action, target);
        bool expected = allowed.find(letter) != std::string::npos;
        EXPECT_EQ(s.has_value(), expected)
            << ActionName(row.action) << " by " << letter << " on job " << target.job.value
            << (s ? "" : ": " + s.error().message);
        if (!s) {
          EXPECT_EQ(s.error().code, ErrorCode::kPermissionDenied);
        }
      }
    }
  }
  // Every action has a row and a distinct name.
  EXPECT_EQ(names.size(), kTable.size());
  EXPECT_EQ(static_cast<size_t>(Action::kTopJob) + 1, kTable.size());
}

TEST(AuthorizeTest, AJobCredentialActsOnItsOwnRunOnly) {
  Resource same = kOwnJob;
  EXPECT_TRUE(Authorize(kJob, Action::kCreateStep, same).has_value());
  // The generation unknown to the caller (0) is accepted; another run is not.
  same.generation = Generation(0);
  EXPECT_TRUE(Authorize(kJob, Action::kCheckpointDone, same).has_value());
  same.generation = Generation(4);
  Status s = Authorize(kJob, Action::kCreateStep, same);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("the credential is for job 42 only"), std::string::npos)
      << s.error().message;
  // Another job of the same user: readable (its user may read it), not actionable.
  Resource sibling{.job = JobId(44), .job_user = "alice", .generation = Generation(1)};
  EXPECT_TRUE(Authorize(kJob, Action::kReadJobPrivate, sibling).has_value());
  EXPECT_FALSE(Authorize(kJob, Action::kCancelJob, sibling).has_value());
  EXPECT_FALSE(Authorize(kJob, Action::kCreateStep, sibling).has_value());
  // A job submits jobs as its user (sbatch in a job: chains, dependencies); the controller
  // gives the new job the credential's user, uid and gid.
  EXPECT_TRUE(Authorize(kJob, Action::kSubmitJob, sibling).has_value());
}

TEST(AuthorizeTest, AnAgentIsBoundToItsNodeAndIsNeverAnAdmin) {
  Status s = Authorize(kAgent, Action::kNodeRegister, Resource{.node = "node02"});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(
      s.error().message,
      "the agent of node node01 may not node-register node node02: it is node node01's agent");
  for (Action a : {Action::kConfigure, Action::kCancelJob, Action::kDrainNode,
                   Action::kReadJobPrivate, Action::kAgentCall}) {
    EXPECT_FALSE(Authorize(kAgent, a, kOwnJob).has_value()) << ActionName(a);
  }
  // Even with uid 0 (the first release's agent tokens).
  Identity root_agent = kAgent;
  root_agent.uid = root_agent.gid = 0;
  EXPECT_FALSE(Authorize(root_agent, Action::kConfigure, kOwnJob).has_value());
  // An agent with no node is nobody's.
  Identity unbound = kAgent;
  unbound.node.clear();
  EXPECT_FALSE(Authorize(unbound, Action::kNodeEvent, Resource{.node = ""}).has_value());
}

TEST(AuthorizeTest, TheControllersCallIsForOneNode) {
  EXPECT_TRUE(Authorize(kControllerCall, Action::kAgentCall, Resource{.node = "node01"}));
  Status s = Authorize(kControllerCall, Action::kAgentCall, Resource{.node = "node02"});
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("for node node01 only"), std::string::npos);
  // Not bound to a node: not a call to any agent.
  EXPECT_FALSE(Authorize(kController, Action::kAgentCall, Resource{.node = "node01"}));
  // A call credential does nothing at the controller.
  EXPECT_FALSE(Authorize(kControllerCall, Action::kCancelJob, kOwnJob));
}

TEST(AuthorizeTest, DenialsNameWhoAndWhat) {
  Status s = Authorize(kUser, Action::kCancelJob, kOtherJob);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error(), (Error{ErrorCode::kPermissionDenied,
                              "user alice may not cancel-job job 43: not the job's user"}));
  s = Authorize(kOperator, Action::kConfigure, Resource{});
  EXPECT_EQ(s.error().message, "operator oscar may not configure: operators may not");
  // A user whose name is empty owns nothing (a job with no user is no one's).
  Identity nameless = kUser;
  nameless.user.clear();
  EXPECT_FALSE(Authorize(nameless, Action::kCancelJob, Resource{.job = JobId(5)}));
}

// Account coordinators (issue 16 item 2): the controller says the caller coordinates the
// job's (or the changed record's) account; only users and operators gain by it, and only the
// coordinator's actions.
TEST(AuthorizeTest, ACoordinatorManagesHerAccountsJobsAndRecordsOnly) {
  Resource coordinated = kOtherJob;  // bob's job, in an account alice coordinates
  coordinated.coordinator = true;
  for (Action a : {Action::kCancelJob, Action::kHoldJob, Action::kReleaseJob, Action::kRequeueJob,
                   Action::kUpdateJob, Action::kManageAccounts}) {
    EXPECT_TRUE(Authorize(kUser, a, coordinated).has_value()) << ActionName(a);
    EXPECT_TRUE(Authorize(kOperator, a, coordinated).has_value()) << ActionName(a);
    EXPECT_FALSE(Authorize(kUser, a, kOtherJob).has_value()) << ActionName(a);
  }
  EXPECT_FALSE(Authorize(kUser, Action::kManageAccounts, Resource{}).has_value());
  // Not what an operator or admin alone may do: QOS and cluster configuration, identities,
  // suspend, top, steps in someone else's allocation, private data.
  for (Action a :
       {Action::kConfigure, Action::kManageIdentities, Action::kSuspendJob, Action::kTopJob,
        Action::kCreateStep, Action::kReadJobPrivate, Action::kDrainNode, Action::kReadAudit}) {
    EXPECT_FALSE(Authorize(kUser, a, coordinated).has_value()) << ActionName(a);
  }
  // Other principals never gain by it.
  EXPECT_FALSE(Authorize(kJob, Action::kCancelJob, coordinated).has_value());
  EXPECT_FALSE(Authorize(kAgent, Action::kManageAccounts, coordinated).has_value());
  EXPECT_FALSE(Authorize(kMetrics, Action::kManageAccounts, coordinated).has_value());
}

}  // namespace
}  // namespace corral::api
