// The audit log's hash chain (docs/governance.md, "Audit log"): every record carries the
// SHA-256 of its own canonical encoding and that of the record before it, so that a record
// deleted, changed or moved in the database is found by `VerifyAuditChain`.
//
// Canonical encoding (version 1): "corral-audit-1\n" then, for each field in the order of
// core/audit.h (seq, time in microseconds, principal, auth, peer, method, route, target,
// params_sha256, status, error_code, prev_hash), its byte length, ':', its bytes and '\n'.
// `hash` is the lower-case hex SHA-256 of that text; the first record's `prev_hash` is 64 zeros.
//
// Retention replaces the records up to N with one anchor row (method "ANCHOR", seq N, the
// hash of record N): the chain is then verified from the anchor on.
//
// What the chain shows: a record deleted (a gap, or a log that ends before the controller's
// head), changed (its hash no longer matches), or reordered (it hashes correctly at another
// place). What it cannot show: someone who rewrites every record after a change and the head
// the controller keeps (the chain is not keyed); export the log (`corral audit --json`) to a
// place they cannot reach to guard against that.
//
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/audit.h"
#include "core/result.h"

namespace corral::store {

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

// 64 zeros: the `prev_hash` of the first record.
const std::string& AuditGenesisHash();

// `record`'s canonical encoding (the header), without its `hash`.
std::string CanonicalAuditEncoding(const AuditRecord& record);
// `Sha256Hex(CanonicalAuditEncoding(record))`.
std::string AuditRecordHash(const AuditRecord& record);

// The controller's last written record: `seq` 0 when none was ever written.
struct AuditHead {
  uint64_t seq = 0;
  std::string hash;
  bool operator==(const AuditHead&) const = default;
};
// "SEQ HASH" (kept in the store's meta under `kAuditHeadKey`) and back.
inline constexpr const char* kAuditHeadKey = "audit_head";
std::string EncodeAuditHead(const AuditHead& head);
// Returns kInternal naming the text when it is not "SEQ HASH".
Result<AuditHead> DecodeAuditHead(std::string_view text);

// Checks `records` (every stored record, by seq, anchor row included) against each other and
// against `head`; records after `head.seq` (written since the head was read) are ignored.
// The verdict names the first bad seq and whether a record is missing, changed or reordered.
AuditVerdict VerifyAuditChain(const std::vector<AuditRecord>& records, const AuditHead& head);

// The same check a page at a time, in bounded memory: it keeps the last record's hash and
// position, never the log, so that a caller can stream the store's records through it
// (`VerifyStoredAuditChain` below does, for `corral audit verify`).
// Not thread-safe; one verification's.
class AuditChainVerifier {
 public:
  // The seq of the stored record whose `hash` is the given one, nullopt when there is none.
  // Asked only about a record that does not match its own hash, to tell a record moved from
  // another place (reordered) from a changed one; the caller may read the log again for it.
  using FindSeq = std::function<Result<std::optional<uint64_t>>(const std::string& hash)>;

  AuditChainVerifier(AuditHead head, FindSeq find_seq);

  // Checks the next records (by seq, following those given before). Returns false once the
  // verdict is known (the rest need not be read), or `find_seq`'s error.
  Result<bool> Add(const std::vector<AuditRecord>& page);
  // The verdict, once every record was given or `Add` returned false.
  AuditVerdict Finish();

 private:
  bool Fail(uint64_t seq, std::string problem, std::string detail);

  AuditHead head_;
  FindSeq find_seq_;
  AuditVerdict v_;
  std::string prev_;
  uint64_t expected_ = 1;
  uint64_t seen_ = 0;  // records given, anchor included
  bool done_ = false;
};

class Store;

// `VerifyAuditChain` on the log kept in `store`, read from it `page_size` (at least 1) records
// at a time by seq (`AuditQuery::oldest_first`), so that the memory used is one page's however
// long the log. A record that fails its hash makes one more pass over the log, a page at a
// time, to find where its hash belongs (reordered or changed). Returns the store's error
// when a read fails. Thread-safe as `Store::QueryAudit`.
Result<AuditVerdict> VerifyStoredAuditChain(Store& store, const AuditHead& head,
                                            size_t page_size = 1000);

}  // namespace corral::store
