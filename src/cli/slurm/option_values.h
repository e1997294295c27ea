// The values of sbatch's, srun's and salloc's options, parsed as Slurm 22.05 reads them:
// time limits, signals, node counts, GPU counts, --gres lists, --nice and --mail-type. Each
// parser names what is wrong in its error; the option's handler (internal/job_options.h) adds
// which option and source it came from.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
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

// `-N/--nodes` "MIN[-[MAX]]": MAX is 0 when not given or equal to MIN.
struct NodeCount {
  uint32_t min = 0;
  uint32_t max = 0;
};
// Returns nullopt for anything else, a count of 0 or MAX < MIN.
std::optional<NodeCount> ParseNodeCount(std::string_view text);

// `--gpus`, `--gpus-per-node`, `--gpus-per-task`: "[gpu:][TYPE:]COUNT".
struct GpuCount {
  std::string type;  // "" = any
  uint32_t count = 0;
};
// Returns kInvalidArgument with the reason ("expected [type:]count", "one GPU type per job
// is supported").
Result<GpuCount> ParseGpuCount(std::string_view text);

// `--gres=gpu[:TYPE][:COUNT][,...]` ("gres/" and "gres:" prefixes allowed; the last item
// wins) or "none" (count 0). Returns kInvalidArgument with the reason, or kUnimplemented with
// the name of a generic resource other than "gpu" as the message.
Result<GpuCount> ParseGres(std::string_view text);

// `--nice=[+|-]N`. Returns kInvalidArgument with the reason ("expected a number", "out of
// range").
Result<int32_t> ParseNice(std::string_view text);

// `--mail-type=TYPE[,TYPE...]` (NONE, BEGIN, END, FAIL, ..., any case). Returns
// kInvalidArgument with the reason ("unknown mail type \"X\"").
Status CheckMailTypes(std::string_view text);

// Repeated `--mail-type`s add up in Slurm 22.05 (a bit mask: `--mail-type=BEGIN` then `END`
// is BEGIN,END; NONE adds nothing; ALL is INVALID_DEPEND,BEGIN,END,FAIL,REQUEUE,STAGE_OUT).
// Returns `current` (a list this function made, or "") with the types of `text` added, in the
// order Slurm prints them (ARRAY_TASKS, INVALID_DEPEND, BEGIN, END, FAIL, REQUEUE, STAGE_OUT,
// TIME_LIMIT, TIME_LIMIT_90, TIME_LIMIT_80, TIME_LIMIT_50); "" when none. Same errors as
// CheckMailTypes.
Result<std::string> AddMailTypes(std::string_view current, std::string_view text);

namespace internal {

// True when `s` is one or more ASCII digits.
bool AllDigits(std::string_view s);

}  // namespace internal
}  // namespace corral::slurm
