// Job-array index specifications (`sbatch --array`), parsed as Slurm 22.05 accepts them, and
// the forms Slurm prints them in. The controller expands an array into its tasks with these;
// the CLI validates `--array` with them before submitting.
//
//   "0-15"        indices 0..15            "0,6,16-32"   a list of indices and ranges
//   "0-15:4"      0,4,8,12 (a step)        "1-7:3,20%2"  at most 2 tasks running at once
//
// Indices are kept sorted and unique (Slurm stores them as a bitmap: "5,1,3" is 1,3,5 and
// "1-3,2-4" is 1-4). Empty list items are skipped ("1,,3"); leading zeros are allowed; a
// throttle of 0 or an empty one ("1-3%") means no throttle. Every index must be below the
// cluster's MaxArraySize (Slurm's default: 1001).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace corral {

// Slurm's default MaxArraySize: indices 0..1000.
inline constexpr uint32_t kDefaultMaxArraySize = 1001;

// At most this many indices in one specification, whatever the maximum array size.
inline constexpr size_t kMaxArrayIndices = 4'000'000;

struct ArraySpec {
  std::vector<uint32_t> indices;  // ascending, unique, never empty once parsed
  uint32_t max_running = 0;       // the "%N" throttle; 0 = no limit
  // The step of the first "lo-hi:step" item (1 when none): SLURM_ARRAY_TASK_STEP.
  uint32_t step = 1;
  bool operator==(const ArraySpec&) const = default;
};

// Parses an `--array` value. Returns kInvalidArgument naming the text when an item is not
// "N", "N-M" or "N-M:S" (S >= 1, N <= M), an index is >= `max_array_size`, the throttle is
// not a number, no index is given, or more than `kMaxArrayIndices` are.
Result<ArraySpec> ParseArraySpec(std::string_view text,
                                 uint32_t max_array_size = kDefaultMaxArraySize);

// Formats indices as Slurm's bitmap form, as squeue shows a pending array ("0-9", "1,4,7,20",
// "1-3,7"), with "%N" appended when `max_running` is set: "0-9%2". Requires: `indices`
// ascending and unique.
std::string FormatArrayIndices(const std::vector<uint32_t>& indices, uint32_t max_running = 0);

}  // namespace corral
