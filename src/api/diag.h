// `sdiag`'s figures as GET /api/v1/diag answers them (operators, admins and the metrics
// principal: docs/slurm.md, "sdiag"), and their JSON codec. Counts are since the controller
// started (`since`), as Slurm's are since slurmctld started; conventions as api/json_codec.h.
//
// Value types; thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/time.h"

namespace corral::api {

// The requests of one route of the API (Slurm's "RPC by message type").
struct DiagRoute {
  std::string method;  // "POST"
  std::string route;   // the route's pattern, "/api/v1/jobs/{id}/cancel"
  uint64_t count = 0;
  double total_seconds = 0;
  bool operator==(const DiagRoute&) const = default;
};

// The authenticated requests of one principal (Slurm's "RPC by user").
struct DiagUser {
  std::string user;
  uint32_t uid = 0;  // 4294967295 for principals without a Unix id (agents, tokens of roles)
  uint64_t count = 0;
  double total_seconds = 0;
  bool operator==(const DiagUser&) const = default;
};

struct DiagInfo {
  Timestamp now{};
  Timestamp since{};            // the controller's start
  uint32_t server_threads = 0;  // the API server's handler threads started so far
  // Jobs since `since`: submitted (an array's tasks each), started (requeued runs again),
  // ended COMPLETED, CANCELLED, or otherwise (FAILED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY,
  // PREEMPTED); pending and running now.
  uint64_t jobs_submitted = 0;
  uint64_t jobs_started = 0;
  uint64_t jobs_completed = 0;
  uint64_t jobs_canceled = 0;
  uint64_t jobs_failed = 0;
  uint64_t jobs_pending = 0;
  uint64_t jobs_running = 0;
  // Scheduling passes (one pass places jobs in priority order and backfills behind the
  // reservations of blocked ones: Slurm's main and backfill schedulers in one).
  uint64_t cycles = 0;
  double last_cycle_seconds = 0;
  double max_cycle_seconds = 0;
  double total_cycle_seconds = 0;
  uint64_t examined_total = 0;     // pending jobs the passes got to
  uint64_t last_queue_length = 0;  // pending jobs when the last pass began
  uint64_t last_examined = 0;
  uint64_t backfilled_total = 0;  // started ahead of a higher-priority job's reservation
  uint64_t last_backfilled = 0;
  uint64_t last_reservations = 0;  // start times the last pass holds for blocked jobs
  Timestamp last_pass_time{};
  std::vector<DiagRoute> routes;  // by count, most first
  std::vector<DiagUser> users;    // by count, most first
  bool operator==(const DiagInfo&) const = default;
};

std::string EncodeDiagInfo(const DiagInfo& d);
// Returns kInvalidArgument naming the field for malformed JSON.
Result<DiagInfo> DecodeDiagInfo(std::string_view json);

}  // namespace corral::api
