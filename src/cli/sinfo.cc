// `sinfo` on top of Corral's API: reads its options (one table), asks the controller for
// partitions and nodes, filters and prints with the renderer of cli/slurm/sinfo.h.
#include "cli/slurm/sinfo.h"

#include <algorithm>
#include <cstdio>

#include "api/json_codec.h"
#include "cli/internal/query_common.h"
#include "core/clock.h"
#include "core/strings.h"

namespace corral::cli::internal {
namespace {

using A = SinfoArgs;
using R = slurm::SinfoOptions;
using slurm::ArgKind;
using slurm::SetList;
using slurm::SetTrue;
using slurm::SetValue;

constexpr const char* kUsage =
    "Usage: sinfo [-adelNRrsv] [-i seconds] [-t states] [-p partition] [-n nodes]\n"
    "             [-S fields] [-o format] [-O Format]\n"
    "Corral's sinfo: docs/slurm.md\n\n";

constexpr ArgKind kNone = ArgKind::kNone, kReq = ArgKind::kRequired;

constexpr slurm::CommandOption<A> kOptions[] = {
    {"all", 'a', kNone, slurm::Accept<A>, nullptr, "(accepted: every partition is shown)"},
    {"dead", 'd', kNone, SetTrue<&A::dead>, nullptr, "nodes that do not respond"},
    {"exact", 'e', kNone, slurm::Accept<A>, nullptr, "(accepted)"},
    {"noheader", 'h', kNone, SetTrue<&A::render, &R::no_header>, nullptr, "no header line"},
    kHelpOption<A>,
    {"iterate", 'i', kReq, slurm::Accept<A>, "SECONDS", "(accepted: printed once)"},
    {"long", 'l', kNone, SetTrue<&A::render, &R::long_output>, nullptr,
     "more columns, and the time first"},
    {"Node", 'N', kNone, SetTrue<&A::render, &R::node_oriented>, nullptr, "one line per node"},
    {"nodes", 'n', kReq, SetNodes<&A::nodes, kInvalidNodeName>, "HOSTS", "these nodes"},
    {"format", 'o', kReq, SetValue<&A::render, &R::format>, "FORMAT",
     "the columns, as \"%9P %.5a %.10l ...\""},
    {"Format", 'O', kReq, SetValue<&A::render, &R::long_format>, "FIELDS",
     "the columns, as \"partition:9,available:.5,...\""},
    {"partition", 'p', kReq, SetList<&A::partitions>, "LIST", "these partitions"},
    {"responding", 'r', kNone, SetTrue<&A::responding>, nullptr, "nodes that respond"},
    {"list-reasons", 'R', kNone, SetTrue<&A::render, &R::list_reasons>, nullptr,
     "why nodes are down or drained"},
    {"summarize", 's', kNone, SetTrue<&A::render, &R::summarize>, nullptr,
     "one line per partition (A/I/O/T counts)"},
    {"sort", 'S', kReq, slurm::Accept<A>, "FIELDS", "(accepted)"},
    {"states", 't', kReq, SetList<&A::states>, "LIST",
     "nodes in these states (idle, mix, alloc, drain, down, ...)"},
    kUsageOption<A>,
    {"verbose", 'v', kNone, slurm::Accept<A>, nullptr, "(accepted)"},
    kVersionOption<A>,
    kJsonOption<A>,
};
static_assert(slurm::EveryOptionHasAHandler(kOptions));

bool NodeStateMatches(const api::NodeInfo& n, const std::string& wanted) {
  std::string w = Lower(wanted);
  if (!w.empty() && w.back() == '*') w.pop_back();
  switch (n.state) {
    case NodeState::kIdle:
      return w == "idle";
    case NodeState::kMixed:
      return w == "mix" || w == "mixed";
    case NodeState::kAllocated:
      return w == "alloc" || w == "allocated";
    case NodeState::kDraining:
      return w == "drng" || w == "draining" || w == "drain";
    case NodeState::kDrained:
      return w == "drain" || w == "drained";
    case NodeState::kDown:
      return w == "down";
    case NodeState::kPoweredDown:
      return w == "powered_down" || w == "power_down" || w == "powerdown";
    case NodeState::kUnknown:
      return w == "unk" || w == "unknown";
  }
  return false;
}

}  // namespace

std::span<const slurm::CommandOption<SinfoArgs>> SinfoOptionTable() { return kOptions; }

int RunSinfo(int argc, char** argv) {
  const std::string prog = "sinfo";
  SinfoArgs a;
  a.render.format = Env("SINFO_FORMAT");
  a.partitions = SplitNonEmpty(Env("SINFO_PARTITION"), ',');
  slurm::OptionScan scan = slurm::ScanWithTable(SinfoOptionTable(), Words(argc, argv), ":", a);
  if (auto status = ReportScan(prog, scan, a, kUsage, slurm::TableHelp(SinfoOptionTable()))) {
    return *status;
  }
  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  auto parts = client->ListPartitions();
  if (Failed(prog, parts)) return 1;
  auto nodes = client->ListNodes();
  if (Failed(prog, nodes)) return 1;
  if (a.json) {
    std::printf("%s\n", api::EncodeNodeInfoList(*nodes).c_str());
    return 0;
  }
  std::vector<api::PartitionInfo> shown_parts;
  for (const auto& p : *parts) {
    if (a.partitions.empty() || Contains(a.partitions, p.partition.name)) shown_parts.push_back(p);
  }
  std::vector<api::NodeInfo> shown_nodes;
  for (const auto& n : *nodes) {
    const std::string& name = n.node.inventory.name;
    if (!a.nodes.empty() && !Contains(a.nodes, name)) continue;
    if (a.responding && !n.node.responding) continue;
    if (a.dead && n.node.responding) continue;
    if (!a.states.empty() &&
        std::none_of(a.states.begin(), a.states.end(),
                     [&](const std::string& s) { return NodeStateMatches(n, s); })) {
      continue;
    }
    shown_nodes.push_back(n);
  }
  a.render.now = SystemClock::Get().Now();
  a.render.utc_offset_seconds = LocalUtcOffset();
  slurm::RenderResult r = slurm::RenderSinfo(shown_parts, shown_nodes, a.render);
  for (const auto& w : r.warnings) std::fprintf(stderr, "%s\n", w.c_str());
  std::fputs(r.text.c_str(), stdout);
  return 0;
}

}  // namespace corral::cli::internal
