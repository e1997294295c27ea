#include "store/audit_chain.h"

#include <algorithm>
#include <functional>
#include <optional>

#include <gtest/gtest.h>

namespace corral::store {
namespace {

std::vector<AuditRecord> Chain(int n) {
  std::vector<AuditRecord> out;
  std::string prev = AuditGenesisHash();
  for (int i = 1; i <= n; ++i) {
    AuditRecord r{.seq = static_cast<uint64_t>(i),
                  .principal = "u" + std::to_string(i),
                  .method = "POST",
                  .route = "/api/v1/jobs",
                  .status = 201,
                  .prev_hash = prev};
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
           [](AuditRecord& x) { x.peer = "1.2.3.4:5"; },
           [](AuditRecord& x) { x.method = "DELETE"; }, [](AuditRecord& x) { x.route += "/"; },
           [](AuditRecord& x) { x.target = "job:1"; },
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

// The verifier fed a page at a time reaches the verdict of the whole log, for any page size,
// a missing, changed or moved record included; it keeps no records, and asks where a record
// belongs only for one that fails its hash.
TEST(AuditChainTest, VerifyingPageByPageGivesTheWholeLogsVerdict) {
  std::vector<AuditRecord> c = Chain(12);
  const AuditHead head{12, c[11].hash};
  std::vector<std::vector<AuditRecord>> logs = {c};
  logs.push_back(c);
  logs.back().erase(logs.back().begin() + 6);  // seq 7 missing
  logs.push_back(c);
  logs.back()[8].principal = "mallory";  // seq 9 changed
  logs.push_back(c);
  std::swap(logs.back()[3], logs.back()[9]);  // 4 and 10 swapped, keeping the seq column
  std::swap(logs.back()[3].seq, logs.back()[9].seq);
  logs.push_back(c);
  logs.back().pop_back();  // the log ends before the head
  for (const std::vector<AuditRecord>& log : logs) {
    const AuditVerdict whole = VerifyAuditChain(log, head);
    for (size_t size : {1, 2, 5, 12}) {
      int lookups = 0;
      AuditChainVerifier verifier(head, [&](const std::string& hash) {
        ++lookups;
        std::optional<uint64_t> seq;
        for (const AuditRecord& r : log) {
          if (r.hash == hash) seq = r.seq;
        }
        return Result<std::optional<uint64_t>>(seq);
      });
      for (size_t at = 0; at < log.size(); at += size) {
        std::vector<AuditRecord> page(log.begin() + at,
                                      log.begin() + std::min(log.size(), at + size));
        auto more = verifier.Add(page);
        ASSERT_TRUE(more.has_value());
        if (!*more) break;
      }
      AuditVerdict paged = verifier.Finish();
      EXPECT_EQ(paged.ok, whole.ok) << "page " << size;
      EXPECT_EQ(paged.problem, whole.problem) << "page " << size;
      EXPECT_EQ(paged.first_bad_seq, whole.first_bad_seq) << "page " << size;
      EXPECT_EQ(paged.detail, whole.detail) << "page " << size;
      EXPECT_EQ(paged.records, whole.records) << "page " << size;
      EXPECT_LE(lookups, 1);
    }
  }
  EXPECT_EQ(VerifyAuditChain(logs[3], head).problem, "reordered");
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
