#include "sched/fair_share.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string_view>
#include <tuple>

namespace corral::sched {
namespace {

struct TreeNode {
  std::string name;     // account or user name
  std::string account;  // for a user leaf: its account
  bool is_user = false;
  double shares = 1;
  double usage = 0;
  double lf = 0;  // level fair share among its siblings
  double norm_shares = 0;      // shares over its siblings' total
  double effective_usage = 0;  // usage over its siblings' total
  std::vector<int> children;
};

class FairTree {
 public:
  explicit FairTree(const SchedulerConfig& config) {
    nodes_.push_back(TreeNode{.name = "root"});
    for (const UserConfig& u : config.users) user_shares_[u.name] = u.shares;
    for (const AccountConfig& a : config.accounts) {
      accounts_[a.name] = static_cast<int>(nodes_.size());
      nodes_.push_back(TreeNode{.name = a.name, .shares = static_cast<double>(a.shares)});
    }
    for (const AccountConfig& a : config.accounts) {
      int parent = a.parent.empty() ? 0 : accounts_.at(a.parent);
      nodes_[parent].children.push_back(accounts_.at(a.name));
    }
    for (const AccountConfig& a : config.accounts) {
      for (const std::string& u : a.users) Leaf(a.name, u);
    }
  }

  int Account(const std::string& name) {
    auto it = accounts_.find(std::string_view(name));
    if (it != accounts_.end()) return it->second;
    int idx = static_cast<int>(nodes_.size());
    nodes_.push_back(TreeNode{.name = name, .shares = 1});
    nodes_[0].children.push_back(idx);
    accounts_[name] = idx;
    return idx;
  }

  int Leaf(const std::string& account, const std::string& user) {
    auto it = leaves_.find(std::pair<std::string_view, std::string_view>(account, user));
    if (it != leaves_.end()) return it->second;
    int acct = Account(account);
    int idx = static_cast<int>(nodes_.size());
    auto shares = user_shares_.find(std::string_view(user));
    nodes_.push_back(TreeNode{.name = user,
                              .account = account,
                              .is_user = true,
                              .shares = shares == user_shares_.end() ? 1.0 : shares->second});
    nodes_[acct].children.push_back(idx);
    leaves_.emplace(std::make_pair(account, user), idx);
    return idx;
  }

  void AddUsage(int leaf, double usage) { nodes_[leaf].usage += std::max(0.0, usage); }

  std::vector<FairShareEntry> Rank() {
    SumUsage(0);
    ComputeLevelFairShare(0);
    users_total_ = static_cast<uint32_t>(leaves_.size());
    ranks_.assign(nodes_.size(), 0);
    Visit(nodes_[0].children);
    std::vector<FairShareEntry> out;
    out.reserve(leaves_.size());
    for (const auto& [key, idx] : leaves_) {  // std::map: sorted by (account, user)
      FairShareEntry e;
      e.account = key.first;
      e.user = key.second;
      e.rank = ranks_[idx];
      e.level_fairshare = nodes_[idx].lf;
      e.factor = static_cast<double>(users_total_ - (e.rank - 1)) / users_total_;
      out.push_back(std::move(e));
    }
    return out;
  }

  // `Rank()`, then every node depth first from the root (users before accounts, each by name).
  std::vector<ShareTreeNode> Walk() {
    std::vector<FairShareEntry> ranked = Rank();
    std::vector<ShareTreeNode> out;
    out.reserve(nodes_.size());
    WalkFrom(0, 0, "", ranked, &out);
    return out;
  }

 private:
  void WalkFrom(int idx, uint32_t depth, const std::string& account,
                const std::vector<FairShareEntry>& ranked, std::vector<ShareTreeNode>* out) {
    const TreeNode& n = nodes_[idx];
    ShareTreeNode row{.account = n.is_user ? account : n.name,
                      .user = n.is_user ? n.name : "",
                      .depth = depth,
                      .shares = idx == 0 ? 0 : n.shares,
                      .norm_shares = idx == 0 ? 1 : n.norm_shares,
                      .usage = n.usage,
                      .effective_usage = idx == 0 ? 1 : n.effective_usage,
                      .level_fairshare = n.lf};
    if (n.is_user) {
      FairShareEntry key{.account = account, .user = n.name};
      auto it = std::lower_bound(ranked.begin(), ranked.end(), key, [](const auto& a, const auto& b) {
        return std::tie(a.account, a.user) < std::tie(b.account, b.user);
      });
      if (it != ranked.end() && it->account == account && it->user == n.name) row.factor = it->factor;
    }
    out->push_back(std::move(row));
    std::vector<int> kids = n.children;
    std::sort(kids.begin(), kids.end(), [&](int a, int b) {
      const TreeNode& x = nodes_[a];
      const TreeNode& y = nodes_[b];
      if (x.is_user != y.is_user) return x.is_user;
      return x.name < y.name;
    });
    for (int c : kids) WalkFrom(c, depth + 1, n.is_user ? account : n.name, ranked, out);
  }

