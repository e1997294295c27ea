#include "core/hostlist.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace corral {
namespace {

// Slurm's MAX_RANGE: the most names one "lo-hi" range may hold.
constexpr uint64_t kMaxRange = 64 * 1024;
// Longest numeric suffix treated as a number (longer ones keep the name literal).
constexpr size_t kMaxDigits = 18;

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsSeparator(char c) { return c == ',' || c == ' ' || c == '\t'; }

std::string Pad(uint64_t n, size_t width) {
  std::string s = std::to_string(n);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

// One "lo" or "lo-hi" of a bracket, with the width of `lo` as written.
struct Range {
  uint64_t lo = 0;
  uint64_t hi = 0;
  size_t width = 0;
};

bool ParseDigits(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > kMaxDigits) return false;
  uint64_t n = 0;
  for (char c : s) {
    if (!IsDigit(c)) return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = n;
  return true;
}

class Parser {
 public:
  Parser(std::string_view text, size_t max_hosts) : text_(text), max_hosts_(max_hosts) {}

  Result<std::vector<std::string>> Run() {
    size_t i = 0;
    while (i < text_.size()) {
      while (i < text_.size() && IsSeparator(text_[i])) ++i;
      if (i == text_.size()) break;
      // An item runs to the next separator outside brackets.
      size_t start = i;
      int depth = 0;
      while (i < text_.size() && (depth > 0 || !IsSeparator(text_[i]))) {
        if (text_[i] == '[') {
          if (++depth > 1) return Bad("nested '['");
        } else if (text_[i] == ']') {
          if (--depth < 0) return Bad("']' without '['");
        }
        ++i;
      }
      if (depth != 0) return Bad("unbalanced '['");
      CORRAL_RETURN_IF_ERROR(Item(text_.substr(start, i - start)));
    }
    return std::move(out_);
  }

 private:
  tl::unexpected<Error> Bad(std::string_view why) const {
    return InvalidArgument("host list \"" + std::string(text_) + "\": " + std::string(why));
  }

  Result<std::vector<Range>> ParseRanges(std::string_view inner) const {
    std::vector<Range> ranges;
    size_t start = 0;
    while (true) {
      size_t comma = inner.find(',', start);
      std::string_view item = inner.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      size_t dash = item.find('-');
      std::string_view lo_s = item.substr(0, dash);
      Range r;
      if (!ParseDigits(lo_s, &r.lo)) return Bad("invalid range \"" + std::string(item) + "\"");
      r.width = lo_s.size();
      r.hi = r.lo;
      if (dash != std::string_view::npos) {
        std::string_view hi_s = item.substr(dash + 1);
        // "lo-" means lo, as in Slurm.
        if (!hi_s.empty() && !ParseDigits(hi_s, &r.hi)) {
          return Bad("invalid range \"" + std::string(item) + "\"");
        }
      }
      if (r.hi < r.lo) return Bad("invalid range \"" + std::string(item) + "\"");
      if (r.hi - r.lo + 1 > kMaxRange) {
        return Bad("too many hosts in range \"" + std::string(item) + "\"");
      }
      ranges.push_back(r);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return ranges;
  }

  Status Push(std::string name) {
    if (out_.size() >= max_hosts_) return Bad("too many hosts");
    out_.push_back(std::move(name));
    return {};
  }

  // Expands `prefix` (which may hold brackets of its own) followed by each of `last`, in
  // Slurm's `_push_range_list` order: the prefix's last bracket is the outer loop.
  Status PushRanges(const std::string& prefix, const std::vector<Range>& last) {
    size_t open = prefix.rfind('[');
    if (open == std::string::npos) {
      for (const Range& r : last) {
        for (uint64_t n = r.lo; n <= r.hi; ++n)
          CORRAL_RETURN_IF_ERROR(Push(prefix + Pad(n, r.width)));
      }
      return {};
    }
    size_t close = prefix.find(']', open);
    std::string head = prefix.substr(0, open);
    std::string tail = prefix.substr(close + 1);
    CORRAL_ASSIGN_OR_RETURN(
        auto ranges, ParseRanges(std::string_view(prefix).substr(open + 1, close - open - 1)));
    for (const Range& r : ranges) {
      for (uint64_t n = r.lo; n <= r.hi; ++n) {
        CORRAL_RETURN_IF_ERROR(PushRanges(head + Pad(n, r.width) + tail, last));
      }
    }
    return {};
  }

  Status Item(std::string_view item) {
    size_t open = item.rfind('[');
    if (open == std::string_view::npos) return Push(std::string(item));
    if (item.back() != ']') return Bad("text after ']' in \"" + std::string(item) + "\"");
    CORRAL_ASSIGN_OR_RETURN(auto ranges,
                            ParseRanges(item.substr(open + 1, item.size() - open - 2)));
    return PushRanges(std::string(item.substr(0, open)), ranges);
  }

  std::string_view text_;
  size_t max_hosts_;
  std::vector<std::string> out_;
};

// A name split as Slurm's `hostname_create` does.
struct HostName {
  std::string prefix;  // the whole name when it has no numeric suffix
  bool numbered = false;
  uint64_t number = 0;
  size_t width = 0;
};

HostName SplitName(const std::string& name) {
  HostName h;
  size_t d = name.size();
  while (d > 0 && IsDigit(name[d - 1])) --d;
  size_t digits = name.size() - d;
  if (digits == 0 || digits > kMaxDigits) {
    h.prefix = name;
    return h;
  }
  h.prefix = name.substr(0, d);
  h.numbered = true;
  h.width = digits;
  ParseDigits(std::string_view(name).substr(d), &h.number);
  return h;
}

size_t DigitCount(uint64_t n) {
  size_t d = 1;
  while (n /= 10) ++d;
  return d;
}

// Zeros needed to pad `n` to `width`.
size_t ZerosNeeded(uint64_t n, size_t width) {
  size_t d = DigitCount(n);
  return width > d ? width - d : 0;
}

// Slurm's `_width_equiv`: whether `n` at width `*wn` and `m` at width `*wm` can share one
// width without changing either's padding; adjusts one of the widths when they can.
bool WidthEquivalent(uint64_t n, size_t* wn, uint64_t m, size_t* wm) {
  if (*wn == *wm) return true;
  size_t npad = ZerosNeeded(n, *wn), nmpad = ZerosNeeded(n, *wm);
  size_t mpad = ZerosNeeded(m, *wm), mnpad = ZerosNeeded(m, *wn);
  if (npad != nmpad && mpad != mnpad) return false;
  if (npad != nmpad) {
    *wm = *wn;
  } else {
    *wn = *wm;
  }
  return true;
}

struct HostRange {
  std::string prefix;
  bool numbered = false;
  uint64_t lo = 0;
  uint64_t hi = 0;
  size_t width = 0;
};

// Natural order of prefixes: digit runs compare as numbers.
int NaturalCompare(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsDigit(a[i]) && IsDigit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && a[ie] == '0') ++ie;
      while (je < b.size() && b[je] == '0') ++je;
      size_t is = ie, js = je;
      while (ie < a.size() && IsDigit(a[ie])) ++ie;
      while (je < b.size() && IsDigit(b[je])) ++je;
      if (ie - is != je - js) return ie - is < je - js ? -1 : 1;
      if (int c = a.substr(is, ie - is).compare(b.substr(js, je - js)); c != 0)
        return c < 0 ? -1 : 1;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j])
      return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]) ? -1 : 1;
    ++i;
    ++j;
  }
  if (i == a.size() && j == b.size()) return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
  return i == a.size() ? -1 : 1;
}

}  // namespace

