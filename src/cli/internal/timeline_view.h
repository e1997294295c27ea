// The text of `corral show --timeline` (docs/latency.md): a job's trace (core/job_trace.h) as
// one line per mark, with the time since the submission and since the mark before. A pure
// function of the API's answer, so that tests check it without a cluster. Internal to cli.
//
// Thread-safe (pure functions).
#pragma once

#include <string>

#include "api/messages.h"

namespace corral::cli::internal {

// "1.234 ms", "87 us", "2.500 s": a duration between two marks.
std::string FormatTraceDuration(Duration d);

// The timeline's text, ending in a newline: the marks reached, in the order they happened
// (clocks of two hosts can swap close marks), then those not reached, with "-".
std::string RenderTimeline(const api::JobTimeline& t);

}  // namespace corral::cli::internal
