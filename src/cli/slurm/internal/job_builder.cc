#include "cli/slurm/internal/job_builder.h"

#include <algorithm>
#include <set>

#include "cli/slurm/environment.h"
#include "cli/slurm/internal/job_options.h"
#include "cli/slurm/option_values.h"
#include "core/output_pattern.h"
#include "core/resources.h"
#include "core/strings.h"

namespace corral::slurm::internal {

std::string OptionUse::Where() const {
  switch (source) {
    case Source::kDirective:
      return " (in a #SBATCH directive)";
    case Source::kEnvironment:
      return " (from the environment variable " + std::string(variable) + ")";
    case Source::kCommandLine:
      return "";
  }
  return "";
}

tl::unexpected<Error> JobBuilder::Err(const std::string& message) const {
  return InvalidArgument(std::string(CommandName(command)) + ": error: " + message);
}

tl::unexpected<Error> JobBuilder::BadValue(const OptionUse& use, const std::string& why) const {
  return Err("invalid --" + use.name + " value \"" + use.value + "\"" + use.Where() + ": " + why);
}

tl::unexpected<Error> JobBuilder::Unsupported(const std::string& what,
                                              const std::string& where) const {
  return MakeError(ErrorCode::kUnimplemented, std::string(CommandName(command)) +
                                                  ": error: option " + what + where +
                                                  " is not supported by Corral");
}

Status JobBuilder::Count(const OptionUse& use, uint32_t* out, bool allow_zero) const {
  if (!AllDigits(use.value) || use.value.size() > 9) return BadValue(use, "expected a number");
  uint64_t n = std::stoull(use.value);
  if (n == 0 && !allow_zero) return BadValue(use, "must be at least 1");
  *out = static_cast<uint32_t>(n);
  return {};
}

Status JobBuilder::ApplyAll(const std::vector<ParsedOption>& options, Source source) {
  for (const ParsedOption& o : options) CORRAL_RETURN_IF_ERROR(Apply(o, source, ""));
  return {};
}

Status JobBuilder::Apply(const ParsedOption& option, Source source, std::string_view variable) {
  OptionUse use{.name = option.name,
                .has_value = option.has_value,
                .value = option.value,
                .source = source,
                .variable = variable};
  const JobOption* entry = FindJobOption(option.name);
  if (entry != nullptr && entry->alias_of != nullptr) entry = FindJobOption(entry->alias_of);
  if (entry == nullptr) return Unsupported("--" + option.name, use.Where());
  return entry->apply(*this, use);
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
    auto& e = spec.environment.Mutable();
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
