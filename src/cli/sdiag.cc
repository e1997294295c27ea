// `sdiag` on top of Corral's API: GET /api/v1/diag (operators, admins: docs/slurm.md) printed
// by the renderer of cli/slurm/sdiag.h, with its options from one table.
#include "cli/slurm/sdiag.h"

#include <cstdio>

#include "api/diag.h"
#include "cli/internal/query_common.h"

namespace corral::cli::internal {
namespace {

using A = SdiagArgs;
using slurm::ArgKind;

constexpr const char* kUsage =
    "Usage: sdiag [-a] [-i|-t|-T] [--json]\nCorral's sdiag: docs/slurm.md\n";

template <slurm::SdiagSort kSort>
Status SetSort(A& a, const std::string&) {
  a.render.sort = kSort;
  return {};
}

// Refused by name, as the other tables refuse (the figures count from the controller's start;
// one cluster).
Status RefuseReset(A&, const std::string&) {
  return MakeError(ErrorCode::kUnimplemented, "option -r is not supported by Corral");
}

Status RefuseCluster(A&, const std::string&) {
  return MakeError(ErrorCode::kUnimplemented, "option -M is not supported by Corral");
}

constexpr ArgKind kNone = ArgKind::kNone, kReq = ArgKind::kRequired;

constexpr slurm::CommandOption<A> kOptions[] = {
    {"all", 'a', kNone, slurm::Accept<A>, nullptr, "(accepted: every statistic is shown)"},
    {"sort-by-id", 'i', kNone, SetSort<slurm::SdiagSort::kId>, nullptr,
     "sort the requests by route and the users by name"},
    {"sort-by-time", 't', kNone, SetSort<slurm::SdiagSort::kTotalTime>, nullptr,
     "sort by total time"},
    {"sort-by-time2", 'T', kNone, SetSort<slurm::SdiagSort::kAverageTime>, nullptr,
     "sort by average time"},
    {"reset", 'r', kNone, RefuseReset, nullptr,
     "(refused: the figures count from the controller's start)"},
    {"cluster", 'M', kReq, RefuseCluster, "NAME", "(refused: one cluster)"},
    kHelpOption<A>,
    kUsageOption<A>,
    kVersionOption<A>,
    kJsonOption<A>,
};
static_assert(slurm::EveryOptionHasAHandler(kOptions));

}  // namespace

std::span<const slurm::CommandOption<SdiagArgs>> SdiagOptionTable() { return kOptions; }

int RunSdiag(int argc, char** argv) {
  const std::string prog = "sdiag";
  A a;
  slurm::OptionScan scan = slurm::ScanWithTable(SdiagOptionTable(), Words(argc, argv), ":", a);
  if (auto status = ReportScan(prog, scan, a, std::string(kUsage) + "\n",
                               slurm::TableHelp(SdiagOptionTable()))) {
    return *status;
  }
  if (!scan.operands.empty()) {
    std::fprintf(stderr, "sdiag: error: unexpected argument '%s'\n", scan.operands[0].c_str());
    return 1;
  }
  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  auto diag = client->Diag();
  if (!diag) {
    // Slurm's words for a refusal, with Corral's reason.
    if (diag.error().code == ErrorCode::kPermissionDenied) {
      std::fprintf(stderr, "slurm_get_statistics: Access/permission denied (%s)\n",
                   diag.error().message.c_str());
      return 1;
    }
    PrintError(prog, diag.error().message);
    return 1;
  }
  if (a.json) {
    std::printf("%s\n", api::EncodeDiagInfo(*diag).c_str());
    return 0;
  }
  a.render.utc_offset_seconds = LocalUtcOffset();
  std::fputs(slurm::RenderSdiag(*diag, a.render).c_str(), stdout);
  return 0;
}

}  // namespace corral::cli::internal
