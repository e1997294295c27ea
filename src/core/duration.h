// Durations in every form Slurm accepts and prints.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "core/time.h"

namespace corral {

// Parses a Slurm time: "M", "M:S", "H:M:S", "D-", "D-H", "D-H:M", "D-H:M:S", or "UNLIMITED" /
// "INFINITE" (any case), which give `kUnlimited`. A bare number is minutes. Fields after the
// first may exceed their usual range, as in Slurm ("90:00" is 90 minutes).
// Returns kInvalidArgument naming the text if it is not one of those forms, is negative, or
// overflows.
Result<Duration> ParseSlurmDuration(std::string_view text);

// Formats as Slurm prints limits and elapsed times: "M:SS" under an hour, "H:MM:SS" under a day,
// "D-HH:MM:SS" beyond; "UNLIMITED" for `kUnlimited`. Sub-second parts are dropped.
std::string FormatSlurmDuration(Duration d);

}  // namespace corral
