#include "agent/exec/container.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "core/strings.h"

namespace corral::agent {
namespace {

bool IsDockerLike(const std::string& r) { return r == "podman" || r == "docker"; }
bool IsApptainer(const std::string& r) { return r == "apptainer" || r == "singularity"; }

// Variables of the host that must not override the image's own.
bool KeepOut(const std::string& name) {
  static const std::set<std::string> kHostOnly = {"PATH", "HOME",  "HOSTNAME",
                                                  "TERM", "SHELL", "LD_LIBRARY_PATH"};
  return kHostOnly.contains(name);
}

// [A-Za-z_][A-Za-z0-9_]*: what enroot accepts, and what a shell can name.
bool ShellName(const std::string& n) {
  auto word = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  return !n.empty() && !(n[0] >= '0' && n[0] <= '9') && std::all_of(n.begin(), n.end(), word);
}

bool ValidUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    }
    i += n;
  }
  return true;
}

// A line podman's and docker's --env-file readers take back as exactly NAME=VALUE: they read
// line by line (a Go scanner: at most 64 KiB a line), trim blanks before the name, skip '#'
// comments, split at the first '=' and refuse names with blanks (docker) or invalid UTF-8.
bool EnvFileSafe(const std::string& name, const std::string& value) {
  if (name.empty() || name[0] == '#' || name.size() + value.size() + 2 > 60000) return false;
  for (char c : name) {
    if (c == '=' || c == ' ' || c == '\t' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return false;
  }
  for (char c : value) {
    if (c == '\n' || c == '\r' || c == '\0') return false;
  }
  return ValidUtf8(name) && ValidUtf8(value);
}

std::string MountArg(const BindMount& m) {
  std::string s = m.source + ":" + m.target;
  if (!m.options.empty()) s += ":" + Join(m.options, ",");
  return s;
}

std::string Dir(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

std::string ContainerName(const std::string& user, JobId job, Generation generation,
                          std::optional<std::pair<uint32_t, uint32_t>> step_task,
                          const std::string& node) {
  auto clean = [](const std::string& s, size_t max) {
    std::string out;
    for (char c : s.substr(0, max)) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '.' || c == '-';
      out += ok ? c : '_';
    }
    return out.empty() ? std::string("_") : out;
  };
  std::string name =
      "corral-" + clean(user, 32) + "-" + job.ToString() + "-" + generation.ToString() + "-";
  name += step_task ? std::to_string(step_task->first) + "-" + std::to_string(step_task->second)
                    : std::string("batch");
  return name + "-" + clean(node, 96);
}

Result<std::string> RuntimeImage(const std::string& runtime, const std::string& image) {
  CORRAL_ASSIGN_OR_RETURN(ImageReference ref, ParseImageReference(image));
  if (runtime == "enroot") return image;
  if (ref.kind == ImageReference::Kind::kFile) {
    if (IsApptainer(runtime)) return ref.path;
    return InvalidArgument("image \"" + image + "\": " + runtime +
                           " takes a registry reference, not an image file");
  }
  if (IsApptainer(runtime)) {
    return (ref.scheme.empty() ? std::string("docker") : ref.scheme) + "://" + ref.Reference();
  }
  if (!ref.scheme.empty() && ref.scheme != "docker") {
    return InvalidArgument("image \"" + image + "\": " + runtime + " cannot pull " + ref.scheme +
                           ":// images");
  }
  return ref.Reference();
}

Result<std::string> FindRuntime(const ContainerConfig& config) {
  if (!config.runtime_path.empty()) {
    if (access(config.runtime_path.c_str(), X_OK) != 0) {
      return MakeError(ErrorCode::kFailedPrecondition,
                       "container runtime " + config.runtime_path + " is not executable");
    }
    return config.runtime_path;
  }
  const char* path = std::getenv("PATH");
  for (const std::string& dir :
       SplitNonEmpty(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin", ':')) {
    std::string candidate = dir + "/" + config.runtime;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return MakeError(ErrorCode::kFailedPrecondition,
                   "container runtime \"" + config.runtime + "\" is not in PATH");
}

Result<std::vector<BindMount>> PlanMounts(const ContainerLaunch& l) {
  std::vector<BindMount> mounts;
  auto add = [&](BindMount m) {
    for (const auto& have : mounts) {
      if (have.target == m.target) return;
    }
    mounts.push_back(std::move(m));
  };
  const std::string what = "job " + l.job.ToString() + ": ";
  if (Status s = ValidateContainerPath(l.workdir, false); !s)
    return Annotate(s.error(), what + "working directory");
  add({l.workdir, l.workdir, {}, BindMount::Origin::kJob});
  if (l.command.empty()) add({Dir(l.script), "/corral/job", {"ro"}, BindMount::Origin::kAgent});
  for (const auto& d : l.output_dirs) {
    if (d == l.workdir || d.rfind(l.workdir + "/", 0) == 0) continue;
    if (Status s = ValidateContainerPath(d, false); !s)
      return Annotate(s.error(), what + "output directory");
    add({d, d, {}, BindMount::Origin::kJob});
  }
  for (const auto& text : l.spec.mounts) {
    auto m = ParseContainerMount(text);
    if (!m) return Annotate(m.error(), what + "container mount");
    add({m->source, m->target, m->options, BindMount::Origin::kRequested});
  }
  if (l.spec.mount_home && !l.home.empty() && l.home != "/" &&
      ValidateContainerPath(l.home, false).has_value()) {
    add({l.home, l.home, {}, BindMount::Origin::kJob});
  }
  return mounts;
}

Result<ContainerCommand> BuildContainerCommand(const ContainerConfig& config,
                                               const ContainerLaunch& l) {
  const std::string& rt = config.runtime;
  if (rt.empty()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "job " + l.job.ToString() + ": containers are not set up on node " + l.node +
                         " ([container] runtime in agent.toml)");
  }
  if (!IsDockerLike(rt) && !IsApptainer(rt) && rt != "enroot") {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "[container] runtime: unknown runtime \"" + rt + "\"");
  }
  std::string gpus = config.gpus;
  if (gpus == "auto")
    gpus = IsDockerLike(rt) ? (rt == "docker" ? "gpus" : "cdi") : IsApptainer(rt) ? "nv" : "env";
  static const std::set<std::string> kModes = {"cdi", "gpus", "env", "nv", "devices", "none"};
  if (!kModes.contains(gpus)) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "[container] gpus: unknown mode \"" + gpus + "\"");
  }
  const std::string what = "job " + l.job.ToString() + ": ";
  if (Status s = ValidateContainerSpec(l.spec); !s)
    return Annotate(s.error(), "job " + l.job.ToString());
  auto image = RuntimeImage(rt, l.spec.image);
  if (!image) return Annotate(image.error(), what + "container.image");
  std::string workdir = l.spec.workdir.empty() ? l.workdir : l.spec.workdir;
  // Each runtime splits a mount at ':' (and apptainer at ',', enroot at blanks).
  const std::string separators = IsApptainer(rt) ? ":," : rt == "enroot" ? ": \t" : ":";
  for (const auto& m : l.mounts) {
    for (const std::string& p : {m.source, m.target}) {
      Status s = ValidateContainerPath(p, false);
      if (!s) return Annotate(s.error(), what + "bind mount");
      if (p.find_first_of(separators) != std::string::npos) {
        return InvalidArgument(what + "bind mount \"" + p + "\": " + rt +
                               " cannot mount a path holding any of \"" + separators + "\"");
      }
    }
  }

  // Environment: the job's, minus host-only variables (unless the job names them), with
  // CUDA_VISIBLE_DEVICES renumbered when the container gets exactly its GPUs.
  bool exact_gpus = gpus != "nv" && gpus != "none";
  std::string uuids;
  for (const auto& g : l.gpus) uuids += (uuids.empty() ? "" : ",") + g.uuid;
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& kv : l.env) {
    size_t eq = kv.find('=');
    std::string name = kv.substr(0, eq), value = eq == std::string::npos ? "" : kv.substr(eq + 1);
    bool named = std::find(l.spec.env.begin(), l.spec.env.end(), name) != l.spec.env.end();
    if (KeepOut(name) && !named) continue;
    if (name == "CUDA_VISIBLE_DEVICES" && exact_gpus) {
      std::string renumbered;
      for (size_t i = 0; i < l.gpus.size(); ++i)
        renumbered += (i == 0 ? "" : ",") + std::to_string(i);
      value = renumbered;
    }
    env.emplace_back(name, value);
  }
  env.emplace_back("NVIDIA_VISIBLE_DEVICES", uuids.empty() ? "void" : uuids);
  // What runs inside: the step task's command, or the batch script where it is mounted.
  std::vector<std::string> inside = l.command;
  if (l.command.empty()) inside = {"/corral/job" + l.script.substr(l.script.rfind('/'))};

  ContainerCommand c;
  c.env = config.env;
  c.argv.push_back(config.runtime_path.empty() ? rt : config.runtime_path);
  if (IsDockerLike(rt)) {
    if (l.name.empty() || l.env_file.empty())
      return Internal(what + "a container needs its name and env file");
    c.name = l.name;
    c.runs_as_user = l.rootless;
    c.argv.insert(c.argv.end(), {"run", "--rm", "--name=" + c.name, "--network=host"});
    if (l.rootless) {
      // The job's cgroup holds the container (its limits are the job's).
      c.argv.insert(c.argv.end(), {"--userns=keep-id", "--cgroups=disabled"});
    } else {
      if (l.memory_mb > 0) c.argv.push_back("--memory=" + std::to_string(l.memory_mb) + "m");
      if (!l.cpus.empty()) c.argv.push_back("--cpuset-cpus=" + JoinNumbers(l.cpus));
      if (l.pids_max > 0) c.argv.push_back("--pids-limit=" + std::to_string(l.pids_max));
    }
    c.argv.insert(c.argv.end(), {"--security-opt=no-new-privileges", "--cap-drop=ALL"});
    for (const auto& m : l.mounts) c.argv.push_back("--volume=" + MountArg(m));
    c.argv.push_back("--workdir=" + workdir);
    c.argv.push_back("--env-file=" + l.env_file);
    for (const auto& [k, v] : env) {
      if (EnvFileSafe(k, v)) {
        c.env_file.push_back(k + "=" + v);
      } else {
        c.dropped_env.push_back(k);
      }
    }
    if (gpus == "cdi") {
      for (const auto& g : l.gpus) c.argv.push_back("--device=nvidia.com/gpu=" + g.uuid);
    } else if (gpus == "gpus" && !l.gpus.empty()) {
      c.argv.push_back("--gpus=\"device=" + uuids + "\"");  // quoted: docker reads CSV
    } else if (gpus == "devices") {
      for (const auto& f : l.device_files) c.argv.push_back("--device=" + f);
    }
    c.argv.insert(c.argv.end(), config.extra_args.begin(), config.extra_args.end());
    // Last among the options, so that nothing can override who runs inside.
    if (l.uid) {
      for (uint32_t g : l.groups) {
        if (g != l.gid.value_or(*l.uid)) c.argv.push_back("--group-add=" + std::to_string(g));
      }
      c.argv.push_back("--user=" + std::to_string(*l.uid) + ":" +
                       std::to_string(l.gid.value_or(*l.uid)));
    }
    c.argv.push_back("--");
    c.argv.push_back(*image);
    c.argv.insert(c.argv.end(), inside.begin(), inside.end());
    c.cleanup = {c.argv[0], "rm", "--force", "--ignore", c.name};
    if (rt == "docker") c.cleanup = {c.argv[0], "rm", "--force", c.name};
  } else if (IsApptainer(rt)) {
    c.runs_as_user = true;
    c.argv.insert(c.argv.end(), {"exec", "--cleanenv"});
    if (gpus == "nv") c.argv.push_back("--nv");
    for (const auto& m : l.mounts) c.argv.push_back("--bind=" + MountArg(m));
    c.argv.push_back("--pwd=" + workdir);
    c.argv.insert(c.argv.end(), config.extra_args.begin(), config.extra_args.end());
    c.argv.push_back("--");
    c.argv.push_back(*image);
    c.argv.insert(c.argv.end(), inside.begin(), inside.end());
    // --env splits on commas; the prefixed variables carry any value.
    std::string prefix = rt == "apptainer" ? "APPTAINERENV_" : "SINGULARITYENV_";
    for (const auto& [k, v] : env) c.env.push_back(prefix + k + "=" + v);
  } else {  // enroot
    c.runs_as_user = true;
    c.argv.insert(c.argv.end(), {"start", "--rw"});
    for (const auto& m : l.mounts) c.argv.push_back("--mount=" + MountArg(m));
    // Names only: enroot takes each value from its own environment (it runs as the user).
    for (const auto& [k, v] : env) {
      if (!ShellName(k)) {
        c.dropped_env.push_back(k);
        continue;
      }
      c.argv.push_back("--env=" + k);
      c.env.push_back(k + "=" + v);
    }
    c.argv.insert(c.argv.end(), config.extra_args.begin(), config.extra_args.end());
    c.argv.push_back("--");
    c.argv.push_back(*image);
    // The working directory and the command go as arguments: nothing is quoted into the script.
    c.argv.insert(c.argv.end(), {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", workdir});
    c.argv.insert(c.argv.end(), inside.begin(), inside.end());
  }
  return c;
}

}  // namespace corral::agent
