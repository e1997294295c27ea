#include "sched/internal/constraint.h"

#include <algorithm>

namespace corral::sched::internal {

bool Constraint::Matches(const std::vector<std::string>& node_features) const {
  if (features.empty()) return true;
  auto has = [&](std::string_view f) {
    return std::find(node_features.begin(), node_features.end(), f) != node_features.end();
  };
  if (any) return std::any_of(features.begin(), features.end(), has);
  return std::all_of(features.begin(), features.end(), has);
}

Constraint ParseConstraint(std::string_view text) {
  Constraint c;
  c.any = text.find('|') != std::string_view::npos;
  size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    size_t end = text.find_first_of("&,|", start);
    std::string_view f =
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!f.empty()) c.features.push_back(f);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return c;
}

}  // namespace corral::sched::internal
