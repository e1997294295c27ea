// FlatMap: a hash map with open addressing and linear probing, for the lookups a scheduling pass
// does for every job and allocation (names, shapes, associations), where std::unordered_map's
// node allocations and hashing cost more than the rest of the lookup.
//
// Invariants: the slot count is a power of two and at least twice the size (it grows before an
// insert would break that), so a probe always ends at an empty slot. Lookups and inserts only:
// no erase, and no iteration, so its order can never reach a decision. Keys that are views
// (`NameMap`) must outlive the map. Pointers to slots stay valid until the next insert.
//
// Value type; not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace corral::sched::internal {

template <typename K, typename V, typename Hash>
class FlatMap {
 public:
  struct Slot {
    K first{};
    V second{};
    uint64_t hash = 0;
    bool used = false;
  };
  using iterator = Slot*;

  FlatMap() { slots_.resize(16); }
  iterator end() const { return nullptr; }
  size_t size() const { return size_; }
  // Empties the map, keeping its slots.
  void clear() {
    if (size_ == 0) return;
    std::fill(slots_.begin(), slots_.end(), Slot{});
    size_ = 0;
  }
  void reserve(size_t n) {
    while (slots_.size() < 2 * n) Grow();
  }
  // The slot of `key`, or `end()`.
  iterator find(const K& key) const {
    const uint64_t h = Hash()(key);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.hash == h && s.first == key) return const_cast<Slot*>(&s);
    }
  }
  // Inserts (`key`, `value`) unless `key` is present; returns its slot and whether it was new.
  std::pair<iterator, bool> try_emplace(const K& key, V value) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    const uint64_t h = Hash()(key);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (!s.used) {
        s = Slot{key, std::move(value), h, true};
        ++size_;
        return {&s, true};
      }
      if (s.hash == h && s.first == key) return {&s, false};
    }
  }
  std::pair<iterator, bool> emplace(const K& key, V value) {
    return try_emplace(key, std::move(value));
  }
  V& operator[](const K& key) { return try_emplace(key, V{}).first->second; }

 private:
  void Grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    const size_t mask = slots_.size() - 1;
    for (Slot& s : old) {
      if (!s.used) continue;
      size_t i = s.hash & mask;
      while (slots_[i].used) i = (i + 1) & mask;
      slots_[i] = std::move(s);
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

// FNV-1a, folded: names are short.
struct NameHash {
  uint64_t operator()(std::string_view s) const {
    uint64_t h = 14695981039346656037ULL;
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    return h ^ (h >> 29);
  }
};

// splitmix64's finaliser.
struct IntHash {
  uint64_t operator()(uint64_t v) const {
    v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
    v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
    return v ^ (v >> 31);
  }
};

template <typename V>
using NameMap = FlatMap<std::string_view, V, NameHash>;

}  // namespace corral::sched::internal
