// Records for store tests and benchmarks. Test-only (target corral_store_testing).
//
// `PopulatedJob` and `PopulatedNode` set every field to a value different from its default
// (and, through `variant`, different between records), so that a column or codec field that
// a store forgets fails the round-trip tests. When a field is added to `Job` or `Node`, set
// it here too; `RecordCodecTest.RecordLayoutsAreKnown` fails as a reminder.
#pragma once

#include <cstdint>

#include "core/job.h"
#include "core/node.h"

namespace corral::store::testing {

// Every field of `Job` non-default. `variant` changes every value.
Job PopulatedJob(uint64_t id, uint32_t variant = 0);
// Every field of `Node` non-default.
Node PopulatedNode(uint32_t id, uint32_t variant = 0);

// A typical record of a busy cluster: a 300-byte script, 5 environment variables, a
// 2-node allocation of 8 GPUs each, finished with usage.
Job RealisticJob(uint64_t id);

}  // namespace corral::store::testing
