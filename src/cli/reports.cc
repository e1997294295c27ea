// `sreport`, `sshare`, `sprio` and `corral report usage` on top of Corral's API
// (docs/governance.md, docs/slurm.md): read their options, ask the controller for the usage
// report, the fair-share tree or the priorities, filter, and print with the renderers of
// cli/slurm/sreport.h and cli/slurm/sshare.h.
#include <pwd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "api/governance_codec.h"
#include "api/report_codec.h"
#include "api/json_codec.h"
#include "cli/internal/gpu_report.h"
#include "cli/internal/query_common.h"
#include "cli/jobstats.h"
#include "cli/slurm/begin_time.h"
#include "cli/slurm/sreport.h"
#include "cli/slurm/sshare.h"
#include "core/clock.h"
#include "core/strings.h"

namespace corral::cli {
namespace {

std::string ClusterName() {
  const char* c = std::getenv("SLURM_CLUSTER_NAME");
  return c != nullptr && *c != '\0' ? c : "corral";
}

// The user's full name from the passwd database (the GECOS field up to its first comma).
std::string ProperName(const std::string& user) {
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwnam_r(user.c_str(), &pw, buf, sizeof buf, &found) != 0 || found == nullptr ||
      pw.pw_gecos == nullptr) {
    return "";
  }
  std::string gecos = pw.pw_gecos;
  return gecos.substr(0, gecos.find(','));
}

// sacct-style time words ("now-2days", "2026-11-01", "today") as the local past.
Result<Timestamp> PastTime(const std::string& text) {
  return slurm::ParsePastTime(text, SystemClock::Get().Now(), internal::LocalUtcOffset());
}

constexpr const char* kSreportUsage =
    "Usage: sreport [-t unit] [-T tres] [-P|-p] [-n] [--json] REPORT [start=T] [end=T]\n"
    "             [topcount=N] [grouping=N,N,...] [users=LIST] [accounts=LIST]\n"
    "  REPORT: cluster Utilization | cluster AccountUtilizationByUser |\n"
    "          cluster UserUtilizationByAccount | user TopUsage | job SizesByAccount\n"
    "Corral's sreport: docs/slurm.md\n";

// The value of option `word` (`-tX`, `-t X`, `--time=X`, `--time X`); advances `*i`.
bool OptionValue(const std::vector<std::string>& w, size_t* i, const char* letter,
                 const char* name, std::string* value) {
  const std::string& a = w[*i];
  const std::string short_form = std::string("-") + letter;
  const std::string long_form = std::string("--") + name;
  if (a == short_form || a == long_form) {
    if (*i + 1 >= w.size()) return false;
    *value = w[++*i];
    return true;
  }
  if (a.rfind(long_form + "=", 0) == 0) {
    *value = a.substr(long_form.size() + 1);
    return true;
  }
  if (a.size() > 2 && a.rfind(short_form, 0) == 0 && a[1] != '-') {
    *value = a.substr(2);
    return true;
  }
  return false;
}

// The account tree (account -> parent, "" = under the root), so that sub-accounts roll up
// into their parents as in Slurm's sreport; empty (the accounts listed flat) when there are no
// accounts or none are readable.
std::map<std::string, std::string> AccountParents(Client& client) {
  std::map<std::string, std::string> parents;
  if (auto body = client.GovernanceGet("accounts", "")) {
    if (auto list = api::DecodeAccountList(*body)) {
      for (const AccountConfig& a : *list) parents[a.name] = a.parent;
    }
  }
  return parents;
}

}  // namespace

