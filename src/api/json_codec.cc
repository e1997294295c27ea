#include "api/json_codec.h"

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

#include <nlohmann/json.hpp>

#include "core/duration.h"
#include "core/gpu.h"
#include "core/ids.h"
#include "core/job.h"
#include "core/node.h"
#include "core/partition.h"
#include "core/resources.h"
#include "core/time.h"

namespace corral::api {
namespace {

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

// ---------------------------------------------------------------------------------------------
// Text helpers.

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 'a' + 'A');
    if (y >= 'a' && y <= 'z') y = static_cast<char>(y - 'a' + 'A');
    if (x != y) return false;
  }
  return true;
}

// The length of the valid UTF-8 sequence (RFC 3629) that starts at `s[i]`, or 0 if the bytes
// there are not one.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) -> unsigned { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return k < s.size() && byte(k) >= lo && byte(k) <= hi;
  };
  unsigned c = byte(i);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c == 0xE0) return cont(i + 1, 0xA0) && cont(i + 2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(i + 1) && cont(i + 2) ? 3 : 0;
  if (c == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;
  if (c == 0xF0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  return 0;
}

// At most `max_bytes` of `s` for an error message: valid UTF-8 only (other bytes as \xNN),
// control characters escaped, and quotes and backslashes too when `quoted` (the excerpt goes
// between double quotes); "..." when cut.
std::string Excerpt(std::string_view s, size_t max_bytes = 40, bool quoted = true) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  size_t i = 0;
  while (i < s.size() && out.size() < max_bytes) {
    auto c = static_cast<unsigned char>(s[i]);
    if (quoted && (c == '"' || c == '\\')) {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\n') {
      out += "\\n";
      ++i;
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    } else if (size_t len = Utf8SequenceLength(s, i); len > 0) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    }
  }
  if (i < s.size()) out += "...";
  return out;
}

