#include "cli/slurm/sreport.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <tuple>

#include "cli/slurm/internal/text.h"
#include "core/strings.h"

namespace corral::slurm {
namespace {

using internal::Pad;

constexpr std::string_view kDivider =
    "--------------------------------------------------------------------------------\n";

struct Column {
  std::string name;
  int width;
};

bool IsPer(ReportUnit u) {
  return u == ReportUnit::kSecPer || u == ReportUnit::kMinPer || u == ReportUnit::kHourPer;
}

std::string Percent(double value, double total) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", total > 0 ? value * 100 / total : 0.0);
  return buf;
}

// A TRES-seconds figure in `unit`; percentages of `total`.
std::string TimeValue(double seconds, double total, ReportUnit unit) {
  const uint64_t s = seconds > 0 ? static_cast<uint64_t>(seconds) : 0;
  uint64_t v = s;
  switch (unit) {
    case ReportUnit::kMinutes:
    case ReportUnit::kMinPer:
      v = s / 60;
      break;
    case ReportUnit::kHours:
    case ReportUnit::kHourPer:
      v = s / 3600;
      break;
    case ReportUnit::kPercent:
      return Percent(seconds, total);
    default:
      break;
  }
  if (IsPer(unit)) return std::to_string(v) + "(" + Percent(seconds, total) + ")";
  return std::to_string(v);
}

// Energy in joules, not scaled by the time unit; percentages of `total`.
std::string EnergyValue(double joules, double total, ReportUnit unit) {
  const uint64_t j = joules > 0 ? static_cast<uint64_t>(joules) : 0;
  if (unit == ReportUnit::kPercent) return Percent(joules, total);
  if (IsPer(unit)) return std::to_string(j) + "(" + Percent(joules, total) + ")";
  return std::to_string(j);
}

std::string UnitName(ReportUnit u) {
  switch (u) {
    case ReportUnit::kSeconds:
      return "Seconds";
    case ReportUnit::kMinutes:
      return "Minutes";
    case ReportUnit::kHours:
      return "Hours";
    case ReportUnit::kPercent:
      return "Percentage of Total";
    case ReportUnit::kSecPer:
      return "Seconds/Percentage of Total";
    case ReportUnit::kMinPer:
      return "Minutes/Percentage of Total";
    case ReportUnit::kHourPer:
      return "Hours/Percentage of Total";
  }
  return "Minutes";
}

// "Usage reported in CPU Minutes", "... in TRES Hours", "... in Percentage of Total".
std::string UsageLine(const SreportOptions& o) {
  if (o.unit == ReportUnit::kPercent) return "Usage reported in Percentage of Total\n";
  return "Usage reported in " + std::string(o.tres.empty() ? "CPU " : "TRES ") + UnitName(o.unit) +
         "\n";
}

class Table {
 public:
  Table(const SreportOptions& o, std::vector<Column> columns)
      : o_(o), columns_(std::move(columns)) {}

  void Header(std::string* out) const {
    if (o_.no_header) return;
    std::vector<std::string> names;
    for (const Column& c : columns_) names.push_back(c.name);
    Line(names, out);
    if (o_.parsable || o_.parsable2) return;
    for (const Column& c : columns_) *out += std::string(c.width, '-') + " ";
    *out += "\n";
  }

  void Line(const std::vector<std::string>& values, std::string* out) const {
    for (size_t i = 0; i < values.size() && i < columns_.size(); ++i) {
      if (o_.parsable2) {
        if (i > 0) *out += "|";
        *out += values[i];
      } else if (o_.parsable) {
        *out += values[i] + "|";
      } else {
        *out += Pad(values[i], columns_[i].width, true, true) + " ";
      }
    }
    *out += "\n";
  }