namespace internal {

int RunSreport(int argc, char** argv) {
  const std::string prog = "sreport";
  const std::vector<std::string> w = Words(argc, argv);
  slurm::SreportOptions o;
  o.cluster = ClusterName();
  o.utc_offset_seconds = LocalUtcOffset();
  o.proper_name = ProperName;
  bool json = false;
  std::vector<std::string> words, users, accounts;
  std::string start_text, end_text, value;
  for (size_t i = 1; i < w.size(); ++i) {
    const std::string& a = w[i];
    if (a == "-h" || a == "--help" || a == "--usage") {
      std::printf("%s", kSreportUsage);
      return 0;
    }
    if (a == "-V" || a == "--version") {
      PrintVersion();
      return 0;
    }
    if (a == "-P" || a == "--parsable2") {
      o.parsable2 = true;
    } else if (a == "-p" || a == "--parsable") {
      o.parsable = true;
    } else if (a == "-n" || a == "--noheader") {
      o.no_header = true;
    } else if (a == "--json") {
      json = true;
    } else if (a == "-a" || a == "--all_clusters" || a == "-v" || a == "--verbose" || a == "-Q" ||
               a == "--quiet") {
      // accepted: one cluster, nothing more to say
    } else if (OptionValue(w, &i, "t", "time", &value)) {
      auto unit = slurm::ParseReportUnit(value);
      if (Failed(prog, unit)) return 1;
      o.unit = *unit;
    } else if (OptionValue(w, &i, "T", "tres", &value)) {
      auto tres = slurm::ParseReportTres(value);
      if (Failed(prog, tres)) return 1;
      o.tres = *tres;
    } else if (OptionValue(w, &i, "M", "cluster", &value)) {
      // accepted: one cluster
    } else if (!a.empty() && a[0] == '-') {
      PrintError(prog, "unknown option " + a + "\n" + kSreportUsage);
      return 1;
    } else if (auto eq = a.find('='); eq != std::string::npos) {
      const std::string key = Lower(a.substr(0, eq)), v = a.substr(eq + 1);
      if (key == "start") {
        start_text = v;
      } else if (key == "end") {
        end_text = v;
      } else if (key == "topcount") {
        std::optional<uint64_t> n = ParseUint(v);
        if (!n || *n == 0 || *n > 100000) {
          PrintError(prog, "topcount=" + v + ": expected a positive number");
          return 1;
        }
        o.top_count = static_cast<uint32_t>(*n);
      } else if (key == "grouping") {
        o.grouping.clear();
        for (const std::string& g : SplitNonEmpty(v, ',')) {
          std::optional<uint64_t> n = ParseUint(g);
          if (!n || *n == 0 || *n > UINT32_MAX ||
              (!o.grouping.empty() && *n <= o.grouping.back())) {
            PrintError(prog, "grouping=" + v + ": expected increasing positive numbers");
            return 1;
          }
          o.grouping.push_back(static_cast<uint32_t>(*n));
        }
      } else if (key == "users" || key == "user") {
        users = UserNames(v);
      } else if (key == "accounts" || key == "account") {
        accounts = SplitNonEmpty(v, ',');
      } else if (key == "tree") {
        o.tree = true;
      } else if (key == "clusters" || key == "cluster" || key == "format") {
        // accepted: one cluster; Corral's fixed columns
      } else {
        PrintError(prog, "unknown option " + a + " (docs/slurm.md lists sreport's)");
        return 1;
      }
    } else if (EqualsIgnoreCase(a, "tree")) {
      o.tree = true;  // account names indented by depth
    } else {
      words.push_back(a);
    }
  }
  if (words.size() != 2) {
    std::fprintf(stderr, "%s", kSreportUsage);
    return 1;
  }
  auto report = slurm::ParseSreportReport(words[0], words[1]);
  if (Failed(prog, report)) return 1;
  o.report = *report;
  // Slurm's default window: yesterday, midnight to midnight (local time).
  auto today = PastTime("today");
  if (Failed(prog, today)) return 1;
  Timestamp start = *today - Seconds(86400), end = *today;
  if (!start_text.empty()) {
    auto t = PastTime(start_text);
    if (Failed(prog, t)) return 1;
    start = *t;
  }
  if (!end_text.empty()) {
    auto t = PastTime(end_text);
    if (Failed(prog, t)) return 1;
    end = *t;
  }
  if (end <= start) {
    PrintError(prog, "end time must be after start time");
    return 1;
  }
  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  auto r = client->UsageReport(start, end, o.report == slurm::SreportReport::kJobSizesByAccount);
  if (Failed(prog, r)) return 1;
  if (o.report == slurm::SreportReport::kAccountUtilizationByUser) {
    o.parents = AccountParents(*client);
  }
  if (!users.empty() || !accounts.empty()) {
    auto keep = [&](const api::UsageRow& row) {
      return (users.empty() || Contains(users, row.user)) &&
             (accounts.empty() || Contains(accounts, row.account));
    };
    std::erase_if(r->users, [&](const api::UsageRow& row) { return !keep(row); });
    std::erase_if(r->jobs, [&](const api::UsageRow& row) { return !keep(row); });
    std::erase_if(r->accounts, [&](const api::UsageRow& row) {
      return !accounts.empty() && !Contains(accounts, row.account);
    });
  }
  if (json) {
    std::printf("%s\n", api::EncodeUsageReport(*r).c_str());
    return 0;
  }
  std::fputs(slurm::RenderSreport(*r, o).c_str(), stdout);
  return 0;
}

int RunSshare(int argc, char** argv) {
  const std::string prog = "sshare";
  const std::vector<std::string> w = Words(argc, argv);
  slurm::SshareOptions o;
  bool all = false, json = false, users_only = false;
  std::vector<std::string> users, accounts;
  std::string value;
  for (size_t i = 1; i < w.size(); ++i) {
    const std::string& a = w[i];
    if (a == "-h" || a == "--help" || a == "--usage") {
      std::printf(
          "Usage: sshare [-a] [-A accounts] [-u users] [-U] [-l] [-P|-p] [-n] [-o fields] "
          "[--json]\nCorral's sshare: docs/slurm.md\n");
      return 0;
    }
    if (a == "-V" || a == "--version") {
      PrintVersion();
      return 0;
    }
    if (a == "-a" || a == "--all") {
      all = true;
    } else if (a == "-l" || a == "--long") {
      o.long_list = true;
    } else if (a == "-P" || a == "--parsable2") {
      o.parsable2 = true;
    } else if (a == "-p" || a == "--parsable") {
      o.parsable = true;
    } else if (a == "-n" || a == "--noheader") {
      o.no_header = true;
    } else if (a == "-U" || a == "--Users") {
      users_only = true;
    } else if (a == "--json") {
      json = true;
    } else if (a == "-v" || a == "--verbose") {
    } else if (OptionValue(w, &i, "A", "accounts", &value)) {
      accounts = SplitNonEmpty(value, ',');
    } else if (OptionValue(w, &i, "u", "users", &value)) {
      users = UserNames(value);
      if (Contains(users, "all")) {
        users.clear();
        all = true;
      }
    } else if (OptionValue(w, &i, "o", "format", &value)) {
      o.format = value;
    } else if (OptionValue(w, &i, "M", "clusters", &value)) {
    } else {
      PrintError(prog, "unknown option " + a + " (see sshare --help)");
      return 1;
    }
  }
  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  auto r = client->ShareReport();
  if (Failed(prog, r)) return 1;
  double root_usage = r->rows.empty() ? 0 : r->rows.front().raw_usage;
  // As Slurm's sshare: every account, and the caller's own user rows unless -a or -u.
  if (users.empty() && !all) users = {Me()};
  std::vector<api::ShareRow> rows;
  for (const api::ShareRow& row : r->rows) {
    if (!accounts.empty() && row.depth > 0 && !Contains(accounts, row.account)) continue;
    if (row.user.empty() ? users_only : (!users.empty() && !Contains(users, row.user))) continue;
    rows.push_back(row);
  }
  if (json) {
    std::printf("%s\n", api::EncodeShareReport({rows}).c_str());
    return 0;
  }
  auto text = slurm::RenderSshare(rows, root_usage, o);
  if (Failed(prog, text)) return 1;
  std::fputs(text->c_str(), stdout);
  return 0;
}

int RunSprio(int argc, char** argv) {
  const std::string prog = "sprio";
  const std::vector<std::string> w = Words(argc, argv);
  slurm::SprioOptions o;
  o.cluster = ClusterName();
  bool json = false;
  std::vector<std::string> users, job_args, partitions;
  std::string value;
  for (size_t i = 1; i < w.size(); ++i) {
    const std::string& a = w[i];
    if (a == "--help" || a == "--usage") {
      std::printf(
          "Usage: sprio [-j jobs] [-u users] [-p partitions] [-l] [-n] [-w] [-h] [-o format] "
          "[--json]\nCorral's sprio: docs/slurm.md\n");
      return 0;
    }
    if (a == "-V" || a == "--version") {
      PrintVersion();
      return 0;
    }
    if (a == "-l" || a == "--long") {
      o.long_list = true;
    } else if (a == "-n" || a == "--norm") {
      o.normalized = true;
    } else if (a == "-w" || a == "--weights") {
      o.weights = true;
    } else if (a == "-h" || a == "--noheader") {
      o.no_header = true;
    } else if (a == "--json") {
      json = true;
    } else if (a == "-v" || a == "--verbose") {
    } else if (OptionValue(w, &i, "j", "jobs", &value)) {
      for (const std::string& j : SplitNonEmpty(value, ',')) job_args.push_back(j);
    } else if (OptionValue(w, &i, "u", "user", &value)) {
      users = UserNames(value);
      o.users_given = true;
    } else if (OptionValue(w, &i, "p", "partition", &value)) {
      partitions = SplitNonEmpty(value, ',');
    } else if (OptionValue(w, &i, "o", "format", &value)) {
      o.format = value;
    } else if (OptionValue(w, &i, "M", "cluster", &value)) {
    } else {
      PrintError(prog, "unknown option " + a + " (see sprio --help)");
      return 1;
    }
  }
  std::vector<JobId> jobs;
  for (const std::string& j : job_args) {
    auto id = ParseJobIdArg(j);
    if (!id) {
      PrintError(prog, "Invalid job id: " + j);
      return 1;
    }
    jobs.push_back(*id);
  }
  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  auto weights = client->PriorityWeights();
  if (Failed(prog, weights)) return 1;
  std::vector<api::PriorityInfo> list;
  if (!o.weights) {
    auto all = client->Priorities(JobId(0));
    if (Failed(prog, all)) return 1;
    for (api::PriorityInfo& p : *all) {
      if (!jobs.empty() && std::find(jobs.begin(), jobs.end(), p.job) == jobs.end()) continue;
      if (!users.empty() && !Contains(users, p.user)) continue;
      if (!partitions.empty() && !Contains(partitions, p.job_partition)) continue;
      list.push_back(std::move(p));
    }
  }
  if (json) {
    std::printf("%s\n", o.weights ? api::EncodePriorityWeights(*weights).c_str()
                                  : api::EncodePriorityList(list).c_str());
    return 0;
  }
  auto text = slurm::RenderSprio(list, *weights, o);
  if (Failed(prog, text)) return 1;
  std::fputs(text->c_str(), stdout);
  return 0;
}

}  // namespace internal

