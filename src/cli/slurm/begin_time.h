// `--begin` times, in the forms Slurm 22.05 accepts (checked against a real 22.05.8):
//
//   now[+-]N[seconds|minutes|hours|days|weeks]   (singular allowed; a bare N is seconds)
//   HH:MM[:SS][AM|PM]        today, or tomorrow when that time has passed
//   midnight, noon, elevenses (11:00), fika (15:00), teatime (16:00), today, tomorrow
//   MMDD[YY], MM/DD[/YY], MM.DD[.YY]  (next year when the date has passed), optionally
//   followed by -HH:MM[:SS]
//   YYYY-MM-DD[THH:MM[:SS]]
//
// Times are local: the caller passes `now` and the local zone's offset from UTC.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/result.h"
#include "core/time.h"

namespace corral::slurm {

// Returns the time at which the job becomes eligible, or the epoch when that is now or in the
// past (Slurm then shows "EligibleTime=Unknown" and treats the job as eligible at once).
// Returns kInvalidArgument naming the text when it is none of the forms above.
Result<Timestamp> ParseBeginTime(std::string_view text, Timestamp now,
                                 int64_t utc_offset_seconds = 0);

// sacct's -S/-E times: the same forms, read as Slurm reads them for the past: a time of day is
// today's, or yesterday's while still to come; MMDD is this year's, or last year's while still
// to come; "today" is today's midnight, "now-2days" two days ago. The time is returned as is,
// past or not. Returns kInvalidArgument ("invalid time specification ...") otherwise.
Result<Timestamp> ParsePastTime(std::string_view text, Timestamp now,
                                int64_t utc_offset_seconds = 0);

}  // namespace corral::slurm
