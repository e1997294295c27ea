#include "cli/audit.h"

#include <cstdio>

#include "api/audit_codec.h"
#include "api/http.h"
#include "cli/internal/slurm_cli.h"
#include "cli/slurm/begin_time.h"
#include "core/clock.h"
#include "core/strings.h"

namespace corral::cli {
namespace {

int Usage(const std::string& message) {
  std::fprintf(stderr, "corral audit: %s\n", message.c_str());
  return 2;
}

int Verify(Client& client, bool json) {
  auto verdict = client.VerifyAudit();
  if (!verdict) {
    std::fprintf(stderr, "corral: error: %s\n", verdict.error().message.c_str());
    return 1;
  }
  if (json) {
    std::printf("%s\n", api::EncodeAuditVerdict(*verdict).c_str());
  } else if (verdict->ok) {
    std::printf("audit log verified: %llu records, up to seq %llu\n",
                static_cast<unsigned long long>(verdict->records),
                static_cast<unsigned long long>(verdict->head_seq));
  } else {
    std::printf("audit log does NOT verify: seq %llu %s: %s\n",
                static_cast<unsigned long long>(verdict->first_bad_seq),
                verdict->problem.c_str(), verdict->detail.c_str());
  }
  return verdict->ok ? 0 : 1;
}

}  // namespace

int Audit(Client& client, const std::vector<std::string>& positional,
          const std::map<std::string, std::string>& values, bool json) {
  if (positional.size() == 1 && positional[0] == "verify") {
    if (!values.empty()) return Usage("verify takes no filters");
    return Verify(client, json);
  }
  if (!positional.empty()) return Usage("unexpected \"" + positional[0] + "\" (or: verify)");
  std::string query;
  auto add = [&](const std::string& key, const std::string& value) {
    query += (query.empty() ? "" : "&") + key + "=" + api::UrlEncode(value);
  };
  for (const auto& [key, value] : values) {
    if (key == "since") {
      auto t = slurm::ParsePastTime(value, SystemClock::Get().Now(), internal::LocalUtcOffset());
      if (!t) return Usage("--since " + value + ": " + t.error().message);
      add(key, std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                  t->time_since_epoch())
                                  .count()));
    } else if (key == "job" || key == "limit") {
      if (!ParseUint(value)) return Usage("--" + key + " " + value + ": expected a number");
      add(key, value);
    } else {
      add(key, value);
    }
  }
  auto records = client.Audit(query);
  if (!records) {
    std::fprintf(stderr, "corral: error: %s\n", records.error().message.c_str());
    return 1;
  }
  if (json) {
    for (const AuditRecord& r : *records) std::printf("%s\n", api::EncodeAuditRecord(r).c_str());
    return 0;
  }
  std::printf("%-6s %-24s %-12s %-14s %-6s %-40s %-14s %s\n", "SEQ", "TIME", "WHO", "AUTH",
              "METHOD", "ROUTE", "TARGET", "RESULT");
  for (const AuditRecord& r : *records) {
    std::string result = std::to_string(r.status);
    if (!r.error_code.empty()) result += " " + r.error_code;
    std::printf("%-6llu %-24s %-12s %-14s %-6s %-40s %-14s %s\n",
                static_cast<unsigned long long>(r.seq), FormatTimestamp(r.time).c_str(),
                r.principal.c_str(), r.auth.c_str(), r.method.c_str(), r.route.c_str(),
                r.target.empty() ? "-" : r.target.c_str(), result.c_str());
  }
  return 0;
}

}  // namespace corral::cli
