#include "cli/slurm/sshare.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "cli/slurm/format_spec.h"
#include "cli/slurm/internal/text.h"
#include "core/strings.h"

namespace corral::slurm {
namespace {

using internal::Pad;

std::string Fixed(double v, const char* format = "%f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// ---- sshare ---------------------------------------------------------------------------------

struct ShareField {
  const char* name;
  int width;  // negative: left-aligned
  std::string (*value)(const api::ShareRow& row, double root_usage);
};

bool IsRoot(const api::ShareRow& r) { return r.depth == 0; }

const ShareField kShareFields[] = {
    {"Account", -20,
     [](const api::ShareRow& r, double) { return std::string(r.depth, ' ') + r.account; }},
    {"User", 10, [](const api::ShareRow& r, double) { return r.user; }},
    {"RawShares", 10,
     [](const api::ShareRow& r, double) {
       return IsRoot(r) ? std::string() : std::to_string(static_cast<uint64_t>(r.raw_shares));
     }},
    {"NormShares", 11,
     [](const api::ShareRow& r, double) { return Fixed(IsRoot(r) ? 0 : r.norm_shares); }},
    {"RawUsage", 11,
     [](const api::ShareRow& r, double) {
       return std::to_string(static_cast<uint64_t>(std::max(0.0, r.raw_usage)));
     }},
    {"NormUsage", 11,
     [](const api::ShareRow& r, double root) {
       if (r.user.empty()) return std::string();
       return Fixed(root > 0 ? r.raw_usage / root : 0);
     }},
    {"EffectvUsage", 13,
     [](const api::ShareRow& r, double) { return Fixed(IsRoot(r) ? 1 : r.effective_usage); }},
    {"FairShare", 10,
     [](const api::ShareRow& r, double) {
       return r.user.empty() ? std::string() : Fixed(r.fairshare);
     }},
    {"LevelFS", 10,
     [](const api::ShareRow& r, double) {
       if (IsRoot(r)) return std::string();
       return r.level_fairshare < 0 ? std::string("inf") : Fixed(r.level_fairshare);
     }},
    {"GrpTRESMins", 30, [](const api::ShareRow&, double) { return std::string(); }},
    {"TRESRunMins", 30, [](const api::ShareRow&, double) { return std::string(); }},
};

constexpr const char* kSshareDefault =
    "Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare";
constexpr const char* kSshareLong =
    "Account,User,RawShares,NormShares,RawUsage,NormUsage,EffectvUsage,FairShare,LevelFS,"
    "GrpTRESMins,TRESRunMins";

// ---- sprio ----------------------------------------------------------------------------------

struct PrioField {
  char letter;
  const char* header;
  std::string (*value)(const api::PriorityInfo& p, const SprioOptions& o);
  std::string (*weight)(const api::PriorityWeights& w);
};

std::string Int(int64_t v) { return std::to_string(v); }
std::string Factor(double v) { return Fixed(v, "%.7f"); }
std::string None(const api::PriorityWeights&) { return ""; }

const PrioField kPrioFields[] = {
    {'a', "AGE", [](const api::PriorityInfo& p, const SprioOptions&) { return Factor(p.age); },
     [](const api::PriorityWeights& w) { return Int(w.age); }},
    {'A', "AGE", [](const api::PriorityInfo& p, const SprioOptions&) { return Int(p.age_points); },
     [](const api::PriorityWeights& w) { return Int(w.age); }},
    {'b', "ASSOC", [](const api::PriorityInfo&, const SprioOptions&) { return Factor(0); },
     [](const api::PriorityWeights&) { return std::string("0"); }},
    {'B', "ASSOC", [](const api::PriorityInfo&, const SprioOptions&) { return Int(0); },
     [](const api::PriorityWeights&) { return std::string("0"); }},
    {'c', "CLUSTER", [](const api::PriorityInfo&, const SprioOptions& o) { return o.cluster; },
     None},
    {'f', "FAIRSHARE",
     [](const api::PriorityInfo& p, const SprioOptions&) { return Factor(p.fairshare); },
     [](const api::PriorityWeights& w) { return Int(w.fairshare); }},
    {'F', "FAIRSHARE",
     [](const api::PriorityInfo& p, const SprioOptions&) { return Int(p.fairshare_points); },
     [](const api::PriorityWeights& w) { return Int(w.fairshare); }},
    {'i', "JOBID", [](const api::PriorityInfo& p, const SprioOptions&) { return p.job.ToString(); },
     [](const api::PriorityWeights&) { return std::string("Weights"); }},
    {'j', "JOBSIZE",
     [](const api::PriorityInfo& p, const SprioOptions&) { return Factor(p.job_size); },
     [](const api::PriorityWeights& w) { return Int(w.job_size); }},
    {'J', "JOBSIZE",
     [](const api::PriorityInfo& p, const SprioOptions&) { return Int(p.job_size_points); },
     [](const api::PriorityWeights& w) { return Int(w.job_size); }},
    {'N', "NICE", [](const api::PriorityInfo& p, const SprioOptions&) { return Int(p.nice); },
     None},
    {'p', "PARTITION",
     [](const api::PriorityInfo& p, const SprioOptions&) { return Factor(p.partition); },
     [](const api::PriorityWeights& w) { return Int(w.partition); }},
    {'P', "PARTITION",
     [](const api::PriorityInfo& p, const SprioOptions&) { return Int(p.partition_points); },
     [](const api::PriorityWeights& w) { return Int(w.partition); }},
    {'q', "QOS",
     [](const api::PriorityInfo& p, const SprioOptions&) { return Factor(p.qos_factor); },
     [](const api::PriorityWeights& w) { return Int(w.qos); }},
    {'Q', "QOS", [](const api::PriorityInfo& p, const SprioOptions&) { return Int(p.qos_points); },
     [](const api::PriorityWeights& w) { return Int(w.qos); }},
    {'r', "PARTITION",
     [](const api::PriorityInfo& p, const SprioOptions&) { return p.job_partition; }, None},
    {'S', "SITE", [](const api::PriorityInfo&, const SprioOptions&) { return Int(0); },
     [](const api::PriorityWeights&) { return std::string("1"); }},
    {'t', "TRES", [](const api::PriorityInfo&, const SprioOptions&) { return std::string(); },
     None},
    {'T', "TRES", [](const api::PriorityInfo&, const SprioOptions&) { return std::string(); },
     [](const api::PriorityWeights&) { return std::string("(null)"); }},
    {'u', "USER", [](const api::PriorityInfo& p, const SprioOptions&) { return p.user; }, None},
    {'y', "PRIORITY",
     [](const api::PriorityInfo& p, const SprioOptions&) {
       // Slurm's normalized priority: the priority over 2^32.
       return Fixed(static_cast<double>(p.priority) / 4294967296.0, "%.14f");
     },
     None},
    {'Y', "PRIORITY", [](const api::PriorityInfo& p, const SprioOptions&) { return Int(p.priority); },
     None},
};

const PrioField* FindPrioField(char letter) {
  for (const PrioField& f : kPrioFields) {
    if (f.letter == letter) return &f;
  }
  return nullptr;
}

}  // namespace

Result<std::string> RenderSshare(const std::vector<api::ShareRow>& rows, double root_usage,
                                 const SshareOptions& options) {
  std::string format = options.format;
  if (format.empty()) format = options.long_list ? kSshareLong : kSshareDefault;
  struct Column {
    const ShareField* field;
    int width;
  };
  std::vector<Column> columns;
  for (const FormatItem& item : ParseFormat(format, FormatSyntax::kSacct)) {
    const ShareField* found = nullptr;
    for (const ShareField& f : kShareFields) {
      if (Lower(f.name) == Lower(item.name)) found = &f;
    }
    if (found == nullptr) return InvalidArgument("Invalid field requested: \"" + item.name + "\"");
    columns.push_back({found, item.width != 0 ? item.width : found->width});
  }
  const bool parsable = options.parsable || options.parsable2;
  auto line = [&](auto value_of) {
    std::string out;
    for (size_t i = 0; i < columns.size(); ++i) {
      std::string v = value_of(*columns[i].field);
      if (parsable) {
        if (i > 0 && options.parsable2) out += "|";
        out += v;
        if (options.parsable) out += "|";
      } else {
        const int w = columns[i].width;
        out += Pad(v, std::abs(w), w > 0, true) + " ";
      }
    }
    return out + "\n";
  };
  std::string out;
  if (!options.no_header) {
    out += line([](const ShareField& f) { return std::string(f.name); });
    if (!parsable) {
      for (const Column& c : columns) out += std::string(std::abs(c.width), '-') + " ";
      out += "\n";
    }
  }
  for (const api::ShareRow& row : rows) {
    out += line([&](const ShareField& f) { return f.value(row, root_usage); });
  }
  return out;
}

std::string SprioDefaultFormat(const SprioOptions& o, const api::PriorityWeights& w) {
  if (o.normalized) {
    if (o.long_list) return "%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t";
    std::string f = "%.15i %9r";
    if (o.users_given) f += " %.8u";
    f += " %10y";
    if (w.age) f += " %10a";
    if (w.fairshare) f += " %10f";
    if (w.job_size) f += " %10j";
    if (w.partition) f += " %10p";
    if (w.qos) f += " %10q";
    return f;
  }
  if (o.long_list) return "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T";
  std::string f = "%.15i %9r";
  if (o.users_given) f += " %.8u";
  f += " %.10Y %.10S";
  if (w.age) f += " %.10A";
  if (w.fairshare) f += " %.10F";
  if (w.job_size) f += " %.10J";
  if (w.partition) f += " %.10P";
  if (w.qos) f += " %.10Q";
  return f;
}

Result<std::string> RenderSprio(const std::vector<api::PriorityInfo>& jobs,
                                const api::PriorityWeights& weights, const SprioOptions& options) {
  std::string format = options.format.empty() ? SprioDefaultFormat(options, weights) : options.format;
  std::vector<FormatItem> items = ParseFormat(format, FormatSyntax::kPercent);
  for (const FormatItem& item : items) {
    if (!item.is_literal && FindPrioField(item.letter) == nullptr) {
      return InvalidArgument("Invalid job format specification: " + std::string(1, item.letter));
    }
  }
  auto line = [&](auto value_of) {
    std::string out;
    for (const FormatItem& item : items) {
      if (item.is_literal) {
        out += item.literal;
        continue;
      }
      const PrioField* f = FindPrioField(item.letter);
      out += item.width == 0 ? value_of(*f) : Pad(value_of(*f), item.width, item.right, true);
      out += item.suffix;
    }
    return out + "\n";
  };
  std::string out;
  if (!options.no_header) out += line([](const PrioField& f) { return std::string(f.header); });
  if (options.weights) {
    out += line([&](const PrioField& f) { return f.weight(weights); });
    return out;
  }
  for (const api::PriorityInfo& p : jobs) {
    out += line([&](const PrioField& f) { return f.value(p, options); });
  }
  return out;
}

}  // namespace corral::slurm
