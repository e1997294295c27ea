#include "core/array_spec.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "core/strings.h"

namespace corral {
namespace {

bool ParseIndex(std::string_view s, uint64_t* out) {
  // Slurm reads numbers with strtol, which skips leading blanks.
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  std::optional<uint64_t> n = s.size() > 12 ? std::nullopt : ParseUint(s);
  if (n) *out = *n;
  return n.has_value();
}

}  // namespace

Result<ArraySpec> ParseArraySpec(std::string_view text, uint32_t max_array_size) {
  auto bad = [&](std::string_view why) {
    return InvalidArgument("invalid job array specification \"" + std::string(text) +
                           "\": " + std::string(why));
  };
  ArraySpec spec;
  std::string_view list = text;
  if (size_t pct = text.find('%'); pct != std::string_view::npos) {
    list = text.substr(0, pct);
    std::string_view throttle = text.substr(pct + 1);
    if (!throttle.empty()) {
      uint64_t n = 0;
      if (!ParseIndex(throttle, &n) || n > 0xffffffffu) return bad("the throttle is not a number");
      spec.max_running = static_cast<uint32_t>(n);
    }
  }
  bool step_seen = false;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string_view item = list.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    start = comma == std::string_view::npos ? list.size() + 1 : comma + 1;
    if (item.empty()) continue;
    uint64_t lo = 0, hi = 0, step = 1;
    std::string_view range = item;
    if (size_t colon = item.find(':'); colon != std::string_view::npos) {
      range = item.substr(0, colon);
      if (!ParseIndex(item.substr(colon + 1), &step) || step == 0) {
        return bad("bad step in \"" + std::string(item) + "\"");
      }
      if (range.find('-') == std::string_view::npos) {
        return bad("a step needs a range in \"" + std::string(item) + "\"");
      }
      if (!step_seen) spec.step = static_cast<uint32_t>(std::min<uint64_t>(step, 0xffffffffu));
      step_seen = true;
    }
    size_t dash = range.find('-');
    if (!ParseIndex(range.substr(0, dash), &lo)) {
      return bad("bad index in \"" + std::string(item) + "\"");
    }
    hi = lo;
    if (dash != std::string_view::npos && !ParseIndex(range.substr(dash + 1), &hi)) {
      return bad("bad index in \"" + std::string(item) + "\"");
    }
    if (hi < lo) return bad("reversed range \"" + std::string(item) + "\"");
    if (hi >= max_array_size) {
      return bad("index " + std::to_string(hi) + " is not below the maximum array size " +
                 std::to_string(max_array_size));
    }
    if ((hi - lo) / step + 1 > kMaxArrayIndices - spec.indices.size()) {
      return bad("more than " + std::to_string(kMaxArrayIndices) + " indices");
    }
    for (uint64_t i = lo; i <= hi; i += step) spec.indices.push_back(static_cast<uint32_t>(i));
  }
  std::sort(spec.indices.begin(), spec.indices.end());
  spec.indices.erase(std::unique(spec.indices.begin(), spec.indices.end()), spec.indices.end());
  if (spec.indices.empty()) return bad("no index");
  return spec;
}

std::string FormatArrayIndices(const std::vector<uint32_t>& indices, uint32_t max_running) {
  std::string out;
  size_t i = 0;
  while (i < indices.size()) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(indices[i]);
    if (j > i) out += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  if (max_running > 0) out += "%" + std::to_string(max_running);
  return out;
}

}  // namespace corral
