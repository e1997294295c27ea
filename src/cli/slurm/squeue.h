// squeue's output, rendered as Slurm 22.05 prints it (checked byte for byte against a real
// 22.05.8): the default, -l and --start views, -o/--format strings ("%.18i %.9P %8j ..."),
// -O/--Format field lists ("JobID:10,Name:.20|,..."), -h and -r.
//
// Format strings work as in Slurm: text before the first '%' is printed as is; each "%" item is
// "[.][width]letter[suffix]" ('.' right-aligns; text after the letter up to the next '%' follows
// the field); "%%" prints nothing; an unknown letter is printed literally with a warning.
// Fields are padded to their width and cut to it, except times and node lists, which are never
// cut when right-aligned (as in Slurm). -O items are "Name[:[.][width][suffix]]" with a default
// width of 20 and no blank between fields.
//
// Jobs are shown sorted as squeue sorts them (partition, then state, then submission order);
// pending tasks of one array are combined into one line ("12_[2-5%2]") unless -r.
//
// Values Corral does not track print as Slurm prints unset ones: "(null)",
// "*:*:*". Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "api/messages.h"
#include "core/time.h"

namespace corral::slurm {

struct SqueueOptions {
  std::string format;        // -o/--format (or SQUEUE_FORMAT); "" = the view's default
  std::string long_format;   // -O/--Format (or SQUEUE_FORMAT2)
  bool long_output = false;  // -l
  bool start = false;        // --start: pending jobs, by expected start time
  bool no_header = false;    // -h
  bool array_tasks = false;  // -r: one line per array task
  Timestamp now{};
  int64_t utc_offset_seconds = 0;
  // Group names for %g / GroupName; numeric when unset.
  std::function<std::string(uint32_t gid)> group_name;
};

struct RenderResult {
  std::string text;                   // stdout
  std::vector<std::string> warnings;  // stderr lines ("squeue: error: Invalid ...")
};

// Renders `jobs` (already filtered by -u/-j/-p/-t/...).
RenderResult RenderSqueue(const std::vector<api::JobInfo>& jobs, const SqueueOptions& options);

// The default format strings of each view.
inline constexpr const char* kSqueueDefaultFormat = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
inline constexpr const char* kSqueueLongFormat = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
inline constexpr const char* kSqueueStartFormat = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";

// ctime(3)'s form of `t` in the given zone: "Sun Nov 29 17:09:03 2026" (the first line of -l).
std::string CtimeLine(Timestamp t, int64_t utc_offset_seconds);

}  // namespace corral::slurm
