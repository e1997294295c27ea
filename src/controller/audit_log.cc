#include "controller/audit_log.h"

#include <cctype>

namespace corral::controller {

Status AuditLog::Restore(const std::map<std::string, std::string>& meta) {
  auto it = meta.find(store::kAuditHeadKey);
  if (it == meta.end()) {
    head_ = {};
    return {};
  }
  CORRAL_ASSIGN_OR_RETURN(head_, store::DecodeAuditHead(it->second));
  return {};
}

void AuditLog::Append(AuditRecord record, Timestamp now, store::WriteBatch& out) {
  record.seq = head_.seq + 1;
  record.time = now;
  record.prev_hash = head_.seq == 0 ? store::AuditGenesisHash() : head_.hash;
  record.hash = store::AuditRecordHash(record);
  head_ = {record.seq, record.hash};
  out.PutAudit(record);
  out.PutMeta(store::kAuditHeadKey, store::EncodeAuditHead(head_));
}

Status AuditLog::Prune(store::Store& store, Timestamp cutoff, store::WriteBatch& out) {
  // The last record before the cutoff, read by the store's time index (not the whole log):
  // it and everything before it give way to an anchor. (Were the clock stepped back, records
  // numbered before it but stamped after the cutoff go with them; the chain still verifies.)
  AuditQuery q;
  q.before = cutoff;
  q.limit = 1;
  q.include_anchor = true;
  CORRAL_ASSIGN_OR_RETURN(std::vector<AuditRecord> found, store.QueryAudit(q));
  if (found.empty()) return {};
  const AuditRecord& last = found.back();
  if (last.method == kAuditAnchorMethod || last.seq > head_.seq) return {};  // nothing new
  AuditRecord anchor;
  anchor.seq = last.seq;
  anchor.time = last.time;
  anchor.method = kAuditAnchorMethod;
  anchor.hash = last.hash;
  out.DeleteAuditThrough(last.seq);
  out.PutAudit(anchor);
  return {};
}

namespace {

// Length-prefixed, so that no two parameter sets encode alike.
void Field(std::string& out, std::string_view v) {
  out += std::to_string(v.size());
  out += ':';
  out += v;
  out += '\n';
}

std::string LowerScheme(const std::string& authorization) {
  std::string scheme = authorization.substr(0, authorization.find(' '));
  for (char& ch : scheme) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return scheme;
}

}  // namespace

AuditRecord AuditEntryFor(const api::HttpRequest& req, std::string_view method,
                          std::string_view pattern) {
  AuditRecord r;
  r.principal = "anonymous";
  r.auth = "none";
  r.peer = req.peer;
  r.method = std::string(method);
  r.route = std::string(pattern);
  if (auto id = req.params.find("id"); id != req.params.end()) {
    r.target = "job:" + id->second;
    if (auto step = req.params.find("step"); step != req.params.end()) {
      r.target += "." + step->second;
    }
  } else if (auto name = req.params.find("name"); name != req.params.end()) {
    r.target = "node:" + name->second;
  }
  std::string params = "corral-audit-params-1\n";
  for (const auto& [k, v] : req.params) {
    Field(params, k);
    Field(params, v);
  }
  params += "query\n";
  for (const auto& [k, v] : req.query) {
    Field(params, k);
    Field(params, v);
  }
  params += "body\n";
  Field(params, req.body);
  r.params_sha256 = store::Sha256Hex(params);
  return r;
}

void SetAuditPrincipal(const api::HttpRequest& req, const api::Identity& who,
                       AuditRecord* entry) {
  entry->principal = who.user.empty() ? std::string(api::RoleName(who.role)) : who.user;
  switch (who.role) {
    case api::Role::kAgent:
      entry->auth = "node";
      if (entry->target.empty() && !who.node.empty()) entry->target = "node:" + who.node;
      return;
    case api::Role::kJob:
      entry->auth = "job-credential";
      return;
    case api::Role::kController:
      entry->auth = "controller";
      return;
    case api::Role::kMetrics:
      entry->auth = "scrape-token";
      return;
    default:
      break;
  }
  std::string scheme = LowerScheme(req.header("authorization"));
  if (scheme == "munge" || scheme.empty()) {
    entry->auth = scheme.empty() ? "certificate" : "munge";
  } else {
    entry->auth = scheme == "bearer" ? "jwt" : scheme;
  }
}

int AuditSuccessStatus(const AuditRecord& entry) {
  bool creates = entry.method == "POST" &&
                 (entry.route == "/api/v1/jobs" || entry.route == "/api/v1/jobs/{id}/steps" ||
                  entry.route == "/api/v1/accounts" || entry.route == "/api/v1/users" ||
                  entry.route == "/api/v1/qos");
  return creates ? 201 : 200;
}

namespace {
thread_local PendingAudit* current_audit = nullptr;
}  // namespace

PendingAudit* CurrentAudit() { return current_audit; }

AuditScope::AuditScope(PendingAudit* audit) : previous_(current_audit) { current_audit = audit; }
AuditScope::~AuditScope() { current_audit = previous_; }

}  // namespace corral::controller
