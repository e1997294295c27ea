// The governance records' part of the Store conformance suite (store_conformance_test.cc):
// accounts, users and QOS (`GovernanceRecord`) round-trip, are replaced and deleted by
// (kind, name), come back sorted bytewise, survive a reopen, go with a failed batch, and a
// version 2 database (no governance table) is migrated on open.
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "store/store.h"
#include "store/testing/conformance_envs.h"

namespace corral::store {
namespace {

using conformance::EnvNames;
using conformance::Envs;
using conformance::PopulatedJob;
using conformance::StoreConformanceTest;

template <typename E>
class GovernanceConformanceTest : public StoreConformanceTest<E> {};
TYPED_TEST_SUITE(GovernanceConformanceTest, Envs, EnvNames);

std::vector<GovernanceRecord> SomeRecords() {
  return {
      {"account", "nlp", R"({"name":"nlp","parent":"research","shares":3})"},
      {"account", "research", R"({"name":"research","shares":1})"},
      {"account", "Zeta", "{}"},
      {"qos", "high", R"({"name":"high","priority":100})"},
      {"user", "alice", R"({"name":"alice","default_account":"nlp"})"},
      {"user", "ünïcode", "line1\nline2 'quoted' \"double\""},
  };
}

std::vector<GovernanceRecord> Sorted(std::vector<GovernanceRecord> v) {
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return std::tie(a.kind, a.name) < std::tie(b.kind, b.name);
  });
  return v;
}

TYPED_TEST(GovernanceConformanceTest, RecordsRoundTripSortedByKindAndName) {
  EXPECT_TRUE(this->LoadOk().governance.empty());
  std::vector<GovernanceRecord> records = SomeRecords();
  WriteBatch b;
  for (auto it = records.rbegin(); it != records.rend(); ++it) b.PutGovernance(*it);
  this->WriteOk(b);
  EXPECT_EQ(this->LoadOk().governance, Sorted(records));
}

TYPED_TEST(GovernanceConformanceTest, PutReplacesAndDeleteRemovesOnlyThatRecord) {
  WriteBatch b;
  for (const auto& r : SomeRecords()) b.PutGovernance(r);
  this->WriteOk(b);
  WriteBatch change;
  change.PutGovernance({"account", "nlp", R"({"name":"nlp","shares":5})"});
  change.DeleteGovernance("user", "alice");
  change.DeleteGovernance("qos", "nlp");          // no such record: nothing
  change.DeleteGovernance("account", "missing");  // nothing
  // A later op of the same key in one batch wins.
  change.PutGovernance({"qos", "low", "1"});
  change.PutGovernance({"qos", "low", "2"});
  this->WriteOk(change);
  std::vector<GovernanceRecord> want = SomeRecords();
  want[0].body = R"({"name":"nlp","shares":5})";
  std::erase_if(want, [](const auto& r) { return r.kind == "user" && r.name == "alice"; });
  want.push_back({"qos", "low", "2"});
  EXPECT_EQ(this->LoadOk().governance, Sorted(want));
  // The same name in another kind is another record.
  WriteBatch same;
  same.PutGovernance({"user", "nlp", "u"});
  this->WriteOk(same);
  WriteBatch del;
  del.DeleteGovernance("account", "nlp");
  this->WriteOk(del);
  StoredState s = this->LoadOk();
  EXPECT_EQ(std::count_if(s.governance.begin(), s.governance.end(),
                          [](const auto& r) { return r.name == "nlp"; }),
            1);
}

TYPED_TEST(GovernanceConformanceTest, FailedBatchLeavesGovernanceAsItWas) {
  WriteBatch pre;
  pre.PutGovernance({"account", "nlp", "before"});
  this->WriteOk(pre);
  if (!this->env_->InjectFailureOnJob(JobId(666))) GTEST_SKIP() << "writes cannot fail";
  WriteBatch b;
  b.PutGovernance({"account", "nlp", "after"});
  b.PutGovernance({"qos", "high", "new"});
  b.PutJob(PopulatedJob(666, 0));  // fails inside the database
  ASSERT_FALSE(this->store_->Write(b).has_value());
  EXPECT_EQ(this->LoadOk().governance,
            (std::vector<GovernanceRecord>{{"account", "nlp", "before"}}));
}

TYPED_TEST(GovernanceConformanceTest, ReopenRecoversGovernance) {
  if (!this->env_->Durable()) GTEST_SKIP() << "not durable";
  WriteBatch b;
  for (const auto& r : SomeRecords()) b.PutGovernance(r);
  this->WriteOk(b);
  this->Reopen();
  ASSERT_NE(this->store_, nullptr);
  EXPECT_EQ(this->LoadOk().governance, Sorted(SomeRecords()));
}

// A version 2 database (no governance table) is migrated on open: the table is created and
// the version raised, and the rest of the state is kept.
TYPED_TEST(GovernanceConformanceTest, SchemaVersionTwoIsMigrated) {
  if (!this->env_->Durable()) GTEST_SKIP() << "not durable";
  WriteBatch jobs;
  jobs.PutJob(PopulatedJob(1, 0));
  this->WriteOk(jobs);
  this->store_.reset();
  if (!this->env_->ExecSql("DROP TABLE {governance}") || !this->env_->SetSchemaVersion(2)) {
    GTEST_SKIP() << "no database to reach";
  }
  this->store_ = this->OpenOrDie();
  ASSERT_NE(this->store_, nullptr);
  EXPECT_EQ(this->QueryIds({}), std::vector<uint64_t>{1});
  EXPECT_TRUE(this->LoadOk().governance.empty());
  WriteBatch b;
  b.PutGovernance({"qos", "normal", "{}"});
  this->WriteOk(b);
  EXPECT_EQ(this->LoadOk().governance.size(), 1u);
}

}  // namespace
}  // namespace corral::store
