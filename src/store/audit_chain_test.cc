#include "store/audit_chain.h"

#include <functional>

#include <gtest/gtest.h>

namespace corral::store {
namespace {

std::vector<AuditRecord> Chain(int n) {
  std::vector<AuditRecord> out;
  std::string prev = AuditGenesisHash();
  for (int i = 1; i <= n; ++i) {
    AuditRecord r{.seq = static_cast<uint64_t>(i), .principal = "u" + std::to_string(i),
                  .method = "POST", .route = "/api/v1/jobs", .status = 201, .prev_hash = prev};
    r.hash = AuditRecordHash(r);
    prev = r.hash;
    out.push_back(r);
  }
  return out;
}

TEST(AuditChainTest, EveryFieldButTheHashIsCovered) {
  AuditRecord r = Chain(1)[0];
  std::string h = AuditRecordHash(r);
  for (auto change : std::vector<std::function<void(AuditRecord&)>>{
           [](AuditRecord& x) { x.seq = 2; }, [](AuditRecord& x) { x.time += Seconds(1); },
           [](AuditRecord& x) { x.principal += "x"; }, [](AuditRecord& x) { x.auth = "jwt"; },
           [](AuditRecord& x) { x.peer = "1.2.3.4:5"; }, [](AuditRecord& x) { x.method = "DELETE"; },
           [](AuditRecord& x) { x.route += "/"; }, [](AuditRecord& x) { x.target = "job:1"; },
           [](AuditRecord& x) { x.params_sha256 = "ab"; }, [](AuditRecord& x) { x.status = 200; },
           [](AuditRecord& x) { x.error_code = "NOT_FOUND"; },
           [](AuditRecord& x) { x.prev_hash[0] = '1'; }}) {
    AuditRecord changed = r;
    change(changed);
    EXPECT_NE(AuditRecordHash(changed), h);
  }
  // Length prefixes: moving a byte from one field to the next changes the hash.
  AuditRecord a = r, b = r;
  a.principal = "ab";
  a.auth = "c";
  b.principal = "a";
  b.auth = "bc";
  EXPECT_NE(AuditRecordHash(a), AuditRecordHash(b));
}

TEST(AuditChainTest, VerdictsNameTheFirstBadRecord) {
  std::vector<AuditRecord> c = Chain(5);
  AuditHead head{5, c[4].hash};
  EXPECT_TRUE(VerifyAuditChain(c, head).ok);
  EXPECT_TRUE(VerifyAuditChain({}, {}).ok);
  // Records written after the head was read are not checked.
  EXPECT_TRUE(VerifyAuditChain(c, {4, c[3].hash}).ok);

  auto without = c;
  without.erase(without.begin() + 1);
  AuditVerdict v = VerifyAuditChain(without, head);
  EXPECT_EQ(v.problem, "missing");
  EXPECT_EQ(v.first_bad_seq, 2u);

  without = c;
  without.pop_back();
  v = VerifyAuditChain(without, head);
  EXPECT_EQ(v.problem, "missing");  // the log ends before the controller's last record
  EXPECT_EQ(v.first_bad_seq, 5u);

  auto changed = c;
  changed[2].status = 200;
  v = VerifyAuditChain(changed, head);
  EXPECT_EQ(v.problem, "changed");
  EXPECT_EQ(v.first_bad_seq, 3u);

  // Rewritten with a fresh hash: the next record's link shows it.
  changed[2].hash = AuditRecordHash(changed[2]);
  v = VerifyAuditChain(changed, head);
  EXPECT_EQ(v.problem, "changed");
  EXPECT_EQ(v.first_bad_seq, 4u);

  auto swapped = c;
  std::swap(swapped[1], swapped[3]);
  swapped[1].seq = 2;
  swapped[3].seq = 4;
  v = VerifyAuditChain(swapped, head);
  EXPECT_EQ(v.problem, "reordered");
  EXPECT_EQ(v.first_bad_seq, 2u);
}

TEST(AuditChainTest, AnAnchorStartsTheChain) {
  std::vector<AuditRecord> c = Chain(5);
  AuditRecord anchor{.seq = 3, .method = kAuditAnchorMethod, .hash = c[2].hash};
  std::vector<AuditRecord> pruned = {anchor, c[3], c[4]};
  AuditVerdict v = VerifyAuditChain(pruned, {5, c[4].hash});
  EXPECT_TRUE(v.ok) << v.detail;
  EXPECT_EQ(v.records, 2u);
  // An anchor anywhere else is a change.
  std::vector<AuditRecord> late = {c[0], c[1], anchor, c[3], c[4]};
  EXPECT_FALSE(VerifyAuditChain(late, {5, c[4].hash}).ok);
  // A wrong anchor hash breaks the link of the first record after it.
  pruned[0].hash = c[1].hash;
  v = VerifyAuditChain(pruned, {5, c[4].hash});
  EXPECT_EQ(v.problem, "changed");
  EXPECT_EQ(v.first_bad_seq, 4u);
}

TEST(AuditChainTest, HeadRoundTripsAndBadTextIsNamed) {
  AuditHead h{42, std::string(64, 'a')};
  auto back = DecodeAuditHead(EncodeAuditHead(h));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, h);
  auto bad = DecodeAuditHead("x y");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("x y"), std::string::npos);
}

}  // namespace
}  // namespace corral::store
