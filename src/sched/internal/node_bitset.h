// NodeBitset: a set of node indices with a summary level, so that "the smallest member at or
// after i" costs a few word scans even when the set is sparse. The policy engine keeps one per
// (partition, GPU type, free GPU count) to find the best-fitting node quickly.
//
// Value type; not thread-safe.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace corral::sched::internal {

class NodeBitset {
 public:
  static constexpr int64_t kNone = -1;

  void Resize(size_t n) {
    words_.assign((n + 63) / 64, 0);
    summary_.assign((words_.size() + 63) / 64, 0);
    count_ = 0;
  }
  bool Contains(uint32_t i) const { return (words_[i >> 6] >> (i & 63)) & 1; }
  void Set(uint32_t i) {
    uint64_t& w = words_[i >> 6];
    uint64_t bit = uint64_t{1} << (i & 63);
    if (w & bit) return;
    w |= bit;
    summary_[i >> 12] |= uint64_t{1} << ((i >> 6) & 63);
    ++count_;
  }
  void Clear(uint32_t i) {
    uint64_t& w = words_[i >> 6];
    uint64_t bit = uint64_t{1} << (i & 63);
    if (!(w & bit)) return;
    w &= ~bit;
    if (w == 0) summary_[i >> 12] &= ~(uint64_t{1} << ((i >> 6) & 63));
    --count_;
  }
  uint32_t count() const { return count_; }

  // The smallest member >= `from`, or kNone.
  int64_t Next(uint64_t from) const {
    uint64_t wi = from >> 6;
    if (wi >= words_.size()) return kNone;
    uint64_t w = words_[wi] & (~uint64_t{0} << (from & 63));
    if (w != 0) return static_cast<int64_t>((wi << 6) | std::countr_zero(w));
    // The next non-empty word, through the summary.
    uint64_t next = wi + 1;
    uint64_t si = next >> 6;
    if (si >= summary_.size()) return kNone;
    uint64_t s = (next & 63) == 0 ? summary_[si] : summary_[si] & (~uint64_t{0} << (next & 63));
    while (s == 0) {
      if (++si >= summary_.size()) return kNone;
      s = summary_[si];
    }
    uint64_t word = (si << 6) | std::countr_zero(s);
    return static_cast<int64_t>((word << 6) | std::countr_zero(words_[word]));
  }

 private:
  std::vector<uint64_t> words_;
  std::vector<uint64_t> summary_;
  uint32_t count_ = 0;
};

}  // namespace corral::sched::internal