 private:
  const SreportOptions& o_;
  std::vector<Column> columns_;
};

void Title(const api::UsageReport& r, const SreportOptions& o, const std::string& what, bool secs,
           std::string* out) {
  if (o.no_header) return;
  *out += kDivider;
  *out += what + " " + internal::LocalTime(r.start, o.utc_offset_seconds) + " - " +
          internal::LocalTime(r.end - Seconds(1), o.utc_offset_seconds);
  if (secs) *out += " (" + std::to_string(internal::Seconds(r.end - r.start)) + " secs)";
  *out += "\n";
}

// The used figure of `tres` in `row`.
double Used(const api::UsageRow& row, const std::string& tres) {
  if (tres == "gres/gpu") return row.gpu_seconds;
  if (tres == "energy") return row.energy_joules;
  return row.cpu_seconds;
}

// The cluster's reported figure of `tres`: capacity over the window (energy: what was used).
double Reported(const api::UsageReport& r, const std::string& tres) {
  if (tres == "gres/gpu") return r.reported_gpu_seconds;
  if (tres == "energy") return r.total.energy_joules;
  return r.reported_cpu_seconds;
}

std::string Value(double v, double total, const std::string& tres, ReportUnit unit) {
  return tres == "energy" ? EnergyValue(v, total, unit) : TimeValue(v, total, unit);
}

std::vector<std::string> TresList(const SreportOptions& o) {
  return o.tres.empty() ? std::vector<std::string>{"cpu"} : o.tres;
}

std::string ClusterUtilization(const api::UsageReport& r, const SreportOptions& o) {
  std::string out;
  Title(r, o, "Cluster Utilization", false, &out);
  if (!o.no_header) {
    out += UsageLine(o);
    out += kDivider;
  }
  const int w = IsPer(o.unit) ? 17 : 8;
  std::vector<Column> cols = {{"Cluster", 9}};
  if (!o.tres.empty()) cols.push_back({"TRES Name", 14});
  for (const char* name : {"Allocated", "Down", "PLND Down", "Idle", "Planned", "Reported"}) {
    cols.push_back({name, w});
  }
  Table t(o, cols);
  t.Header(&out);
  for (const std::string& tres : TresList(o)) {
    const double reported = Reported(r, tres);
    const double alloc = Used(r.total, tres);
    std::vector<std::string> v = {o.cluster};
    if (!o.tres.empty()) v.push_back(tres);
    for (double x : {alloc, 0.0, 0.0, std::max(0.0, reported - alloc), 0.0, reported}) {
      v.push_back(Value(x, reported, tres, o.unit));
    }
    t.Line(v, &out);
  }
  return out;
}

std::string ProperName(const SreportOptions& o, const std::string& user) {
  return o.proper_name && !user.empty() ? o.proper_name(user) : "";
}

// AccountUtilizationByUser, UserUtilizationByAccount and TopUsage.
std::string UserReports(const api::UsageReport& r, const SreportOptions& o) {
  std::string out;
  const bool by_account = o.report == SreportReport::kAccountUtilizationByUser;
  const bool top = o.report == SreportReport::kUserTopUsage;
  std::string what = by_account ? "Cluster/Account/User Utilization"
                     : top      ? "Top " + std::to_string(o.top_count) + " Users"
                                : "Cluster/User/Account Utilization";
  Title(r, o, what, true, &out);
  if (!o.no_header) {
    out += UsageLine(o);
    out += kDivider;
  }
  const int w = IsPer(o.unit) ? 17 : 8;
  std::vector<Column> cols = {{"Cluster", 9}};
  if (by_account) {
    cols.insert(cols.end(), {{"Account", 15}, {"Login", 9}, {"Proper Name", 15}});
  } else {
    cols.insert(cols.end(), {{"Login", 9}, {"Proper Name", 15}, {"Account", 15}});
  }
  if (!o.tres.empty()) cols.push_back({"TRES Name", 14});
  cols.push_back({"Used", w});
  if (o.tres.empty()) cols.push_back({"Energy", w});
  Table t(o, cols);
  t.Header(&out);

  auto line = [&](const api::UsageRow& row, bool account_row) {
    for (const std::string& tres : TresList(o)) {
      std::string login = account_row ? "" : row.user;
      std::string proper = account_row ? "" : ProperName(o, row.user);
      std::vector<std::string> v = {o.cluster};
      if (by_account) {
        v.insert(v.end(), {row.account, login, proper});
      } else {
        v.insert(v.end(), {login, proper, row.account});
      }
      if (!o.tres.empty()) v.push_back(tres);
      v.push_back(Value(Used(row, tres), Reported(r, tres), tres, o.unit));
      if (o.tres.empty()) {
        v.push_back(EnergyValue(row.energy_joules, r.total.energy_joules, o.unit));
      }
      t.Line(v, &out);
    }
  };
  if (by_account) {
    // The root (everything), then each account and its users.
    api::UsageRow root = r.total;
    root.account = "root";
    line(root, true);
    if (o.parents.empty()) {
      for (const api::UsageRow& a : r.accounts) {
        line(a, true);
        for (const api::UsageRow& u : r.users) {
          if (u.account == a.account) line(u, false);
        }
      }
      return out;
    }
    for (const AccountLine& a : RollUpAccounts(r, o.parents)) {
      api::UsageRow row = a.row;
      if (o.tree) row.account = std::string(a.depth, ' ') + row.account;
      line(row, true);
      for (const api::UsageRow& u : r.users) {
        if (u.account == a.row.account) line(u, false);
      }
    }
    return out;
  }
  std::vector<api::UsageRow> rows = r.users;
  const std::string first = TresList(o).front();
  std::stable_sort(rows.begin(), rows.end(), [&](const api::UsageRow& a, const api::UsageRow& b) {
    double x = Used(a, first), y = Used(b, first);
    if (x != y) return x > y;
    return std::tie(a.user, a.account) < std::tie(b.user, b.account);
  });
  if (top && rows.size() > o.top_count) rows.resize(o.top_count);
  for (const api::UsageRow& u : rows) line(u, false);
  return out;
}

std::string JobSizes(const api::UsageReport& r, const SreportOptions& o) {
  std::string out;
  const std::string tres = TresList(o).front();
  Title(r, o, "Job Sizes", true, &out);
  if (!o.no_header) {
    if (!o.tres.empty()) out += "TRES type is " + tres + "\n";
    out += "Time reported in " + UnitName(o.unit) + "\n";
    out += kDivider;
  }
  const std::string noun = o.tres.empty() ? "CPUs" : "TRES";
  std::vector<Column> cols = {{"Cluster", 9}, {"Account", 9}};
  const int w = IsPer(o.unit) ? 20 : 13;
  uint32_t low = 0;
  for (uint32_t g : o.grouping) {
    cols.push_back({std::to_string(low) + "-" + std::to_string(g - 1) + " " + noun, w});
    low = g;
  }
  cols.push_back({">= " + std::to_string(low) + " " + noun, w});
  cols.push_back({"% of cluster", 12});
  Table t(o, cols);
  t.Header(&out);
  std::map<std::string, std::vector<double>> by_account;
  double total = 0;
  for (const api::UsageRow& job : r.jobs) {
    const uint32_t size = tres == "gres/gpu" ? job.gpus : job.cpus;
    size_t bin = 0;
    while (bin < o.grouping.size() && size >= o.grouping[bin]) ++bin;
    std::vector<double>& bins = by_account[job.account];
    bins.resize(o.grouping.size() + 1);
    const double used = Used(job, tres);
    bins[bin] += used;
    total += used;
  }
  for (const auto& [account, bins] : by_account) {
    std::vector<std::string> v = {o.cluster, account};
    double sum = 0;
    for (double b : bins) {
      v.push_back(Value(b, total, tres, o.unit));
      sum += b;
    }
    v.push_back(Percent(sum, total));
    t.Line(v, &out);
  }
  return out;
}

// Whether `word` names `full` as sreport takes it: any case, at least `min` letters of it.
bool Names(std::string_view word, std::string_view full, size_t min) {
  if (word.size() < min || word.size() > full.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(word[i])) !=
        std::tolower(static_cast<unsigned char>(full[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<AccountLine> RollUpAccounts(const api::UsageReport& r,
                                        const std::map<std::string, std::string>& parents) {
  auto parent_of = [&](const std::string& a) {
    auto it = parents.find(a);
    return it == parents.end() ? std::string() : it->second;
  };
  std::map<std::string, api::UsageRow> sums;  // every account with usage in its subtree
  for (const api::UsageRow& a : r.accounts) {
    std::string at = a.account;
    for (size_t depth = 0; !at.empty() && depth <= parents.size(); ++depth) {
      api::UsageRow& s = sums[at];
      s.account = at;
      s.jobs += a.jobs;
      s.cpu_seconds += a.cpu_seconds;
      s.gpu_seconds += a.gpu_seconds;
      s.energy_joules += a.energy_joules;
      at = parent_of(at);
    }
  }
  std::map<std::string, std::vector<std::string>> children;  // sorted by the map
  for (const auto& [name, row] : sums) children[parent_of(name)].push_back(name);
  std::vector<AccountLine> out;
  std::function<void(const std::string&, size_t)> walk = [&](const std::string& at, size_t depth) {
    for (const std::string& c : children[at]) {
      out.push_back({sums[c], depth});
      if (depth <= parents.size()) walk(c, depth + 1);
    }
  };
  walk("", 1);
  return out;
}

Result<ReportUnit> ParseReportUnit(std::string_view text) {
  struct Name {
    std::string_view name;
    size_t min;
    ReportUnit unit;
  };
  constexpr Name kNames[] = {
      {"secper", 4, ReportUnit::kSecPer},   {"minper", 4, ReportUnit::kMinPer},
      {"hourper", 5, ReportUnit::kHourPer}, {"seconds", 1, ReportUnit::kSeconds},
      {"minutes", 1, ReportUnit::kMinutes}, {"hours", 1, ReportUnit::kHours},
      {"percent", 1, ReportUnit::kPercent},
  };
  for (const Name& n : kNames) {
    if (Names(text, n.name, n.min)) return n.unit;
  }
  return InvalidArgument("invalid time format: " + std::string(text));
}

Result<SreportReport> ParseSreportReport(std::string_view type, std::string_view name) {
  if (Names(type, "cluster", 1)) {
    if (Names(name, "utilization", 2)) return SreportReport::kClusterUtilization;
    if (Names(name, "accountutilizationbyuser", 2) || Names(name, "acctutil", 8) ||
        Names(name, "accountutil", 11)) {
      return SreportReport::kAccountUtilizationByUser;
    }
    if (Names(name, "userutilizationbyaccount", 2) || Names(name, "userutil", 8)) {
      return SreportReport::kUserUtilizationByAccount;
    }
  } else if (Names(type, "user", 1)) {
    if (Names(name, "topusage", 1)) return SreportReport::kUserTopUsage;
  } else if (Names(type, "job", 1)) {
    if (Names(name, "sizesbyaccount", 1)) return SreportReport::kJobSizesByAccount;
  }
  return InvalidArgument("not a report Corral's sreport provides: " + std::string(type) + " " +
                         std::string(name) +
                         " (cluster Utilization|AccountUtilizationByUser|"
                         "UserUtilizationByAccount, user TopUsage, job SizesByAccount)");
}

Result<std::vector<std::string>> ParseReportTres(std::string_view list) {
  std::vector<std::string> out;
  for (const std::string& item : SplitNonEmpty(list, ',')) {
    std::string t = Lower(item);
    if (t == "gpu" || t == "gres/gpu") {
      out.push_back("gres/gpu");
    } else if (t == "cpu" || t == "energy") {
      out.push_back(t);
    } else {
      return InvalidArgument("tres " + item +
                             ": not a TRES Corral reports (cpu, gres/gpu, energy)");
    }
  }
  if (out.empty()) return InvalidArgument("tres: empty list");
  return out;
}

std::string RenderSreport(const api::UsageReport& report, const SreportOptions& options) {
  switch (options.report) {
    case SreportReport::kClusterUtilization:
      return ClusterUtilization(report, options);
    case SreportReport::kJobSizesByAccount:
      return JobSizes(report, options);
    default:
      return UserReports(report, options);
  }
}

}  // namespace corral::slurm