template <typename T>
std::string IntText(T v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

// Parses "YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)" (RFC 3339; 'T' and 'Z' in either
// case). Fractions beyond microseconds are truncated; leap seconds are not accepted.
std::optional<Timestamp> ParseRfc3339(std::string_view s) {
  auto num = [&](size_t pos, size_t n, int* out) {
    if (pos + n > s.size()) return false;
    int v = 0;
    for (size_t k = pos; k < pos + n; ++k) {
      if (s[k] < '0' || s[k] > '9') return false;
      v = v * 10 + (s[k] - '0');
    }
    *out = v;
    return true;
  };
  int year, month, day, hour, minute, second;
  if (!num(0, 4, &year) || s.size() < 20 || s[4] != '-' || !num(5, 2, &month) || s[7] != '-' ||
      !num(8, 2, &day) || (s[10] != 'T' && s[10] != 't') || !num(11, 2, &hour) || s[13] != ':' ||
      !num(14, 2, &minute) || s[16] != ':' || !num(17, 2, &second)) {
    return std::nullopt;
  }
  size_t pos = 19;
  int64_t micros = 0;
  if (s[pos] == '.') {
    ++pos;
    size_t digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 6) micros = micros * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0 || digits > 9) return std::nullopt;
    for (size_t k = digits; k < 6; ++k) micros *= 10;
  }
  int offset_minutes = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!num(pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !num(pos + 4, 2, &om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_minutes = (s[pos] == '+' ? 1 : -1) * (oh * 60 + om);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  std::chrono::year_month_day ymd{std::chrono::year{year},
                                  std::chrono::month{static_cast<unsigned>(month)},
                                  std::chrono::day{static_cast<unsigned>(day)}};
  if (!ymd.ok() || hour > 23 || minute > 59 || second > 59) return std::nullopt;
  int64_t days = std::chrono::sys_days{ymd}.time_since_epoch().count();
  int64_t secs = days * 86400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
  return FromMicros(secs * 1'000'000 + micros);
}

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

// ---------------------------------------------------------------------------------------------
// The fields of each message, in the order they are written. `v(name, field)` is called once
// per field, by the encoder and by the decoder alike, so the two cannot drift apart. JSON
// names are the C++ field names; the `*Info` types write their record's fields inline.

template <typename V, Is<ResourceRequest> S>
void Fields(V& v, S& s) {
  v("nodes", s.nodes);
  v("nodes_max", s.nodes_max);
  v("ntasks", s.ntasks);
  v("ntasks_per_node", s.ntasks_per_node);
  v("cpus_per_task", s.cpus_per_task);
  v("mem_per_node_mb", s.mem_per_node_mb);
  v("mem_per_cpu_mb", s.mem_per_cpu_mb);
  v("mem_per_gpu_mb", s.mem_per_gpu_mb);
  v("gpus", s.gpus);
  v("gpus_per_node", s.gpus_per_node);
  v("gpus_per_task", s.gpus_per_task);
  v("cpus_per_gpu", s.cpus_per_gpu);
  v("gpu_type", s.gpu_type);
  v("exclusive", s.exclusive);
  v("constraint", s.constraint);
  v("nodelist", s.nodelist);
  v("exclude", s.exclude);
}

template <typename V, Is<Dependency> S>
void Fields(V& v, S& s) {
  v("type", s.type);
  v("jobs", s.jobs);
  v("delay", s.delay);
}

template <typename V, Is<SignalSpec> S>
void Fields(V& v, S& s) {
  v("signal", s.signal);
  v("before", s.before);
  v("batch_only", s.batch_only);
}

template <typename V, Is<ContainerSpec> S>
void Fields(V& v, S& s) {
  v("image", s.image);
  v("mounts", s.mounts);
  v("workdir", s.workdir);
  v("name", s.name);
  v("env", s.env);
  v("mount_home", s.mount_home);
}

template <typename V, Is<JobSpec> S>
void Fields(V& v, S& s) {
  v("name", s.name);
  v("user", s.user);
  v("uid", s.uid);
  v("gid", s.gid);
  v("account", s.account);
  v("qos", s.qos);
  v("partitions", s.partitions);
  v("script", s.script);
  v("resources", s.resources);
  v("time_limit", SlurmTime(s.time_limit));
  v("working_dir", s.working_dir);
  v("environment", s.environment);
  v("stdout_path", s.stdout_path);
  v("stderr_path", s.stderr_path);
  v("append_output", s.append_output);
  v("requeue", s.requeue);
  v("nice", s.nice);
  v("hold", s.hold);
  v("begin_time", s.begin_time);
  v("dependencies", s.dependencies);
  v("dependency_any", s.dependency_any);
  v("signal", s.signal);
  v("container", s.container);
  v("comment", s.comment);
  v("reservation", s.reservation);
  v("mail_type", s.mail_type);
  v("mail_user", s.mail_user);
  v("submit_host", s.submit_host);
  v("submit_dir", s.submit_dir);
  v("array", s.array);
  v("command", s.command);
  v("script_args", s.script_args);
  v("stdin_path", s.stdin_path);
}

template <typename V, Is<NodeAllocation> S>
void Fields(V& v, S& s) {
  v("node", s.node);
  v("node_name", s.node_name);
  v("cpus", s.cpus);
  v("mem_mb", s.mem_mb);
  v("gpus", s.gpus);
}

template <typename V, Is<Allocation> S>
void Fields(V& v, S& s) {
  v("generation", s.generation);
  v("nodes", s.nodes);
}

template <typename V, Is<JobUsage> S>
void Fields(V& v, S& s) {
  v("gpu_seconds", s.gpu_seconds);
  v("gpu_util_mean", s.gpu_util_mean);
  v("gpu_util_max", s.gpu_util_max);
  v("gpu_mem_max_mb", s.gpu_mem_max_mb);
  v("energy_joules", s.energy_joules);
  v("cpu_seconds", s.cpu_seconds);
  v("max_rss_mb", s.max_rss_mb);
}

template <typename V, Is<Job> S>
void Fields(V& v, S& s) {
  v("id", s.id);
  v("spec", s.spec);
  v("state", s.state);
  v("reason", s.reason);
  v("submit_time", s.submit_time);
  v("eligible_time", s.eligible_time);
  v("start_time", s.start_time);
  v("end_time", s.end_time);
  v("time_limit", SlurmTime(s.time_limit));
  v("partition", s.partition);
  v("exit_code", s.exit_code);
  v("exit_signal", s.exit_signal);
  v("restart_count", s.restart_count);
  v("allocation", s.allocation);
  v("array_job_id", s.array_job_id);
  v("array_task_id", s.array_task_id);
  v("last_checkpoint", s.last_checkpoint);
  v("usage", s.usage);
}

template <typename V, Is<GpuInfo> S>
void Fields(V& v, S& s) {
  v("index", GpuIndex(s.index));
  v("uuid", s.uuid);
  v("model", s.model);
  v("memory_mb", s.memory_mb);
  v("nvlink_peers", GpuIndex(s.nvlink_peers));
  v("numa_node", s.numa_node);
}

template <typename V, Is<NodeInventory> S>
void Fields(V& v, S& s) {
  v("name", s.name);
  v("address", s.address);
  v("cpus", s.cpus);
  v("memory_mb", s.memory_mb);
  v("gpus", s.gpus);
  v("features", s.features);
  v("numa_nodes", s.numa_nodes);
  v("gpu_backend", s.gpu_backend);
  v("driver_version", s.driver_version);
  v("cuda_version", s.cuda_version);
  v("agent_version", s.agent_version);
}

template <typename V, Is<Node> S>
void Fields(V& v, S& s) {
  v("id", s.id);
  v("inventory", s.inventory);
  v("registered", s.registered);
  v("responding", s.responding);
  v("drain", s.drain);
  v("powered_down", s.powered_down);
  v("reason", s.reason);
  v("reason_time", s.reason_time);
  v("last_heartbeat", s.last_heartbeat);
  v("failed_gpus", s.failed_gpus);
}

template <typename V, Is<Partition> S>
void Fields(V& v, S& s) {
  v("name", s.name);
  v("nodes", s.nodes);
  v("is_default", s.is_default);
  v("up", s.up);
  v("default_time", SlurmTime(s.default_time));
  v("max_time", SlurmTime(s.max_time));
  v("max_gpus_per_job", s.max_gpus_per_job);
  v("max_nodes_per_job", s.max_nodes_per_job);
  v("priority_tier", s.priority_tier);
  v("def_mem_per_cpu_mb", s.def_mem_per_cpu_mb);
  v("allowed_accounts", s.allowed_accounts);
}

template <typename V, Is<SubmitResponse> S>
void Fields(V& v, S& s) {
  v("job_id", s.job_id);
  v("task_ids", s.task_ids);
}

template <typename V, Is<JobInfo> S>
void Fields(V& v, S& s) {
  Fields(v, s.job);
  v("reason_detail", s.reason_detail);
  v("estimated_start", s.estimated_start);
  v("priority", s.priority);
}

template <typename V, Is<NodeInfo> S>
void Fields(V& v, S& s) {
  Fields(v, s.node);
  v("state", s.state);
  v("alloc_cpus", s.alloc_cpus);
  v("alloc_mem_mb", s.alloc_mem_mb);
  v("alloc_gpus", s.alloc_gpus);
  v("jobs", s.jobs);
  v("partitions", s.partitions);
  v("gpu_problems", s.gpu_problems);
  v("node_problem", s.node_problem);
}

template <typename V, Is<GpuHealth> S>
void Fields(V& v, S& s) {
  v("gpu", GpuIndex(s.gpu));
  v("reason", s.reason);
  v("latched", s.latched);
}

template <typename V, Is<InjectRequest> S>
void Fields(V& v, S& s) {
  v("gpu", GpuIndex(s.gpu));
  v("xid", s.xid);
  v("ecc_uncorrectable", s.ecc_uncorrectable);
  v("temperature_c", s.temperature_c);
  v("power_watts", s.power_watts);
  v("utilization", s.utilization);
  v("memory_used_mb", s.memory_used_mb);
  v("row_remap_failure", s.row_remap_failure);
  v("vanished", s.vanished);
  v("clear", s.clear);
}

template <typename V, Is<PartitionInfo> S>
void Fields(V& v, S& s) {
  Fields(v, s.partition);
  v("total_cpus", s.total_cpus);
  v("total_gpus", s.total_gpus);
  v("alloc_gpus", s.alloc_gpus);
}

template <typename V, AnyListRef S>
void Fields(V& v, S& s) {
  v(s.name, s.items);
}

template <typename V, Is<DrainRequest> S>
void Fields(V& v, S& s) {
  v("reason", s.reason);
}

template <typename V, Is<RunningJobRef> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("generation", s.generation);
}

template <typename V, Is<RegisterRequest> S>
void Fields(V& v, S& s) {
  v("inventory", s.inventory);
  v("running", s.running);
}

template <typename V, Is<RegisterResponse> S>
void Fields(V& v, S& s) {
  v("node_id", s.node_id);
  v("heartbeat_interval", s.heartbeat_interval);
  v("kill", s.kill);
  v("cluster_name", s.cluster_name);
}

template <typename V, Is<HeartbeatRequest> S>
void Fields(V& v, S& s) {
  v("node", s.node);
  v("running", s.running);
  v("gpu_problems", s.gpu_problems);
  v("node_problem", s.node_problem);
  v("auto_resume", s.auto_resume);
}

