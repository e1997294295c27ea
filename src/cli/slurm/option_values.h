// The values of sbatch's, srun's and salloc's options, parsed as Slurm 22.05 reads them:
// time limits and signals.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/job.h"
#include "core/result.h"
#include "core/time.h"

namespace corral::slurm {

// Parses a `-t/--time` value as Slurm does: every ParseSlurmDuration form plus "D-" (days),
// rounded up to whole minutes; "0" is unlimited. Returns kInvalidArgument naming the text.
Result<Duration> ParseTimeLimit(std::string_view text);

// Parses `--signal=[B:]SIG[@SECONDS]` (SIG a number or a name, with or without "SIG";
// SECONDS defaults to 60). Returns kInvalidArgument naming the text, kUnimplemented for "R:".
Result<SignalSpec> ParseSignalSpec(std::string_view text);

namespace internal {

// True when `s` is one or more ASCII digits.
bool AllDigits(std::string_view s);

}  // namespace internal
}  // namespace corral::slurm
