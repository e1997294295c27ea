// The leader lease and fencing (store.h, issue 11) on every Store: a store that is not shared
// grants the lease always; on PostgreSQL two stores on one database contend for it, and a
// deposed holder's writes are refused whole.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "store/testing/conformance_envs.h"

namespace corral::store {
namespace {

using conformance::Envs;
using conformance::EnvNames;
using conformance::PopulatedJob;
using conformance::StoreConformanceTest;

template <typename E>
using StoreLeaseConformanceTest = StoreConformanceTest<E>;
TYPED_TEST_SUITE(StoreLeaseConformanceTest, Envs, EnvNames);

WriteBatch JobBatch(uint64_t id) {
  WriteBatch b;
  b.PutJob(PopulatedJob(id));
  return b;
}

TYPED_TEST(StoreLeaseConformanceTest, DeposedLeaderCannotWrite) {
  Store& a = *this->store_;
  auto la = a.TryAcquireLease("a", "https://a:6900", Seconds(2));
  ASSERT_TRUE(la.has_value()) << la.error().message;
  ASSERT_TRUE(la->held);
  EXPECT_EQ(la->holder, "a");
  EXPECT_EQ(la->url, "https://a:6900");
  a.SetFence(la->epoch);
  this->WriteOk(JobBatch(1));
  if (!a.shared()) {
    EXPECT_EQ(la->epoch, 1u);  // trivially held
    return;
  }

  // A second controller on the same database: the lease is a's until it expires.
  std::unique_ptr<Store> b = this->OpenOrDie();
  ASSERT_NE(b, nullptr);
  auto lb = b->TryAcquireLease("b", "https://b:6900", Seconds(2));
  ASSERT_TRUE(lb.has_value()) << lb.error().message;
  EXPECT_FALSE(lb->held);
  EXPECT_EQ(lb->url, "https://a:6900");
  EXPECT_EQ(lb->epoch, la->epoch);
  // a renews: the same epoch.
  auto renewed = a.TryAcquireLease("a", "https://a:6900", Seconds(2));
  ASSERT_TRUE(renewed.has_value());
  EXPECT_TRUE(renewed->held);
  EXPECT_EQ(renewed->epoch, la->epoch);

  // a stops renewing; b takes over at the next epoch once the lease has expired.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!lb->held && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    lb = b->TryAcquireLease("b", "https://b:6900", Seconds(2));
    ASSERT_TRUE(lb.has_value()) << lb.error().message;
  }
  ASSERT_TRUE(lb->held);
  EXPECT_EQ(lb->epoch, la->epoch + 1);

  // The deposed a: its batch is refused whole, and stays refused.
  WriteBatch stale = JobBatch(2);
  stale.PutMeta("stale", "1");
  for (int i = 0; i < 2; ++i) {
    Status s = a.Write(stale);
    ASSERT_FALSE(s.has_value());
    EXPECT_EQ(s.error().code, ErrorCode::kAborted) << s.error().message;
    EXPECT_NE(s.error().message.find("fenced"), std::string::npos) << s.error().message;
  }
  auto back = a.TryAcquireLease("a", "https://a:6900", Seconds(2));
  ASSERT_TRUE(back.has_value());
  EXPECT_FALSE(back->held);
  EXPECT_EQ(back->url, "https://b:6900");

  // The new leader writes at its epoch; nothing of a's stale batch is there.
  b->SetFence(lb->epoch);
  ASSERT_TRUE(b->Write(JobBatch(3)).has_value());
  auto state = b->Load();
  ASSERT_TRUE(state.has_value()) << state.error().message;
  std::vector<uint64_t> ids;
  for (const Job& j : state->jobs) ids.push_back(j.id.value);
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 3}));
  EXPECT_FALSE(state->meta.contains("stale"));
}

}  // namespace
}  // namespace corral::store
