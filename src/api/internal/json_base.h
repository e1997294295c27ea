// The machinery shared by the JSON codecs of api/json_codec.h (internal to api/): limits,
// text helpers for error messages, field wrappers and the type traits the encoder and the
// decoder dispatch on. The codecs are split by message family (json_codec_jobs.cc,
// json_codec_nodes.cc, json_codec_steps.cc); each message has one `Fields()` table
// (json_fields_*.h) that drives both the encoder (json_encoder.h) and the decoder
// (json_decoder.h). nlohmann/json is included only in json_dom.cc.
//
// Thread-safe (pure functions).
#pragma once

#include <algorithm>
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "api/messages.h"
#include "core/duration.h"
#include "core/gpu.h"
#include "core/governance.h"
#include "core/ids.h"
#include "core/job.h"
#include "core/node.h"
#include "core/partition.h"
#include "core/resources.h"
#include "core/result.h"
#include "core/shared_value.h"
#include "core/time.h"

namespace corral::api::internal {

// Documents nested deeper than this are rejected while parsing. Corral's deepest message
// (a job list) nests 7 levels; the limit bounds the recursion of the decoder and of the
// DOM's destructor whatever a client sends.
constexpr size_t kMaxDepth = 64;

// The largest number of seconds a `Duration` (int64 microseconds) holds.
constexpr uint64_t kMaxDurationSeconds =
    static_cast<uint64_t>(std::numeric_limits<int64_t>::max() / 1'000'000);

// Timestamps are written in RFC 3339's range, years 0000..9999; others are clamped.
constexpr int64_t MicrosAtStartOfYear(int year) {
  return std::chrono::sys_days{std::chrono::year{year} / 1 / 1}.time_since_epoch().count() *
         86'400'000'000;
}
constexpr int64_t kMinTimestampMicros = MicrosAtStartOfYear(0);
constexpr int64_t kMaxTimestampMicros = MicrosAtStartOfYear(10000) - 1;

// The length of the valid UTF-8 sequence (RFC 3629) that starts at `s[i]`, or 0 if the bytes
// there are not one.
size_t Utf8SequenceLength(std::string_view s, size_t i);

// At most `max_bytes` of `s` for an error message: valid UTF-8 only (other bytes as \xNN),
// control characters escaped, and quotes and backslashes too when `quoted` (the excerpt goes
// between double quotes); "..." when cut.
std::string Excerpt(std::string_view s, size_t max_bytes = 40, bool quoted = true);

template <typename T>
std::string IntText(T v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

// Parses "YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)" (RFC 3339; 'T' and 'Z' in either
// case). Fractions beyond microseconds are truncated; leap seconds are not accepted.
std::optional<Timestamp> ParseRfc3339(std::string_view s);

// Enum names of the messages (the core enums have theirs in core/).
std::string_view JobEventTypeName(JobEventType t);
Result<JobEventType> ParseJobEventType(std::string_view text);
Result<DependencyType> ParseDependencyType(std::string_view text);
Result<PreemptMode> ParsePreemptModeText(std::string_view text);
Result<BudgetPeriod> ParseBudgetPeriodText(std::string_view text);

// ---------------------------------------------------------------------------------------------
// Field wrappers: fields whose JSON form is not implied by their C++ type.

// A time limit: also accepts a Slurm duration string. `T` is [const] Duration or
// [const] std::optional<Duration>.
template <typename T>
struct SlurmTimeRef {
  T& value;
};
template <typename T>
SlurmTimeRef<T> SlurmTime(T& v) {
  return {v};
}

// A GPU index (or a list of them): must be below `kMaxGpusPerNode`. `T` is [const] uint32_t
// or [const] std::vector<uint32_t>.
template <typename T>
struct GpuIndexRef {
  T& value;
};
template <typename T>
GpuIndexRef<T> GpuIndex(T& v) {
  return {v};
}

template <typename T>
struct IsSlurmTime : std::false_type {};
template <typename T>
struct IsSlurmTime<SlurmTimeRef<T>> : std::true_type {};
template <typename T>
struct IsGpuIndex : std::false_type {};
template <typename T>
struct IsGpuIndex<GpuIndexRef<T>> : std::true_type {};
template <typename T>
struct IsStrongId : std::false_type {};
template <typename Tag, typename Rep>
struct IsStrongId<StrongId<Tag, Rep>> : std::true_type {};
template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsShared : std::false_type {};
template <typename T>
struct IsShared<Shared<T>> : std::true_type {};
template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};

template <typename S, typename T>
concept Is = std::same_as<std::remove_const_t<S>, T>;

// The top-level list forms, {"jobs": [...]}: `items` is [const] std::vector<...>.
template <typename T>
struct ListRef {
  std::string_view name;
  T& items;
};
template <typename T>
struct IsListRef : std::false_type {};
template <typename T>
struct IsListRef<ListRef<T>> : std::true_type {};
template <typename S>
concept AnyListRef = IsListRef<std::remove_const_t<S>>::value;

constexpr std::string_view kJobsList = "jobs";
constexpr std::string_view kNodesList = "nodes";
constexpr std::string_view kPartitionsList = "partitions";
constexpr std::string_view kStepsList = "steps";
constexpr std::string_view kPrioritiesList = "priorities";
constexpr std::string_view kAccountsList = "accounts";
constexpr std::string_view kUsersList = "users";
constexpr std::string_view kQosList = "qos";
constexpr std::string_view kBudgetsList = "budgets";

// Typical encoded sizes, to reserve the output once.
constexpr size_t kJobBytes = 2048;
constexpr size_t kNodeBytes = 1024;

}  // namespace corral::api::internal
