#include "cli/slurm/job_ids.h"

#include <cctype>
#include <optional>

#include "core/array_spec.h"
#include "core/strings.h"

namespace corral::slurm {
namespace {

bool Number(std::string_view s, uint64_t* out) {
  std::optional<uint64_t> n = s.size() > 18 ? std::nullopt : ParseUint(s);
  if (n) *out = *n;
  return n.has_value();
}

}  // namespace

Result<std::vector<JobIdSpec>> ParseJobIdList(std::string_view text) {
  std::vector<JobIdSpec> out;
  size_t i = 0;
  while (i <= text.size()) {
    // Items are separated by commas outside brackets.
    size_t j = i;
    int depth = 0;
    while (j < text.size() && (depth > 0 || text[j] != ',')) {
      if (text[j] == '[') ++depth;
      if (text[j] == ']') --depth;
      ++j;
    }
    std::string_view item = text.substr(i, j - i);
    i = j + 1;
    if (item.empty()) {
      if (j >= text.size()) break;
      continue;
    }
    auto bad = [&] { return InvalidArgument("Invalid job id specified: " + std::string(item)); };
    JobIdSpec spec;
    size_t us = item.find('_');
    if (!Number(item.substr(0, us), &spec.job_id)) return bad();
    if (us != std::string_view::npos) {
      std::string_view tasks = item.substr(us + 1);
      if (tasks == "*") {
        spec.all_tasks = true;
      } else {
        if (tasks.size() >= 2 && tasks.front() == '[' && tasks.back() == ']') {
          tasks = tasks.substr(1, tasks.size() - 2);
        }
        auto parsed = ParseArraySpec(tasks, 0xffffffffu);
        if (!parsed.has_value() || parsed->max_running != 0) return bad();
        spec.array_tasks = std::move(parsed->indices);
      }
    }
    out.push_back(std::move(spec));
  }
  if (out.empty()) return InvalidArgument("Invalid job id specified: " + std::string(text));
  return out;
}

std::string SubmittedMessage(uint64_t job_id, bool parsable, std::string_view cluster) {
  if (!parsable) return "Submitted batch job " + std::to_string(job_id) + "\n";
  std::string out = std::to_string(job_id);
  if (!cluster.empty()) out += ";" + std::string(cluster);
  return out + "\n";
}

}  // namespace corral::slurm
