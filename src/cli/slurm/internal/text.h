// Text helpers shared by the squeue/sinfo/sacct/scontrol renderers: Slurm's field padding,
// time and memory formats. Internal to cli/slurm.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/messages.h"
#include "core/time.h"

namespace corral::slurm::internal {

// Slurm's `_print_str` of squeue/sinfo: `width` 0 prints the value as is; otherwise the value
// is padded with blanks to `width` (on the left when `right`) and, when `cut` (or always when
// left-aligned, as printf's precision does there), cut to `width` keeping its start.
std::string Pad(std::string_view value, int width, bool right, bool cut);

// "2026-11-29T17:29:27" in the zone `utc_offset_seconds` east of UTC.
std::string LocalTime(Timestamp t, int64_t utc_offset_seconds);

// squeue/sinfo durations: "M:SS", "H:MM:SS", "D-HH:MM:SS"; "INVALID" when negative.
std::string ShortDuration(int64_t seconds);

// scontrol/sacct durations: "HH:MM:SS", "D-HH:MM:SS".
std::string LongDuration(int64_t seconds);

// Memory as Slurm prints a request: "2G", "1500M" (exact units only), "0".
std::string ExactMemory(uint64_t mb);

// Memory as Slurm prints TRES in squeue and scontrol: "62.50G", "2G", "100M".
std::string RoundedMemory(uint64_t mb);

int64_t Seconds(Duration d);

// The job's time limit (resolved, else requested), or kUnlimited.
Duration TimeLimitOf(const Job& job);

// Seconds the job has run at `now` (0 when pending).
int64_t TimeUsed(const Job& job, Timestamp now);

// Allocated CPUs (sum over nodes) or, before allocation, ntasks x cpus-per-task.
uint32_t CpusOf(const Job& job);

// Nodes of the allocation, or the requested minimum.
uint32_t NodesOf(const Job& job);

// "gres:gpu:2" / "gres:gpu:a100:2" or "" (TRES per node / per job / per task).
std::string GpuTres(uint32_t count, const std::string& type);

// The job's partition as shown ("" -> the requested list).
std::string PartitionOf(const Job& job);

// "12", "12_3" or, for a combined pending array record, "12_[2-3%2]".
std::string JobIdText(const Job& job, const std::string& pending_tasks);

}  // namespace corral::slurm::internal
