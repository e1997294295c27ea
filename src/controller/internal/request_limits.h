// Request limits (issue 15 item 8): the most a job or step request may contain, field by
// field and in all, so that one request cannot take the controller's memory or the store's
// space, and no path can carry a NUL byte. Checked before anything is recorded; each refusal
// is kInvalidArgument naming the field.
//
//   field                                        limit
//   script                                       4 MiB (checked by JobValidator)
//   name, account, qos, reservation, mail_*,     256 bytes each
//     submit_host, array, container.name
//   comment                                      4 KiB
//   paths: working_dir, stdout/stderr/stdin,     4096 bytes each, no NUL byte
//     command, submit_dir, container.workdir,
//     container mounts (each)
//   environment                                  4096 variables, 128 KiB per variable
//                                                (name=value), 1 MiB in all
//   script_args, step argv                       1024 arguments, 128 KiB each, 1 MiB in all
//   dependencies                                 1000 job ids in all
//   partitions                                   64 names of at most 256 bytes
//   container mounts, container env              64 mounts, 256 names
//   the whole job (every field above together)   8 MiB
//   an array: the script, environment and        256 MiB
//     arguments once (its tasks share them,
//     core/shared_value.h) plus its tasks times
//     the rest of the job (each task's own copy)
//
// Thread-safe: pure functions.
#pragma once

#include <cstddef>

#include "core/job.h"
#include "core/result.h"
#include "core/step.h"

namespace corral::controller::internal {

inline constexpr size_t kMaxShortField = 256;
inline constexpr size_t kMaxComment = 4 * 1024;
inline constexpr size_t kMaxPath = 4096;
inline constexpr size_t kMaxEnvVars = 4096;
inline constexpr size_t kMaxEnvEntry = 128 * 1024;
inline constexpr size_t kMaxEnvTotal = 1024 * 1024;
inline constexpr size_t kMaxArgs = 1024;
inline constexpr size_t kMaxArg = 128 * 1024;
inline constexpr size_t kMaxArgsTotal = 1024 * 1024;
inline constexpr size_t kMaxDependencies = 1000;
inline constexpr size_t kMaxPartitions = 64;
inline constexpr size_t kMaxMounts = 64;
inline constexpr size_t kMaxContainerEnv = 256;
inline constexpr size_t kMaxJobBytes = 8 * 1024 * 1024;
inline constexpr size_t kMaxArrayBytes = 256 * 1024 * 1024;

// The size in bytes of a job's variable-length fields: in all, and the part that copies of the
// job (an array's tasks) share: the script, the environment and the arguments.
struct JobSizes {
  size_t total = 0;
  size_t shared = 0;
};

// Every limit of the header for a job (the script's own is JobValidator's). Returns the job's
// sizes.
Result<JobSizes> CheckJobSizes(const JobSpec& spec);
// The array limit: `tasks` tasks of a job of `sizes`, sharing `sizes.shared`. Returns
// kInvalidArgument naming "array" when over it.
Status CheckArraySize(size_t tasks, const JobSizes& sizes);
// The limits that apply to a step: argv, environment, paths, container.
Status CheckStepSizes(const StepSpec& spec);

}  // namespace corral::controller::internal
