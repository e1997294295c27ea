#include "sched/internal/flat_map.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace corral::sched::internal {
namespace {

// Every key in one probe chain: lookups must still tell keys apart.
struct CollidingHash {
  uint64_t operator()(uint64_t) const { return 7; }
};

TEST(FlatMapTest, FindsWhatWasInsertedAndNothingElse) {
  FlatMap<uint64_t, int, IntHash> m;
  for (uint64_t k = 0; k < 1000; ++k) EXPECT_TRUE(m.try_emplace(k * 3, static_cast<int>(k)).second);
  EXPECT_EQ(m.size(), 1000u);
  for (uint64_t k = 0; k < 1000; ++k) {
    auto it = m.find(k * 3);
    ASSERT_NE(it, m.end());
    EXPECT_EQ(it->second, static_cast<int>(k));
    EXPECT_EQ(m.find(k * 3 + 1), m.end());
  }
}

TEST(FlatMapTest, TryEmplaceKeepsTheFirstValue) {
  FlatMap<uint64_t, int, IntHash> m;
  auto [first, fresh] = m.try_emplace(5, 1);
  EXPECT_TRUE(fresh);
  auto [again, fresh_again] = m.try_emplace(5, 2);
  EXPECT_FALSE(fresh_again);
  EXPECT_EQ(again, first);
  EXPECT_EQ(again->second, 1);
  m[5] = 9;
  EXPECT_EQ(m.find(5)->second, 9);
  EXPECT_EQ(m[6], 0);  // operator[] inserts a default value
  EXPECT_EQ(m.size(), 2u);
}

TEST(FlatMapTest, CollidingKeysStayApartThroughGrowth) {
  FlatMap<uint64_t, uint64_t, CollidingHash> m;
  for (uint64_t k = 0; k < 100; ++k) m.emplace(k, k * k);  // grows 16 -> 256 slots on the way
  for (uint64_t k = 0; k < 100; ++k) EXPECT_EQ(m.find(k)->second, k * k);
  EXPECT_EQ(m.find(100), m.end());
}

TEST(FlatMapTest, ClearEmptiesAndTheMapIsUsableAgain) {
  NameMap<int> m;
  std::vector<std::string> names = {"alice", "bob", "carol"};
  for (size_t i = 0; i < names.size(); ++i) m.emplace(names[i], static_cast<int>(i));
  m.clear();
  EXPECT_EQ(m.size(), 0u);
  EXPECT_EQ(m.find("alice"), m.end());
  m.emplace(names[1], 7);
  EXPECT_EQ(m.find("bob")->second, 7);
  EXPECT_EQ(m.find("carol"), m.end());
}

TEST(FlatMapTest, ReserveKeepsEntries) {
  NameMap<int> m;
  std::string a = "a", b = "b";
  m.emplace(a, 1);
  m.reserve(1000);
  m.emplace(b, 2);
  EXPECT_EQ(m.find("a")->second, 1);
  EXPECT_EQ(m.find("b")->second, 2);
  EXPECT_EQ(m.size(), 2u);
}

TEST(FlatMapTest, NameHashSeparatesShortNames) {
  NameHash h;
  EXPECT_NE(h("gpu00001"), h("gpu00002"));
  EXPECT_NE(h("ab"), h("ba"));
  EXPECT_EQ(h("train"), h(std::string("train")));
}

}  // namespace
}  // namespace corral::sched::internal
