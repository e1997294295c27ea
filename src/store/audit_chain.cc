#include "store/audit_chain.h"

#include <charconv>
#include <map>

#include <openssl/sha.h>

#include "core/hex.h"
#include "store/store.h"

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

AuditChainVerifier::AuditChainVerifier(AuditHead head, FindSeq find_seq)
    : head_(std::move(head)), find_seq_(std::move(find_seq)), prev_(AuditGenesisHash()) {
  v_.head_seq = head_.seq;
}

bool AuditChainVerifier::Fail(uint64_t seq, std::string problem, std::string detail) {
  v_.ok = false;
  v_.first_bad_seq = seq;
  v_.problem = std::move(problem);
  v_.detail = std::move(detail);
  done_ = true;
  return false;
}

Result<bool> AuditChainVerifier::Add(const std::vector<AuditRecord>& page) {
  for (const AuditRecord& r : page) {
    if (done_) return false;
    if (r.seq > head_.seq) {  // written since the head was read
      done_ = true;
      return false;
    }
    const bool first = seen_++ == 0;
    if (r.method == kAuditAnchorMethod) {
      if (!first) {
        return Fail(r.seq, "changed",
                    "record " + std::to_string(r.seq) + " is an anchor row after other records");
      }
      prev_ = r.hash;
      expected_ = r.seq + 1;
      continue;
    }
    if (r.seq != expected_) {
      return Fail(expected_, "missing",
                  r.seq > expected_ ? "records " + std::to_string(expected_) + " to " +
                                          std::to_string(r.seq - 1) + " are missing"
                                    : "record " + std::to_string(r.seq) + " appears twice");
    }
    if (AuditRecordHash(r) != r.hash) {
      // Where its link says it belongs: after the record whose hash it names.
      std::optional<uint64_t> at;
      if (r.prev_hash == AuditGenesisHash()) {
        at = 0;
      } else {
        CORRAL_ASSIGN_OR_RETURN(at, find_seq_(r.prev_hash));
      }
      if (at && *at + 1 != r.seq) {
        AuditRecord moved = r;
        moved.seq = *at + 1;
        if (AuditRecordHash(moved) == r.hash) {
          return Fail(r.seq, "reordered",
                      "the record stored at seq " + std::to_string(r.seq) + " is record " +
                          std::to_string(moved.seq) + " moved there");
        }
      }
      return Fail(r.seq, "changed", "record " + std::to_string(r.seq) + " does not match its hash");
    }
    if (r.prev_hash != prev_) {
      return Fail(r.seq, "changed",
                  "record " + std::to_string(r.seq) + " does not link to record " +
                      std::to_string(r.seq - 1) + " (one of them was rewritten)");
    }
    prev_ = r.hash;
    ++expected_;
    ++v_.records;
  }
  return !done_;
}

AuditVerdict AuditChainVerifier::Finish() {
  if (!v_.ok) return v_;
  if (head_.seq >= expected_) {
    Fail(expected_, "missing",
         "records " + std::to_string(expected_) + " to " + std::to_string(head_.seq) +
             " are missing (the log ends before the controller's last record)");
  } else if (head_.seq > 0 && prev_ != head_.hash) {
    Fail(head_.seq, "changed",
         "record " + std::to_string(head_.seq) + " is not the record the controller wrote last");
  }
  return v_;
}

AuditVerdict VerifyAuditChain(const std::vector<AuditRecord>& records, const AuditHead& head) {
  std::map<std::string, uint64_t> seq_of_hash;
  for (const AuditRecord& r : records) seq_of_hash.emplace(r.hash, r.seq);
  AuditChainVerifier verifier(head,
                              [&](const std::string& hash) -> Result<std::optional<uint64_t>> {
                                auto it = seq_of_hash.find(hash);
                                if (it == seq_of_hash.end()) return std::optional<uint64_t>();
                                return std::optional<uint64_t>(it->second);
                              });
  (void)verifier.Add(records);  // the lookup never fails
  return verifier.Finish();
}

Result<AuditVerdict> VerifyStoredAuditChain(Store& store, const AuditHead& head,
                                            size_t page_size) {
  if (page_size == 0) page_size = 1;
  auto page_after = [&](uint64_t seq) {
    return store.QueryAudit(
        {.after_seq = seq, .limit = page_size, .include_anchor = true, .oldest_first = true});
  };
  // Only asked about a record that fails its hash: one more pass, a page at a time.
  auto find_seq = [&](const std::string& hash) -> Result<std::optional<uint64_t>> {
    for (uint64_t after = 0;;) {
      CORRAL_ASSIGN_OR_RETURN(std::vector<AuditRecord> page, page_after(after));
      for (const AuditRecord& r : page) {
        if (r.hash == hash) return std::optional<uint64_t>(r.seq);
      }
      if (page.size() < page_size) return std::optional<uint64_t>();
      after = page.back().seq;
    }
  };
  AuditChainVerifier verifier(head, find_seq);
  for (uint64_t after = 0;;) {
    CORRAL_ASSIGN_OR_RETURN(std::vector<AuditRecord> page, page_after(after));
    if (page.empty()) break;
    CORRAL_ASSIGN_OR_RETURN(bool more, verifier.Add(page));
    // Records after the head (written since it was read) are not checked.
    if (!more || page.size() < page_size || page.back().seq >= head.seq) break;
    after = page.back().seq;
  }
  return verifier.Finish();
}

}  // namespace corral::store
