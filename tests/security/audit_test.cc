// The audit log (issue 16 item 3): every state-changing route of the controller's table
// (every method but GET) leaves exactly one audit record per request, accepted or refused,
// with the answer's status, the caller, and no part of the body; the read routes leave none;
// the chain verifies afterwards. A new state-changing route is walked without a change here.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "controller/audit_log.h"
#include "controller/routes.h"
#include "store/memory_store.h"
#include "store/sqlite_store.h"
#include "store/testing/temp_dir.h"
#include "tests/security/security_harness.h"

namespace corral::security {
namespace {

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// The records after `seq`, once there is one: a refused request's record (or that of one that
// changed nothing) joins the next batch after the answer (ControllerService::WriteAudit).
std::vector<AuditRecord> RecordsAfter(SecurityCluster& cluster, uint64_t seq) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (true) {
    auto records = cluster.service().QueryAudit({.after_seq = seq});
    EXPECT_TRUE(records.has_value()) << records.error().message;
    if (!records.has_value()) return {};
    if (!records->empty() || std::chrono::steady_clock::now() > deadline) return *records;
    std::this_thread::yield();
  }
}

uint64_t LastSeq(SecurityCluster& cluster) {
  auto records = cluster.service().QueryAudit({.limit = 1});
  EXPECT_TRUE(records.has_value());
  return records.has_value() && !records->empty() ? records->back().seq : 0;
}

TEST(AuditRoutesTest, EveryStateChangingRequestLeavesOneRecordAcceptedOrRefused) {
  SecurityCluster cluster;
  JobId j = cluster.Submit("alice", TestJob(1));
  cluster.RegisterNode("node01", 0);
  // Anonymous (401), a user who may not (403 on most), the owner, an admin, the node's agent.
  const std::vector<std::string> callers = {"", "bob", "alice", "root", "agent:node01"};
  int routes = 0;
  for (const controller::RouteSpec& spec : controller::ControllerRoutes()) {
    if (spec.method == "GET") continue;
    ++routes;
    std::string pattern(spec.pattern);
    std::string path = Replace(Replace(pattern, "{id}", j.ToString()), "{step}", "1");
    path = Replace(Replace(path, "{name}", "node01"), "{index}", "0");
    std::string body = BodyFor(pattern);
    for (const std::string& caller : callers) {
      SCOPED_TRACE(std::string(spec.method) + " " + pattern + " as " +
                   (caller.empty() ? "anonymous" : caller));
      uint64_t before = LastSeq(cluster);
      api::HttpResponse r = cluster.Send(caller, std::string(spec.method), path, body);
      ASSERT_NE(r.status, 0) << r.body;
      if (pattern == "/api/v1/agents/heartbeat" && r.status == 200) {
        // An accepted heartbeat that changed nothing leaves no record: the next record is
        // that of the request after it (an anonymous one, refused).
        EXPECT_EQ(cluster.Send("", "POST", "/api/v1/jobs", "{}").status, 401);
        std::vector<AuditRecord> next = RecordsAfter(cluster, before);
        ASSERT_EQ(next.size(), 1u);
        EXPECT_EQ(next.front().route, "/api/v1/jobs");
        continue;
      }
      std::vector<AuditRecord> records = RecordsAfter(cluster, before);
      ASSERT_EQ(records.size(), 1u) << "status " << r.status << " " << r.body;
      const AuditRecord& a = records.front();
      EXPECT_EQ(a.method, spec.method);
      EXPECT_EQ(a.route, pattern);
      EXPECT_EQ(a.status, r.status) << r.body;
      EXPECT_EQ(a.error_code.empty(), r.status < 400) << a.error_code;
      EXPECT_EQ(a.principal == "anonymous", caller.empty()) << a.principal;
      EXPECT_EQ(a.auth == "none", caller.empty()) << a.auth;
      EXPECT_TRUE(a.peer.starts_with("127.0.0.1:")) << a.peer;
      EXPECT_EQ(a.params_sha256.size(), 64u);
      if (body.size() > 8) {
        for (const std::string& field : {a.principal, a.target, a.route, a.error_code}) {
          EXPECT_EQ(field.find(body), std::string::npos) << field;
        }
      }
      if (pattern == "/api/v1/jobs" && r.status == 201) {
        // Written in the batch of the submit itself: it knows the new job's id.
        EXPECT_TRUE(a.target.starts_with("job:")) << a.target;
      }
    }
  }
  EXPECT_GE(routes, 15);
  // Reading the log changes nothing and leaves no record.
  uint64_t before = LastSeq(cluster);
  EXPECT_EQ(cluster.Send("root", "GET", "/api/v1/audit").status, 200);
  EXPECT_EQ(cluster.Send("olga", "GET", "/api/v1/audit/verify").status, 200);
  EXPECT_EQ(cluster.Send("bob", "GET", "/api/v1/audit").status, 403);
  EXPECT_EQ(LastSeq(cluster), before);
  auto verdict = cluster.service().VerifyAudit();
  ASSERT_TRUE(verdict.has_value());
  EXPECT_TRUE(verdict->ok) << verdict->detail;
  EXPECT_EQ(verdict->records, before);
}

// The body (a script, an environment, a token) never reaches the record: only its digest.
TEST(AuditRoutesTest, RecordsHoldADigestNotTheBody) {
  SecurityCluster cluster;
  JobSpec spec = TestJob(0);
  spec.script = "#!/bin/sh\necho SECRET-SCRIPT-TEXT\n";
  spec.environment = {{"API_KEY", "SECRET-ENV-VALUE"}};
  cluster.Submit("alice", spec);
  api::HttpResponse list = cluster.Send("root", "GET", "/api/v1/audit");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.body.find("SECRET"), std::string::npos) << list.body;
  EXPECT_NE(list.body.find("\"route\":\"/api/v1/jobs\""), std::string::npos) << list.body;
}

