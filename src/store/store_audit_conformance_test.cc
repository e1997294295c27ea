// The Store conformance suite for the audit log (core/audit.h, store/audit_chain.h), run
// against every implementation like store_conformance_test.cc.
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "store/audit_chain.h"
#include "store/testing/conformance_envs.h"

namespace corral::store {
namespace {

using conformance::EnvNames;
using conformance::Envs;
using conformance::PopulatedJob;
using conformance::StoreConformanceTest;

template <typename E>
class AuditConformanceTest : public StoreConformanceTest<E> {};
TYPED_TEST_SUITE(AuditConformanceTest, Envs, EnvNames);

// The audit log (core/audit.h): records round-trip, are read by filter and in seq order,
// pruned through an anchor, and the chain check finds a row deleted, changed or swapped in
// the database itself.
std::vector<AuditRecord> AuditChain(int n) {
  std::vector<AuditRecord> out;
  std::string prev = AuditGenesisHash();
  for (int i = 1; i <= n; ++i) {
    AuditRecord r{.seq = static_cast<uint64_t>(i),
                  .time = FromMicros(1'800'000'000'000'000 + i * 1'000'000),
                  .principal = i % 2 ? "alice" : "bob",
                  .auth = "jwt",
                  .peer = "127.0.0.1:4000" + std::to_string(i),
                  .method = "POST",
                  .route = "/api/v1/jobs/{id}/cancel",
                  .target = i % 3 ? "job:" + std::to_string(i) : "node:gpu01",
                  .params_sha256 = Sha256Hex(std::to_string(i)),
                  .status = i % 4 ? 200 : 403,
                  .error_code = i % 4 ? "" : "PERMISSION_DENIED",
                  .prev_hash = prev};
    r.hash = AuditRecordHash(r);
    prev = r.hash;
    out.push_back(r);
  }
  return out;
}

TYPED_TEST(AuditConformanceTest, AuditRecordsRoundTripAndFilter) {
  std::vector<AuditRecord> chain = AuditChain(8);
  WriteBatch b;
  for (const AuditRecord& r : chain) b.PutAudit(r);
  this->WriteOk(b);
  auto all = this->store_->QueryAudit({});
  ASSERT_TRUE(all.has_value()) << all.error().message;
  EXPECT_EQ(*all, chain);
  auto bob = this->store_->QueryAudit({.user = "bob", .limit = 2});
  ASSERT_TRUE(bob.has_value());
  EXPECT_EQ(*bob, (std::vector<AuditRecord>{chain[5], chain[7]}));
  auto job4 = this->store_->QueryAudit({.job = "4"});
  ASSERT_TRUE(job4.has_value());
  EXPECT_EQ(*job4, std::vector<AuditRecord>{chain[3]});
  auto node = this->store_->QueryAudit({.after_seq = 3, .node = "gpu01"});
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(*node, (std::vector<AuditRecord>{chain[5]}));
  auto since = this->store_->QueryAudit({.since = chain[6].time});
  ASSERT_TRUE(since.has_value());
  EXPECT_EQ(since->size(), 2u);
  EXPECT_TRUE(VerifyAuditChain(*all, {8, chain[7].hash}).ok);
  if (this->env_->Durable()) {
    this->Reopen();
    auto again = this->store_->QueryAudit({});
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(*again, chain);
  }
}

// The stores filter in their query (SQL stores) as the memory store does in memory: a job's
// steps but not another job whose id starts alike, a time bound on either side, the newest
// `limit`, and anchors only when asked for and only within the time bound.
TYPED_TEST(AuditConformanceTest, AuditQueriesFilterInTheStore) {
  std::vector<AuditRecord> chain = AuditChain(10);
  chain[8].target = "job:4.2";
  chain[9].target = "job:41";
  WriteBatch b;
  for (const AuditRecord& r : chain) b.PutAudit(r);
  this->WriteOk(b);
  auto job4 = this->store_->QueryAudit({.job = "4"});
  ASSERT_TRUE(job4.has_value()) << job4.error().message;
  EXPECT_EQ(*job4, (std::vector<AuditRecord>{chain[3], chain[8]}));
  auto last_before = this->store_->QueryAudit({.before = chain[4].time, .limit = 1});
  ASSERT_TRUE(last_before.has_value());
  EXPECT_EQ(*last_before, std::vector<AuditRecord>{chain[3]});
  auto window = this->store_->QueryAudit({.since = chain[2].time, .before = chain[5].time});
  ASSERT_TRUE(window.has_value());
  EXPECT_EQ(*window, (std::vector<AuditRecord>{chain[2], chain[3], chain[4]}));
  auto newest_alice = this->store_->QueryAudit({.user = "alice", .limit = 3});
  ASSERT_TRUE(newest_alice.has_value());
  EXPECT_EQ(*newest_alice, (std::vector<AuditRecord>{chain[4], chain[6], chain[8]}));

  AuditRecord anchor{.seq = 4, .time = chain[3].time, .method = kAuditAnchorMethod,
                     .hash = chain[3].hash};
  WriteBatch prune;
  prune.DeleteAuditThrough(4);
  prune.PutAudit(anchor);
  this->WriteOk(prune);
  auto with_anchor =
      this->store_->QueryAudit({.before = chain[5].time, .limit = 1, .include_anchor = true});
  ASSERT_TRUE(with_anchor.has_value());
  EXPECT_EQ(*with_anchor, std::vector<AuditRecord>{chain[4]});
  auto only_anchor =
      this->store_->QueryAudit({.before = chain[4].time, .limit = 1, .include_anchor = true});
  ASSERT_TRUE(only_anchor.has_value());
  EXPECT_EQ(*only_anchor, std::vector<AuditRecord>{anchor});
  auto no_anchor = this->store_->QueryAudit({.before = chain[4].time});
  ASSERT_TRUE(no_anchor.has_value());
  EXPECT_TRUE(no_anchor->empty());
}

TYPED_TEST(AuditConformanceTest, AuditPruningKeepsTheChainVerifiable) {
  std::vector<AuditRecord> chain = AuditChain(6);
  WriteBatch b;
  for (const AuditRecord& r : chain) b.PutAudit(r);
  this->WriteOk(b);
  AuditRecord anchor{.seq = 4, .time = chain[3].time, .method = kAuditAnchorMethod,
                     .hash = chain[3].hash};
  WriteBatch prune;
  prune.DeleteAuditThrough(4);
  prune.PutAudit(anchor);
  this->WriteOk(prune);
  auto rows = this->store_->QueryAudit({.include_anchor = true});
  ASSERT_TRUE(rows.has_value());
  EXPECT_EQ(*rows, (std::vector<AuditRecord>{anchor, chain[4], chain[5]}));
  auto shown = this->store_->QueryAudit({});
  ASSERT_TRUE(shown.has_value());
  EXPECT_EQ(shown->size(), 2u);  // the anchor is not a record
  AuditVerdict v = VerifyAuditChain(*rows, {6, chain[5].hash});
  EXPECT_TRUE(v.ok) << v.detail;
  EXPECT_EQ(v.records, 2u);
}

// Each tampering in a store of its own, done in the database (SQL stores) or by rewriting a
// row through the store (all stores).
TYPED_TEST(AuditConformanceTest, AuditTamperingIsDetected) {
  std::vector<AuditRecord> chain = AuditChain(6);
  AuditHead head{6, chain[5].hash};
  auto verdict = [&]() {
    auto rows = this->store_->QueryAudit({.include_anchor = true});
    EXPECT_TRUE(rows.has_value());
    return VerifyAuditChain(rows.value_or(std::vector<AuditRecord>{}), head);
  };
  auto fresh = [&]() {
    this->store_.reset();
    this->env_ = std::make_unique<TypeParam>();
    this->store_ = this->OpenOrDie();
    WriteBatch b;
    for (const AuditRecord& r : chain) b.PutAudit(r);
    this->WriteOk(b);
    EXPECT_TRUE(verdict().ok);
  };
  struct Case {
    std::string sql;             // in the database; "" = through the store
    std::function<void(WriteBatch&)> put;
    std::string problem;
    uint64_t seq;
  };
  AuditRecord edited = chain[2];
  edited.status = 200;
  edited.principal = "mallory";
  AuditRecord moved3 = chain[4], moved5 = chain[2];
  moved3.seq = 3;
  moved5.seq = 5;
  std::vector<Case> cases = {
      {"DELETE FROM {audit} WHERE seq = 3", nullptr, "missing", 3},
      {"UPDATE {audit} SET status = 201, principal = 'mallory' WHERE seq = 3", nullptr,
       "changed", 3},
      {"UPDATE {audit} SET seq = -1 WHERE seq = 3; UPDATE {audit} SET seq = 3 WHERE seq = 5; "
       "UPDATE {audit} SET seq = 5 WHERE seq = -1",
       nullptr, "reordered", 3},
      {"DELETE FROM {audit} WHERE seq = 6", nullptr, "missing", 6},
      {"", [&](WriteBatch& b) { b.PutAudit(edited); }, "changed", 3},
      {"",
       [&](WriteBatch& b) {
         b.PutAudit(moved3);
         b.PutAudit(moved5);
       },
       "reordered", 3},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.sql.empty() ? "through the store" : c.sql);
    fresh();
    if (!c.sql.empty()) {
      if (!this->env_->ExecSql(c.sql)) continue;  // no database to reach (memory)
    } else {
      WriteBatch b;
      c.put(b);
      this->WriteOk(b);
    }
    AuditVerdict v = verdict();
    EXPECT_FALSE(v.ok);
    EXPECT_EQ(v.problem, c.problem) << v.detail;
    EXPECT_EQ(v.first_bad_seq, c.seq) << v.detail;
  }
}

// `corral audit verify` reads the stored log a page at a time (VerifyStoredAuditChain): a log
// of three pages verifies, and a record deleted, changed or moved in the middle page is found,
// whatever the page size.
TYPED_TEST(AuditConformanceTest, AStoredLogVerifiesPageByPage) {
  std::vector<AuditRecord> chain = AuditChain(30);
  AuditHead head{30, chain[29].hash};
  auto fresh = [&]() {
    this->store_.reset();
    this->env_ = std::make_unique<TypeParam>();
    this->store_ = this->OpenOrDie();
    WriteBatch b;
    for (const AuditRecord& r : chain) b.PutAudit(r);
    this->WriteOk(b);
  };
  fresh();
  // A page read forward: the first N after a seq.
  auto page = this->store_->QueryAudit(
      {.after_seq = 10, .limit = 10, .include_anchor = true, .oldest_first = true});
  ASSERT_TRUE(page.has_value()) << page.error().message;
  EXPECT_EQ(*page, std::vector<AuditRecord>(chain.begin() + 10, chain.begin() + 20));
  for (size_t size : {1, 7, 10, 25}) {
    auto v = VerifyStoredAuditChain(*this->store_, head, size);
    ASSERT_TRUE(v.has_value()) << v.error().message;
    EXPECT_TRUE(v->ok) << size << ": " << v->detail;
    EXPECT_EQ(v->records, 30u) << size;
  }
  AuditRecord edited = chain[14];
  edited.principal = "mallory";
  AuditRecord moved14 = chain[15], moved16 = chain[13];
  moved14.seq = 14;
  moved16.seq = 16;
  struct Case {
    std::string sql;  // in the database; "" = through the store
    std::vector<AuditRecord> put;
    std::string problem;
    uint64_t seq;
  };
  for (const Case& c : std::vector<Case>{
           {"DELETE FROM {audit} WHERE seq = 15", {}, "missing", 15},
           {"UPDATE {audit} SET principal = 'mallory' WHERE seq = 15", {}, "changed", 15},
           {"UPDATE {audit} SET seq = -1 WHERE seq = 14; UPDATE {audit} SET seq = 14 WHERE "
            "seq = 16; UPDATE {audit} SET seq = 16 WHERE seq = -1",
            {}, "reordered", 14},
           {"", {edited}, "changed", 15},
           {"", {moved14, moved16}, "reordered", 14},
       }) {
    SCOPED_TRACE(c.sql.empty() ? "through the store" : c.sql);
    fresh();
    if (!c.sql.empty()) {
      if (!this->env_->ExecSql(c.sql)) continue;  // no database to reach (memory)
    } else {
      WriteBatch b;
      for (const AuditRecord& r : c.put) b.PutAudit(r);
      this->WriteOk(b);
    }
    for (size_t size : {1, 10, 25}) {
      auto v = VerifyStoredAuditChain(*this->store_, head, size);
      ASSERT_TRUE(v.has_value()) << v.error().message;
      EXPECT_FALSE(v->ok) << size;
      EXPECT_EQ(v->problem, c.problem) << size << ": " << v->detail;
      EXPECT_EQ(v->first_bad_seq, c.seq) << size << ": " << v->detail;
    }
  }
}

// A version 1 database (no audit table) is migrated on open: the table is created and the
// version raised, so the audit log works at once.
TYPED_TEST(AuditConformanceTest, SchemaVersionOneIsMigrated) {
  if (!this->env_->Durable()) GTEST_SKIP() << "not durable";
  WriteBatch jobs;
  jobs.PutJob(PopulatedJob(1, 0));
  this->WriteOk(jobs);
  this->store_.reset();
  if (!this->env_->ExecSql("DROP TABLE {audit}") || !this->env_->SetSchemaVersion(1)) {
    GTEST_SKIP() << "no database to reach";
  }
  this->store_ = this->OpenOrDie();
  ASSERT_NE(this->store_, nullptr);
  EXPECT_EQ(this->QueryIds({}), std::vector<uint64_t>{1});
  WriteBatch b;
  b.PutAudit(AuditChain(1)[0]);
  this->WriteOk(b);
  auto rows = this->store_->QueryAudit({});
  ASSERT_TRUE(rows.has_value()) << rows.error().message;
  EXPECT_EQ(rows->size(), 1u);
}

}  // namespace
}  // namespace corral::store
