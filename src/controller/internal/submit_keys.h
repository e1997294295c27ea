// SubmitKeys: idempotency keys of submissions (docs/operations.md, "Idempotent submission").
//
// A client that cannot tell whether its submission was carried out (the connection was
// refused, reset or timed out, or the controller answered 5xx while it restarted or failed
// over) sends the same request again with the same `Idempotency-Key` header. The key, scoped
// to the submitting user, is stored with the job it created in the same batch (meta
// "submit_key/<user>/<key>" = "<first job id> <tasks> <created unix ms> <body digest>"), so a
// repeat, even to a restarted or promoted controller, is answered with the original job ids
// instead of creating a second job. A repeat whose body differs is refused (kAlreadyExists,
// HTTP 409), naming the job the key made. Keys are kept for `retention` (`[controller]
// submit_key_retention_s`) after their submission, then pruned in the loop's batch.
//
// Not thread-safe; state thread only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "api/messages.h"
#include "controller/controller.h"
#include "controller/internal/outputs.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::controller::internal {

// kInvalidArgument naming the header unless `key` is 1 to 128 characters of [A-Za-z0-9._:-].
Status CheckSubmitKey(const std::string& key);

class SubmitKeys {
 public:
  explicit SubmitKeys(Outputs& out) : out_(out) {}
  SubmitKeys(const SubmitKeys&) = delete;
  SubmitKeys& operator=(const SubmitKeys&) = delete;

  // The answer of the submission `user` made with `key.key`: nullopt when the key is new;
  // the original job ids when it was used with the same body; kAlreadyExists naming the key
  // and the job it made when the body differs.
  Result<std::optional<api::SubmitResponse>> Find(const std::string& user,
                                                  const SubmitKey& key) const;
  // Remembers the submission `response` of `user` under `key`, durably in the same batch as
  // its jobs.
  void Remember(const std::string& user, const SubmitKey& key,
                const api::SubmitResponse& response, Timestamp now);
  // Restores the keys from the stored meta; entries that cannot be read are dropped (logged).
  void Recover(const std::map<std::string, std::string>& meta);
  // Forgets (and deletes from the store) the keys submitted before `now - retention`; at most
  // once a minute of `mono`.
  void PruneIfDue(Timestamp now, MonoTime mono, Duration retention);

  size_t size() const { return keys_.size(); }

 private:
  struct Entry {
    JobId first;
    uint32_t tasks = 0;  // array tasks (0: a single job)
    Timestamp created;
    std::string digest;
  };
  Outputs& out_;
  std::map<std::pair<std::string, std::string>, Entry> keys_;  // (user, key)
  MonoTime next_prune_{};
};

}  // namespace corral::controller::internal