Result<std::vector<std::string>> ExpandHostList(std::string_view text, size_t max_hosts) {
  return Parser(text, max_hosts).Run();
}

std::string CompressHostList(const std::vector<std::string>& names) {
  std::vector<HostRange> ranges;
  for (const std::string& name : names) {
    HostName h = SplitName(name);
    if (!ranges.empty() && h.numbered) {
      HostRange& tail = ranges.back();
      size_t width = h.width;
      if (tail.numbered && tail.prefix == h.prefix && tail.hi + 1 == h.number &&
          WidthEquivalent(tail.lo, &tail.width, h.number, &width)) {
        tail.hi = h.number;
        continue;
      }
    }
    ranges.push_back(HostRange{.prefix = std::move(h.prefix),
                               .numbered = h.numbered,
                               .lo = h.number,
                               .hi = h.number,
                               .width = h.width});
  }
  std::string out;
  size_t i = 0;
  while (i < ranges.size()) {
    if (!out.empty()) out += ',';
    const HostRange& first = ranges[i];
    out += first.prefix;
    if (!first.numbered) {
      ++i;
      continue;
    }
    auto same_group = [&](size_t k) {
      return k < ranges.size() && ranges[k].numbered && ranges[k].prefix == first.prefix;
    };
    bool bracket = first.hi > first.lo || same_group(i + 1);
    if (bracket) out += '[';
    size_t k = i;
    do {
      const HostRange& r = ranges[k];
      if (k > i) out += ',';
      out += Pad(r.lo, r.width);
      if (r.hi > r.lo) out += "-" + Pad(r.hi, r.width);
      ++k;
    } while (same_group(k));
    if (bracket) out += ']';
    i = k;
  }
  return out;
}

std::vector<std::string> SortHostNames(std::vector<std::string> names) {
  std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    HostName x = SplitName(a), y = SplitName(b);
    if (int c = NaturalCompare(x.prefix, y.prefix); c != 0) return c < 0;
    if (x.numbered != y.numbered) return !x.numbered;
    if (!x.numbered) return false;
    size_t wx = x.width, wy = y.width;
    if (WidthEquivalent(x.number, &wx, y.number, &wy)) return x.number < y.number;
    return x.width < y.width;
  });
  return names;
}

}  // namespace corral
