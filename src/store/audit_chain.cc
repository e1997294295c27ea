#include "store/audit_chain.h"

#include <openssl/sha.h>

#include <charconv>
#include <map>

#include "core/hex.h"

namespace corral::store {

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

const std::string& AuditGenesisHash() {
  static const std::string kZeros(64, '0');
  return kZeros;
}

std::string CanonicalAuditEncoding(const AuditRecord& r) {
  std::string out = "corral-audit-1\n";
  auto field = [&out](std::string_view v) {
    out += std::to_string(v.size());
    out += ':';
    out += v;
    out += '\n';
  };
  field(std::to_string(r.seq));
  field(std::to_string(ToMicros(r.time)));
  field(r.principal);
  field(r.auth);
  field(r.peer);
  field(r.method);
  field(r.route);
  field(r.target);
  field(r.params_sha256);
  field(std::to_string(r.status));
  field(r.error_code);
  field(r.prev_hash);
  return out;
}

std::string AuditRecordHash(const AuditRecord& record) {
  return Sha256Hex(CanonicalAuditEncoding(record));
}

std::string EncodeAuditHead(const AuditHead& head) {
  return std::to_string(head.seq) + " " + head.hash;
}

Result<AuditHead> DecodeAuditHead(std::string_view text) {
  size_t space = text.find(' ');
  AuditHead head;
  if (space != std::string_view::npos) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + space, head.seq);
    head.hash = std::string(text.substr(space + 1));
    if (ec == std::errc() && end == text.data() + space && head.hash.size() == 64) return head;
  }
  return Internal("audit head \"" + std::string(text) + "\": expected \"SEQ SHA256\"");
}

namespace {

AuditVerdict Bad(AuditVerdict v, uint64_t seq, std::string problem, std::string detail) {
  v.ok = false;
  v.first_bad_seq = seq;
  v.problem = std::move(problem);
  v.detail = std::move(detail);
  return v;
}

}  // namespace

AuditVerdict VerifyAuditChain(const std::vector<AuditRecord>& records, const AuditHead& head) {
  AuditVerdict v;
  v.head_seq = head.seq;
  // Where each stored hash sits: a record whose link names record P belongs at P + 1.
  std::map<std::string, uint64_t> seq_of_hash;
  for (const AuditRecord& r : records) seq_of_hash.emplace(r.hash, r.seq);
  std::string prev = AuditGenesisHash();
  uint64_t expected = 1;
  seq_of_hash.emplace(prev, 0);
  for (size_t i = 0; i < records.size(); ++i) {
    const AuditRecord& r = records[i];
    if (r.seq > head.seq) break;
    if (r.method == kAuditAnchorMethod) {
      if (i != 0) {
        return Bad(v, r.seq, "changed",
                   "record " + std::to_string(r.seq) + " is an anchor row after other records");
      }
      prev = r.hash;
      expected = r.seq + 1;
      continue;
    }
    if (r.seq != expected) {
      return Bad(v, expected, "missing",
                 r.seq > expected ? "records " + std::to_string(expected) + " to " +
                                        std::to_string(r.seq - 1) + " are missing"
                                  : "record " + std::to_string(r.seq) + " appears twice");
    }
    if (AuditRecordHash(r) != r.hash) {
      auto at = seq_of_hash.find(r.prev_hash);
      if (at != seq_of_hash.end() && at->second + 1 != r.seq) {
        AuditRecord moved = r;
        moved.seq = at->second + 1;
        if (AuditRecordHash(moved) == r.hash) {
          return Bad(v, r.seq, "reordered",
                     "the record stored at seq " + std::to_string(r.seq) +
                         " is record " + std::to_string(moved.seq) + " moved there");
        }
      }
      return Bad(v, r.seq, "changed",
                 "record " + std::to_string(r.seq) + " does not match its hash");
    }
    if (r.prev_hash != prev) {
      return Bad(v, r.seq, "changed",
                 "record " + std::to_string(r.seq) + " does not link to record " +
                     std::to_string(r.seq - 1) + " (one of them was rewritten)");
    }
    prev = r.hash;
    ++expected;
    ++v.records;
  }
  if (head.seq >= expected) {
    return Bad(v, expected, "missing",
               "records " + std::to_string(expected) + " to " + std::to_string(head.seq) +
                   " are missing (the log ends before the controller's last record)");
  }
  if (head.seq > 0 && prev != head.hash) {
    return Bad(v, head.seq, "changed",
               "record " + std::to_string(head.seq) +
                   " is not the record the controller wrote last");
  }
  return v;
}

}  // namespace corral::store