  double SumUsage(int idx) {
    TreeNode& n = nodes_[idx];
    for (int c : n.children) n.usage += SumUsage(c);
    return n.usage;
  }

  void ComputeLevelFairShare(int idx) {
    const std::vector<int>& kids = nodes_[idx].children;
    double shares = 0, usage = 0;
    for (int c : kids) {
      shares += nodes_[c].shares;
      usage += nodes_[c].usage;
    }
    for (int c : kids) {
      TreeNode& k = nodes_[c];
      double s = k.shares / shares;
      double u = usage > 0 ? k.usage / usage : 0;
      k.lf = u > 0 ? s / u : std::numeric_limits<double>::infinity();
      k.norm_shares = s;
      k.effective_usage = u;
      ComputeLevelFairShare(c);
    }
  }

  void Visit(std::vector<int> group) {
    std::sort(group.begin(), group.end(), [&](int a, int b) {
      const TreeNode& x = nodes_[a];
      const TreeNode& y = nodes_[b];
      if (x.lf != y.lf) return x.lf > y.lf;
      if (x.is_user != y.is_user) return x.is_user;
      if (x.name != y.name) return x.name < y.name;
      return a < b;
    });
    size_t i = 0;
    while (i < group.size()) {
      size_t j = i;
      while (j < group.size() && nodes_[group[j]].lf == nodes_[group[i]].lf) ++j;
      // A tie group of users shares one rank. With accounts in it, the children of those accounts
      // and the group's users are merged and ranked together (Slurm's tie rule).
      bool any_account = false;
      for (size_t k = i; k < j; ++k) any_account |= !nodes_[group[k]].is_user;
      if (!any_account) {
        uint32_t rank = ranked_ + 1;
        for (size_t k = i; k < j; ++k) ranks_[group[k]] = rank;
        ranked_ += static_cast<uint32_t>(j - i);
      } else {
        std::vector<int> merged;
        for (size_t k = i; k < j; ++k) {
          const TreeNode& n = nodes_[group[k]];
          if (n.is_user) {
            merged.push_back(group[k]);
          } else {
            merged.insert(merged.end(), n.children.begin(), n.children.end());
          }
        }
        if (!merged.empty()) Visit(std::move(merged));
      }
      i = j;
    }
  }

  std::vector<TreeNode> nodes_;
  // (account, user) order, looked up without copying the names.
  struct PairLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      const int c = std::string_view(a.first).compare(std::string_view(b.first));
      return c != 0 ? c < 0 : std::string_view(a.second) < std::string_view(b.second);
    }
  };
  std::map<std::string, int, std::less<>> accounts_;
  std::map<std::pair<std::string, std::string>, int, PairLess> leaves_;
  std::map<std::string, double, std::less<>> user_shares_;
  std::vector<uint32_t> ranks_;  // by node; 0 = not ranked
  uint32_t ranked_ = 0;
  uint32_t users_total_ = 0;
};

}  // namespace

std::vector<FairShareEntry> ComputeFairTree(
    const SchedulerConfig& config, const std::vector<AssociationUsage>& usage,
    const std::vector<std::pair<std::string, std::string>>& extra) {
  FairTree tree(config);
  for (const AssociationUsage& u : usage)
    tree.AddUsage(tree.Leaf(u.account, u.user), u.decayed_usage);
  for (const auto& [account, user] : extra) tree.Leaf(account, user);
  return tree.Rank();
}

std::vector<ShareTreeNode> ComputeShareTree(
    const SchedulerConfig& config, const std::vector<AssociationUsage>& usage,
    const std::vector<std::pair<std::string, std::string>>& extra) {
  FairTree tree(config);
  for (const AssociationUsage& u : usage)
    tree.AddUsage(tree.Leaf(u.account, u.user), u.decayed_usage);
  for (const auto& [account, user] : extra) tree.Leaf(account, user);
  return tree.Walk();
}

}  // namespace corral::sched
