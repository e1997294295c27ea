#include "cli/slurm/submit.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <set>

#include "cli/slurm/begin_time.h"
#include "cli/slurm/dependency.h"
#include "core/array_spec.h"
#include "core/duration.h"
#include "core/hostlist.h"
#include "core/output_pattern.h"
#include "core/resources.h"
#include "core/slurm_env.h"
#include "core/strings.h"

namespace corral::slurm {
namespace {

enum class Source { kDirective, kEnvironment, kCommandLine };

// Options accepted without effect on Corral (they tune things Corral does not model).
const std::set<std::string_view> kIgnored = {
    "hint", "mpi",     "cpu-bind", "propagate",  "acctg-freq", "oversubscribe", "profile",
    "bell", "no-bell", "mem-bind", "gres-flags", "no-kill",    "get-user-env",  "disable-status"};

// Input environment variables: variable -> option, per command.
struct EnvOption {
  const char* variable;
  const char* option;
};

constexpr EnvOption kSbatchEnv[] = {
    {"SBATCH_ACCOUNT", "account"},
    {"SBATCH_ACCTG_FREQ", "acctg-freq"},
    {"SBATCH_ARRAY_INX", "array"},
    {"SBATCH_BATCH", "batch"},
    {"SBATCH_CLUSTERS", "cluster"},
    {"SLURM_CLUSTERS", "cluster"},
    {"SBATCH_CONSTRAINT", "constraint"},
    {"SBATCH_CONTAINER", "container"},
    {"SBATCH_CORE_SPEC", "core-spec"},
    {"SBATCH_CPUS_PER_GPU", "cpus-per-gpu"},
    {"SBATCH_DEBUG", "verbose"},
    {"SBATCH_DELAY_BOOT", "delay-boot"},
    {"SBATCH_DISTRIBUTION", "distribution"},
    {"SBATCH_ERROR", "error"},
    {"SBATCH_EXCLUSIVE", "exclusive"},
    {"SBATCH_EXPORT", "export"},
    {"SBATCH_GET_USER_ENV", "get-user-env"},
    {"SBATCH_GPU_BIND", "gpu-bind"},
    {"SBATCH_GPU_FREQ", "gpu-freq"},
    {"SBATCH_GPUS", "gpus"},
    {"SBATCH_GPUS_PER_NODE", "gpus-per-node"},
    {"SBATCH_GPUS_PER_TASK", "gpus-per-task"},
    {"SBATCH_GRES", "gres"},
    {"SBATCH_GRES_FLAGS", "gres-flags"},
    {"SBATCH_HINT", "hint"},
    {"SLURM_HINT", "hint"},
    {"SBATCH_IGNORE_PBS", "ignore-pbs"},
    {"SBATCH_INPUT", "input"},
    {"SBATCH_JOB_NAME", "job-name"},
    {"SBATCH_MEM_BIND", "mem-bind"},
    {"SBATCH_MEM_PER_CPU", "mem-per-cpu"},
    {"SBATCH_MEM_PER_GPU", "mem-per-gpu"},
    {"SBATCH_MEM_PER_NODE", "mem"},
    {"SBATCH_NETWORK", "network"},
    {"SBATCH_NO_KILL", "no-kill"},
    {"SBATCH_NO_REQUEUE", "no-requeue"},
    {"SBATCH_OPEN_MODE", "open-mode"},
    {"SBATCH_OUTPUT", "output"},
    {"SBATCH_OVERCOMMIT", "overcommit"},
    {"SBATCH_PARTITION", "partition"},
    {"SBATCH_POWER", "power"},
    {"SBATCH_PROFILE", "profile"},
    {"SBATCH_QOS", "qos"},
    {"SBATCH_REQ_SWITCH", "switches"},
    {"SBATCH_REQUEUE", "requeue"},
    {"SBATCH_RESERVATION", "reservation"},
    {"SBATCH_SIGNAL", "signal"},
    {"SBATCH_SPREAD_JOB", "spread-job"},
    {"SBATCH_THREAD_SPEC", "thread-spec"},
    {"SBATCH_THREADS_PER_CORE", "threads-per-core"},
    {"SBATCH_TIMELIMIT", "time"},
    {"SBATCH_USE_MIN_NODES", "use-min-nodes"},
    {"SBATCH_WAIT", "wait"},
    {"SBATCH_WAIT_ALL_NODES", "wait-all-nodes"},
    {"SBATCH_WCKEY", "wckey"},
};

// srun reads many SLURM_* variables, which inside an allocation carry the job's own values
// (that is how `srun` without options fills the allocation). Only those of options Corral
// handles are read.
constexpr EnvOption kSrunEnv[] = {
    {"SLURM_ACCOUNT", "account"},
    {"SLURM_CONSTRAINT", "constraint"},
    {"SLURM_CPU_BIND", "cpu-bind"},
    {"SLURM_CPUS_PER_GPU", "cpus-per-gpu"},
    {"SRUN_CPUS_PER_TASK", "cpus-per-task"},
    {"SLURM_DEPENDENCY", "dependency"},
    {"SLURM_DISTRIBUTION", "distribution"},
    {"SLURM_EXACT", "exact"},
    {"SLURM_EXCLUSIVE", "exclusive"},
    {"SLURM_EXPORT_ENV", "export"},
    {"SRUN_EXPORT_ENV", "export"},
    {"SLURM_GPU_BIND", "gpu-bind"},
    {"SLURM_GPUS", "gpus"},
    {"SLURM_GPUS_PER_NODE", "gpus-per-node"},
    {"SLURM_GPUS_PER_TASK", "gpus-per-task"},
    {"SLURM_HINT", "hint"},
    {"SLURM_IMMEDIATE", "immediate"},
    {"SLURM_JOB_ID", "jobid"},
    {"SLURM_JOB_NUM_NODES", "nodes"},
    {"SLURM_NNODES", "nodes"},
    {"SLURM_KILL_BAD_EXIT", "kill-on-bad-exit"},
    {"SLURM_LABELIO", "label"},
    {"SLURM_MEM_PER_CPU", "mem-per-cpu"},
    {"SLURM_MEM_PER_GPU", "mem-per-gpu"},
    {"SLURM_MEM_PER_NODE", "mem"},
    {"SLURM_MPI_TYPE", "mpi"},
    {"SLURM_NPROCS", "ntasks"},
    {"SLURM_NTASKS", "ntasks"},
    {"SLURM_NTASKS_PER_NODE", "ntasks-per-node"},
    {"SLURM_OPEN_MODE", "open-mode"},
    {"SLURM_OVERLAP", "overlap"},
    {"SLURM_PARTITION", "partition"},
    {"SLURM_QOS", "qos"},
    {"SLURM_RESERVATION", "reservation"},
    {"SLURM_SIGNAL", "signal"},
    {"SLURM_STDERRMODE", "error"},
    {"SLURM_STDINMODE", "input"},
    {"SLURM_STDOUTMODE", "output"},
    {"SLURM_TIMELIMIT", "time"},
    {"SLURM_UNBUFFEREDIO", "unbuffered"},
    {"SLURM_WORKING_DIR", "chdir"},
};

// pyxis' options as srun inherits them, the later overriding the earlier (the command line
// overrides both): pyxis' own PYXIS_CONTAINER_* defaults, then the options given to the
// enclosing sbatch or salloc, which Slurm passes to the job's environment as SPANK variables.
constexpr const char* kSpankPrefix = "SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_";
constexpr EnvOption kPyxisEnv[] = {
    {"PYXIS_CONTAINER_IMAGE", "container-image"},
    {"PYXIS_CONTAINER_MOUNTS", "container-mounts"},
    {"PYXIS_CONTAINER_WORKDIR", "container-workdir"},
    {"PYXIS_CONTAINER_NAME", "container-name"},
    {"PYXIS_CONTAINER_ENV", "container-env"},
    {"PYXIS_CONTAINER_MOUNT_HOME", "container-mount-home"},  // a boolean: 1/0, true/false
    {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_image", "container-image"},
    {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_mounts", "container-mounts"},
    {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_workdir", "container-workdir"},
    {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_name", "container-name"},
    {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_env", "container-env"},
    {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_mount_home", "container-mount-home"},
    {"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_no_container_mount_home", "no-container-mount-home"},
};

constexpr EnvOption kSallocEnv[] = {
    {"SALLOC_ACCOUNT", "account"},
    {"SALLOC_ACCTG_FREQ", "acctg-freq"},
    {"SALLOC_BELL", "bell"},
    {"SALLOC_BURST_BUFFER", "bb"},
    {"SALLOC_CLUSTERS", "cluster"},
    {"SLURM_CLUSTERS", "cluster"},
    {"SALLOC_CONSTRAINT", "constraint"},
    {"SALLOC_CONTAINER", "container"},
    {"SALLOC_CORE_SPEC", "core-spec"},
    {"SALLOC_CPUS_PER_GPU", "cpus-per-gpu"},
    {"SALLOC_DEBUG", "verbose"},
    {"SALLOC_DELAY_BOOT", "delay-boot"},
    {"SALLOC_EXCLUSIVE", "exclusive"},
    {"SALLOC_GPU_BIND", "gpu-bind"},
    {"SALLOC_GPU_FREQ", "gpu-freq"},
    {"SALLOC_GPUS", "gpus"},
    {"SALLOC_GPUS_PER_NODE", "gpus-per-node"},
    {"SALLOC_GPUS_PER_TASK", "gpus-per-task"},
    {"SALLOC_GRES", "gres"},
    {"SALLOC_GRES_FLAGS", "gres-flags"},
    {"SALLOC_HINT", "hint"},
    {"SLURM_HINT", "hint"},
    {"SALLOC_IMMEDIATE", "immediate"},
    {"SALLOC_KILL_CMD", "kill-command"},
    {"SALLOC_MEM_BIND", "mem-bind"},
    {"SALLOC_MEM_PER_CPU", "mem-per-cpu"},
    {"SALLOC_MEM_PER_GPU", "mem-per-gpu"},
    {"SALLOC_MEM_PER_NODE", "mem"},
    {"SALLOC_NETWORK", "network"},
    {"SALLOC_NO_BELL", "no-bell"},
    {"SALLOC_NO_KILL", "no-kill"},
    {"SALLOC_OVERCOMMIT", "overcommit"},
    {"SALLOC_PARTITION", "partition"},
    {"SALLOC_POWER", "power"},
    {"SALLOC_PROFILE", "profile"},
    {"SALLOC_QOS", "qos"},
    {"SALLOC_REQ_SWITCH", "switches"},
    {"SALLOC_RESERVATION", "reservation"},
    {"SALLOC_SIGNAL", "signal"},
    {"SALLOC_SPREAD_JOB", "spread-job"},
    {"SALLOC_THREAD_SPEC", "thread-spec"},
    {"SALLOC_THREADS_PER_CORE", "threads-per-core"},
    {"SALLOC_TIMELIMIT", "time"},
    {"SALLOC_USE_MIN_NODES", "use-min-nodes"},
    {"SALLOC_WAIT_ALL_NODES", "wait-all-nodes"},
    {"SALLOC_WCKEY", "wckey"},
};

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

struct SignalName {
  std::string_view name;
  int number;
};
constexpr SignalName kSignals[] = {
    {"HUP", 1},   {"INT", 2},    {"QUIT", 3},  {"ABRT", 6},  {"KILL", 9},  {"USR1", 10},
    {"USR2", 12}, {"ALRM", 14},  {"TERM", 15}, {"CONT", 18}, {"STOP", 19}, {"TSTP", 20},
    {"TTIN", 21}, {"TTOU", 22},  {"URG", 23},  {"XCPU", 24}, {"XFSZ", 25}, {"VTALRM", 26},
    {"PROF", 27}, {"WINCH", 28}, {"IO", 29},   {"PWR", 30},  {"SYS", 31},
};

const std::set<std::string> kMailTypes = {
    "NONE",          "BEGIN",          "END",        "FAIL",       "REQUEUE",
    "ALL",           "INVALID_DEPEND", "STAGE_OUT",  "TIME_LIMIT", "TIME_LIMIT_90",
    "TIME_LIMIT_80", "TIME_LIMIT_50",  "ARRAY_TASKS"};

class Builder {
 public:
  Builder(Command cmd, const SubmitContext& ctx) : cmd_(cmd), ctx_(ctx) {}

  tl::unexpected<Error> Err(const std::string& message) const {
    return InvalidArgument(std::string(CommandName(cmd_)) + ": error: " + message);
  }

  Status ApplyAll(const std::vector<ParsedOption>& options, Source src) {
    for (const ParsedOption& o : options) CORRAL_RETURN_IF_ERROR(Apply(o, src, ""));
    return {};
  }

  // Applies the input environment variables of the command.
  Status ApplyEnvironment() {
    const EnvOption* begin = nullptr;
    size_t n = 0;
    switch (cmd_) {
      case Command::kSbatch:
        begin = kSbatchEnv;
        n = std::size(kSbatchEnv);
        break;
      case Command::kSrun:
        begin = kSrunEnv;
        n = std::size(kSrunEnv);
        break;
      case Command::kSalloc:
        begin = kSallocEnv;
        n = std::size(kSallocEnv);
        break;
    }
    for (size_t i = 0; i < n; ++i) {
      auto it = ctx_.environment.find(begin[i].variable);
      if (it == ctx_.environment.end()) continue;
      ParsedOption o{.name = begin[i].option, .has_value = true, .value = it->second};
      std::string_view name = o.name;
      if (name == "verbose") {
        // SBATCH_DEBUG=N: N times -v.
        int level = AllDigits(o.value) ? std::stoi(o.value.substr(0, 4)) : 0;
        req_.client.verbose = level;
        continue;
      }
      if (name == "jobid" && !AllDigits(it->second)) continue;  // e.g. an array job's "12_3"?
      CORRAL_RETURN_IF_ERROR(Apply(o, Source::kEnvironment, begin[i].variable));
    }
    if (cmd_ == Command::kSrun) CORRAL_RETURN_IF_ERROR(ApplyPyxisEnvironment());
    return {};
  }

  Status ApplyPyxisEnvironment() {
    for (const EnvOption& e : kPyxisEnv) {
      auto it = ctx_.environment.find(e.variable);
      if (it == ctx_.environment.end()) continue;
      ParsedOption o{.name = e.option, .has_value = true, .value = it->second};
      if (std::string_view(e.variable) == "PYXIS_CONTAINER_MOUNT_HOME") {
        std::string v = Lower(it->second);
        if (v == "0" || v == "false" || v == "no") {
          o.name = "no-container-mount-home";
        } else if (v != "1" && v != "true" && v != "yes") {
          return Err("invalid PYXIS_CONTAINER_MOUNT_HOME value \"" + it->second +
                     "\": expected 1 or 0");
        }
      }
      CORRAL_RETURN_IF_ERROR(Apply(o, Source::kEnvironment, e.variable));
    }
    return {};
  }

  Status Apply(const ParsedOption& o, Source src, std::string_view env_name) {
    const std::string& name = o.name;
    const std::string& v = o.value;
    auto where = [&]() -> std::string {
      switch (src) {
        case Source::kDirective:
          return " (in a #SBATCH directive)";
        case Source::kEnvironment:
          return " (from the environment variable " + std::string(env_name) + ")";
        case Source::kCommandLine:
          return "";
      }
      return "";
    };
    auto bad_value = [&](const std::string& why) {
      return Err("invalid --" + name + " value \"" + v + "\"" + where() + ": " + why);
    };
    auto count = [&](uint32_t* out, bool allow_zero) -> Status {
      if (!AllDigits(v) || v.size() > 9) return bad_value("expected a number");
      uint64_t n = std::stoull(v);
      if (n == 0 && !allow_zero) return bad_value("must be at least 1");
      *out = static_cast<uint32_t>(n);
      return {};
    };
    ResourceRequest& r = req_.spec.resources;
    ClientOptions& c = req_.client;

    // Client-side options first.
    if (name == "help") {
      c.help = true;
      return {};
    }
    if (name == "usage") {
      c.usage = true;
      return {};
    }
    if (name == "version") {
      c.version = true;
      return {};
    }
    if (name == "wrap") {
      if (src == Source::kCommandLine)
        c.wrap = v;
      else
        req_.warnings.push_back(std::string(CommandName(cmd_)) + ": Warning: --wrap is ignored" +
                                where());
      return {};
    }
    if (name == "parsable") {
      c.parsable = true;
      return {};
    }
    if (name == "test-only") {
      c.test_only = true;
      return {};
    }
    if (name == "quiet") {
      c.quiet = true;
      return {};
    }
    if (name == "verbose") {
      ++c.verbose;
      return {};
    }
    if (name == "wait" && cmd_ == Command::kSbatch) {
      c.wait = true;
      return {};
    }
    if (kIgnored.count(name) > 0) {
      c.ignored.push_back("--" + name + (o.has_value ? "=" + v : ""));
      return {};
    }

    if (name == "job-name") {
      job_name_ = v;
      return {};
    }
    if (name == "account") {
      req_.spec.account = v;
      return {};
    }
    if (name == "qos") {
      req_.spec.qos = v;
      return {};
    }
    if (name == "partition") {
      req_.spec.partitions.clear();
      for (auto& p : Split(v, ',')) {
        if (!p.empty()) req_.spec.partitions.push_back(p);
      }
      return {};
    }
    if (name == "reservation") {
      req_.spec.reservation = v;
      return {};
    }
    if (name == "comment") {
      req_.spec.comment = v;
      return {};
    }
    if (name == "mail-user") {
      req_.spec.mail_user = v;
      return {};
    }
    if (name == "mail-type") {
      for (auto& t : Split(v, ',')) {
        if (kMailTypes.count(Upper(t)) == 0) return bad_value("unknown mail type \"" + t + "\"");
      }
      req_.spec.mail_type = v;
      return {};
    }
    if (name == "nodes") {
      size_t dash = v.find('-');
      std::string lo = v.substr(0, dash), hi = dash == std::string::npos ? "" : v.substr(dash + 1);
      if (!AllDigits(lo) || lo.size() > 9 || (!hi.empty() && (!AllDigits(hi) || hi.size() > 9))) {
        return Err("invalid node count `" + v + "'" + where());
      }
      r.nodes = static_cast<uint32_t>(std::stoul(lo));
      r.nodes_max =
          dash == std::string::npos ? 0 : (hi.empty() ? 0 : static_cast<uint32_t>(std::stoul(hi)));
      if (r.nodes == 0 || (r.nodes_max != 0 && r.nodes_max < r.nodes)) {
        return Err("invalid node count `" + v + "'" + where());
      }
      if (r.nodes_max == r.nodes) r.nodes_max = 0;
      nodes_set_ = true;
      return {};
    }
    if (name == "ntasks") {
      CORRAL_RETURN_IF_ERROR(count(&r.ntasks, false));
      ntasks_set_ = true;
      return {};
    }
    if (name == "ntasks-per-node") return count(&r.ntasks_per_node, false);
    if (name == "cpus-per-task") {
      CORRAL_RETURN_IF_ERROR(count(&r.cpus_per_task, false));
      cpus_set_ = true;
      return {};
    }
    if (name == "cpus-per-gpu") return count(&r.cpus_per_gpu, false);
    if (name == "mem" || name == "mem-per-cpu" || name == "mem-per-gpu") {
      auto mb = ParseMemoryMb(v);
      if (!mb.has_value()) return bad_value("expected a size with an optional K, M, G or T suffix");
      // Directives count as the command line here, as in Slurm.
      int from = src == Source::kEnvironment ? 1 : 2;
      if (name == "mem") {
        r.mem_per_node_mb = *mb == 0 ? kWholeNodeMemory : *mb;
        mem_set_[0] = from;
      } else if (name == "mem-per-cpu") {
        r.mem_per_cpu_mb = *mb;
        mem_set_[1] = from;
      } else {
        r.mem_per_gpu_mb = *mb;
        mem_set_[2] = from;
      }
      return {};
    }
    if (name == "gpus" || name == "gpus-per-node" || name == "gpus-per-task") {
      std::string type;
      uint32_t n = 0;
      CORRAL_RETURN_IF_ERROR(ParseGpuCount(v, &type, &n, bad_value));
      if (!type.empty()) r.gpu_type = type;
      // Slurm's sbatch exports these options as given ("a100:4").
      if (name == "gpus") {
        r.gpus = n;
        gpus_env_[0] = v;
      } else if (name == "gpus-per-node") {
        r.gpus_per_node = n;
        gpus_env_[1] = v;
      } else {
        r.gpus_per_task = n;
        gpus_env_[2] = v;
      }
      return {};
    }
    if (name == "gres") {
      gpus_env_[1].clear();  // --gres sets no SLURM_GPUS_PER_NODE
      return ApplyGres(v, bad_value);
    }
    if (name == "exclusive") {
      if (o.has_value && !v.empty() && Lower(v) != "exclusive") {
        return Unsupported("--exclusive=" + v, where());
      }
      r.exclusive = true;
      return {};
    }
    if (name == "constraint") {
      r.constraint = v;
      return {};
    }
    if (name == "nodelist" || name == "exclude") {
      if (v.find('/') != std::string::npos) {
        return Unsupported("--" + name + " with a host file (\"" + v + "\")", where());
      }
      auto hosts = ExpandHostList(v, 100000);
      if (!hosts.has_value()) return bad_value(hosts.error().message);
      (name == "nodelist" ? r.nodelist : r.exclude) = std::move(*hosts);
      return {};
    }
    if (name == "time") {
      auto d = ParseTimeLimit(v);
      if (d.has_value() && ctx_.exact_time_limits && *d != kUnlimited) d = ParseSlurmDuration(v);
      if (!d.has_value()) return Err("Invalid --time specification" + where());
      req_.spec.time_limit = *d;
      return {};
    }
    if (name == "output" || name == "error") {
      std::string path = Lower(v) == "none" ? "/dev/null" : v;
      (name == "output" ? req_.spec.stdout_path : req_.spec.stderr_path) = path;
      return {};
    }
    if (name == "input") {
      c.input = Lower(v) == "none" ? "/dev/null" : v;
      if (cmd_ == Command::kSbatch && c.input != "/dev/null") {
        return Unsupported("--input=" + v + " (a batch job's stdin other than /dev/null)", where());
      }
      return {};
    }
    if (name == "open-mode") {
      char m = v.empty() ? 0 : static_cast<char>(std::tolower(static_cast<unsigned char>(v[0])));
      if (m != 'a' && m != 't') return Err("Invalid --open-mode argument: " + v + where());
      open_mode_ = m;
      req_.spec.append_output = m == 'a';
      return {};
    }
    if (name == "chdir") {
      req_.spec.working_dir = !v.empty() && v.front() == '/' ? v : ctx_.cwd + "/" + v;
      return {};
    }
    if (name == "array") {
      if (auto a = ParseArraySpec(v); !a.has_value()) return Err(a.error().message + where());
      req_.spec.array = v;
      return {};
    }
    if (name == "dependency") {
      auto d = ParseDependencySpec(v);
      if (!d.has_value()) {
        return MakeError(d.error().code, std::string(CommandName(cmd_)) +
                                             ": error: " + d.error().message + where());
      }
      req_.spec.dependencies = std::move(d->dependencies);
      req_.spec.dependency_any = d->any;
      return {};
    }
    if (name == "begin") {
      auto t = ParseBeginTime(v, ctx_.now, ctx_.utc_offset_seconds);
      if (!t.has_value()) return Err(t.error().message + where());
      req_.spec.begin_time = *t;
      return {};
    }
    if (name == "signal") {
      auto s = ParseSignalSpec(v);
      if (!s.has_value()) {
        return MakeError(s.error().code, std::string(CommandName(cmd_)) +
                                             ": error: " + s.error().message + where());
      }
      req_.spec.signal = *s;
      return {};
    }
    if (name == "requeue") {
      req_.spec.requeue = true;
      return {};
    }
    if (name == "no-requeue") {
      req_.spec.requeue = false;
      return {};
    }
    if (name == "hold") {
      req_.spec.hold = true;
      return {};
    }
    if (name == "nice") {
      if (!o.has_value || v.empty()) {
        req_.spec.nice = 100;
        return {};
      }
      std::string_view digits = v;
      bool negative = !digits.empty() && (digits.front() == '-' || digits.front() == '+');
      if (negative) digits.remove_prefix(1);
      if (!AllDigits(digits) || digits.size() > 10) return bad_value("expected a number");
      long long n = std::stoll(std::string(digits));
      if (n > 2147483645LL) return bad_value("out of range");
      req_.spec.nice = static_cast<int32_t>(v.front() == '-' ? -n : n);
      return {};
    }
    if (name == "export") {
      export_ = v;
      return {};
    }
    // pyxis: the image, workdir and name take the last value given (pyxis refuses a second,
    // different one); mounts and variable names add up, as in pyxis.
    if (name == "container-image") {
      if (v.empty()) return Err("--container-image: argument required" + where());
      req_.spec.container.image = v;
      return {};
    }
    if (name == "container-mounts") {
      for (auto& m : Split(v, ',')) {
        auto& mounts = req_.spec.container.mounts;
        if (!m.empty() && std::find(mounts.begin(), mounts.end(), m) == mounts.end()) {
          mounts.push_back(m);
        }
      }
      return {};
    }
    if (name == "container-workdir") {
      req_.spec.container.workdir = v;
      return {};
    }
    if (name == "container-name") {
      if (v.empty()) return Err("--container-name: argument required" + where());
      req_.spec.container.name = v;
      return {};
    }
    if (name == "container-mount-home") {
      req_.spec.container.mount_home = true;
      return {};
    }
    if (name == "no-container-mount-home") {
      req_.spec.container.mount_home = false;
      return {};
    }
    if (name == "container-env") {
      auto& names = req_.spec.container.env;
      for (auto& e : Split(v, ',')) {
        if (!e.empty() && std::find(names.begin(), names.end(), e) == names.end()) {
          names.push_back(e);
        }
      }
      return {};
    }
    if (name == "gpu-bind") {
      c.gpu_bind = v;
      return {};
    }
    if (name == "distribution") {
      std::string lower = Lower(v);
      if (lower.rfind("block", 0) != 0 && lower.rfind("cyclic", 0) != 0) {
        return Unsupported("--distribution=" + v, where());
      }
      c.distribution = v;
      return {};
    }
    if (name == "immediate") {
      uint32_t secs = 0;
      if (o.has_value && !v.empty()) CORRAL_RETURN_IF_ERROR(count(&secs, true));
      c.immediate = secs;
      return {};
    }
    if (cmd_ == Command::kSrun) {
      if (name == "jobid") {
        if (!AllDigits(v) || v.size() > 18) return bad_value("expected a job id");
        c.jobid = std::stoull(v);
        return {};
      }
      if (name == "label") {
        c.label = true;
        return {};
      }
      if (name == "unbuffered") {
        c.unbuffered = true;
        return {};
      }
      if (name == "overlap") {
        c.overlap = true;
        return {};
      }
      if (name == "exact") {
        c.exact = true;
        return {};
      }
      if (name == "whole") {
        c.whole = true;
        return {};
      }
      if (name == "kill-on-bad-exit") {
        c.kill_on_bad_exit = !(o.has_value && v == "0");
        return {};
      }
      if (name == "pty") {
        c.pty = true;
        return {};
      }
    }
    if (cmd_ == Command::kSalloc && name == "no-shell") {
      c.no_shell = true;
      return {};
    }
    return Unsupported("--" + name, where());
  }

  tl::unexpected<Error> Unsupported(const std::string& what, const std::string& where) const {
    return MakeError(ErrorCode::kUnimplemented, std::string(CommandName(cmd_)) +
                                                    ": error: option " + what + where +
                                                    " is not supported by Corral");
  }

  template <typename Bad>
  Status ParseGpuCount(const std::string& v, std::string* type, uint32_t* n, Bad bad_value) {
    if (v.find(',') != std::string::npos) return bad_value("one GPU type per job is supported");
    std::vector<std::string> parts = Split(v, ':');
    if (parts.size() > 1 && parts.front() == "gpu") parts.erase(parts.begin());
    if (parts.size() > 2) return bad_value("expected [type:]count");
    if (!AllDigits(parts.back()) || parts.back().size() > 6)
      return bad_value("expected [type:]count");
    *n = static_cast<uint32_t>(std::stoul(parts.back()));
    if (parts.size() == 2) *type = parts[0];
    return {};
  }

  template <typename Bad>
  Status ApplyGres(const std::string& v, Bad bad_value) {
    ResourceRequest& r = req_.spec.resources;
    if (Lower(v) == "none") {
      r.gpus_per_node = 0;
      return {};
    }
    for (std::string item : Split(v, ',')) {
      if (item.rfind("gres/", 0) == 0) item = item.substr(5);
      if (item.rfind("gres:", 0) == 0) item = item.substr(5);
      std::vector<std::string> parts = Split(item, ':');
      if (parts.front() != "gpu") {
        return MakeError(ErrorCode::kUnimplemented,
                         std::string(CommandName(cmd_)) + ": error: generic resource \"" +
                             parts.front() + "\" (--gres=" + v + ") is not supported by Corral");
      }
      uint32_t n = 1;
      std::string type;
      if (parts.size() >= 2 && AllDigits(parts.back())) {
        if (parts.back().size() > 6) return bad_value("count too large");
        n = static_cast<uint32_t>(std::stoul(parts.back()));
        parts.pop_back();
      }
      if (parts.size() > 2) return bad_value("expected gpu[:type][:count]");
      if (parts.size() == 2) type = parts[1];
      r.gpus_per_node = n;
      if (!type.empty()) r.gpu_type = type;
    }
    return {};
  }

  // Slurm's option verification: defaults, counts that follow from each other, and the
  // variables sbatch puts in the job's environment.
  Result<SubmitRequest> Finish(std::string default_name) {
    JobSpec& spec = req_.spec;
    ResourceRequest& r = spec.resources;
    std::string cmd(CommandName(cmd_));
    if (req_.client.quiet && req_.client.verbose > 0) {
      return Err("don't specify both --verbose (-v) and --quiet (-Q)");
    }
    // Slurm's rule for the three memory options: one given on the command line (or in a
    // directive) wins over the environment; two from the same level are an error.
    for (int level : {2, 1}) {
      int n = 0;
      for (int i = 0; i < 3; ++i) n += mem_set_[i] == level ? 1 : 0;
      if (n > 1) {
        return InvalidArgument(
            cmd + ": fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
      }
      if (n == 1) {
        for (int i = 0; i < 3; ++i) {
          if (mem_set_[i] != level) mem_set_[i] = 0;
        }
        break;
      }
    }
    if (mem_set_[0] == 0) r.mem_per_node_mb = 0;
    if (mem_set_[1] == 0) r.mem_per_cpu_mb = 0;
    if (mem_set_[2] == 0) r.mem_per_gpu_mb = 0;
    spec.name = job_name_.has_value() ? *job_name_ : default_name;
    spec.user = ctx_.user;
    spec.uid = ctx_.uid;
    spec.gid = ctx_.gid;
    spec.submit_dir = ctx_.cwd;
    spec.submit_host = ctx_.hostname;
    if (spec.working_dir.empty()) spec.working_dir = ctx_.cwd;

    // Nodes named with -w count towards -N.
    if (!r.nodelist.empty()) {
      std::set<std::string> unique(r.nodelist.begin(), r.nodelist.end());
      uint32_t n = static_cast<uint32_t>(unique.size());
      r.nodes = nodes_set_ ? std::max(r.nodes, n) : n;
      if (r.nodes_max != 0 && r.nodes_max < r.nodes) r.nodes_max = r.nodes;
      nodes_set_ = true;
    }
    bool fixed_nodes = r.nodes_max == 0 || r.nodes_max == r.nodes;
    if (r.ntasks_per_node > 0 && !ntasks_set_ && fixed_nodes) {
      r.ntasks = r.nodes * r.ntasks_per_node;
      ntasks_set_ = true;
    }
    if (nodes_set_ && !ntasks_set_) {
      // One task per node by default (for "-N2-3" too: Slurm shows NumTasks=2).
      r.ntasks = std::max<uint32_t>(r.nodes, 1);
    } else if (nodes_set_ && ntasks_set_) {
      if (r.nodes_max != 0 && r.ntasks < r.nodes_max) r.nodes_max = r.ntasks;
      if (r.ntasks < r.nodes) {
        req_.warnings.push_back(cmd + ": Warning: can't run " + std::to_string(r.ntasks) +
                                " processes on " + std::to_string(r.nodes) +
                                " nodes, setting nnodes to " + std::to_string(r.ntasks));
        r.nodes = r.ntasks;
        r.nodes_max = 0;
      }
    }
    if (r.nodes_max == r.nodes) r.nodes_max = 0;

    if (cmd_ == Command::kSbatch && spec.stdout_path.empty()) {
      spec.stdout_path = std::string(DefaultOutputPattern(!spec.array.empty()));
    }

    // The job's environment.
    auto env = ResolveExport(export_.value_or("ALL"), ctx_.environment);
    if (!env.has_value()) return Err(env.error().message);
    spec.environment = std::move(*env);
    if (cmd_ == Command::kSbatch) {
      auto& e = spec.environment;
      if (export_.has_value() && Lower(*export_) != "all") {
        e["SLURM_EXPORT_ENV"] = *export_;
        e["SLURM_GET_USER_ENV"] = "1";
      }
      e["SLURM_PRIO_PROCESS"] = std::to_string(ctx_.nice);
      if (ntasks_set_) {
        e["SLURM_NTASKS"] = std::to_string(r.ntasks);
        e["SLURM_NPROCS"] = std::to_string(r.ntasks);
      }
      if (cpus_set_) e["SLURM_CPUS_PER_TASK"] = std::to_string(r.cpus_per_task);
      if (r.ntasks_per_node > 0) e["SLURM_NTASKS_PER_NODE"] = std::to_string(r.ntasks_per_node);
      if (mem_set_[0] && r.mem_per_node_mb != kWholeNodeMemory) {
        e["SLURM_MEM_PER_NODE"] = std::to_string(r.mem_per_node_mb);
      }
      if (mem_set_[1]) e["SLURM_MEM_PER_CPU"] = std::to_string(r.mem_per_cpu_mb);
      if (mem_set_[2]) e["SLURM_MEM_PER_GPU"] = std::to_string(r.mem_per_gpu_mb);
      if (!gpus_env_[0].empty()) e["SLURM_GPUS"] = gpus_env_[0];
      if (!gpus_env_[1].empty()) e["SLURM_GPUS_PER_NODE"] = gpus_env_[1];
      if (!gpus_env_[2].empty()) e["SLURM_GPUS_PER_TASK"] = gpus_env_[2];
      if (r.cpus_per_gpu > 0) e["SLURM_CPUS_PER_GPU"] = std::to_string(r.cpus_per_gpu);
      if (open_mode_.has_value()) e["SLURM_OPEN_MODE"] = std::string(1, *open_mode_);
      // pyxis' options, for the job's srun steps (Slurm passes SPANK options this way).
      for (auto& [k, v] : PyxisEnvironment(spec.container)) e[k] = v;
    }

    if (auto s = ValidateResourceRequest(r); !s.has_value()) return Err(s.error().message);
    return std::move(req_);
  }

  SubmitRequest& request() { return req_; }

 private:
  Command cmd_;
  const SubmitContext& ctx_;
  SubmitRequest req_;
  std::optional<std::string> job_name_;
  std::optional<std::string> export_;
  std::optional<char> open_mode_;
  bool ntasks_set_ = false;
  bool cpus_set_ = false;
  bool nodes_set_ = false;
  int mem_set_[3] = {0, 0, 0};  // 0 unset, 1 environment, 2 command line or directive
  std::string gpus_env_[3];     // --gpus, --gpus-per-node, --gpus-per-task as given
};

}  // namespace

std::map<std::string, std::string> PyxisEnvironment(const ContainerSpec& c) {
  std::map<std::string, std::string> out;
  auto join = [](const std::vector<std::string>& items) {
    std::string s;
    for (const auto& i : items) s += (s.empty() ? "" : ",") + i;
    return s;
  };
  const std::string p = kSpankPrefix;
  if (!c.image.empty()) out[p + "container_image"] = c.image;
  if (!c.mounts.empty()) out[p + "container_mounts"] = join(c.mounts);
  if (!c.workdir.empty()) out[p + "container_workdir"] = c.workdir;
  if (!c.name.empty()) out[p + "container_name"] = c.name;
  if (!c.env.empty()) out[p + "container_env"] = join(c.env);
  if (!c.mount_home) out[p + "no_container_mount_home"] = "";
  return out;
}

std::string WrapScript(std::string_view command) {
  return "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" + std::string(command) + "\n";
}

Result<std::vector<std::string>> ExtractDirectives(std::string_view script,
                                                   std::string_view script_name) {
  std::vector<std::string> words;
  size_t pos = 0;
  int lineno = 0;
  while (pos < script.size()) {
    size_t eol = script.find('\n', pos);
    std::string_view line =
        script.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    pos = eol == std::string_view::npos ? script.size() : eol + 1;
    ++lineno;
    std::string_view rest;
    if (line.rfind("#SBATCH", 0) == 0) {
      rest = line.substr(7);
    } else if (line.rfind("#SLURM", 0) == 0) {
      rest = line.substr(6);
    } else {
      // Blank lines and comments are skipped; the first command ends the directives.
      size_t i = 0;
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      if (i < line.size() && line[i] != '#') break;
      continue;
    }
    // Split `rest` into words the way Slurm's sbatch does.
    size_t i = 0;
    while (true) {
      while (i < rest.size() && std::isspace(static_cast<unsigned char>(rest[i]))) ++i;
      if (i < rest.size() && rest[i] == ':') {
        return InvalidArgument("sbatch: fatal: " + std::string(script_name) + ": line " +
                               std::to_string(lineno) + ": Unexpected `:` in [" +
                               std::string(rest.substr(i)) + "]");
      }
      if (i >= rest.size()) break;
      std::string word;
      bool quoted = false, escape = false, any = false;
      char quote = 0;
      while (i < rest.size() && (quoted || !std::isspace(static_cast<unsigned char>(rest[i])))) {
        char ch = rest[i];
        if (escape) {
          escape = false;
        } else if (ch == '\\') {
          escape = true;
          ++i;
          continue;
        } else if (quoted) {
          if (ch == quote) {
            quoted = false;
            ++i;
            continue;
          }
        } else if (ch == '"' || ch == '\'') {
          quoted = true;
          quote = ch;
          ++i;
          continue;
        } else if (ch == '#') {
          break;  // the rest of the line is a comment
        }
        word += ch;
        any = true;
        ++i;
      }
      if (quoted) {
        return InvalidArgument("sbatch: fatal: " + std::string(script_name) + ": line " +
                               std::to_string(lineno) + ": Unmatched `" + std::string(1, quote) +
                               "` in [" + std::string(rest) + "]");
      }
      if (!any) break;  // a comment: nothing more on this line
      words.push_back(std::move(word));
    }
  }
  return words;
}

Result<ClientOptions> ScanSbatchCommandLine(const std::vector<std::string>& args) {
  CORRAL_ASSIGN_OR_RETURN(ScanResult scan, ScanOptions(Command::kSbatch, args));
  ClientOptions c;
  for (const auto& o : scan.options) {
    if (o.name == "wrap") c.wrap = o.value;
    if (o.name == "help") c.help = true;
    if (o.name == "usage") c.usage = true;
    if (o.name == "version") c.version = true;
  }
  if (!scan.operands.empty()) {
    c.script_path = scan.operands.front();
    c.script_args.assign(scan.operands.begin() + 1, scan.operands.end());
  }
  return c;
}

Result<SubmitRequest> ParseSbatch(const std::vector<std::string>& args, std::string_view script,
                                  const SubmitContext& ctx) {
  CORRAL_ASSIGN_OR_RETURN(ScanResult cmdline, ScanOptions(Command::kSbatch, args));
  Builder b(Command::kSbatch, ctx);
  std::string wrap;
  for (const auto& o : cmdline.options) {
    if (o.name == "wrap") wrap = o.value;
  }
  bool wrapped = false;
  for (const auto& o : cmdline.options) wrapped = wrapped || o.name == "wrap";
  std::string text;
  if (wrapped) {
    if (!cmdline.operands.empty()) {
      return InvalidArgument("sbatch: error: Script arguments not permitted with --wrap option");
    }
    text = WrapScript(wrap);
  } else {
    text = std::string(script);
    if (text.empty()) return InvalidArgument("sbatch: error: Batch script is empty!");
    if (text.rfind("#!", 0) != 0) {
      return InvalidArgument(
          "sbatch: error: This does not look like a batch script.  The first line must start "
          "with #! followed by the path to an interpreter.");
    }
    if (text.find("\r\n") != std::string::npos) {
      return InvalidArgument(
          "sbatch: error: Batch script contains DOS line breaks (\\r\\n) instead of expected UNIX "
          "line breaks (\\n).");
    }
    if (text.find('\0') != std::string::npos) {
      return InvalidArgument("sbatch: error: The batch script contains a NUL character");
    }
  }
  std::string script_path = cmdline.operands.empty() ? "" : cmdline.operands.front();
  // 1. Directives.
  if (!wrapped) {
    CORRAL_ASSIGN_OR_RETURN(
        auto words,
        ExtractDirectives(text, script_path.empty() ? "sbatch" : Basename(script_path)));
    CORRAL_ASSIGN_OR_RETURN(ScanResult directives, ScanOptions(Command::kSbatch, words));
    if (!directives.operands.empty()) {
      return InvalidArgument("sbatch: error: Invalid directive found in batch script: " +
                             directives.operands.front());
    }
    CORRAL_RETURN_IF_ERROR(b.ApplyAll(directives.options, Source::kDirective));
  }
  // 2. SBATCH_* variables. 3. The command line.
  CORRAL_RETURN_IF_ERROR(b.ApplyEnvironment());
  CORRAL_RETURN_IF_ERROR(b.ApplyAll(cmdline.options, Source::kCommandLine));
  SubmitRequest& req = b.request();
  req.spec.script = text;
  req.client.script_path = script_path;
  if (!cmdline.operands.empty()) {
    req.client.script_args.assign(cmdline.operands.begin() + 1, cmdline.operands.end());
  }
  std::string default_name =
      wrapped ? "wrap" : (script_path.empty() ? "sbatch" : Basename(script_path));
  return b.Finish(default_name);
}

Result<SubmitRequest> ParseSrun(const std::vector<std::string>& args, const SubmitContext& ctx) {
  CORRAL_ASSIGN_OR_RETURN(ScanResult cmdline, ScanOptions(Command::kSrun, args));
  Builder b(Command::kSrun, ctx);
  CORRAL_RETURN_IF_ERROR(b.ApplyEnvironment());
  CORRAL_RETURN_IF_ERROR(b.ApplyAll(cmdline.options, Source::kCommandLine));
  SubmitRequest& req = b.request();
  req.client.command = cmdline.operands;
  bool informational = req.client.help || req.client.usage || req.client.version;
  if (req.client.command.empty() && !informational) {
    return InvalidArgument("srun: fatal: No command given to execute.");
  }
  std::string name = req.client.command.empty() ? "srun" : Basename(req.client.command.front());
  // Inside an allocation, the job's name (SLURM_JOB_NAME) is not the step's.
  return b.Finish(name);
}

Result<SubmitRequest> ParseSalloc(const std::vector<std::string>& args, const SubmitContext& ctx) {
  CORRAL_ASSIGN_OR_RETURN(ScanResult cmdline, ScanOptions(Command::kSalloc, args));
  Builder b(Command::kSalloc, ctx);
  CORRAL_RETURN_IF_ERROR(b.ApplyEnvironment());
  CORRAL_RETURN_IF_ERROR(b.ApplyAll(cmdline.options, Source::kCommandLine));
  b.request().client.command = cmdline.operands;
  return b.Finish("interactive");
}

Result<std::map<std::string, std::string>> ResolveExport(
    std::string_view value, const std::map<std::string, std::string>& environment) {
  std::map<std::string, std::string> out;
  std::vector<std::string> items = Split(value, ',');
  bool all = false, none = false;
  std::vector<std::string> rest;
  for (const auto& item : items) {
    std::string upper = Upper(item);
    if (upper == "ALL") {
      all = true;
    } else if (upper == "NONE") {
      none = true;
    } else if (item.empty()) {
      return InvalidArgument("invalid --export value \"" + std::string(value) + "\": empty item");
    } else {
      rest.push_back(item);
    }
  }
  if (none && (all || !rest.empty())) {
    return InvalidArgument("invalid --export value \"" + std::string(value) +
                           "\": NONE cannot be combined with variables");
  }
  if (all) {
    out = environment;
  } else {
    for (const auto& [k, v] : environment) {
      if (k.rfind("SLURM_", 0) == 0) out[k] = v;
    }
  }
  for (const auto& item : rest) {
    size_t eq = item.find('=');
    if (eq != std::string::npos) {
      out[item.substr(0, eq)] = item.substr(eq + 1);
    } else if (auto it = environment.find(item); it != environment.end()) {
      out[item] = it->second;
    }
  }
  return out;
}

Result<Duration> ParseTimeLimit(std::string_view text) {
  std::string t(text);
  if (!t.empty() && t.back() == '-') t += "0";
  auto d = ParseSlurmDuration(t);
  if (!d.has_value()) return InvalidArgument("invalid time limit \"" + std::string(text) + "\"");
  if (*d == kUnlimited) return kUnlimited;
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(*d).count();
  if (secs == 0) return kUnlimited;
  int64_t minutes = (secs + 59) / 60;
  return std::chrono::duration_cast<Duration>(std::chrono::minutes(minutes));
}

Result<SignalSpec> ParseSignalSpec(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument("invalid --signal specification \"" + std::string(text) + "\"");
  };
  SignalSpec spec;
  std::string_view s = text;
  if (s.size() >= 2 && s[1] == ':') {
    char flag = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    if (flag == 'B') {
      spec.batch_only = true;
    } else if (flag == 'R') {
      return MakeError(ErrorCode::kUnimplemented,
                       "--signal=R:... (signal on reservation end) is not supported by Corral");
    } else {
      return bad();
    }
    s.remove_prefix(2);
  }
  std::string_view sig = s, secs;
  if (size_t at = s.find('@'); at != std::string_view::npos) {
    sig = s.substr(0, at);
    secs = s.substr(at + 1);
  }
  if (AllDigits(sig) && sig.size() <= 5) {
    spec.signal = std::stoi(std::string(sig));
  } else {
    std::string upper = Upper(sig);
    if (upper.rfind("SIG", 0) == 0) upper = upper.substr(3);
    for (const SignalName& n : kSignals) {
      if (upper == n.name) spec.signal = n.number;
    }
  }
  if (spec.signal <= 0 || spec.signal > 64) return bad();
  int64_t seconds = 60;
  if (!secs.empty() || s.find('@') != std::string_view::npos) {
    if (!AllDigits(secs) || secs.size() > 5) return bad();
    seconds = std::stoll(std::string(secs));
    if (seconds > 0xffff) return bad();
  }
  spec.before = std::chrono::duration_cast<Duration>(std::chrono::seconds(seconds));
  return spec;
}

}  // namespace corral::slurm
