#include "cli/slurm/dependency.h"

#include <cctype>
#include <chrono>

#include "core/strings.h"

namespace corral::slurm {
namespace {

bool AllDigits(std::string_view s) {
  if (s.empty() || s.size() > 18) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

uint64_t ToNumber(std::string_view s) {
  uint64_t n = 0;
  for (char c : s) n = n * 10 + static_cast<uint64_t>(c - '0');
  return n;
}

}  // namespace

Result<DependencySpec> ParseDependencySpec(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return InvalidArgument("invalid dependency \"" + std::string(text) + "\": " + std::string(why));
  };
  DependencySpec out;
  bool comma = text.find(',') != std::string_view::npos;
  bool question = text.find('?') != std::string_view::npos;
  if (comma && question) return bad("',' and '?' cannot be mixed");
  out.any = question;
  char sep = question ? '?' : ',';
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    std::string_view item =
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    start = end == std::string_view::npos ? text.size() + 1 : end + 1;
    if (item.empty()) return bad("empty item");
    size_t colon = item.find(':');
    std::string_view type = item.substr(0, colon);
    std::string lower = Lower(type);
    DependencyType t;
    if (lower == "singleton") {
      if (colon != std::string_view::npos) return bad("singleton takes no job id");
      out.dependencies.push_back(Dependency{.type = DependencyType::kSingleton});
      continue;
    } else if (lower == "after") {
      t = DependencyType::kAfter;
    } else if (lower == "afterany") {
      t = DependencyType::kAfterAny;
    } else if (lower == "afterok") {
      t = DependencyType::kAfterOk;
    } else if (lower == "afternotok") {
      t = DependencyType::kAfterNotOk;
    } else if (lower == "aftercorr") {
      t = DependencyType::kAfterCorr;
    } else if (lower == "afterburstbuffer" || lower == "expand") {
      return MakeError(ErrorCode::kUnimplemented,
                       "dependency type \"" + std::string(type) + "\" is not supported by Corral");
    } else {
      return bad("unknown dependency type \"" + std::string(type) + "\"");
    }
    if (colon == std::string_view::npos || colon + 1 == item.size()) {
      return bad("\"" + std::string(type) + "\" needs a job id");
    }
    Dependency plain{.type = t};
    std::string_view ids = item.substr(colon + 1);
    size_t s = 0;
    while (s <= ids.size()) {
      size_t e = ids.find(':', s);
      std::string_view id =
          ids.substr(s, e == std::string_view::npos ? std::string_view::npos : e - s);
      s = e == std::string_view::npos ? ids.size() + 1 : e + 1;
      std::string_view delay;
      if (size_t plus = id.find('+'); plus != std::string_view::npos) {
        delay = id.substr(plus + 1);
        id = id.substr(0, plus);
        if (t != DependencyType::kAfter)
          return bad("a delay (+minutes) is only allowed after \"after\"");
        if (!AllDigits(delay) || delay.size() > 9) {
          return bad("bad delay \"" + std::string(delay) + "\"");
        }
      }
      if (id.find('_') != std::string_view::npos) {
        return MakeError(ErrorCode::kUnimplemented,
                         "dependency on array task \"" + std::string(id) +
                             "\" is not supported by Corral: name the task's own job id");
      }
      if (!AllDigits(id)) return bad("bad job id \"" + std::string(id) + "\"");
      if (delay.empty()) {
        plain.jobs.push_back(JobId(ToNumber(id)));
      } else {
        out.dependencies.push_back(Dependency{
            .type = t,
            .jobs = {JobId(ToNumber(id))},
            .delay = std::chrono::duration_cast<Duration>(std::chrono::minutes(ToNumber(delay)))});
      }
    }
    if (!plain.jobs.empty()) out.dependencies.push_back(std::move(plain));
  }
  return out;
}

std::string FormatDependencies(const std::vector<Dependency>& deps, bool any) {
  std::string out;
  for (const Dependency& d : deps) {
    if (!out.empty()) out += any ? '?' : ',';
    out += DependencyTypeName(d.type);
    for (JobId id : d.jobs) {
      out += ':' + id.ToString();
      if (d.delay.count() > 0) {
        out +=
            '+' + std::to_string(std::chrono::duration_cast<std::chrono::minutes>(d.delay).count());
      }
    }
  }
  return out;
}

}  // namespace corral::slurm