template <typename V, Is<HeartbeatResponse> S>
void Fields(V& v, S& s) {
  v("reregister", s.reregister);
  v("kill", s.kill);
  v("clear_gpus", GpuIndex(s.clear_gpus));
}

template <typename V, Is<JobEvent> S>
void Fields(V& v, S& s) {
  v("type", s.type);
  v("job", s.job);
  v("generation", s.generation);
  v("time", s.time);
  v("exit_code", s.exit_code);
  v("signal", s.signal);
  v("timed_out", s.timed_out);
  v("cancelled", s.cancelled);
  v("out_of_memory", s.out_of_memory);
  v("message", s.message);
  v("usage", s.usage);
  v("gpu_failure", s.gpu_failure);
  v("step", s.step);
  v("task", s.task);
  v("master_port", s.master_port);
}

template <typename V, Is<JobEventsRequest> S>
void Fields(V& v, S& s) {
  v("node", s.node);
  v("events", s.events);
}

template <typename V, Is<LaunchRequest> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("controller_url", s.controller_url);
}

template <typename V, Is<SignalRequest> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("generation", s.generation);
  v("signal", s.signal);
  v("batch_only", s.batch_only);
}

template <typename V, Is<CancelRequest> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("generation", s.generation);
}

template <typename V, Is<TimeLimitRequest> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("generation", s.generation);
  v("time_limit", s.time_limit);
}

template <typename V, Is<StepSpec> S>
void Fields(V& v, S& s) {
  v("argv", s.argv);
  v("working_dir", s.working_dir);
  v("environment", s.environment);
  v("nodes", s.nodes);
  v("ntasks", s.ntasks);
  v("ntasks_per_node", s.ntasks_per_node);
  v("cpus_per_task", s.cpus_per_task);
  v("gpus_per_task", s.gpus_per_task);
  v("overcommit", s.overcommit);
  v("kill_on_bad_exit", s.kill_on_bad_exit);
  v("stdout_path", s.stdout_path);
  v("stderr_path", s.stderr_path);
  v("io_node", s.io_node);
  v("io_port", s.io_port);
  v("io_token", s.io_token);
  v("master_port", s.master_port);
  v("container", s.container);
}

template <typename V, Is<StepTask> S>
void Fields(V& v, S& s) {
  v("rank", s.rank);
  v("node_rank", s.node_rank);
  v("local_rank", s.local_rank);
  v("node", s.node);
  v("gpus", s.gpus);
}

template <typename V, Is<StepLayout> S>
void Fields(V& v, S& s) {
  v("nodes", s.nodes);
  v("tasks_per_node", s.tasks_per_node);
  v("tasks", s.tasks);
  v("cpus_per_task", s.cpus_per_task);
}

template <typename V, Is<StepTaskInfo> S>
void Fields(V& v, S& s) {
  Fields(v, s.task);
  v("ended", s.ended);
  v("exit_code", s.exit_code);
  v("signal", s.signal);
  v("message", s.message);
}

template <typename V, Is<StepInfo> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("step", s.step);
  v("generation", s.generation);
  v("state", s.state);
  v("reason", s.reason);
  v("argv", s.argv);
  v("master_addr", s.master_addr);
  v("master_port", s.master_port);
  v("nodes", s.nodes);
  v("tasks_per_node", s.tasks_per_node);
  v("cpus_per_task", s.cpus_per_task);
  v("kill_on_bad_exit", s.kill_on_bad_exit);
  v("container", s.container);
  v("start_time", s.start_time);
  v("end_time", s.end_time);
  v("exit_code", s.exit_code);
  v("tasks", s.tasks);
}

template <typename V, Is<BlockerInfo> S>
void Fields(V& v, S& s) {
  v("code", s.code);
  v("detail", s.detail);
  v("scope", s.scope);
  v("entity", s.entity);
  v("resource", s.resource);
  v("used", s.used);
  v("limit", s.limit);
  v("requested", s.requested);
  v("jobs", s.jobs);
}

template <typename V, Is<WhyInfo> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("state", s.state);
  v("reason", s.reason);
  v("detail", s.detail);
  v("estimated_start", s.estimated_start);
  v("priority", s.priority);
  v("blockers", s.blockers);
}

template <typename V, Is<PriorityInfo> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("user", s.user);
  v("account", s.account);
  v("qos", s.qos);
  v("age", s.age);
  v("fairshare", s.fairshare);
  v("job_size", s.job_size);
  v("partition", s.partition);
  v("qos_factor", s.qos_factor);
  v("age_points", s.age_points);
  v("fairshare_points", s.fairshare_points);
  v("job_size_points", s.job_size_points);
  v("partition_points", s.partition_points);
  v("qos_points", s.qos_points);
  v("nice", s.nice);
  v("priority_tier", s.priority_tier);
  v("priority", s.priority);
}

template <typename V, Is<StepLaunchRequest> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("step", s.step);
  v("spec", s.spec);
  v("layout", s.layout);
  v("master_addr", s.master_addr);
  v("master_port", s.master_port);
  v("io_url", s.io_url);
  v("controller_url", s.controller_url);
}

template <typename V, Is<StepSignalRequest> S>
void Fields(V& v, S& s) {
  v("job", s.job);
  v("generation", s.generation);
  v("step", s.step);
  v("signal", s.signal);
}

template <typename T>
concept HasFields = requires(T& t, void (*visit)(std::string_view, int)) {
  Fields(visit, t);
};

// ---------------------------------------------------------------------------------------------
// Enum names.

std::string_view JobEventTypeName(JobEventType t) {
  switch (t) {
    case JobEventType::kStarted:
      return "STARTED";
    case JobEventType::kExited:
      return "EXITED";
    case JobEventType::kLaunchFailed:
      return "LAUNCH_FAILED";
    case JobEventType::kTaskExited:
      return "TASK_EXITED";
    case JobEventType::kTaskLaunchFailed:
      return "TASK_LAUNCH_FAILED";
  }
  return "UNKNOWN";
}

Result<JobEventType> ParseJobEventType(std::string_view text) {
  for (JobEventType t :
       {JobEventType::kStarted, JobEventType::kExited, JobEventType::kLaunchFailed,
        JobEventType::kTaskExited, JobEventType::kTaskLaunchFailed}) {
    if (EqualsIgnoreCase(text, JobEventTypeName(t))) return t;
  }
  return InvalidArgument("unknown job event type \"" + Excerpt(text) + "\"");
}

Result<DependencyType> ParseDependencyType(std::string_view text) {
  for (DependencyType t :
       {DependencyType::kAfter, DependencyType::kAfterAny, DependencyType::kAfterOk,
        DependencyType::kAfterNotOk, DependencyType::kAfterCorr, DependencyType::kSingleton}) {
    if (EqualsIgnoreCase(text, DependencyTypeName(t))) return t;
  }
  return InvalidArgument("unknown dependency type \"" + Excerpt(text) + "\"");
}

