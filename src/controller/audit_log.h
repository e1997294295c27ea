// AuditLog: the controller's end of the audit chain (store/audit_chain.h). It numbers and
// hashes each record and puts it into the write batch that also holds the change the record
// describes, so that one store transaction commits both (docs/governance.md, "Audit log").
//
// Also: what a request's record says before its outcome is known (`AuditEntryFor`), and the
// request being handled on this thread (`AuditScope`), which `ControllerService::Call` picks
// up so that the record goes into the same batch as the call's change.
//
// Thread-safety: `AuditLog` belongs to the state thread. `AuditEntryFor` is pure.
// `AuditScope` and `CurrentAudit` are per thread.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include "api/http.h"
#include "api/identity.h"
#include "api/messages.h"
#include "core/audit.h"
#include "core/result.h"
#include "store/audit_chain.h"
#include "store/store.h"

namespace corral::controller {

class AuditLog {
 public:
  // Continues the chain from the head kept in the store's meta (`store::kAuditHeadKey`).
  // Returns kInternal when the stored head cannot be read.
  Status Restore(const std::map<std::string, std::string>& meta);
  // Numbers `record` (seq, prev_hash, hash; `time` = now), puts it and the new head into `out`.
  void Append(AuditRecord record, Timestamp now, store::WriteBatch& out);
  // Retention: replaces the stored records older than `cutoff` by an anchor row (into `out`).
  // Returns the store's error.
  Status Prune(store::Store& store, Timestamp cutoff, store::WriteBatch& out);
  const store::AuditHead& head() const { return head_; }

 private:
  store::AuditHead head_;
};

// A request's record as the route sees it before the handler runs: peer (the socket's),
// method, route pattern, target (from the path) and the digest of the parameters. `who` fills
// principal and how it was authenticated ("anonymous", "none" when it is not).
AuditRecord AuditEntryFor(const api::HttpRequest& req, std::string_view method,
                          std::string_view pattern);
void SetAuditPrincipal(const api::HttpRequest& req, const api::Identity& who, AuditRecord* entry);
// The status a route answers on success (201 for what creates a job, a step, an account, a
// user or a QOS).
int AuditSuccessStatus(const AuditRecord& entry);

// The record of the request this thread is handling, until it is written.
struct PendingAudit {
  AuditRecord entry;
  bool written = false;   // set on the state thread, read after the call returned
  int written_status = 0;
};

// What a call on the state thread did, for its record.
struct AuditOutcome {
  bool ok = true;
  ErrorCode code = ErrorCode::kInternal;
  std::string target;  // what the call created ("job:12"), "" = keep the route's
};
template <typename T>
AuditOutcome AuditOutcomeOf(const Result<T>& r) {
  AuditOutcome o;
  if (!r.has_value()) {
    o.ok = false;
    o.code = r.error().code;
    return o;
  }
  if constexpr (std::is_same_v<T, api::SubmitResponse>) o.target = "job:" + r->job_id.ToString();
  return o;
}

// This thread's pending record, or nullptr.
PendingAudit* CurrentAudit();
// Makes `audit` this thread's pending record for the scope's life.
class AuditScope {
 public:
  explicit AuditScope(PendingAudit* audit);
  ~AuditScope();
  AuditScope(const AuditScope&) = delete;
  AuditScope& operator=(const AuditScope&) = delete;

 private:
  PendingAudit* previous_;
};

}  // namespace corral::controller
