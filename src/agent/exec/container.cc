#include "agent/exec/container.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

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

}  // namespace

std::string RuntimeImage(const std::string& runtime, const std::string& image) {
  if (runtime == "enroot" || image.empty()) return image;
  bool path = image[0] == '/' || image[0] == '.';
  if (path || image.find("://") != std::string::npos) return image;
  std::string ref = image;
  size_t hash = ref.find('#');
  size_t at = ref.find('@');
  // "USER@REGISTRY#IMAGE": the user is enroot's credentials; "IMAGE@sha256:..." is a digest.
  if (hash != std::string::npos && at != std::string::npos && at < hash) ref.erase(0, at + 1);
  hash = ref.find('#');
  if (hash != std::string::npos) ref[hash] = '/';
  return IsApptainer(runtime) ? "docker://" + ref : ref;
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

  // Mounts: working directory, the script's directory (read-only), output directories, the
  // user's own, and the home directory when asked.
  struct Mount {
    std::string src, dst, flags;
  };
  std::vector<Mount> mounts;
  auto add = [&](std::string src, std::string dst, std::string flags) {
    for (const auto& m : mounts) {
      if (m.dst == dst) return;
    }
    mounts.push_back({std::move(src), std::move(dst), std::move(flags)});
  };
  const bool task = !l.command.empty();
  std::string script_dir = l.script.substr(0, l.script.rfind('/'));
  const std::string kJobDir = "/corral/job";
  add(l.workdir, l.workdir, "");
  if (!task) add(script_dir, kJobDir, "ro");
  for (const auto& d : l.output_dirs) {
    if (d != l.workdir && d.rfind(l.workdir + "/", 0) != 0) add(d, d, "");
  }
  for (const auto& m : l.spec.mounts) {
    std::vector<std::string> parts;
    std::istringstream in(m);
    for (std::string p; std::getline(in, p, ':');) parts.push_back(p);
    if (parts.size() == 1) parts.push_back(parts[0]);
    if (parts.size() < 2 || parts.size() > 3 || parts[0].empty() || parts[0][0] != '/' ||
        parts[1].empty() || parts[1][0] != '/') {
      return InvalidArgument("job " + l.job.ToString() + ": container mount \"" + m +
                             "\" is not SRC[:DST[:FLAGS]] with absolute paths");
    }
    std::string flags = parts.size() == 3 ? parts[2] : "";
    std::replace(flags.begin(), flags.end(), '+', ',');  // pyxis separates flags with '+'
    add(parts[0], parts[1], flags);
  }
  if (l.spec.mount_home && !l.home.empty() && l.home != "/") add(l.home, l.home, "");

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
  std::string workdir = l.spec.workdir.empty() ? l.workdir : l.spec.workdir;
  // What runs inside: the step task's command, or the batch script where it is mounted.
  std::vector<std::string> inside = l.command;
  if (!task) inside = {kJobDir + l.script.substr(l.script.rfind('/'))};
  const std::string image = RuntimeImage(rt, l.image);

  ContainerCommand c;
  c.env = config.env;
  c.argv.push_back(config.runtime_path.empty() ? rt : config.runtime_path);
  if (IsDockerLike(rt)) {
    c.name = !l.instance.empty()   ? l.instance
             : l.spec.name.empty() ? "corral-" + l.node + "-" + l.job.ToString()
                                   : l.spec.name;
    c.argv.insert(c.argv.end(), {"run", "--rm", "--name", c.name, "--network=host"});
    if (l.memory_mb > 0) c.argv.push_back("--memory=" + std::to_string(l.memory_mb) + "m");
    if (!l.cpus.empty()) {
      std::string list;
      for (uint32_t cpu : l.cpus) list += (list.empty() ? "" : ",") + std::to_string(cpu);
      c.argv.push_back("--cpuset-cpus=" + list);
    }
    if (l.uid)
      c.argv.push_back("--user=" + std::to_string(*l.uid) + ":" +
                       std::to_string(l.gid.value_or(*l.uid)));
    for (const auto& m : mounts) {
      c.argv.push_back("--volume=" + m.src + ":" + m.dst + (m.flags.empty() ? "" : ":" + m.flags));
    }
    c.argv.push_back("--workdir=" + workdir);
    for (const auto& [k, v] : env) c.argv.push_back("--env=" + k + "=" + v);
    if (gpus == "cdi") {
      for (const auto& g : l.gpus) c.argv.push_back("--device=nvidia.com/gpu=" + g.uuid);
    } else if (gpus == "gpus" && !l.gpus.empty()) {
      c.argv.push_back("--gpus=\"device=" + uuids + "\"");
    } else if (gpus == "devices") {
      for (const auto& f : l.device_files) c.argv.push_back("--device=" + f);
    }
    c.argv.insert(c.argv.end(), config.extra_args.begin(), config.extra_args.end());
    c.argv.push_back(image);
    c.argv.insert(c.argv.end(), inside.begin(), inside.end());
    c.cleanup = {c.argv[0], "rm", "--force", "--ignore", c.name};
    if (rt == "docker") c.cleanup = {c.argv[0], "rm", "--force", c.name};
  } else if (IsApptainer(rt)) {
    c.runs_as_user = true;
    c.argv.insert(c.argv.end(), {"exec", "--cleanenv"});
    if (gpus == "nv") c.argv.push_back("--nv");
    for (const auto& m : mounts) {
      c.argv.push_back("--bind=" + m.src + ":" + m.dst + (m.flags.empty() ? "" : ":" + m.flags));
    }
    c.argv.push_back("--pwd=" + workdir);
    c.argv.insert(c.argv.end(), config.extra_args.begin(), config.extra_args.end());
    c.argv.push_back(image);
    c.argv.insert(c.argv.end(), inside.begin(), inside.end());
    // --env splits on commas; the prefixed variables carry any value.
    std::string prefix = rt == "apptainer" ? "APPTAINERENV_" : "SINGULARITYENV_";
    for (const auto& [k, v] : env) c.env.push_back(prefix + k + "=" + v);
  } else {  // enroot
    c.runs_as_user = true;
    c.argv.insert(c.argv.end(), {"start", "--rw"});
    for (const auto& m : mounts) {
      c.argv.push_back("--mount=" + m.src + ":" + m.dst + (m.flags.empty() ? "" : ":" + m.flags));
    }
    for (const auto& [k, v] : env) c.argv.push_back("--env=" + k + "=" + v);
    c.argv.insert(c.argv.end(), config.extra_args.begin(), config.extra_args.end());
    c.argv.push_back(image);
    // The working directory and the command go as arguments: nothing is quoted into the script.
    c.argv.insert(c.argv.end(), {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", workdir});
    c.argv.insert(c.argv.end(), inside.begin(), inside.end());
    c.env.push_back("NVIDIA_VISIBLE_DEVICES=" + (uuids.empty() ? std::string("void") : uuids));
  }
  return c;
}

}  // namespace corral::agent