// ---------------------------------------------------------------------------------------------
// Encoding: compact JSON, fields in `Fields` order, written straight into one string.

class Encoder {
 public:
  explicit Encoder(size_t reserve) { out_.reserve(reserve); }

  std::string Take() { return std::move(out_); }

  // One field of an object (called by `Fields`); `name` is a plain ASCII identifier.
  template <typename F>
  void operator()(std::string_view name, const F& field) {
    if (comma_) out_ += ',';
    out_ += '"';
    out_ += name;
    out_ += "\":";
    comma_ = false;
    Write(field);
  }

  template <typename T>
  void Write(const T& x) {
    if constexpr (std::is_same_v<T, std::string>) {
      String(x);
    } else if constexpr (std::is_same_v<T, bool>) {
      Raw(x ? "true" : "false");
    } else if constexpr (std::is_floating_point_v<T>) {
      // JSON has no NaN or infinity; usage figures are "zero when unknown".
      if (!std::isfinite(x)) {
        Raw("0");
      } else {
        char buf[32];
        auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
        Raw(std::string_view(buf, static_cast<size_t>(end - buf)));
      }
    } else if constexpr (std::is_integral_v<T>) {
      char buf[24];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
      Raw(std::string_view(buf, static_cast<size_t>(end - buf)));
    } else if constexpr (std::is_same_v<T, Duration>) {
      if (x == kUnlimited) {
        Raw("\"UNLIMITED\"");
      } else {
        Write(static_cast<int64_t>(x.count() / 1'000'000));
      }
    } else if constexpr (std::is_same_v<T, Timestamp>) {
      WriteTimestamp(x);
    } else if constexpr (std::is_same_v<T, GpuSet>) {
      BeginArray();
      for (uint64_t b = x.bits(); b != 0; b &= b - 1) {
        Element(static_cast<uint32_t>(std::countr_zero(b)));
      }
      EndArray();
    } else if constexpr (std::is_same_v<T, JobState>) {
      Quoted(JobStateName(x));
    } else if constexpr (std::is_same_v<T, NodeState>) {
      Quoted(NodeStateName(x));
    } else if constexpr (std::is_same_v<T, DependencyType>) {
      Quoted(DependencyTypeName(x));
    } else if constexpr (std::is_same_v<T, JobEventType>) {
      Quoted(JobEventTypeName(x));
    } else if constexpr (IsStrongId<T>::value) {
      Write(x.value);
    } else if constexpr (IsSlurmTime<T>::value || IsGpuIndex<T>::value) {
      Write(x.value);
    } else if constexpr (IsOptional<T>::value) {
      if (x.has_value()) {
        Write(*x);
      } else {
        Raw("null");
      }
    } else if constexpr (IsVector<T>::value) {
      BeginArray();
      for (const auto& e : x) Element(e);
      EndArray();
    } else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) {
      Object([&] {
        for (const auto& [k, val] : x) {
          Key(k);
          String(val);
        }
      });
    } else {
      static_assert(HasFields<T>, "no JSON form for this type");
      Object([&] { Fields(*this, x); });
    }
  }

  // An object whose members `write_members` writes (with `Key` and a value, or `operator()`).
  template <typename Fn>
  void Object(Fn write_members) {
    out_ += '{';
    comma_ = false;
    write_members();
    out_ += '}';
    comma_ = true;
  }

  // A member's key, any text (escaped).
  void Key(std::string_view k) {
    if (comma_) out_ += ',';
    String(k);
    out_ += ':';
    comma_ = false;
  }

  // A JSON string: escapes what JSON requires; bytes that are not valid UTF-8 become U+FFFD,
  // so that the output is always valid JSON.
  void String(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out_ += '"';
    size_t run = 0;
    size_t i = 0;
    while (i < s.size()) {
      auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
        ++i;
        continue;
      }
      if (c >= 0x80) {
        if (size_t len = Utf8SequenceLength(s, i); len > 0) {
          i += len;
          continue;
        }
      }
      out_.append(s.data() + run, i - run);
      switch (c) {
        case '"':
          out_ += "\\\"";
          break;
        case '\\':
          out_ += "\\\\";
          break;
        case '\n':
          out_ += "\\n";
          break;
        case '\r':
          out_ += "\\r";
          break;
        case '\t':
          out_ += "\\t";
          break;
        case '\b':
          out_ += "\\b";
          break;
        case '\f':
          out_ += "\\f";
          break;
        default:
          if (c < 0x20) {
            out_ += "\\u00";
            out_ += kHex[c >> 4];
            out_ += kHex[c & 15];
          } else {
            out_ += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
          }
      }
      ++i;
      run = i;
    }
    out_.append(s.data() + run, s.size() - run);
    out_ += '"';
    comma_ = true;
  }

 private:
  void Raw(std::string_view text) {
    out_ += text;
    comma_ = true;
  }
  void Quoted(std::string_view plain) {  // an enum name: plain ASCII
    out_ += '"';
    out_ += plain;
    out_ += '"';
    comma_ = true;
  }
  void BeginArray() {
    out_ += '[';
    comma_ = false;
  }
  template <typename T>
  void Element(const T& e) {
    if (comma_) out_ += ',';
    Write(e);
  }
  void EndArray() {
    out_ += ']';
    comma_ = true;
  }

  void WriteTimestamp(Timestamp t) {
    int64_t us = ToMicros(t);
    if (us == 0) {
      Raw("null");
      return;
    }
    us = std::clamp(us, kMinTimestampMicros, kMaxTimestampMicros);
    int64_t secs = us / 1'000'000;
    int64_t frac = us % 1'000'000;
    if (frac < 0) {
      frac += 1'000'000;
      --secs;
    }
    int64_t days = secs / 86400;
    int64_t sod = secs % 86400;
    if (sod < 0) {
      sod += 86400;
      --days;
    }
    std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{days}}};
    // "YYYY-MM-DDTHH:MM:SS.ffffffZ"
    char buf[29];
    auto put = [&](size_t pos, int64_t v, int width) {
      for (int k = width - 1; k >= 0; --k) {
        buf[pos + k] = static_cast<char>('0' + v % 10);
        v /= 10;
      }
    };
    buf[0] = '"';
    put(1, static_cast<int>(ymd.year()), 4);
    buf[5] = '-';
    put(6, static_cast<unsigned>(ymd.month()), 2);
    buf[8] = '-';
    put(9, static_cast<unsigned>(ymd.day()), 2);
    buf[11] = 'T';
    put(12, sod / 3600, 2);
    buf[14] = ':';
    put(15, sod / 60 % 60, 2);
    buf[17] = ':';
    put(18, sod % 60, 2);
    buf[20] = '.';
    put(21, frac, 6);
    buf[27] = 'Z';
    buf[28] = '"';
    Raw(std::string_view(buf, sizeof buf));
  }

  std::string out_;
  bool comma_ = false;  // a value was just written: the next one needs a ','
};

