// `corral audit`: the controller's audit log (docs/governance.md, "Audit log").
//
//   corral audit [--since T] [--user U] [--job J] [--node N] [--limit N] [--json]
//   corral audit verify [--json]
//
// The first prints the records (a table, or one JSON object per line with --json: the export
// format); the second asks the controller to check the hash chain and exits 1 when it finds a
// record missing, changed or reordered. Admins and operators only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli/client.h"

namespace corral::cli {

// Returns 0, 1 (an error, or a chain that does not verify) or 2 (a usage error).
int Audit(Client& client, const std::vector<std::string>& positional,
          const std::map<std::string, std::string>& values, bool json);

}  // namespace corral::cli
