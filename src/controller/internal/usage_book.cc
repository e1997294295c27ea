#include "controller/internal/usage_book.h"

#include <charconv>
#include <sstream>

namespace corral::controller::internal {
namespace {

constexpr const char* kUsageKey = "sched.usage";
constexpr const char* kUsageTimeKey = "sched.usage_time";
constexpr Duration kUsagePersistInterval = Seconds(60);

std::string FormatDouble(double v) {
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, p);
}

}  // namespace

void UsageBook::Recover(const std::map<std::string, std::string>& meta) {
  auto text = meta.find(kUsageKey);
  auto time = meta.find(kUsageTimeKey);
  if (text == meta.end() || time == meta.end()) return;
  std::vector<sched::AssociationUsage> entries;
  std::istringstream in(text->second);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    sched::AssociationUsage u;
    std::string decayed, period;
    if (std::getline(fields, u.account, '\t') && std::getline(fields, u.user, '\t') &&
        std::getline(fields, decayed, '\t') && std::getline(fields, period, '\t')) {
      std::from_chars(decayed.data(), decayed.data() + decayed.size(), u.decayed_usage);
      std::from_chars(period.data(), period.data() + period.size(), u.period_gpu_seconds);
      entries.push_back(std::move(u));
    }
  }
  int64_t micros = 0;
  std::from_chars(time->second.data(), time->second.data() + time->second.size(), micros);
  ledger_ = sched::UsageLedger(entries, FromMicros(micros));
}

void UsageBook::PersistIfDue(MonoTime now) {
  if (now - persisted_ < kUsagePersistInterval) return;
  persisted_ = now;
  std::string text;
  for (const auto& u : ledger_.Entries()) {
    text += u.account + "\t" + u.user + "\t" + FormatDouble(u.decayed_usage) + "\t" +
            FormatDouble(u.period_gpu_seconds) + "\n";
  }
  out_.writes.PutMeta(kUsageKey, text);
  out_.writes.PutMeta(kUsageTimeKey, std::to_string(ToMicros(ledger_.last_update())));
}

}  // namespace corral::controller::internal
