#include "sched/fair_share.h"

#include <limits>

#include <gtest/gtest.h>

namespace corral::sched {
namespace {

SchedulerConfig Tree() {
  SchedulerConfig c = DefaultSchedulerConfig();
  c.accounts = {
      AccountConfig{.name = "research", .shares = 60},
      AccountConfig{.name = "nlp", .parent = "research", .shares = 2, .users = {"alice", "bob"}},
      AccountConfig{.name = "vision", .parent = "research", .shares = 1, .users = {"carol"}},
      AccountConfig{.name = "product", .shares = 40, .users = {"dave"}}};
  c.users = {UserConfig{.name = "bob", .shares = 3}};
  return c;
}

const FairShareEntry& Find(const std::vector<FairShareEntry>& v, const std::string& a,
                           const std::string& u) {
  for (const FairShareEntry& e : v) {
    if (e.account == a && e.user == u) return e;
  }
  static FairShareEntry none;
  ADD_FAILURE() << "no entry " << a << "/" << u;
  return none;
}

TEST(FairShareTest, WithoutUsageEveryoneTiesAtTheTop) {
  std::vector<FairShareEntry> v = ComputeFairTree(Tree(), {});
  ASSERT_EQ(v.size(), 4u);
  for (const FairShareEntry& e : v) {
    EXPECT_EQ(e.rank, 1u) << e.account << "/" << e.user;
    EXPECT_DOUBLE_EQ(e.factor, 1.0);
    EXPECT_EQ(e.level_fairshare, std::numeric_limits<double>::infinity());
  }
  // Sorted by (account, user).
  EXPECT_EQ(v[0].account, "nlp");
  EXPECT_EQ(v[0].user, "alice");
  EXPECT_EQ(v[3].account, "vision");
}

TEST(FairShareTest, RanksByLevelFairShareDepthFirst) {
  // research used 3x its share against product; inside research, nlp used little.
  std::vector<AssociationUsage> usage = {
      {.account = "nlp", .user = "alice", .decayed_usage = 100},
      {.account = "nlp", .user = "bob", .decayed_usage = 100},
      {.account = "vision", .user = "carol", .decayed_usage = 800},
      {.account = "product", .user = "dave", .decayed_usage = 100},
  };
  std::vector<FairShareEntry> v = ComputeFairTree(Tree(), usage);
  // Top level: research S=0.6 U=1000/1100, LF=0.66; product S=0.4 U=100/1100, LF=4.4 -> dave first.
  EXPECT_EQ(Find(v, "product", "dave").rank, 1u);
  EXPECT_DOUBLE_EQ(Find(v, "product", "dave").factor, 1.0);
  // In research: nlp S=2/3 U=0.2 LF=3.33; vision S=1/3 U=0.8 LF=0.42 -> nlp's users next.
  // In nlp: bob has 3 shares to alice's 1 with the same usage -> bob before alice.
  EXPECT_EQ(Find(v, "nlp", "bob").rank, 2u);
  EXPECT_EQ(Find(v, "nlp", "alice").rank, 3u);
  EXPECT_EQ(Find(v, "vision", "carol").rank, 4u);
  EXPECT_DOUBLE_EQ(Find(v, "vision", "carol").factor, 0.25);
  EXPECT_DOUBLE_EQ(Find(v, "nlp", "bob").level_fairshare, 0.75 / 0.5);
}

TEST(FairShareTest, UnknownAssociationsJoinTheTree) {
  std::vector<FairShareEntry> v = ComputeFairTree(
      Tree(), {{.account = "adhoc", .user = "eve", .decayed_usage = 5}}, {{"nlp", "frank"}});
  EXPECT_EQ(v.size(), 6u);
  // adhoc (1 share at the top, with all the usage) comes last.
  EXPECT_EQ(Find(v, "adhoc", "eve").rank, 6u);
  EXPECT_EQ(Find(v, "nlp", "frank").rank, 1u);
}

TEST(FairShareTest, DeterministicForTheSameInput) {
  std::vector<AssociationUsage> usage = {{.account = "nlp", .user = "alice", .decayed_usage = 7}};
  EXPECT_EQ(ComputeFairTree(Tree(), usage), ComputeFairTree(Tree(), usage));
}

// sshare's view: the whole tree depth first, a node's users before its sub-accounts, with
// shares and usage normalised among siblings, and the users' factors as `ComputeFairTree`'s.
TEST(FairShareTest, ShareTreeListsEveryNodeWithNormalisedSharesAndUsage) {
  std::vector<AssociationUsage> usage = {
      {.account = "nlp", .user = "alice", .decayed_usage = 100},
      {.account = "vision", .user = "carol", .decayed_usage = 300},
      {.account = "product", .user = "dave", .decayed_usage = 400}};
  std::vector<ShareTreeNode> t = ComputeShareTree(Tree(), usage);
  std::vector<std::string> order;
  for (const ShareTreeNode& n : t) {
    order.push_back(std::to_string(n.depth) + ":" + n.account + "/" + n.user);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"0:root/", "1:product/", "2:product/dave",
                                             "1:research/", "2:nlp/", "3:nlp/alice",
                                             "3:nlp/bob", "2:vision/", "3:vision/carol"}));
  EXPECT_DOUBLE_EQ(t[0].usage, 800);
  EXPECT_DOUBLE_EQ(t[0].norm_shares, 1);
  const ShareTreeNode& research = t[3];
  EXPECT_DOUBLE_EQ(research.shares, 60);
  EXPECT_DOUBLE_EQ(research.norm_shares, 0.6);
  EXPECT_DOUBLE_EQ(research.usage, 400);
  EXPECT_DOUBLE_EQ(research.effective_usage, 0.5);
  EXPECT_DOUBLE_EQ(research.level_fairshare, 1.2);
  EXPECT_DOUBLE_EQ(research.factor, 0);  // accounts have no factor
  const ShareTreeNode& bob = t[6];
  EXPECT_DOUBLE_EQ(bob.shares, 3);
  EXPECT_DOUBLE_EQ(bob.norm_shares, 0.75);
  EXPECT_DOUBLE_EQ(bob.usage, 0);
  EXPECT_EQ(bob.level_fairshare, std::numeric_limits<double>::infinity());
  std::vector<FairShareEntry> ranked = ComputeFairTree(Tree(), usage);
  for (const ShareTreeNode& n : t) {
    if (n.user.empty()) continue;
    EXPECT_DOUBLE_EQ(n.factor, Find(ranked, n.account, n.user).factor) << n.account << "/" << n.user;
  }
}

}  // namespace
}  // namespace corral::sched
