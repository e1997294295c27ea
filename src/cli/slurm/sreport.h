// sreport's reports, rendered as Slurm 22.05's sreport prints them, from Corral's usage report
// (api/report_messages.h): `cluster Utilization`, `cluster AccountUtilizationByUser`,
// `cluster UserUtilizationByAccount`, `user TopUsage` and `job SizesByAccount`, with -t
// (minutes, hours, seconds, percent, minper, hourper, secper), -T (cpu, gres/gpu, energy),
// -P/--parsable2, -p/--parsable, -n/--noheader, topcount= and grouping=.
//
// Layout as sreport's: an 80-dash title block ("Cluster Utilization START - END", END shown
// one second before the window's end; "(N secs)" on the account and user reports), the unit
// line, then right-aligned columns each followed by a blank, values cut to their width.
// Values are TRES-seconds divided by the unit, truncated (Slurm's integer division);
// percentages "12.34%" of the reported (cluster) time, or, for the account and user reports,
// of the total used. Without -T the account and user reports show CPU time and an Energy
// column (joules); with -T a "TRES Name" column and one row per TRES.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/report_messages.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::slurm {

enum class SreportReport {
  kClusterUtilization,
  kAccountUtilizationByUser,
  kUserUtilizationByAccount,
  kUserTopUsage,
  kJobSizesByAccount,
};

// -t values.
enum class ReportUnit { kSeconds, kMinutes, kHours, kPercent, kSecPer, kMinPer, kHourPer };

struct SreportOptions {
  SreportReport report = SreportReport::kClusterUtilization;
  ReportUnit unit = ReportUnit::kMinutes;
  std::vector<std::string> tres;    // -T: "cpu", "gres/gpu", "energy"; empty = cpu, no column
  bool parsable = false;            // -p
  bool parsable2 = false;           // -P
  bool no_header = false;           // -n
  uint32_t top_count = 10;          // topcount=
  std::vector<uint32_t> grouping = {50, 250, 500, 1000};  // grouping= (job SizesByAccount)
  std::string cluster = "corral";
  int64_t utc_offset_seconds = 0;
  std::function<std::string(const std::string& user)> proper_name;  // "" when unknown
  // The account tree (account -> parent, "" = under the root), for AccountUtilizationByUser:
  // each account's row then holds its sub-accounts' usage too, and the accounts come in tree
  // order (an account, its users, then its sub-accounts), as Slurm's. Empty = flat.
  std::map<std::string, std::string> parents;
  bool tree = false;  // `tree`: account names indented by their depth
};

// Parses -t's value as sreport does (any case, a prefix of the name). Returns kInvalidArgument
// ("invalid time format: X") otherwise.
Result<ReportUnit> ParseReportUnit(std::string_view text);

// Parses "cluster utilization", "cluster AccountUtilizationByUser" (and sreport's short forms:
// any case, "Utilization" as "util", "AccountUtilizationByUser" as "acctutil"... as listed in
// docs/slurm.md) into the report. Returns kInvalidArgument naming the words otherwise.
Result<SreportReport> ParseSreportReport(std::string_view type, std::string_view name);

// Checks and normalises -T's list ("gpu" is "gres/gpu"). Returns kInvalidArgument naming an
// unsupported TRES.
Result<std::vector<std::string>> ParseReportTres(std::string_view list);

// An account's line of a usage report rolled up over the account tree: its usage and its
// sub-accounts', at its depth (1 = under the root).
struct AccountLine {
  api::UsageRow row;
  size_t depth = 1;
};
// The accounts of `r` and their ancestors, in tree order (depth first, siblings by name),
// each with its subtree's usage summed, as sreport's AccountUtilizationByUser (and `corral
// report usage`) print them. An account `parents` (account -> parent, "" = under the root)
// does not know is under the root.
std::vector<AccountLine> RollUpAccounts(const api::UsageReport& r,
                                        const std::map<std::string, std::string>& parents);

// The report's text. `report` holds per-job rows for job SizesByAccount.
std::string RenderSreport(const api::UsageReport& report, const SreportOptions& options);

}  // namespace corral::slurm
