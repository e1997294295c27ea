// Job traces for `corral sim`: the CSV form the simulator replays, its parser and its writer.
//
// A trace is a list of jobs with their submit time (seconds after the start of the trace), the
// run time they really had, and what they asked for. The CSV has a header row naming the
// columns; these are required, in any order:
//
//   job_id,submit_time_s,duration_s,num_gpus,user,queue
//
// and these optional (empty cell = not given):
//
//   time_limit_s   the limit the user asked for (else derived, see docs/simulator.md)
//   num_nodes      nodes the job is spread over (else derived from the node size)
//   gpu_type       GPU model the job needs ("v100"); else any
//   account        the account to charge (else the queue)
//
// Other columns are ignored. Times are seconds, integer or decimal (microsecond precision).
// Cells may not be quoted. Lines starting with `#` and blank lines are skipped.
//
// Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/time.h"

namespace corral::sim {

struct TraceJob {
  uint64_t job_id = 0;    // the trace's own id (shown in outputs)
  Duration submit{0};     // since the start of the trace, >= 0
  Duration duration{0};   // actual run time, > 0
  uint32_t num_gpus = 0;  // >= 1
  std::string user;
  std::string queue;
  std::optional<Duration> time_limit;  // > 0 when given
  uint32_t num_nodes = 0;              // 0 = derive from the node size
  std::string gpu_type;                // "" = any
  std::string account;                 // "" = the queue
  bool operator==(const TraceJob&) const = default;
};

struct Trace {
  std::vector<TraceJob> jobs;  // sorted by (submit, job_id)
  bool operator==(const Trace&) const = default;
};

// Parses a trace CSV (see the file comment) and sorts it by (submit, job_id).
// `source_name` prefixes every message: "philly.csv:12: duration_s: not a number \"x\"".
// Returns kInvalidArgument for a missing required column, a duplicated column, a row with the
// wrong number of cells, a value that is not a number or out of range (negative submit time,
// duration <= 0, num_gpus < 1, num_nodes that does not divide num_gpus, time_limit_s <= 0),
// a duplicated job_id, a quoted cell, or a trace without jobs.
Result<Trace> ParseTraceCsv(std::string_view text, std::string_view source_name = "trace");

// Writes `trace` in the CSV form `ParseTraceCsv` reads: the six required columns, then
// `time_limit_s,num_nodes,gpu_type,account` when any job has one of them. Seconds are printed
// as integers when whole, else with six decimals.
std::string FormatTraceCsv(const Trace& trace);

// "12" for whole seconds, else "12.500000".
std::string FormatSeconds(Duration d);

}  // namespace corral::sim