int UsageReportCommand(Client& client, const std::string& since, const std::string& until,
                       bool jobs, bool json) {
  const Timestamp now = SystemClock::Get().Now();
  Timestamp start = now - Seconds(86400), end = now;
  if (!since.empty()) {
    auto t = PastTime(since);
    if (!t) {
      std::fprintf(stderr, "corral report: --since %s: %s\n", since.c_str(),
                   t.error().message.c_str());
      return 2;
    }
    start = *t;
  }
  if (!until.empty()) {
    auto t = PastTime(until);
    if (!t) {
      std::fprintf(stderr, "corral report: --until %s: %s\n", until.c_str(),
                   t.error().message.c_str());
      return 2;
    }
    end = *t;
  }
  if (end <= start) {
    std::fprintf(stderr, "corral report: --until must be after --since\n");
    return 2;
  }
  auto r = client.UsageReport(start, end, jobs);
  if (!r) {
    std::fprintf(stderr, "corral: error: %s\n", r.error().message.c_str());
    return 1;
  }
  if (json) {
    std::printf("%s\n", api::EncodeUsageReport(*r).c_str());
  } else {
    std::fputs(internal::FormatUsageReport(*r, AccountParents(client)).c_str(), stdout);
  }
  return 0;
}

}  // namespace corral::cli
