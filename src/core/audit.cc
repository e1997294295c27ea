#include "core/audit.h"

namespace corral {

bool MatchesAuditQuery(const AuditRecord& r, const AuditQuery& q) {
  if (q.before != Timestamp{} && !(r.time < q.before)) return false;
  if (r.method == kAuditAnchorMethod) return q.include_anchor;
  if (q.since != Timestamp{} && r.time < q.since) return false;
  if (!q.user.empty() && r.principal != q.user) return false;
  if (!q.job.empty()) {
    std::string job = "job:" + q.job;
    if (r.target != job && r.target.rfind(job + ".", 0) != 0) return false;
  }
  if (!q.node.empty() && r.target != "node:" + q.node) return false;
  return true;
}

}  // namespace corral