template <typename T>
std::string Encode(const T& value, size_t reserve = 256) {
  Encoder e(reserve);
  e.Write(value);
  return e.Take();
}

// ---------------------------------------------------------------------------------------------
// Parsing: nlohmann's SAX parser (iterative, UTF-8 validating) builds a small DOM that keeps
// object members in document order, rejects duplicate keys and stops at `kMaxDepth`.

struct Member;

struct Value {
  enum class Kind : uint8_t { kNull, kBool, kInt, kUint, kDouble, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  union {
    bool boolean;
    int64_t integer;  // kInt: nlohmann reports non-negative integers as kUint
    uint64_t uinteger;
    double number;
  };
  std::string text;  // kString; the number as written for kDouble
  std::vector<Value> array;
  std::vector<Member> object;

  Value() : uinteger(0) {}
};

struct Member {
  std::string key;
  Value value;
  bool used = false;  // set by the decoder; unused members are unknown fields
};

class DomBuilder {
 public:
  using json = nlohmann::json;

  Value& root() { return root_; }
  const std::string& error() const { return error_; }

  bool null() {
    Add(Value());
    return true;
  }
  bool boolean(bool b) {
    Value v;
    v.kind = Value::Kind::kBool;
    v.boolean = b;
    Add(std::move(v));
    return true;
  }
  bool number_integer(json::number_integer_t i) {
    Value v;
    v.kind = Value::Kind::kInt;
    v.integer = i;
    Add(std::move(v));
    return true;
  }
  bool number_unsigned(json::number_unsigned_t u) {
    Value v;
    v.kind = Value::Kind::kUint;
    v.uinteger = u;
    Add(std::move(v));
    return true;
  }
  bool number_float(json::number_float_t d, const json::string_t& written) {
    Value v;
    v.kind = Value::Kind::kDouble;
    v.number = d;
    v.text = written;
    Add(std::move(v));
    return true;
  }
  bool string(json::string_t& s) {
    Value v;
    v.kind = Value::Kind::kString;
    v.text = std::move(s);
    Add(std::move(v));
    return true;
  }
  bool binary(json::binary_t& /*b*/) {  // only the binary formats produce these
    error_ = "invalid JSON: binary value";
    return false;
  }
  bool start_object(std::size_t /*elements*/) { return Open(Value::Kind::kObject); }
  bool key(json::string_t& k) {
    key_ = std::move(k);
    return true;
  }
  bool end_object() {
    const std::vector<Member>& m = stack_.back()->object;
    // Sorting is faster for large objects; most are small.
    if (m.size() <= 32) {
      for (size_t i = 1; i < m.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
          if (m[i].key == m[j].key) return Duplicate(m[i].key);
        }
      }
    } else {
      std::vector<std::string_view> keys;
      keys.reserve(m.size());
      for (const Member& e : m) keys.push_back(e.key);
      std::sort(keys.begin(), keys.end());
      for (size_t i = 1; i < keys.size(); ++i) {
        if (keys[i] == keys[i - 1]) return Duplicate(keys[i]);
      }
    }
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t /*elements*/) { return Open(Value::Kind::kArray); }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const json::exception& ex) {
    // "[json.exception.parse_error.101] parse error at line 1, column 7: syntax error ..."
    std::string_view what = ex.what();
    if (auto bracket = what.find("] "); what.starts_with("[json.") && bracket != what.npos) {
      what.remove_prefix(bracket + 2);
    }
    error_ = "invalid JSON: " + Excerpt(what, 240, /*quoted=*/false);
    return false;
  }

 private:
  Value* Add(Value v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    // Only the innermost open container grows, so the pointers on `stack_` stay valid.
    Value* top = stack_.back();
    if (top->kind == Value::Kind::kArray) {
      top->array.push_back(std::move(v));
      return &top->array.back();
    }
    top->object.push_back(Member{std::move(key_), std::move(v)});
    return &top->object.back().value;
  }

  bool Open(Value::Kind kind) {
    if (stack_.size() >= kMaxDepth) {
      error_ = "invalid JSON: nested deeper than " + IntText(kMaxDepth) + " levels";
      return false;
    }
    Value v;
    v.kind = kind;
    stack_.push_back(Add(std::move(v)));
    return true;
  }

  // Names the key by its path, e.g. "resources.gpus" or "dependencies[1].type".
  bool Duplicate(std::string_view key) {
    std::string path;
    for (size_t i = 0; i + 1 < stack_.size(); ++i) {
      const Value& parent = *stack_[i];
      if (parent.kind == Value::Kind::kArray) {
        path += "[" + IntText(parent.array.size() - 1) + "]";
      } else {
        if (!path.empty()) path += '.';
        path += parent.object.back().key;
      }
    }
    if (!path.empty()) path += '.';
    path += key;
    error_ = "invalid JSON: duplicate key \"" + Excerpt(path, 120) + "\"";
    return false;
  }

  Value root_;
  std::vector<Value*> stack_;
  std::string key_;
  std::string error_;
};

