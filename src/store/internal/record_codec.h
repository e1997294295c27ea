// The store's on-disk encoding of the parts of a record that are not columns of their own
// (a job's spec and allocation, a node's body). Private to the store.
//
// Format (store encoding version 1; versioned separately from the API's JSON and from the
// SQL schema version):
//   blob    := version-byte field*         version-byte is 0x01
//   field   := key payload                 key = varint((field_number << 3) | wire_type)
//   wire type 0: varint payload (LEB128). Unsigned values as is; signed values (durations,
//                timestamps, `nice`, signal numbers) zigzag-encoded; bools 0/1; GPU sets
//                as their 64-bit mask.
//   wire type 1: 8 bytes little-endian (doubles, as their IEEE-754 bits).
//   wire type 2: varint length, then that many bytes (strings, nested messages).
// A nested message is a field sequence without a version byte. Repeated fields repeat their
// key, in order. Scalars are always written; empty strings and empty lists are left out
// (their default is empty). A reader starts from the default-constructed struct, so a field
// that is absent reads as the struct's default, and skips field numbers it does not know:
// a newer writer may add fields, an older reader ignores them. Field numbers are never
// reused; enums are mapped to fixed numbers (never the C++ enumerator values). The field
// numbers are listed in record_codec.cc next to each encoder.
//
// Thread-safe (pure functions).
#pragma once

#include <string>
#include <string_view>

#include "core/job.h"
#include "core/node.h"
#include "core/result.h"

namespace corral::store::internal {

inline constexpr uint8_t kEncodingVersion = 1;

// Every field of `spec` except `name`, `user` and `account`, which are columns. Appends to
// `out` after clearing it.
void EncodeJobSpec(const JobSpec& spec, std::string* out);
// Decodes into `spec`, leaving `name`, `user` and `account` as they are. Returns
// kInternal saying what is wrong and at which byte when `data` is not a valid encoding.
Status DecodeJobSpec(std::string_view data, JobSpec* spec);

// The allocation and, when `trace` is given, the job's trace (core/job_trace.h; its field 7):
// the `allocation` column holds both.
void EncodeAllocation(const Allocation& alloc, std::string* out, const JobTrace* trace = nullptr);
// Returns kInternal as `DecodeJobSpec` does. Reads the trace into `trace` when given.
Status DecodeAllocation(std::string_view data, Allocation* alloc, JobTrace* trace = nullptr);

// Every field of `node` except `id` and `inventory.name`, which are columns.
void EncodeNodeBody(const Node& node, std::string* out);
// Returns kInternal as `DecodeJobSpec` does.
Status DecodeNodeBody(std::string_view data, Node* node);

}  // namespace corral::store::internal
