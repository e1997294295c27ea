// `sacctmgr add|remove coordinator` and the coordinators of `show account withcoord`
// (sacctmgr.h, "Account coordinators"; issue 16 item 2). Texts as Slurm 22.05's sacctmgr.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "api/governance_codec.h"
#include "cli/client.h"
#include "cli/sacctmgr.h"
#include "core/strings.h"

namespace corral::cli {

std::string InheritedCoordinators(const std::vector<AccountConfig>& all,
                                  const std::string& account) {
  std::map<std::string, const AccountConfig*> by_name;
  for (const AccountConfig& a : all) by_name[a.name] = &a;
  std::set<std::string> coords;
  std::string at = account;
  for (size_t steps = 0; steps <= all.size() && !at.empty(); ++steps) {
    auto it = by_name.find(at);
    if (it == by_name.end()) break;
    coords.insert(it->second->coordinators.begin(), it->second->coordinators.end());
    at = it->second->parent;
  }
  return Join(std::vector<std::string>(coords.begin(), coords.end()), ",");
}

namespace internal {
namespace {

int Problem(const std::string& what, const Error& e) {
  std::fprintf(stderr, " Problem %s coordinator: %s%s\n", what.c_str(),
               e.code == ErrorCode::kPermissionDenied ? "Access/permission denied: " : "",
               e.message.c_str());
  return 1;
}

}  // namespace

int SacctmgrCoordinator(Client& client, const std::string& verb,
                        const std::vector<std::string>& accounts,
                        const std::vector<std::string>& users, bool immediate, bool quiet) {
  if (accounts.empty()) {
    std::fprintf(stderr, " You need to specify an account list here.\n");
    return 1;
  }
  if (users.empty()) {
    std::fprintf(stderr, " You need to specify a user list here.\n");
    return 1;
  }
  // Slurm names a missing account or user before anything is asked.
  for (const auto& [kind, names] : {std::pair{"account", &accounts}, std::pair{"user", &users}}) {
    for (const std::string& n : *names) {
      auto r = client.GovernanceGet(std::string(kind) + "s", n);
      if (!r && r.error().code == ErrorCode::kNotFound) {
        std::fprintf(stderr, " You specified a non-existent %s '%s'.\n", kind, n.c_str());
        return 1;
      }
      if (!r) return Problem(verb == "add" ? "adding" : "removing", r.error());
    }
  }
  if (verb == "add") {
    if (!quiet) {
      std::printf(" Adding Coordinator User(s)\n");
      for (const std::string& u : users) std::printf("  %s\n", u.c_str());
      std::printf(" To Account(s) and all sub-accounts\n");
      for (const std::string& a : accounts) std::printf("  %s\n", a.c_str());
    }
    if (!ConfirmCommit(immediate)) return 1;
    for (const std::string& a : accounts) {
      auto r = client.AddCoordinators(a, users);
      if (!r) return Problem("adding", r.error());
    }
    return 0;
  }
  if (!quiet) {
    std::printf(" Removing Coordinators with user name\n");
    for (const std::string& u : users) std::printf("  %s\n", u.c_str());
    std::printf(" From Account(s)\n");
    for (const std::string& a : accounts) std::printf("  %s\n", a.c_str());
  }
  // Only the (user, account) pairs that are direct coordinators are removed; none: Slurm's
  // "Nothing removed".
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string& a : accounts) {
    auto body = client.GovernanceGet("accounts", a);
    if (!body) return Problem("removing", body.error());
    auto account = api::DecodeAccount(*body);
    if (!account) return Problem("removing", account.error());
    for (const std::string& u : users) {
      const auto& c = account->coordinators;
      if (std::find(c.begin(), c.end(), u) != c.end()) pairs.emplace_back(u, a);
    }
  }
  if (pairs.empty()) {
    std::printf(" Nothing removed\n");
    return 1;
  }
  if (!ConfirmCommit(immediate)) return 1;
  for (const auto& [u, a] : pairs) {
    auto r = client.RemoveCoordinator(a, u);
    if (!r) return Problem("removing", r.error());
  }
  if (!quiet) {
    std::printf(" Removed Coordinators (sub accounts not listed)...\n");
    for (const auto& [u, a] : pairs)
      std::printf("  U = %-9.9s A = %-10.10s\n", u.c_str(), a.c_str());
  }
  return 0;
}

}  // namespace internal
}  // namespace corral::cli