Status Parse(std::string_view json, DomBuilder* builder) {
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(json.data(), json.data() + json.size(), builder,
                                   nlohmann::json::input_format_t::json, /*strict=*/true);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument("invalid JSON: " + Excerpt(e.what(), 240, /*quoted=*/false));
  }
  if (!ok) {
    return InvalidArgument(builder->error().empty() ? "invalid JSON" : builder->error());
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// Decoding the DOM into the messages. Strict decoders reject unknown fields; lenient ones
// (responses) skip them. Both reject wrong types and out-of-range numbers.

class Decoder {
 public:
  explicit Decoder(bool strict) : strict_(strict) { path_.reserve(16); }

  template <typename F>
  Status Read(Value& v, F&& out) {
    using T = std::remove_cvref_t<F>;
    using Kind = Value::Kind;
    if constexpr (std::is_same_v<T, std::string>) {
      if (v.kind != Kind::kString) return Expected("a string", v);
      out = std::move(v.text);
      return {};
    } else if constexpr (std::is_same_v<T, bool>) {
      if (v.kind != Kind::kBool) return Expected("true or false", v);
      out = v.boolean;
      return {};
    } else if constexpr (std::is_floating_point_v<T>) {
      switch (v.kind) {
        case Kind::kInt:
          out = static_cast<T>(v.integer);
          return {};
        case Kind::kUint:
          out = static_cast<T>(v.uinteger);
          return {};
        case Kind::kDouble:
          out = static_cast<T>(v.number);
          return {};
        default:
          return Expected("a number", v);
      }
    } else if constexpr (std::is_unsigned_v<T>) {
      uint64_t u;
      if (!AsUnsigned(v, &u)) return Expected("a non-negative integer", v);
      if (u > std::numeric_limits<T>::max()) return OutOfRange(v, std::numeric_limits<T>::max());
      out = static_cast<T>(u);
      return {};
    } else if constexpr (std::is_integral_v<T>) {
      if (v.kind == Kind::kInt) {
        if (v.integer < std::numeric_limits<T>::min()) {
          return Fail(Describe(v) + " is out of range (min " +
                      IntText(std::numeric_limits<T>::min()) + ")");
        }
        out = static_cast<T>(v.integer);
        return {};
      }
      if (v.kind != Kind::kUint) return Expected("an integer", v);
      if (v.uinteger > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
        return OutOfRange(v, std::numeric_limits<T>::max());
      }
      out = static_cast<T>(v.uinteger);
      return {};
    } else if constexpr (std::is_same_v<T, Duration>) {
      return ReadDuration(v, &out, /*slurm=*/false);
    } else if constexpr (IsSlurmTime<T>::value) {
      using D = std::remove_cvref_t<decltype(out.value)>;
      if constexpr (IsOptional<D>::value) {
        if (v.kind == Kind::kNull) {
          out.value.reset();
          return {};
        }
        Duration d{0};
        CORRAL_RETURN_IF_ERROR(ReadDuration(v, &d, /*slurm=*/true));
        out.value = d;
        return {};
      } else {
        return ReadDuration(v, &out.value, /*slurm=*/true);
      }
    } else if constexpr (std::is_same_v<T, Timestamp>) {
      if (v.kind == Kind::kNull) {
        out = Timestamp{};
        return {};
      }
      std::optional<Timestamp> t;
      if (v.kind == Kind::kString) t = ParseRfc3339(v.text);
      if (!t.has_value()) {
        return Expected("an RFC 3339 UTC timestamp (\"2026-11-29T16:51:03.000123Z\") or null", v);
      }
      out = *t;
      return {};
    } else if constexpr (std::is_same_v<T, GpuSet>) {
      if (v.kind != Kind::kArray) return Expected("an array of GPU indices", v);
      GpuSet set;
      for (size_t i = 0; i < v.array.size(); ++i) {
        path_.push_back(Segment{{}, i, true});
        uint32_t index = 0;
        CORRAL_RETURN_IF_ERROR(ReadGpuIndex(v.array[i], &index));
        if (set.contains(index)) return Fail("duplicate GPU index " + IntText(index));
        set.insert(index);
        path_.pop_back();
      }
      out = set;
      return {};
    } else if constexpr (IsGpuIndex<T>::value) {
      using U = std::remove_cvref_t<decltype(out.value)>;
      if constexpr (IsVector<U>::value) {
        if (v.kind != Kind::kArray) return Expected("an array of GPU indices", v);
        out.value.clear();
        out.value.reserve(v.array.size());
        for (size_t i = 0; i < v.array.size(); ++i) {
          path_.push_back(Segment{{}, i, true});
          uint32_t index = 0;
          CORRAL_RETURN_IF_ERROR(ReadGpuIndex(v.array[i], &index));
          out.value.push_back(index);
          path_.pop_back();
        }
        return {};
      } else {
        return ReadGpuIndex(v, &out.value);
      }
    } else if constexpr (std::is_same_v<T, JobState>) {
      return ReadEnum(v, &out, ParseJobState);
    } else if constexpr (std::is_same_v<T, NodeState>) {
      return ReadEnum(v, &out, ParseNodeState);
    } else if constexpr (std::is_same_v<T, DependencyType>) {
      return ReadEnum(v, &out, ParseDependencyType);
    } else if constexpr (std::is_same_v<T, JobEventType>) {
      return ReadEnum(v, &out, ParseJobEventType);
    } else if constexpr (IsStrongId<T>::value) {
      return Read(v, out.value);
    } else if constexpr (IsOptional<T>::value) {
      if (v.kind == Kind::kNull) {
        out.reset();
        return {};
      }
      typename T::value_type x{};
      CORRAL_RETURN_IF_ERROR(Read(v, x));
      out = std::move(x);
      return {};
    } else if constexpr (IsVector<T>::value) {
      if (v.kind != Kind::kArray) return Expected("an array", v);
      out.clear();
      out.reserve(v.array.size());
      for (size_t i = 0; i < v.array.size(); ++i) {
        path_.push_back(Segment{{}, i, true});
        typename T::value_type x{};
        CORRAL_RETURN_IF_ERROR(Read(v.array[i], x));
        out.push_back(std::move(x));
        path_.pop_back();
      }
      return {};
    } else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) {
      if (v.kind != Kind::kObject) return Expected("an object of strings", v);
      out.clear();
      for (Member& m : v.object) {
        path_.push_back(Segment{m.key, 0, false});
        if (m.value.kind != Kind::kString) return Expected("a string", m.value);
        out.insert_or_assign(out.end(), std::move(m.key), std::move(m.value.text));
        path_.pop_back();
      }
      return {};
    } else {
      static_assert(HasFields<T>, "no JSON form for this type");
      return ReadObject(v, out);
    }
  }

  // Reads an object's fields into `s`, then (strict) rejects any member `Fields` did not name.
  template <typename S>
  Status ReadObject(Value& v, S& s) {
    if (v.kind != Value::Kind::kObject) return Expected("an object", v);
    FieldReader reader(*this, v);
    Fields(reader, s);
    CORRAL_RETURN_IF_ERROR(reader.status());
    if (strict_) {
      for (const Member& m : v.object) {
        if (!m.used) {
          std::string path = Path();
          if (!path.empty()) path += '.';
          return InvalidArgument("unknown field \"" + path + Excerpt(m.key) + "\"");
        }
      }
    }
    return {};
  }

  // {"key": "value", ...}, in document order.
  Status ReadStringPairs(Value& v, std::vector<std::pair<std::string, std::string>>* out) {
    if (v.kind != Value::Kind::kObject) return Expected("an object", v);
    out->reserve(v.object.size());
    for (Member& m : v.object) {
      path_.push_back(Segment{m.key, 0, false});
      if (m.value.kind != Value::Kind::kString) return Expected("a string", m.value);
      out->emplace_back(std::move(m.key), std::move(m.value.text));
      path_.pop_back();
    }
    return {};
  }

 private:
  struct Segment {
    std::string_view key;
    size_t index;
    bool is_index;
  };

  // The `Fields` visitor that decodes: finds each named field among the object's members.
  // Encoders write fields in `Fields` order, so the search starts after the last match.
  class FieldReader {
   public:
    FieldReader(Decoder& d, Value& object) : d_(d), members_(object.object) {}

    template <typename F>
    void operator()(std::string_view name, F&& field) {
      if (!status_.has_value()) return;
      Member* m = Find(name);
      if (m == nullptr) return;  // absent: keeps the default
      m->used = true;
      d_.path_.push_back(Segment{name, 0, false});
      status_ = d_.Read(m->value, field);
      if (status_.has_value()) d_.path_.pop_back();
    }

    const Status& status() const { return status_; }

   private:
    Member* Find(std::string_view name) {
      const size_t n = members_.size();
      for (size_t k = 0; k < n; ++k) {
        size_t i = cursor_ + k;
        if (i >= n) i -= n;
        if (members_[i].key == name) {
          cursor_ = i + 1;
          return &members_[i];
        }
      }
      return nullptr;
    }

    Decoder& d_;
    std::vector<Member>& members_;
    size_t cursor_ = 0;
    Status status_;
  };

  static bool AsUnsigned(const Value& v, uint64_t* out) {
    if (v.kind == Value::Kind::kUint) {
      *out = v.uinteger;
      return true;
    }
    if (v.kind == Value::Kind::kInt && v.integer >= 0) {  // "-0"
      *out = static_cast<uint64_t>(v.integer);
      return true;
    }
    return false;
  }

  Status ReadDuration(Value& v, Duration* out, bool slurm) {
    uint64_t secs;
    if (AsUnsigned(v, &secs)) {
      if (secs > kMaxDurationSeconds) return OutOfRange(v, kMaxDurationSeconds);
      *out = Seconds(static_cast<int64_t>(secs));
      return {};
    }
    if (v.kind == Value::Kind::kString) {
      if (slurm) {
        Result<Duration> d = ParseSlurmDuration(v.text);
        if (!d.has_value()) return Fail(d.error().message);
        *out = *d;
        return {};
      }
      if (EqualsIgnoreCase(v.text, "UNLIMITED") || EqualsIgnoreCase(v.text, "INFINITE")) {
        *out = kUnlimited;
        return {};
      }
    }
    return Expected(slurm ? "a non-negative integer (seconds), \"UNLIMITED\" or a Slurm time"
                          : "a non-negative integer (seconds) or \"UNLIMITED\"",
                    v);
  }

  Status ReadGpuIndex(Value& v, uint32_t* out) {
    uint64_t u;
    if (!AsUnsigned(v, &u)) return Expected("a GPU index (a non-negative integer)", v);
    if (u >= kMaxGpusPerNode) {
      return Fail("GPU index " + Describe(v) + " is out of range (max " +
                  IntText(kMaxGpusPerNode - 1) + ")");
    }
    *out = static_cast<uint32_t>(u);
    return {};
  }

  template <typename E, typename P>
  Status ReadEnum(Value& v, E* out, P parse) {
    if (v.kind != Value::Kind::kString) return Expected("a string", v);
    Result<E> e = parse(v.text);
    if (!e.has_value()) return Fail(e.error().message);
    *out = *e;
    return {};
  }

  static std::string Describe(const Value& v) {
    switch (v.kind) {
      case Value::Kind::kNull:
        return "null";
      case Value::Kind::kBool:
        return v.boolean ? "true" : "false";
      case Value::Kind::kInt:
        return IntText(v.integer);
      case Value::Kind::kUint:
        return IntText(v.uinteger);
      case Value::Kind::kDouble:
        return Excerpt(v.text);
      case Value::Kind::kString:
        return "\"" + Excerpt(v.text) + "\"";
      case Value::Kind::kArray:
        return "an array";
      case Value::Kind::kObject:
        return "an object";
    }
    return "?";
  }

  std::string Path() const {
    std::string out;
    for (const Segment& s : path_) {
      if (s.is_index) {
        out += '[';
        out += IntText(s.index);
        out += ']';
      } else {
        if (!out.empty()) out += '.';
        out += Excerpt(s.key);
      }
    }
    return out;
  }

  tl::unexpected<Error> Fail(std::string reason) const {
    if (path_.empty()) return InvalidArgument("top level: " + reason);
    return InvalidArgument("field \"" + Path() + "\": " + reason);
  }
  tl::unexpected<Error> Expected(std::string_view what, const Value& got) const {
    return Fail("expected " + std::string(what) + ", got " + Describe(got));
  }
  template <typename M>
  tl::unexpected<Error> OutOfRange(const Value& got, M max) const {
    return Fail(Describe(got) + " is out of range (max " + IntText(max) + ")");
  }

  bool strict_;
  std::vector<Segment> path_;
};

