// `--dependency` values, parsed as Slurm 22.05 accepts them:
//
//   after:ID[+MIN][:ID[+MIN]...]   afterany:ID[:ID...]   afterok:...   afternotok:...
//   aftercorr:...   singleton
//
// joined with ',' (all must be satisfied) or '?' (any one), not both. IDs are numeric job ids;
// "+MIN" (a delay in minutes) is accepted after `after` only, as in Slurm.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "core/result.h"

namespace corral::slurm {

struct DependencySpec {
  std::vector<Dependency> dependencies;
  bool any = false;  // joined with '?'
  bool operator==(const DependencySpec&) const = default;
};

// Parses a dependency list. An ID with its own delay becomes its own `Dependency`.
// Returns kInvalidArgument naming the text for an unknown type, a missing or non-numeric job
// id, a delay on a type other than `after`, or a mix of ',' and '?'. Returns kUnimplemented for
// array-task ids ("12_3") and types Corral does not support (afterburstbuffer, expand).
Result<DependencySpec> ParseDependencySpec(std::string_view text);

// Formats as Slurm shows it in `scontrol show job` / squeue %E: "afterok:12,afterany:13+5".
std::string FormatDependencies(const std::vector<Dependency>& deps, bool any);

}  // namespace corral::slurm
