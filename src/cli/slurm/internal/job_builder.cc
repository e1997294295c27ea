#include "cli/slurm/internal/job_builder.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "cli/slurm/begin_time.h"
#include "cli/slurm/dependency.h"
#include "cli/slurm/environment.h"
#include "cli/slurm/option_values.h"
#include "core/array_spec.h"
#include "core/duration.h"
#include "core/hostlist.h"
#include "core/output_pattern.h"
#include "core/resources.h"
#include "core/strings.h"

namespace corral::slurm::internal {
namespace {

// Options accepted without effect on Corral (they tune things Corral does not model).
const std::set<std::string_view> kIgnored = {
    "hint", "mpi",     "cpu-bind", "propagate",  "acctg-freq", "oversubscribe", "profile",
    "bell", "no-bell", "mem-bind", "gres-flags", "no-kill",    "get-user-env",  "disable-status"};

const std::set<std::string> kMailTypes = {
    "NONE",          "BEGIN",          "END",        "FAIL",       "REQUEUE",
    "ALL",           "INVALID_DEPEND", "STAGE_OUT",  "TIME_LIMIT", "TIME_LIMIT_90",
    "TIME_LIMIT_80", "TIME_LIMIT_50",  "ARRAY_TASKS"};

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
Status ApplyGres(JobBuilder& b, const std::string& v, Bad bad_value) {
  ResourceRequest& r = b.req.spec.resources;
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
                       std::string(CommandName(b.command)) + ": error: generic resource \"" +
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

}  // namespace

tl::unexpected<Error> JobBuilder::Err(const std::string& message) const {
  return InvalidArgument(std::string(CommandName(command)) + ": error: " + message);
}

tl::unexpected<Error> JobBuilder::Unsupported(const std::string& what,
                                              const std::string& where) const {
  return MakeError(ErrorCode::kUnimplemented, std::string(CommandName(command)) +
                                                  ": error: option " + what + where +
                                                  " is not supported by Corral");
}

Status JobBuilder::ApplyAll(const std::vector<ParsedOption>& options, Source source) {
  for (const ParsedOption& o : options) CORRAL_RETURN_IF_ERROR(Apply(o, source, ""));
  return {};
}

Status JobBuilder::ApplyEnvironment() {
  for (const EnvironmentOption& e : InputVariables(command)) {
    auto it = ctx.environment.find(e.variable);
    if (it == ctx.environment.end()) continue;
    ParsedOption o{.name = e.option, .has_value = true, .value = it->second};
    if (o.name == "verbose") {
      // SBATCH_DEBUG=N: N times -v.
      req.client.verbose = AllDigits(o.value) ? std::stoi(o.value.substr(0, 4)) : 0;
      continue;
    }
    if (o.name == "jobid" && !AllDigits(it->second)) continue;  // e.g. an array job's "12_3"?
    CORRAL_RETURN_IF_ERROR(Apply(o, Source::kEnvironment, e.variable));
  }
  if (command != Command::kSrun) return {};
  for (const EnvironmentOption& e : PyxisInputVariables()) {
    auto it = ctx.environment.find(e.variable);
    if (it == ctx.environment.end()) continue;
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

Status JobBuilder::Apply(const ParsedOption& o, Source src, std::string_view env_name) {
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
  ResourceRequest& r = req.spec.resources;
  ClientOptions& c = req.client;

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
      req.warnings.push_back(std::string(CommandName(command)) + ": Warning: --wrap is ignored" +
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
  if (name == "wait" && command == Command::kSbatch) {
    c.wait = true;
    return {};
  }
  if (kIgnored.count(name) > 0) {
    c.ignored.push_back("--" + name + (o.has_value ? "=" + v : ""));
    return {};
  }

  if (name == "job-name") {
    job_name = v;
    return {};
  }
  if (name == "account") {
    req.spec.account = v;
    return {};
  }
  if (name == "qos") {
    req.spec.qos = v;
    return {};
  }
  if (name == "partition") {
    req.spec.partitions.clear();
    for (auto& p : Split(v, ',')) {
      if (!p.empty()) req.spec.partitions.push_back(p);
    }
    return {};
  }
  if (name == "reservation") {
    req.spec.reservation = v;
    return {};
  }
  if (name == "comment") {
    req.spec.comment = v;
    return {};
  }
  if (name == "mail-user") {
    req.spec.mail_user = v;
    return {};
  }
  if (name == "mail-type") {
    for (auto& t : Split(v, ',')) {
      if (kMailTypes.count(Upper(t)) == 0) return bad_value("unknown mail type \"" + t + "\"");
    }
    req.spec.mail_type = v;
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
    nodes_set = true;
    return {};
  }
  if (name == "ntasks") {
    CORRAL_RETURN_IF_ERROR(count(&r.ntasks, false));
    ntasks_set = true;
    return {};
  }
  if (name == "ntasks-per-node") return count(&r.ntasks_per_node, false);
  if (name == "cpus-per-task") {
    CORRAL_RETURN_IF_ERROR(count(&r.cpus_per_task, false));
    cpus_set = true;
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
      mem_set[0] = from;
    } else if (name == "mem-per-cpu") {
      r.mem_per_cpu_mb = *mb;
      mem_set[1] = from;
    } else {
      r.mem_per_gpu_mb = *mb;
      mem_set[2] = from;
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
      gpus_env[0] = v;
    } else if (name == "gpus-per-node") {
      r.gpus_per_node = n;
      gpus_env[1] = v;
    } else {
      r.gpus_per_task = n;
      gpus_env[2] = v;
    }
    return {};
  }
  if (name == "gres") {
    gpus_env[1].clear();  // --gres sets no SLURM_GPUS_PER_NODE
    return ApplyGres(*this, v, bad_value);
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
    if (d.has_value() && ctx.exact_time_limits && *d != kUnlimited) d = ParseSlurmDuration(v);
    if (!d.has_value()) return Err("Invalid --time specification" + where());
    req.spec.time_limit = *d;
    return {};
  }
  if (name == "output" || name == "error") {
    std::string path = Lower(v) == "none" ? "/dev/null" : v;
    (name == "output" ? req.spec.stdout_path : req.spec.stderr_path) = path;
    return {};
  }
  if (name == "input") {
    c.input = Lower(v) == "none" ? "/dev/null" : v;
    if (command == Command::kSbatch && c.input != "/dev/null") {
      return Unsupported("--input=" + v + " (a batch job's stdin other than /dev/null)", where());
    }
    return {};
  }
  if (name == "open-mode") {
    char m = v.empty() ? 0 : static_cast<char>(std::tolower(static_cast<unsigned char>(v[0])));
    if (m != 'a' && m != 't') return Err("Invalid --open-mode argument: " + v + where());
    open_mode = m;
    req.spec.append_output = m == 'a';
    return {};
  }
  if (name == "chdir") {
    req.spec.working_dir = !v.empty() && v.front() == '/' ? v : ctx.cwd + "/" + v;
    return {};
  }
  if (name == "array") {
    if (auto a = ParseArraySpec(v); !a.has_value()) return Err(a.error().message + where());
    req.spec.array = v;
    return {};
  }
  if (name == "dependency") {
    auto d = ParseDependencySpec(v);
    if (!d.has_value()) {
      return MakeError(d.error().code, std::string(CommandName(command)) +
                                           ": error: " + d.error().message + where());
    }
    req.spec.dependencies = std::move(d->dependencies);
    req.spec.dependency_any = d->any;
    return {};
  }
  if (name == "begin") {
    auto t = ParseBeginTime(v, ctx.now, ctx.utc_offset_seconds);
    if (!t.has_value()) return Err(t.error().message + where());
    req.spec.begin_time = *t;
    return {};
  }
  if (name == "signal") {
    auto s = ParseSignalSpec(v);
    if (!s.has_value()) {
      return MakeError(s.error().code, std::string(CommandName(command)) +
                                           ": error: " + s.error().message + where());
    }
    req.spec.signal = *s;
    return {};
  }
  if (name == "requeue") {
    req.spec.requeue = true;
    return {};
  }
  if (name == "no-requeue") {
    req.spec.requeue = false;
    return {};
  }
  if (name == "hold") {
    req.spec.hold = true;
    return {};
  }
  if (name == "nice") {
    if (!o.has_value || v.empty()) {
      req.spec.nice = 100;
      return {};
    }
    std::string_view digits = v;
    bool negative = !digits.empty() && (digits.front() == '-' || digits.front() == '+');
    if (negative) digits.remove_prefix(1);
    if (!AllDigits(digits) || digits.size() > 10) return bad_value("expected a number");
    long long n = std::stoll(std::string(digits));
    if (n > 2147483645LL) return bad_value("out of range");
    req.spec.nice = static_cast<int32_t>(v.front() == '-' ? -n : n);
    return {};
  }
  if (name == "export") {
    export_value = v;
    return {};
  }
  // pyxis: the image, workdir and name take the last value given (pyxis refuses a second,
  // different one); mounts and variable names add up, as in pyxis.
  if (name == "container-image") {
    if (v.empty()) return Err("--container-image: argument required" + where());
    req.spec.container.image = v;
    return {};
  }
  if (name == "container-mounts") {
    for (auto& m : Split(v, ',')) {
      auto& mounts = req.spec.container.mounts;
      if (!m.empty() && std::find(mounts.begin(), mounts.end(), m) == mounts.end()) {
        mounts.push_back(m);
      }
    }
    return {};
  }
  if (name == "container-workdir") {
    req.spec.container.workdir = v;
    return {};
  }
  if (name == "container-name") {
    if (v.empty()) return Err("--container-name: argument required" + where());
    req.spec.container.name = v;
    return {};
  }
  if (name == "container-mount-home") {
    req.spec.container.mount_home = true;
    return {};
  }
  if (name == "no-container-mount-home") {
    req.spec.container.mount_home = false;
    return {};
  }
  if (name == "container-env") {
    auto& names = req.spec.container.env;
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
  if (command == Command::kSrun) {
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
  if (command == Command::kSalloc && name == "no-shell") {
    c.no_shell = true;
    return {};
  }
  return Unsupported("--" + name, where());
}

Result<SubmitRequest> JobBuilder::Finish(const std::string& default_name) {
  JobSpec& spec = req.spec;
  ResourceRequest& r = spec.resources;
  std::string cmd(CommandName(command));
  if (req.client.quiet && req.client.verbose > 0) {
    return Err("don't specify both --verbose (-v) and --quiet (-Q)");
  }
  // Slurm's rule for the three memory options: one given on the command line (or in a
  // directive) wins over the environment; two from the same level are an error.
  for (int level : {2, 1}) {
    int n = 0;
    for (int i = 0; i < 3; ++i) n += mem_set[i] == level ? 1 : 0;
    if (n > 1) {
      return InvalidArgument(
          cmd + ": fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
    }
    if (n == 1) {
      for (int i = 0; i < 3; ++i) {
        if (mem_set[i] != level) mem_set[i] = 0;
      }
      break;
    }
  }
  if (mem_set[0] == 0) r.mem_per_node_mb = 0;
  if (mem_set[1] == 0) r.mem_per_cpu_mb = 0;
  if (mem_set[2] == 0) r.mem_per_gpu_mb = 0;
  spec.name = job_name.has_value() ? *job_name : default_name;
  spec.user = ctx.user;
  spec.uid = ctx.uid;
  spec.gid = ctx.gid;
  spec.submit_dir = ctx.cwd;
  spec.submit_host = ctx.hostname;
  if (spec.working_dir.empty()) spec.working_dir = ctx.cwd;

  // Nodes named with -w count towards -N.
  if (!r.nodelist.empty()) {
    std::set<std::string> unique(r.nodelist.begin(), r.nodelist.end());
    uint32_t n = static_cast<uint32_t>(unique.size());
    r.nodes = nodes_set ? std::max(r.nodes, n) : n;
    if (r.nodes_max != 0 && r.nodes_max < r.nodes) r.nodes_max = r.nodes;
    nodes_set = true;
  }
  bool fixed_nodes = r.nodes_max == 0 || r.nodes_max == r.nodes;
  if (r.ntasks_per_node > 0 && !ntasks_set && fixed_nodes) {
    r.ntasks = r.nodes * r.ntasks_per_node;
    ntasks_set = true;
  }
  if (nodes_set && !ntasks_set) {
    // One task per node by default (for "-N2-3" too: Slurm shows NumTasks=2).
    r.ntasks = std::max<uint32_t>(r.nodes, 1);
  } else if (nodes_set && ntasks_set) {
    if (r.nodes_max != 0 && r.ntasks < r.nodes_max) r.nodes_max = r.ntasks;
    if (r.ntasks < r.nodes) {
      req.warnings.push_back(cmd + ": Warning: can't run " + std::to_string(r.ntasks) +
                             " processes on " + std::to_string(r.nodes) +
                             " nodes, setting nnodes to " + std::to_string(r.ntasks));
      r.nodes = r.ntasks;
      r.nodes_max = 0;
    }
  }
  if (r.nodes_max == r.nodes) r.nodes_max = 0;

  if (command == Command::kSbatch && spec.stdout_path.empty()) {
    spec.stdout_path = std::string(DefaultOutputPattern(!spec.array.empty()));
  }

  // The job's environment.
  auto env = ResolveExport(export_value.value_or("ALL"), ctx.environment);
  if (!env.has_value()) return Err(env.error().message);
  spec.environment = std::move(*env);
  if (command == Command::kSbatch) {
    auto& e = spec.environment;
    if (export_value.has_value() && Lower(*export_value) != "all") {
      e["SLURM_EXPORT_ENV"] = *export_value;
      e["SLURM_GET_USER_ENV"] = "1";
    }
    e["SLURM_PRIO_PROCESS"] = std::to_string(ctx.nice);
    if (ntasks_set) {
      e["SLURM_NTASKS"] = std::to_string(r.ntasks);
      e["SLURM_NPROCS"] = std::to_string(r.ntasks);
    }
    if (cpus_set) e["SLURM_CPUS_PER_TASK"] = std::to_string(r.cpus_per_task);
    if (r.ntasks_per_node > 0) e["SLURM_NTASKS_PER_NODE"] = std::to_string(r.ntasks_per_node);
    if (mem_set[0] && r.mem_per_node_mb != kWholeNodeMemory) {
      e["SLURM_MEM_PER_NODE"] = std::to_string(r.mem_per_node_mb);
    }
    if (mem_set[1]) e["SLURM_MEM_PER_CPU"] = std::to_string(r.mem_per_cpu_mb);
    if (mem_set[2]) e["SLURM_MEM_PER_GPU"] = std::to_string(r.mem_per_gpu_mb);
    if (!gpus_env[0].empty()) e["SLURM_GPUS"] = gpus_env[0];
    if (!gpus_env[1].empty()) e["SLURM_GPUS_PER_NODE"] = gpus_env[1];
    if (!gpus_env[2].empty()) e["SLURM_GPUS_PER_TASK"] = gpus_env[2];
    if (r.cpus_per_gpu > 0) e["SLURM_CPUS_PER_GPU"] = std::to_string(r.cpus_per_gpu);
    if (open_mode.has_value()) e["SLURM_OPEN_MODE"] = std::string(1, *open_mode);
    // pyxis' options, for the job's srun steps (Slurm passes SPANK options this way).
    for (auto& [k, v] : PyxisEnvironment(spec.container)) e[k] = v;
  }

  if (auto s = ValidateResourceRequest(r); !s.has_value()) return Err(s.error().message);
  return std::move(req);
}

}  // namespace corral::slurm::internal