// Parses `json` and decodes its top-level object into `target` (a message, or a `ListRef`).
template <typename S>
Status DecodeInto(std::string_view json, bool strict, S& target) {
  DomBuilder dom;
  CORRAL_RETURN_IF_ERROR(Parse(json, &dom));
  Decoder d(strict);
  return d.ReadObject(dom.root(), target);
}

template <typename T>
Result<T> Decode(std::string_view json, bool strict) {
  T out{};
  CORRAL_RETURN_IF_ERROR(DecodeInto(json, strict, out));
  return out;
}

template <typename T>
std::string EncodeList(std::string_view name, const std::vector<T>& items, size_t per_item) {
  return Encode(ListRef<const std::vector<T>>{name, items}, 16 + items.size() * per_item);
}

template <typename T>
Result<std::vector<T>> DecodeList(std::string_view name, std::string_view json) {
  std::vector<T> items;
  ListRef<std::vector<T>> list{name, items};
  CORRAL_RETURN_IF_ERROR(DecodeInto(json, /*strict=*/false, list));
  return items;
}

constexpr bool kStrict = true;    // requests: what the controller and agents accept
constexpr bool kLenient = false;  // responses: newer servers may add fields

// Typical encoded sizes, to reserve the output once.
constexpr size_t kJobBytes = 2048;
constexpr size_t kNodeBytes = 1024;

}  // namespace

std::string EncodeJobSpec(const JobSpec& spec) {
  return Encode(spec, 1024 + spec.script.size() + spec.environment.size() * 64);
}
Result<JobSpec> DecodeJobSpec(std::string_view json) { return Decode<JobSpec>(json, kStrict); }

std::string EncodeSubmitResponse(const SubmitResponse& r) {
  return Encode(r, 32 + r.task_ids.size() * 8);
}
Result<SubmitResponse> DecodeSubmitResponse(std::string_view json) {
  return Decode<SubmitResponse>(json, kLenient);
}

