// Slurm's output/error/input file-name patterns (`sbatch -o/-e/-i`, `srun -o/-e`), expanded
// exactly as Slurm 22.05's slurmstepd does (checked against a real 22.05.8):
//
//   %%  a literal '%'                 %A  the array's master job id (the job id outside an array)
//   %j  the job id                    %a  the array task id (4294967294 outside an array)
//   %J  "jobid.stepid"; the job id alone for the batch step
//   %s  the step id; "batch" for the batch step
//   %x  the job name                  %u  the user name
//   %N  the node's name               %n  the node's index in the job (0 for the batch step)
//   %t  the task id (0 for the batch step)
//
// A number between '%' and the letter zero-pads numeric fields (`%3a` -> "007", `%5j`);
// widths above 10 count as 10; text fields (%x %u %N %s-as-"batch") ignore it. Anything else is
// kept literally, with Slurm's quirks: an unknown letter keeps its '%' ("%q" -> "%q"); a width
// before a non-field keeps only the width's last digit and drops the '%' ("%12_" -> "2_"); a
// lone trailing '%' stays. A pattern holding a backslash is not expanded at all: backslashes are
// removed and the rest kept ("a\%j" -> "a%j"). `$VAR` and `~` are never expanded.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace corral {

// Outside an array, Slurm's `%a` prints its NO_VAL marker, 0xfffffffe.
inline constexpr uint32_t kSlurmNoArrayTaskId = 4294967294u;

// The values a pattern may refer to.
struct OutputPatternValues {
  uint64_t job_id = 0;
  uint64_t array_job_id = 0;              // 0 = not part of an array
  std::optional<uint32_t> array_task_id;  // unset = not part of an array
  std::optional<uint32_t> step_id;        // unset = the batch step
  std::string job_name;
  std::string user;
  std::string node_name;    // the node the file is opened on
  uint32_t node_index = 0;  // the node's index in the job (step)
  uint32_t task_id = 0;     // the task's rank in the step
};

// Expands `pattern` (see the header comment). Never fails: what is not a field is kept.
std::string ExpandOutputPattern(std::string_view pattern, const OutputPatternValues& values);

// The file name a batch job writes to when it gives no `-o`: "slurm-%j.out", or
// "slurm-%A_%a.out" for an array job (relative to the job's working directory).
std::string_view DefaultOutputPattern(bool is_array);

// Expands `pattern` and makes it absolute against `working_dir` when it is relative, as
// slurmstepd opens it (`working_dir` without a trailing slash; "" leaves it relative).
// An empty `pattern` means the default (`DefaultOutputPattern`).
std::string ResolveOutputPath(std::string_view pattern, const OutputPatternValues& values,
                              std::string_view working_dir);

}  // namespace corral
