#include "cli/budget.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "api/budget_codec.h"
#include "api/governance_codec.h"
#include "cli/internal/slurm_cli.h"
#include "cli/slurm/begin_time.h"
#include "cli/table.h"
#include "core/clock.h"
#include "core/strings.h"

namespace corral::cli {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "corral account budget: %s\n", message.c_str());
  return 1;
}

int Usage(const std::string& message) {
  std::fprintf(stderr,
               "corral account budget: %s\nusage: corral account budget [NAME...] | NAME "
               "[--gpu-hours H] [--energy-kwh K] [--period day|week|month|window] [--start T "
               "--end T] [--warn PCT] | NAME clear\n",
               message.c_str());
  return 2;
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

Status SetAmount(std::optional<double>& field, const std::string& key, const std::string& v) {
  if (v == "none") {
    field.reset();
    return {};
  }
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(d)) {
    return InvalidArgument("--" + key + " " + v + ": expected a number (or none)");
  }
  field = d;  // the controller checks the range, naming the field
  return {};
}

Status SetTime(Timestamp& field, const std::string& key, const std::string& v) {
  auto t = slurm::ParsePastTime(v, SystemClock::Get().Now(), internal::LocalUtcOffset());
  if (!t) return InvalidArgument("--" + key + " " + v + ": " + t.error().message);
  field = *t;
  return {};
}

// `budget` with `values` applied.
Status Apply(const std::map<std::string, std::string>& values, Budget& b) {
  for (const auto& [key, v] : values) {
    if (key == "gpu-hours") {
      CORRAL_RETURN_IF_ERROR(SetAmount(b.gpu_hours, key, v));
    } else if (key == "energy-kwh") {
      CORRAL_RETURN_IF_ERROR(SetAmount(b.energy_kwh, key, v));
    } else if (key == "period") {
      std::optional<BudgetPeriod> p = ParseBudgetPeriod(v);
      if (!p) {
        return InvalidArgument("--period " + v +
                               ": unknown budget period (expected day, week, month or window)");
      }
      b.period = *p;
      if (*p != BudgetPeriod::kWindow) b.start = b.end = Timestamp{};
    } else if (key == "start") {
      CORRAL_RETURN_IF_ERROR(SetTime(b.start, key, v));
    } else if (key == "end") {
      CORRAL_RETURN_IF_ERROR(SetTime(b.end, key, v));
    } else if (key == "warn") {
      std::optional<uint64_t> pct = ParseUint(v);
      if (!pct || *pct > 100) return InvalidArgument("--warn " + v + ": expected 0 to 100");
      b.warn_percent = static_cast<uint32_t>(*pct);
    } else {
      return InvalidArgument("--" + key + ": not a budget option");
    }
  }
  if ((values.count("start") || values.count("end")) && !values.count("period")) {
    b.period = BudgetPeriod::kWindow;
  }
  return {};
}

void Print(const std::vector<api::BudgetStatus>& list) {
  Table t({"ACCOUNT", "PERIOD", "FROM", "TO", "GPU_HOURS", "SPENT", "LEFT", "ENERGY_KWH",
           "SPENT_KWH", "LEFT_KWH", "WARN", "WARNED"});
  for (const api::BudgetStatus& b : list) {
    const Budget& bu = b.budget;
    std::string period(BudgetPeriodName(bu.period));
    if (!b.in_force) period += " (not in force)";
    t.Add({b.account, period, FormatTimestamp(b.period_start), FormatTimestamp(b.period_end),
           bu.gpu_hours ? Fixed(*bu.gpu_hours, 2) : "-",
           bu.gpu_hours ? Fixed(b.spent_gpu_hours, 2) : "-",
           bu.gpu_hours ? Fixed(b.left_gpu_hours, 2) : "-",
           bu.energy_kwh ? Fixed(*bu.energy_kwh, 3) : "-",
           bu.energy_kwh ? Fixed(b.spent_energy_kwh, 3) : "-",
           bu.energy_kwh ? Fixed(b.left_energy_kwh, 3) : "-",
           bu.warn_percent == 0 ? "-" : std::to_string(bu.warn_percent) + "%",
           b.warned ? "yes" : "no"});
  }
  std::fputs(t.Render().c_str(), stdout);
}

Result<std::vector<api::BudgetStatus>> Statuses(Client& client,
                                                const std::vector<std::string>& names) {
  CORRAL_ASSIGN_OR_RETURN(std::string body, client.GovernanceGet("budgets", ""));
  CORRAL_ASSIGN_OR_RETURN(std::vector<api::BudgetStatus> all, api::DecodeBudgetStatusList(body));
  if (names.empty()) return all;
  std::vector<api::BudgetStatus> some;
  for (api::BudgetStatus& b : all) {
    for (const std::string& n : names) {
      if (b.account == n) some.push_back(b);
    }
  }
  return some;
}

}  // namespace

std::vector<std::string> BudgetFlags() {
  return {"gpu-hours", "energy-kwh", "period", "start", "end", "warn"};
}

int AccountBudget(Client& client, const std::vector<std::string>& args,
                  const std::map<std::string, std::string>& values, bool json) {
  const bool clear = args.size() == 2 && args[1] == "clear";
  if (values.empty() && !clear) {
    auto list = Statuses(client, args);
    if (!list) return Fail(list.error().message);
    if (json) {
      std::printf("%s\n", api::EncodeBudgetStatusList(*list).c_str());
    } else {
      Print(*list);
    }
    return 0;
  }
  if (args.size() != (clear ? 2u : 1u)) return Usage("give one account");
  if (clear && !values.empty()) return Usage("clear takes no options");
  const std::string& name = args[0];
  auto body = client.GovernanceGet("accounts", name);
  if (!body) return Fail(body.error().message);
  auto account = api::DecodeAccount(*body);
  if (!account) return Fail(account.error().message);
  if (clear) {
    account->budget.reset();
  } else {
    Budget b = account->budget.value_or(Budget{});
    if (Status s = Apply(values, b); !s) return Usage(s.error().message);
    account->budget = b;
  }
  auto stored = client.GovernancePut("accounts", name, api::EncodeAccount(*account), false);
  if (!stored) return Fail(stored.error().message);
  if (json) {
    std::printf("%s\n", stored->c_str());
  } else {
    std::printf("account %s: budget %s\n", name.c_str(), clear ? "removed" : "set");
  }
  return 0;
}

std::string PrintBudgetsOf(Client& client, const std::vector<std::string>& names) {
  auto list = Statuses(client, names);
  if (!list) return list.error().message;
  if (list->empty()) return "";
  std::printf("\n");
  Print(*list);
  return "";
}

}  // namespace corral::cli
