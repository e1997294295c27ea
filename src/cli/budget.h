// `corral account budget`: account budgets (core/budget.h; docs/governance.md, "Budgets").
//
//   corral account budget [NAME...]        the budgets' spend this period (all, or NAMEs')
//   corral account budget NAME [--gpu-hours H] [--energy-kwh K]
//                              [--period day|week|month|window] [--start T --end T]
//                              [--warn PCT]   sets (or changes) NAME's budget
//   corral account budget NAME clear       removes it
//
// A budget is a field of its account's record: setting one reads the account, changes its
// budget and writes it back (PUT /api/v1/accounts/NAME; admins). "none" clears one amount.
// --start/--end take sacct's time forms. Everyone may read the spend (GET /api/v1/budgets).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli/client.h"

namespace corral::cli {

// The value flags of `corral account budget`.
std::vector<std::string> BudgetFlags();

// `args` follow "budget". Returns 0, 1 (an error) or 2 (a usage error).
int AccountBudget(Client& client, const std::vector<std::string>& args,
                  const std::map<std::string, std::string>& values, bool json);

// Prints the budget lines of the accounts among `names` that have one (`corral account show`).
// Returns an error message, "" on success.
std::string PrintBudgetsOf(Client& client, const std::vector<std::string>& names);

}  // namespace corral::cli
