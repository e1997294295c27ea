#include "controller/internal/submit_keys.h"

#include <charconv>
#include <sstream>

#include "core/log.h"

namespace corral::controller::internal {
namespace {

constexpr std::string_view kPrefix = "submit_key/";
constexpr size_t kMaxKeyLength = 128;
constexpr Duration kPruneEvery = Seconds(60);

std::string MetaKey(const std::string& user, const std::string& key) {
  return std::string(kPrefix) + user + "/" + key;
}

}  // namespace

Status CheckSubmitKey(const std::string& key) {
  if (key.empty() || key.size() > kMaxKeyLength) {
    return InvalidArgument("Idempotency-Key: expected 1 to 128 characters, got " +
                           std::to_string(key.size()));
  }
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok) return InvalidArgument("Idempotency-Key: only letters, digits and . _ : - allowed");
  }
  return {};
}

Result<std::optional<api::SubmitResponse>> SubmitKeys::Find(const std::string& user,
                                                            const SubmitKey& key) const {
  auto it = keys_.find({user, key.key});
  if (it == keys_.end()) return std::nullopt;
  const Entry& e = it->second;
  if (e.digest != key.digest) {
    return MakeError(ErrorCode::kAlreadyExists,
                     "Idempotency-Key \"" + key.key + "\" was used by " + user +
                         " for a different submission (job " + e.first.ToString() +
                         "): a new submission needs a new key");
  }
  api::SubmitResponse r;
  r.job_id = e.first;
  for (uint32_t i = 0; i < e.tasks; ++i) r.task_ids.push_back(JobId(e.first.value + i));
  return r;
}

void SubmitKeys::Remember(const std::string& user, const SubmitKey& key,
                          const api::SubmitResponse& response, Timestamp now) {
  Entry e{.first = response.job_id,
          .tasks = static_cast<uint32_t>(response.task_ids.size()),
          .created = now,
          .digest = key.digest};
  out_.writes.PutMeta(MetaKey(user, key.key), e.first.ToString() + " " + std::to_string(e.tasks) +
                                                  " " + std::to_string(ToMicros(now)) + " " +
                                                  e.digest);
  keys_[{user, key.key}] = std::move(e);
}

void SubmitKeys::Recover(const std::map<std::string, std::string>& meta) {
  keys_.clear();
  for (auto it = meta.lower_bound(std::string(kPrefix));
       it != meta.end() && it->first.compare(0, kPrefix.size(), kPrefix) == 0; ++it) {
    // The key has no '/': the user is everything between the prefix and the last '/'.
    const std::string rest = it->first.substr(kPrefix.size());
    const size_t slash = rest.rfind('/');
    std::istringstream in(it->second);
    uint64_t first = 0;
    uint32_t tasks = 0;
    int64_t micros = 0;
    std::string digest;
    if (slash == std::string::npos || !(in >> first >> tasks >> micros >> digest) || first == 0) {
      CORRAL_LOG(Warn) << "stored submission key \"" << it->first << "\" cannot be read: dropped";
      continue;
    }
    keys_[{rest.substr(0, slash), rest.substr(slash + 1)}] =
        Entry{.first = JobId(first), .tasks = tasks, .created = FromMicros(micros),
              .digest = std::move(digest)};
  }
}

void SubmitKeys::PruneIfDue(Timestamp now, MonoTime mono, Duration retention) {
  if (mono < next_prune_) return;
  next_prune_ = mono + kPruneEvery;
  for (auto it = keys_.begin(); it != keys_.end();) {
    if (now - it->second.created > retention) {
      out_.writes.DeleteMeta(MetaKey(it->first.first, it->first.second));
      it = keys_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace corral::controller::internal
