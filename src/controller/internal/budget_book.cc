#include "controller/internal/budget_book.h"

#include <algorithm>
#include <charconv>
#include <chrono>

#include "controller/internal/usage_report.h"

namespace corral::controller::internal {
namespace {

int64_t UnixSeconds(Timestamp t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

constexpr double kSecondsPerHour = 3600.0;
constexpr double kJoulesPerKwh = 3.6e6;

}  // namespace

void BudgetBook::Recover(const std::map<std::string, std::string>& meta) {
  const std::string prefix = WarnedKey("");
  for (auto it = meta.lower_bound(prefix); it != meta.end() && it->first.starts_with(prefix);
       ++it) {
    int64_t start = 0;
    const std::string& v = it->second;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), start);
    if (ec == std::errc() && end == v.data() + v.size()) {
      warned_[it->first.substr(prefix.size())] = start;
    }
  }
}

BudgetBook::Shape BudgetBook::ShapeOf() const {
  Shape shape;
  shape.reserve(config_.accounts.size());
  for (const AccountConfig& a : config_.accounts) shape.emplace_back(a.name, a.parent, a.budget);
  return shape;
}

void BudgetBook::Refresh(Timestamp now) {
  Shape shape = ShapeOf();
  bool rebuild = shape != shape_;
  if (!rebuild) {
    for (const auto& [name, e] : entries_) {
      if (BudgetPeriodAt(e.budget, now) != e.period) rebuild = true;
    }
  }
  if (!rebuild) return;
  shape_ = std::move(shape);
  entries_.clear();
  over_.clear();
  std::map<std::string, std::string> parent;
  for (const auto& [name, up, budget] : shape_) {
    parent[name] = up;
    if (budget) entries_[name] = Entry{.budget = *budget, .period = BudgetPeriodAt(*budget, now)};
  }
  if (entries_.empty()) return;
  for (const auto& [name, up] : parent) {
    std::vector<std::string>& over = over_[name];
    // The tree has no loops (validated), but a bound keeps a bad one from hanging us.
    std::string a = name;
    for (size_t depth = 0; !a.empty() && depth <= parent.size(); ++depth) {
      if (entries_.count(a)) over.push_back(a);
      auto it = parent.find(a);
      a = it == parent.end() ? "" : it->second;
    }
  }
  // Step 1: the ended runs, one scan.
  for (const auto& [id, e] : jobs_.all()) {
    if (!IsTerminal(e.job.state)) continue;
    for (const std::string& b : Over(e.job.spec.account)) {
      Entry& entry = entries_[b];
      std::optional<JobCharge> c =
          ChargeOf(e.job, UsageWindow{entry.period.start, entry.period.end}, now);
      if (!c) continue;
      entry.ended_gpu_seconds += c->gpu_seconds;
      entry.ended_energy_joules += c->energy_joules;
    }
  }
}

const std::vector<std::string>& BudgetBook::Over(const std::string& account) const {
  static const std::vector<std::string> kNone;
  auto it = over_.find(account);
  return it == over_.end() ? kNone : it->second;
}

void BudgetBook::Ended(const Job& job, Timestamp now) {
  for (const std::string& b : Over(job.spec.account)) {
    Entry& entry = entries_[b];
    std::optional<JobCharge> c =
        ChargeOf(job, UsageWindow{entry.period.start, entry.period.end}, now);
    if (!c) continue;
    entry.ended_gpu_seconds += c->gpu_seconds;
    entry.ended_energy_joules += c->energy_joules;
  }
}

void BudgetBook::Add(const Job& job, Timestamp now, std::map<std::string, Spend>* into) const {
  for (const std::string& b : Over(job.spec.account)) {
    const Entry& entry = entries_.at(b);
    std::optional<JobCharge> c =
        ChargeOf(job, UsageWindow{entry.period.start, entry.period.end}, now);
    if (!c) continue;
    Spend& s = (*into)[b];
    s.gpu_seconds += c->gpu_seconds;
    s.energy_joules += c->energy_joules;
  }
}

std::map<std::string, BudgetBook::Spend> BudgetBook::Spent(Timestamp now) const {
  std::map<std::string, Spend> spent;
  for (const auto& [name, e] : entries_) {
    spent[name] = Spend{e.ended_gpu_seconds, e.ended_energy_joules};
  }
  if (entries_.empty()) return spent;
  // Step 3: running jobs up to now.
  for (JobId id : jobs_.running()) {
    if (const JobEntry* e = jobs_.Find(id)) Add(e->job, now, &spent);
  }
  return spent;
}

std::vector<sched::BudgetUse> BudgetBook::Uses(Timestamp now) const {
  std::vector<sched::BudgetUse> uses;
  if (entries_.empty()) return uses;
  std::map<std::string, Spend> spent = Spent(now);
  for (const auto& [name, e] : entries_) {
    if (!BudgetInForce(e.budget, now)) continue;
    const Spend& s = spent[name];
    uses.push_back({.account = name,
                    .gpu_seconds = s.gpu_seconds,
                    .energy_joules = s.energy_joules,
                    .period_end = e.period.end});
  }
  return uses;
}

std::vector<api::BudgetStatus> BudgetBook::Status(Timestamp now) const {
  std::vector<api::BudgetStatus> out;
  std::map<std::string, Spend> spent = Spent(now);
  for (const auto& [name, e] : entries_) {
    const Spend& s = spent[name];
    api::BudgetStatus st{.account = name,
                         .budget = e.budget,
                         .in_force = BudgetInForce(e.budget, now),
                         .period_start = e.period.start,
                         .period_end = e.period.end,
                         .spent_gpu_hours = s.gpu_seconds / kSecondsPerHour,
                         .spent_energy_kwh = s.energy_joules / kJoulesPerKwh};
    if (e.budget.gpu_hours) {
      st.left_gpu_hours = std::max(0.0, *e.budget.gpu_hours - st.spent_gpu_hours);
    }
    if (e.budget.energy_kwh) {
      st.left_energy_kwh = std::max(0.0, *e.budget.energy_kwh - st.spent_energy_kwh);
    }
    auto w = warned_.find(name);
    st.warned = w != warned_.end() && w->second == UnixSeconds(e.period.start);
    out.push_back(std::move(st));
  }
  return out;
}

std::vector<BudgetWarning> BudgetBook::TakeWarnings(Timestamp now) {
  std::vector<BudgetWarning> out;
  for (const api::BudgetStatus& st : Status(now)) {
    const uint32_t pct = st.budget.warn_percent;
    if (st.warned || !st.in_force || pct == 0) continue;
    BudgetWarning w{
        .account = st.account, .percent = pct, .period = {st.period_start, st.period_end}};
    if (st.budget.gpu_hours && st.spent_gpu_hours * 100 >= *st.budget.gpu_hours * pct) {
      w.resource = "gpu_hours";
      w.spent = st.spent_gpu_hours;
      w.limit = *st.budget.gpu_hours;
    } else if (st.budget.energy_kwh && st.spent_energy_kwh * 100 >= *st.budget.energy_kwh * pct) {
      w.resource = "energy_kwh";
      w.spent = st.spent_energy_kwh;
      w.limit = *st.budget.energy_kwh;
    } else {
      continue;
    }
    const int64_t start = UnixSeconds(st.period_start);
    warned_[st.account] = start;
    out_.writes.PutMeta(WarnedKey(st.account), std::to_string(start));
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace corral::controller::internal
