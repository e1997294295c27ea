#include "cli/slurm/sinfo.h"

#include <algorithm>
#include <map>
#include <set>

#include "cli/slurm/format_spec.h"
#include "cli/slurm/internal/text.h"
#include "core/hostlist.h"
#include "core/strings.h"

namespace corral::slurm {
namespace {

using internal::Pad;

// A line: a partition (null in the -R view) and its nodes.
struct Group {
  const api::PartitionInfo* part = nullptr;
  std::vector<const api::NodeInfo*> nodes;
};

struct Ctx {
  const SinfoOptions& opt;
};

struct Field {
  char letter;
  const char* long_name;
  const char* header;
  bool counting;  // sums over the nodes of a line instead of splitting lines
  std::string (*value)(const Group&, const Ctx&);
};

const api::NodeInfo& First(const Group& g) { return *g.nodes.front(); }

std::string CompactState(const api::NodeInfo& n) {
  std::string s(NodeStateSinfoName(n.state));
  if (n.state != NodeState::kPoweredDown && !n.node.responding) s += '*';
  return s;
}

std::string LongState(const api::NodeInfo& n) {
  std::string s;
  switch (n.state) {
    case NodeState::kUnknown:
      s = "unknown";
      break;
    case NodeState::kIdle:
      s = "idle";
      break;
    case NodeState::kMixed:
      s = "mixed";
      break;
    case NodeState::kAllocated:
      s = "allocated";
      break;
    case NodeState::kDraining:
      s = "draining";
      break;
    case NodeState::kDrained:
      s = "drained";
      break;
    case NodeState::kDown:
      s = "down";
      break;
    case NodeState::kPoweredDown:
      return "idle~";
  }
  if (!n.node.responding) s += '*';
  return s;
}

// Slurm's node state numbers (MIXED 5, ALLOCATED 3, IDLE 2, DOWN 1, UNKNOWN 0): lines are
// sorted by them, highest first.
int StateRank(NodeState s) {
  switch (s) {
    case NodeState::kMixed:
      return 5;
    case NodeState::kAllocated:
    case NodeState::kDraining:
      return 3;
    case NodeState::kIdle:
    case NodeState::kDrained:
    case NodeState::kPoweredDown:
      return 2;
    case NodeState::kDown:
      return 1;
    case NodeState::kUnknown:
      return 0;
  }
  return 0;
}

bool Busy(const api::NodeInfo& n) {
  return n.state == NodeState::kMixed || n.state == NodeState::kAllocated ||
         n.state == NodeState::kDraining;
}
bool Other(const api::NodeInfo& n) {
  return n.state == NodeState::kDown || n.state == NodeState::kDrained ||
         n.state == NodeState::kUnknown || n.state == NodeState::kDraining;
}

std::string FormatLimit(::corral::Duration d, const char* unlimited) {
  if (d == kUnlimited) return unlimited;
  return internal::ShortDuration(internal::Seconds(d));
}

std::string PartName(const Group& g, bool star) {
  if (g.part == nullptr) return "n/a";
  return g.part->partition.name + (star && g.part->partition.is_default ? "*" : "");
}

std::string Gres(const api::NodeInfo& n) {
  const auto& gpus = n.node.inventory.gpus;
  if (gpus.empty()) return "(null)";
  std::string model = gpus.front().model;
  for (const auto& g : gpus) {
    if (g.model != model) model.clear();
  }
  return "gpu:" + (model.empty() ? "" : model + ":") + std::to_string(gpus.size());
}

std::string Reason(const api::NodeInfo& n) {
  return n.node.reason.empty() ? "none" : n.node.reason;
}

const Field kFields[] = {
    {'a', "Available", "AVAIL", false,
     [](const Group& g, const Ctx&) {
       return std::string(g.part == nullptr ? "n/a" : (g.part->partition.up ? "up" : "down"));
     }},
    {'A', "NodeAI", "NODES(A/I)", true,
     [](const Group& g, const Ctx&) {
       size_t a = 0, i = 0;
       for (auto* n : g.nodes) {
         if (Busy(*n))
           ++a;
         else if (!Other(*n))
           ++i;
       }
       return std::to_string(a) + "/" + std::to_string(i);
     }},
    {'b', "features_act", "ACTIVE_FEATURES", false,
     [](const Group& g, const Ctx&) {
       std::string s;
       for (const auto& f : First(g).node.inventory.features) s += (s.empty() ? "" : ",") + f;
       return s.empty() ? std::string("(null)") : s;
     }},
    {'c', "CPUs", "CPUS", false,
     [](const Group& g, const Ctx&) { return std::to_string(First(g).node.inventory.cpus); }},
    {'C', "CPUsState", "CPUS(A/I/O/T)", true,
     [](const Group& g, const Ctx&) {
       uint64_t a = 0, i = 0, o = 0, t = 0;
       for (auto* n : g.nodes) {
         uint32_t cpus = n->node.inventory.cpus;
         t += cpus;
         if (Other(*n) && !Busy(*n)) {
           o += cpus;
         } else {
           a += n->alloc_cpus;
           i += cpus > n->alloc_cpus ? cpus - n->alloc_cpus : 0;
         }
       }
       return std::to_string(a) + "/" + std::to_string(i) + "/" + std::to_string(o) + "/" +
              std::to_string(t);
     }},
    {'d', "Disk", "TMP_DISK", false, [](const Group&, const Ctx&) { return std::string("0"); }},
    {'D', "Nodes", "NODES", true,
     [](const Group& g, const Ctx&) { return std::to_string(g.nodes.size()); }},
    {'e', "FreeMem", "FREE_MEM", false,
     [](const Group&, const Ctx&) { return std::string("N/A"); }},
    {'E', "Reason", "REASON", false, [](const Group& g, const Ctx&) { return Reason(First(g)); }},
    {'f', "Features", "AVAIL_FEATURES", false,
     [](const Group& g, const Ctx&) {
       std::string s;
       for (const auto& f : First(g).node.inventory.features) s += (s.empty() ? "" : ",") + f;
       return s.empty() ? std::string("(null)") : s;
     }},
    {'F', "NodeAIOT", "NODES(A/I/O/T)", true,
     [](const Group& g, const Ctx&) {
       size_t a = 0, i = 0, o = 0;
       for (auto* n : g.nodes) {
         if (Busy(*n))
           ++a;
         else if (Other(*n))
           ++o;
         else
           ++i;
       }
       return std::to_string(a) + "/" + std::to_string(i) + "/" + std::to_string(o) + "/" +
              std::to_string(g.nodes.size());
     }},
    {'g', "Groups", "GROUPS", false, [](const Group&, const Ctx&) { return std::string("all"); }},
    {'G', "Gres", "GRES", false, [](const Group& g, const Ctx&) { return Gres(First(g)); }},
    {'h', "OverSubscribe", "OVERSUBSCRIBE", false,
     [](const Group&, const Ctx&) { return std::string("NO"); }},
    {'H', "TimeStamp", "TIMESTAMP", false,
     [](const Group& g, const Ctx& c) {
       Timestamp t = First(g).node.reason_time;
       return t == Timestamp{} ? std::string("Unknown")
                               : internal::LocalTime(t, c.opt.utc_offset_seconds);
     }},
    {'l', "Time", "TIMELIMIT", false,
     [](const Group& g, const Ctx&) {
       return g.part == nullptr ? std::string("n/a")
                                : FormatLimit(g.part->partition.max_time, "infinite");
     }},
    {'L', "DefaultTime", "DEFAULTTIME", false,
     [](const Group& g, const Ctx&) {
       return g.part == nullptr ? std::string("n/a")
                                : FormatLimit(g.part->partition.default_time, "n/a");
     }},
    {'m', "Memory", "MEMORY", false,
     [](const Group& g, const Ctx&) { return std::to_string(First(g).node.inventory.memory_mb); }},
    {'n', "NodeHost", "HOSTNAMES", true,
     [](const Group& g, const Ctx&) {
       std::vector<std::string> names;
       for (auto* n : g.nodes) names.push_back(n->node.inventory.name);
       return CompressHostList(names);
     }},
    {'N', "NodeList", "NODELIST", true,
     [](const Group& g, const Ctx&) {
       std::vector<std::string> names;
       for (auto* n : g.nodes) names.push_back(n->node.inventory.name);
       return CompressHostList(names);
     }},
    {'O', "CPUsLoad", "CPU_LOAD", false,
     [](const Group&, const Ctx&) { return std::string("N/A"); }},
    {'p', "PriorityTier", "PRIO_TIER", false,
     [](const Group& g, const Ctx&) {
       return g.part == nullptr ? std::string("n/a")
                                : std::to_string(g.part->partition.priority_tier);
     }},
    {'P', "Partition", "PARTITION", false,
     [](const Group& g, const Ctx&) { return PartName(g, true); }},
    {'r', "Root", "ROOT", false, [](const Group&, const Ctx&) { return std::string("no"); }},
    {'R', "PartitionName", "PARTITION", false,
     [](const Group& g, const Ctx&) { return PartName(g, false); }},
    {'s', "Size", "JOB_SIZE", false,
     [](const Group& g, const Ctx&) {
       if (g.part == nullptr) return std::string("n/a");
       uint32_t max = g.part->partition.max_nodes_per_job;
       return "1-" + (max == 0 ? std::string("infinite") : std::to_string(max));
     }},
    {'t', "StateCompact", "STATE", false,
     [](const Group& g, const Ctx&) { return CompactState(First(g)); }},
    {'T', "StateLong", "STATE", false,
     [](const Group& g, const Ctx&) { return LongState(First(g)); }},
    {'u', "User", "USER", false, [](const Group&, const Ctx&) { return std::string("Unknown"); }},
    {'U', "UserLong", "USER", false,
     [](const Group&, const Ctx&) { return std::string("Unknown"); }},
    {'w', "Weight", "WEIGHT", false, [](const Group&, const Ctx&) { return std::string("1"); }},
    {'X', "Sockets", "SOCKETS", false,
     [](const Group& g, const Ctx&) { return std::to_string(First(g).node.inventory.cpus); }},
    {'Y', "Cores", "CORES", false, [](const Group&, const Ctx&) { return std::string("1"); }},
    {'z', "SocketCoreThread", "S:C:T", false,
     [](const Group& g, const Ctx&) {
       return std::to_string(First(g).node.inventory.cpus) + ":1:1";
     }},
    {'Z', "Threads", "THREADS", false, [](const Group&, const Ctx&) { return std::string("1"); }},
};

const Field* ByLetter(char c) { return FieldByLetter(kFields, c); }
const Field* ByName(std::string_view name) { return FieldByName(kFields, name); }

using Item = FormatColumn<Field>;

std::string Line(const std::vector<Item>& items, const Group* g, const Ctx& c) {
  std::string line;
  for (const Item& it : items) {
    if (it.field == nullptr) {
      line += it.literal;
      continue;
    }
    std::string v = g == nullptr ? it.field->header : it.field->value(*g, c);
    bool is_nodelist = it.field->letter == 'N';
    line += Pad(v, it.width, it.right, !is_nodelist || g == nullptr);
    line += it.suffix;
  }
  line += '\n';
  return line;
}

}  // namespace

RenderResult RenderSinfo(const std::vector<api::PartitionInfo>& partitions,
                         const std::vector<api::NodeInfo>& nodes, const SinfoOptions& options) {
  RenderResult out;
  Ctx c{options};
  std::map<std::string, const api::NodeInfo*> by_name;
  for (const auto& n : nodes) by_name[n.node.inventory.name] = &n;

  // The view: its format, and which columns size themselves to the data.
  std::vector<Item> items;
  bool fit_part = false, fit_nodes = false;
  auto parse = [&](const std::string& format, FormatSyntax syntax, const char* invalid) {
    return BindFormat<Field>(format, syntax, ByLetter, ByName, invalid, &out.warnings);
  };
  constexpr const char* kInvalidJob = "sinfo: error: Invalid job format specification: ";
  if (!options.long_format.empty()) {
    items = parse(options.long_format, FormatSyntax::kColon, kInvalidJob);
  } else if (!options.format.empty()) {
    items = parse(options.format, FormatSyntax::kPercent,
                  "sinfo: error: Invalid node format specification: ");
  } else {
    std::string f;
    if (options.summarize) {
      f = "partition:9 ,available:.5 ,time:.10 ,nodeaiot:.16 ,nodelist:0";
      fit_part = true;
    } else if (options.node_oriented) {
      f = options.long_output
              ? "nodelist:0 ,nodes:.6 ,partition:.9 ,statelong:.11 ,cpus:4 ,socketcorethread:.8 "
                ",memory:.6 ,disk:.8 ,weight:.6 ,features:.8 ,reason:20"
              : "nodelist:0 ,nodes:.6 ,partition:.9 ,statecompact:6";
      fit_part = fit_nodes = true;
    } else if (options.list_reasons) {
      f = options.long_output ? "reason:20 ,userlong:12 ,timestamp:19 ,statecompact:6 ,nodelist:0"
                              : "reason:20 ,user:9 ,timestamp:19 ,nodelist:0";
    } else {
      f = options.long_output
              ? "partition:9 ,available:.5 ,time:.10 ,size:.10 ,root:.4 ,oversubscribe:.8 "
                ",groups:.10 ,nodes:.6 ,statelong:.11 ,nodelist:0"
              : "partition:9 ,available:.5 ,time:.10 ,nodes:.6 ,statecompact:.6 ,nodelist:0";
      fit_part = true;
    }
    items = parse(f, FormatSyntax::kColon, kInvalidJob);
  }

  // Build the lines.
  std::vector<Group> groups;
  auto key_of = [&](const Group& g) {
    std::string key;
    for (const Item& it : items) {
      if (it.field != nullptr && !it.field->counting) key += it.field->value(g, c) + '\x1f';
    }
    return key;
  };
  if (options.list_reasons) {
    std::set<std::string> seen;
    std::map<std::string, size_t> index;
    for (const auto& n : nodes) {
      bool listed = n.state == NodeState::kDown || n.state == NodeState::kDrained ||
                    n.state == NodeState::kDraining;
      if (!listed || !seen.insert(n.node.inventory.name).second) continue;
      Group one{nullptr, {&n}};
      std::string key = key_of(one);
      auto it = index.find(key);
      if (it == index.end()) {
        index[key] = groups.size();
        groups.push_back(one);
      } else {
        groups[it->second].nodes.push_back(&n);
      }
    }
  } else if (options.node_oriented) {
    std::vector<std::pair<std::string, Group>> lines;
    for (const auto& p : partitions) {
      for (const auto& name : p.partition.nodes) {
        auto it = by_name.find(name);
        if (it != by_name.end()) lines.push_back({name, Group{&p, {it->second}}});
      }
    }
    std::stable_sort(lines.begin(), lines.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& l : lines) groups.push_back(l.second);
  } else {
    for (const auto& p : partitions) {
      std::vector<Group> part_groups;
      std::map<std::string, size_t> index;
      for (const auto& name : p.partition.nodes) {
        auto found = by_name.find(name);
        if (found == by_name.end()) continue;
        Group one{&p, {found->second}};
        std::string key = key_of(one);
        auto it = index.find(key);
        if (it == index.end()) {
          index[key] = part_groups.size();
          part_groups.push_back(one);
        } else {
          part_groups[it->second].nodes.push_back(found->second);
        }
      }
      if (part_groups.empty()) {
        // A partition without nodes still gets its line (Slurm: 0 nodes, "n/a").
        continue;
      }
      std::stable_sort(part_groups.begin(), part_groups.end(), [](const Group& a, const Group& b) {
        return StateRank(First(a).state) > StateRank(First(b).state);
      });
      for (auto& g : part_groups) groups.push_back(std::move(g));
    }
  }

  // Slurm's "#" widths: the longest partition name (with '*') or node list, at least 9. Only
  // the views' own formats have them (and all their fields are known: `it.field` is set).
  size_t part_width = 9, node_width = 9;
  for (const Group& g : groups) {
    if (g.part != nullptr) part_width = std::max(part_width, PartName(g, true).size());
    std::vector<std::string> names;
    for (auto* n : g.nodes) names.push_back(n->node.inventory.name);
    node_width = std::max(node_width, CompressHostList(names).size());
  }
  for (auto& it : items) {
    if (fit_part && it.field->letter == 'P') it.width = static_cast<int>(part_width);
    if (fit_nodes && it.field->letter == 'N') it.width = static_cast<int>(node_width);
  }

  if (!options.no_header) {
    if (options.long_output) out.text += CtimeLine(options.now, options.utc_offset_seconds) + "\n";
    out.text += Line(items, nullptr, c);
  }
  for (const Group& g : groups) out.text += Line(items, &g, c);
  return out;
}

}  // namespace corral::slurm