std::string EncodeJobInfo(const JobInfo& j) {
  return Encode(j, kJobBytes + j.job.spec.script.size());
}
Result<JobInfo> DecodeJobInfo(std::string_view json) { return Decode<JobInfo>(json, kLenient); }

std::string EncodeJobInfoList(const std::vector<JobInfo>& jobs) {
  return EncodeList(kJobsList, jobs, kJobBytes);
}
Result<std::vector<JobInfo>> DecodeJobInfoList(std::string_view json) {
  return DecodeList<JobInfo>(kJobsList, json);
}

std::string EncodeNodeInfo(const NodeInfo& n) { return Encode(n, kNodeBytes); }
Result<NodeInfo> DecodeNodeInfo(std::string_view json) { return Decode<NodeInfo>(json, kLenient); }

std::string EncodeNodeInfoList(const std::vector<NodeInfo>& nodes) {
  return EncodeList(kNodesList, nodes, kNodeBytes);
}
Result<std::vector<NodeInfo>> DecodeNodeInfoList(std::string_view json) {
  return DecodeList<NodeInfo>(kNodesList, json);
}

std::string EncodePartitionInfoList(const std::vector<PartitionInfo>& parts) {
  return EncodeList(kPartitionsList, parts, 512);
}
Result<std::vector<PartitionInfo>> DecodePartitionInfoList(std::string_view json) {
  return DecodeList<PartitionInfo>(kPartitionsList, json);
}

std::string EncodeDrainRequest(const DrainRequest& r) { return Encode(r); }
Result<DrainRequest> DecodeDrainRequest(std::string_view json) {
  return Decode<DrainRequest>(json, kStrict);
}

std::string EncodeRegisterRequest(const RegisterRequest& r) { return Encode(r, kNodeBytes); }
Result<RegisterRequest> DecodeRegisterRequest(std::string_view json) {
  return Decode<RegisterRequest>(json, kStrict);
}
std::string EncodeRegisterResponse(const RegisterResponse& r) { return Encode(r); }
Result<RegisterResponse> DecodeRegisterResponse(std::string_view json) {
  return Decode<RegisterResponse>(json, kLenient);
}

std::string EncodeHeartbeatRequest(const HeartbeatRequest& r) { return Encode(r); }
Result<HeartbeatRequest> DecodeHeartbeatRequest(std::string_view json) {
  return Decode<HeartbeatRequest>(json, kStrict);
}
std::string EncodeHeartbeatResponse(const HeartbeatResponse& r) { return Encode(r); }
Result<HeartbeatResponse> DecodeHeartbeatResponse(std::string_view json) {
  return Decode<HeartbeatResponse>(json, kLenient);
}

std::string EncodeJobEventsRequest(const JobEventsRequest& r) {
  return Encode(r, 64 + r.events.size() * 512);
}
Result<JobEventsRequest> DecodeJobEventsRequest(std::string_view json) {
  return Decode<JobEventsRequest>(json, kStrict);
}

std::string EncodeLaunchRequest(const LaunchRequest& r) {
  return Encode(r, kJobBytes + r.job.spec.script.size());
}
Result<LaunchRequest> DecodeLaunchRequest(std::string_view json) {
  return Decode<LaunchRequest>(json, kStrict);
}
std::string EncodeSignalRequest(const SignalRequest& r) { return Encode(r); }
Result<SignalRequest> DecodeSignalRequest(std::string_view json) {
  return Decode<SignalRequest>(json, kStrict);
}
std::string EncodeInjectRequest(const InjectRequest& r) { return Encode(r); }
Result<InjectRequest> DecodeInjectRequest(std::string_view json) {
  return Decode<InjectRequest>(json, kStrict);
}

std::string EncodeCancelRequest(const CancelRequest& r) { return Encode(r); }
Result<CancelRequest> DecodeCancelRequest(std::string_view json) {
  return Decode<CancelRequest>(json, kStrict);
}
std::string EncodeTimeLimitRequest(const TimeLimitRequest& r) { return Encode(r); }
Result<TimeLimitRequest> DecodeTimeLimitRequest(std::string_view json) {
  return Decode<TimeLimitRequest>(json, kStrict);
}

std::string EncodeStepSpec(const StepSpec& spec) {
  return Encode(spec, 512 + spec.environment.size() * 64);
}
Result<StepSpec> DecodeStepSpec(std::string_view json) { return Decode<StepSpec>(json, kStrict); }

std::string EncodeStepInfo(const StepInfo& s) { return Encode(s, 512 + s.tasks.size() * 128); }
Result<StepInfo> DecodeStepInfo(std::string_view json) { return Decode<StepInfo>(json, kLenient); }
std::string EncodeStepInfoList(const std::vector<StepInfo>& steps) {
  return EncodeList(kStepsList, steps, 1024);
}
Result<std::vector<StepInfo>> DecodeStepInfoList(std::string_view json) {
  return DecodeList<StepInfo>(kStepsList, json);
}

std::string EncodeStepLaunchRequest(const StepLaunchRequest& r) {
  return Encode(r, kJobBytes + r.job.spec.script.size() + r.spec.environment.size() * 64 +
                       r.layout.tasks.size() * 96);
}
Result<StepLaunchRequest> DecodeStepLaunchRequest(std::string_view json) {
  return Decode<StepLaunchRequest>(json, kStrict);
}
std::string EncodeStepSignalRequest(const StepSignalRequest& r) { return Encode(r); }
Result<StepSignalRequest> DecodeStepSignalRequest(std::string_view json) {
  return Decode<StepSignalRequest>(json, kStrict);
}

std::string EncodeWhyInfo(const WhyInfo& w) { return Encode(w, 512 + w.blockers.size() * 256); }
Result<WhyInfo> DecodeWhyInfo(std::string_view json) { return Decode<WhyInfo>(json, kLenient); }
std::string EncodePriorityList(const std::vector<PriorityInfo>& list) {
  return EncodeList(kPrioritiesList, list, 384);
}
Result<std::vector<PriorityInfo>> DecodePriorityList(std::string_view json) {
  return DecodeList<PriorityInfo>(kPrioritiesList, json);
}

std::string EncodeStringMap(const std::vector<std::pair<std::string, std::string>>& kv) {
  Encoder e(64);
  e.Object([&] {
    for (const auto& [k, v] : kv) {
      e.Key(k);
      e.String(v);
    }
  });
  return e.Take();
}
Result<std::vector<std::pair<std::string, std::string>>> DecodeStringMap(std::string_view json) {
  DomBuilder dom;
  CORRAL_RETURN_IF_ERROR(Parse(json, &dom));
  std::vector<std::pair<std::string, std::string>> out;
  CORRAL_RETURN_IF_ERROR(Decoder(kStrict).ReadStringPairs(dom.root(), &out));
  return out;
}

}  // namespace corral::api
