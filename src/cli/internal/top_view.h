// The frame of `corral top` (docs/metrics-jobs.md): pure functions from what the controller's
// API answers (nodes, active jobs, and the running jobs' GPU statistics, the same calls as the
// web dashboard) to a `TopFrame`, then to text (plain, or with ANSI colours) or JSON, so that
// tests check them without a cluster or a terminal. Internal to cli.
//
// Every string that comes from the cluster (user, account, node and partition names, reasons,
// waste notes) is shown with its control characters replaced, so that no name can move the
// cursor or rewrite the screen.
//
// Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/messages.h"

namespace corral::cli::internal {

// One GPU of a node.
struct TopGpu {
  uint32_t index = 0;
  std::string model;
  std::string state;              // "free", "allocated", "failed", "down"
  std::optional<JobId> job;       // the running job that holds it
  std::optional<double> util;     // percent, the job's latest reading of it
  std::optional<uint64_t> mem_mb;  // the latest peak memory of it
  bool waste = false;             // its job is flagged as wasting its GPUs
};

struct TopNode {
  std::string name;
  std::string state;  // Slurm's lower-case names ("idle", "mixed", ...)
  std::vector<std::string> partitions;
  std::vector<TopGpu> gpus;
};

struct TopJob {
  JobId id;
  std::string user;
  std::string account;
  std::string partition;
  std::string state;  // "RUNNING", "PENDING"
  uint32_t gpus = 0;  // held, or asked for
  std::string nodes;  // "node01:0,1 node02:3" (running)
  Duration elapsed{};  // running: since its start
  std::optional<double> util;      // running: mean over its GPUs' latest readings
  std::optional<uint64_t> mem_mb;  // running: the sum of its GPUs' latest peak memory
  std::string waste;               // the GPU-waste note; "" = not flagged
  int64_t priority = 0;            // pending
  std::string reason;              // pending
  Timestamp estimated_start{};     // pending; epoch = unknown
};

struct TopFrame {
  Timestamp now{};
  std::string controller;  // the controller's URL
  std::vector<TopNode> nodes;
  std::vector<TopJob> running;  // by id
  std::vector<TopJob> pending;  // by priority, highest first, then id
  // Totals over the whole cluster.
  uint32_t gpus_total = 0, gpus_allocated = 0, gpus_free = 0, gpus_failed = 0, gpus_down = 0;
  uint32_t waste_flagged = 0;
};

// Builds the frame. `jobs` are the active jobs; `stats` the GPU statistics of (some of) the
// running ones (a job missing there shows no utilisation).
TopFrame BuildTopFrame(const std::vector<api::NodeInfo>& nodes,
                       const std::vector<api::JobInfo>& jobs,
                       const std::map<JobId, api::GpuStatsInfo>& stats, Timestamp now,
                       const std::string& controller);

struct TopStyle {
  bool color = false;      // ANSI colours (SGR) for states, utilisation and waste
  uint32_t width = 120;    // columns: longer lines are cut
  uint32_t height = 0;     // rows: 0 = no limit; else the job lists are cut to fit
  uint32_t interval_s = 0;  // shown in the header when refreshing (0 = one frame)
};

// The frame as text: a header with totals, the nodes (one line each, a cell per GPU:
// "INDEX:UTIL%" and the job holding it, "!" after a job flagged for waste), the running jobs
// (utilisation, memory, waste note) and the pending jobs (priority, reason, estimated start).
std::string FormatTopFrame(const TopFrame& frame, const TopStyle& style);

// The frame as one JSON object (docs/metrics-jobs.md shows its fields).
std::string EncodeTopFrame(const TopFrame& frame);

}  // namespace corral::cli::internal