// A restarted controller continues the chain from the head it stored: seqs go on without a
// gap and the whole log verifies.
TEST(AuditRoutesTest, ARestartedControllerContinuesTheChain) {
  store::testing::TempDir dir;
  std::string path = dir.File("state.db");
  auto open = [&] {
    auto s = store::SqliteStore::Open(path);
    EXPECT_TRUE(s.has_value()) << s.error().message;
    return std::unique_ptr<store::Store>(std::move(*s));
  };
  uint64_t first = 0;
  {
    SecurityCluster cluster({}, open());
    cluster.Submit("alice", TestJob(0));
    first = LastSeq(cluster);
    ASSERT_GT(first, 0u);
  }
  SecurityCluster cluster({}, open());
  cluster.Submit("alice", TestJob(0));
  EXPECT_EQ(LastSeq(cluster), first + 1);
  auto verdict = cluster.service().VerifyAudit();
  ASSERT_TRUE(verdict.has_value());
  EXPECT_TRUE(verdict->ok) << verdict->detail;
  EXPECT_EQ(verdict->head_seq, first + 1);
}

// Retention: the records older than the cutoff give way to one anchor row; the chain still
// verifies and the newer records are kept as they were.
TEST(AuditLogTest, PruningLeavesAnAnchorAndAVerifiableChain) {
  store::MemoryStore store;
  controller::AuditLog log;
  store::WriteBatch b;
  Timestamp t0 = FromMicros(1'800'000'000'000'000);
  for (int i = 0; i < 5; ++i) {
    log.Append({.principal = "alice", .method = "POST", .route = "/api/v1/jobs", .status = 201},
               t0 + Seconds(86400 * i), b);
  }
  ASSERT_TRUE(store.Write(b).has_value());
  store::WriteBatch prune;
  ASSERT_TRUE(log.Prune(store, t0 + Seconds(86400 * 3), prune).has_value());
  ASSERT_TRUE(store.Write(prune).has_value());
  auto rows = store.QueryAudit({.include_anchor = true});
  ASSERT_TRUE(rows.has_value());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ(rows->front().method, kAuditAnchorMethod);
  EXPECT_EQ(rows->front().seq, 3u);
  AuditVerdict v = store::VerifyAuditChain(*rows, log.head());
  EXPECT_TRUE(v.ok) << v.detail;
  EXPECT_EQ(v.records, 2u);
  // Restored from the stored head, the log appends seq 6.
  controller::AuditLog again;
  ASSERT_TRUE(again.Restore({{store::kAuditHeadKey, store::EncodeAuditHead(log.head())}})
                  .has_value());
  store::WriteBatch next;
  again.Append({.method = "POST"}, t0 + Seconds(86400 * 5), next);
  EXPECT_EQ(again.head().seq, 6u);
}

}  // namespace
}  // namespace corral::security
