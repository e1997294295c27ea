#include "core/hostlist.h"

#include <cctype>
#include <charconv>
#include <cstdint>

namespace corral {
namespace {

// Splits `text` at commas that are not inside brackets.
Result<std::vector<std::string_view>> SplitTopLevel(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '[') {
      if (++depth > 1) return InvalidArgument("host list \"" + std::string(text) + "\": nested '['");
    } else if (c == ']') {
      if (--depth < 0) return InvalidArgument("host list \"" + std::string(text) + "\": unbalanced ']'");
    } else if (c == ',' && depth == 0) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) return InvalidArgument("host list \"" + std::string(text) + "\": unbalanced '['");
  parts.push_back(text.substr(start));
  return parts;
}

bool ParseNumber(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  std::from_chars(s.data(), s.data() + s.size(), *out);
  return true;
}

std::string Pad(uint64_t n, size_t width) {
  std::string s = std::to_string(n);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

// Expands the inside of one bracket ("01-04,07") into its strings.
Result<std::vector<std::string>> ExpandRange(std::string_view inner, std::string_view whole,
                                             size_t max_hosts) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= inner.size()) {
    size_t comma = inner.find(',', start);
    std::string_view item = inner.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    size_t dash = item.find('-');
    std::string_view lo_s = item.substr(0, dash);
    std::string_view hi_s = dash == std::string_view::npos ? lo_s : item.substr(dash + 1);
    uint64_t lo = 0, hi = 0;
    if (!ParseNumber(lo_s, &lo) || !ParseNumber(hi_s, &hi) || hi < lo) {
      return InvalidArgument("host list \"" + std::string(whole) + "\": bad range \"" +
                             std::string(item) + "\"");
    }
    if (hi - lo >= max_hosts || out.size() + (hi - lo + 1) > max_hosts) {
      return InvalidArgument("host list \"" + std::string(whole) + "\": too many hosts");
    }
    size_t width = lo_s.size();
    for (uint64_t n = lo; n <= hi; ++n) out.push_back(Pad(n, width));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

Result<std::vector<std::string>> ExpandHostList(std::string_view text, size_t max_hosts) {
  std::vector<std::string> out;
  CORRAL_ASSIGN_OR_RETURN(auto parts, SplitTopLevel(text));
  for (std::string_view part : parts) {
    while (!part.empty() && std::isspace(static_cast<unsigned char>(part.front()))) part.remove_prefix(1);
    while (!part.empty() && std::isspace(static_cast<unsigned char>(part.back()))) part.remove_suffix(1);
    if (part.empty()) continue;
    std::vector<std::string> names = {""};
    size_t pos = 0;
    while (pos < part.size()) {
      size_t open = part.find('[', pos);
      std::string_view literal = part.substr(pos, open == std::string_view::npos ? std::string_view::npos : open - pos);
      for (auto& n : names) n.append(literal);
      if (open == std::string_view::npos) break;
      size_t close = part.find(']', open);
      CORRAL_ASSIGN_OR_RETURN(auto range, ExpandRange(part.substr(open + 1, close - open - 1), text, max_hosts));
      std::vector<std::string> next;
      if (names.size() * range.size() > max_hosts) {
        return InvalidArgument("host list \"" + std::string(text) + "\": too many hosts");
      }
      next.reserve(names.size() * range.size());
      for (const auto& n : names) {
        for (const auto& r : range) next.push_back(n + r);
      }
      names = std::move(next);
      pos = close + 1;
    }
    if (out.size() + names.size() > max_hosts) {
      return InvalidArgument("host list \"" + std::string(text) + "\": too many hosts");
    }
    for (auto& n : names) out.push_back(std::move(n));
  }
  return out;
}

std::string CompressHostList(const std::vector<std::string>& names) {
  struct Split {
    std::string prefix;
    std::string digits;  // empty when the name has no numeric suffix
    uint64_t number = 0;
  };
  auto split = [](const std::string& name) {
    Split s;
    size_t end = name.size();
    size_t d = end;
    while (d > 0 && std::isdigit(static_cast<unsigned char>(name[d - 1]))) --d;
    s.prefix = name.substr(0, d);
    s.digits = name.substr(d);
    if (s.digits.size() > 18) {  // too long to be a number: treat as a literal name
      s.prefix = name;
      s.digits.clear();
    }
    if (!s.digits.empty()) std::from_chars(s.digits.data(), s.digits.data() + s.digits.size(), s.number);
    return s;
  };
  std::string out;
  size_t i = 0;
  while (i < names.size()) {
    Split first = split(names[i]);
    if (!out.empty()) out += ',';
    if (first.digits.empty()) {
      out += names[i];
      ++i;
      continue;
    }
    // Collect every following name with the same prefix (a bracket group), each run of
    // consecutive numbers of equal width becoming one range.
    std::string ranges;
    size_t count = 0;
    size_t j = i;
    while (j < names.size()) {
      Split run_start = split(names[j]);
      if (run_start.digits.empty() || run_start.prefix != first.prefix) break;
      size_t k = j + 1;
      uint64_t last = run_start.number;
      while (k < names.size()) {
        Split next = split(names[k]);
        bool unpadded = run_start.digits.size() == std::to_string(run_start.number).size() &&
                        next.digits.size() == std::to_string(next.number).size();
        bool same_width = next.digits.size() == run_start.digits.size();
        if (next.digits.empty() || next.prefix != first.prefix || next.number != last + 1 ||
            !(same_width || unpadded)) {
          break;
        }
        last = next.number;
        ++k;
      }
      if (!ranges.empty()) ranges += ',';
      ranges += run_start.digits;
      if (k - j > 1) ranges += "-" + Pad(last, run_start.digits.size());
      count += k - j;
      j = k;
    }
    if (count == 1) {
      out += names[i];
    } else {
      out += first.prefix + "[" + ranges + "]";
    }
    i = j;
  }
  return out;
}

}  // namespace corral
